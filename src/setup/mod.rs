//! `baton setup`: wires agent clients (Claude Code, Codex, Gemini CLI, opencode) to baton.
//!
//! For each client setup registers the agent, adds `baton mcp` to the client's MCP servers,
//! wires the session-start, prompt and stop hooks where the client has shell hooks, and
//! installs the short instructions the client reads. Wired to a hub on another machine
//! ([`Wiring::Remote`]), a client gets the hub's MCP URL and hooks that carry `BATON_URL`
//! instead, the token read from a variable when the client runs, and nothing is registered
//! here: the agent lives on the hub. The service that keeps `baton listen` running for such
//! an agent is setup's too ([`service`]). Everything is computed before anything
//! is written: the clients' files become a list of [`FileEdit`]s (the text now, the text
//! wanted, and why), which a dry run only shows and [`run`] writes.
//!
//! The parts: [`plan`] computes what would change, file by file ([`edit`]), [`apply`]
//! writes it, [`service`] stages the listen service, [`a2a`] Gemini CLI's remote subagents
//! for a hub's agents, [`status`] reads how each client stands; one module per client says
//! where that client keeps its files ([`Layout`]).
//!
//! Edits touch only baton's own entries and keep every other byte: JSON and JSONC through a
//! concrete syntax tree, TOML through `toml_edit`, Markdown as a marked block. What setup adds
//! is recognisable on sight (the server key `baton`, hook commands running `baton … hook`,
//! the `<!-- baton:start -->` block, `skills/baton/`), so running it again changes nothing
//! and uninstall finds it all. What setup created around its entries (a file, a directory,
//! an `mcpServers` object that was not there) is remembered in `$BATON_HOME/setup.json`, so
//! uninstall removes that too and gives a file back byte for byte; without that record,
//! uninstall still removes every entry and leaves the emptied containers.
//!
//! Before setup changes a file the user had, it copies it to
//! `<file>.baton-backup-<UTC time>`, one copy per run that changes the file. Files wholly
//! setup's own (the skill) get no copy. Symbolic links are written through, and a file
//! keeps its permissions.

pub mod a2a;
mod apply;
mod claude;
mod codex;
pub mod command;
pub mod diff;
mod edit;
mod gemini;
pub mod git;
mod instructions;
mod json;
mod manifest;
mod opencode;
mod plan;
pub mod remote;
pub mod service;
mod status;

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;

use crate::client::{Client, ClientHooks};
use crate::error::{Result, SetupError};
use crate::process::{self, ProgramLookup};

pub use a2a::{A2aAgent, A2aAgents};
pub use apply::run;
pub use command::{HubAccess, Launch, Platform, StoreAddress};
pub use edit::{FileAction, FileEdit};
pub use plan::ClientPlan;
pub use remote::{RemoteHub, TokenValue};
use service::ServiceManager;
pub use status::{ClientStatus, found_clients, status, wired_clients};

/// The key of baton's MCP server in every client's configuration.
pub const SERVER_NAME: &str = "baton";

/// What setup is asked to do with the clients' wiring: install it (as which agent, running
/// which baton, for which hub), or take it out.
#[derive(Debug, Clone)]
pub enum Wiring {
    /// Wire the clients. `agent` is the name to register (default: the client's name).
    Install {
        agent: Option<String>,
        baton: PathBuf,
        hub_home: Option<PathBuf>,
        /// `BATON_STORE` when setup ran with one (a database), without its password: the
        /// clients' baton keeps its state there too, whatever environment a client gives it.
        store: Option<StoreAddress>,
    },
    /// Wire the clients to a hub on another machine, as the agent of the token that each
    /// client reads from the hub's variable when it runs. With `listen`, also write the
    /// service that keeps `baton listen` running to wake the (one) client; with `a2a`,
    /// Gemini CLI's remote subagents for those agents of the hub.
    Remote {
        baton: PathBuf,
        hub: RemoteHub,
        listen: Option<ListenRequest>,
        a2a: Option<A2aAgents>,
    },
    /// Remove what setup added.
    Uninstall,
}

/// What the listen service needs from setup's own environment.
#[derive(Debug, Clone)]
pub struct ListenRequest {
    /// The token, from the hub's variable when setup ran with it set: written to the
    /// service's token file.
    pub token: Option<TokenValue>,
    /// The hub home on this machine, when setup was told one.
    pub hub_home: Option<PathBuf>,
}

/// Where the clients keep their files, from the variables they honour. Read once from the
/// process environment by the CLI; tests build it directly.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub home: PathBuf,
    /// `CLAUDE_CONFIG_DIR`: Claude Code's `.claude.json`, settings and skills live there.
    pub claude_config_dir: Option<PathBuf>,
    /// `CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `GEMINI_CLI_HOME`: the directory that holds `.gemini` instead of the home directory.
    pub gemini_cli_home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME` (default `~/.config`), for opencode.
    pub xdg_config_home: Option<PathBuf>,
    /// `PATH`, to find the clients' programs.
    pub path: Option<OsString>,
    /// The system whose shells the clients run hooks with.
    pub platform: Platform,
    /// The service manager a listen service is written for.
    pub services: ServiceManager,
}

impl Environment {
    /// The environment of this process; `None` without a home directory.
    pub fn from_process() -> Option<Environment> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        // The clients' own idea of home: `HOME` on Unix; on Windows the profile directory,
        // which Node's os.homedir() reads from `USERPROFILE` (a `HOME` there is often Git's).
        let home_variable = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        let home = var(home_variable)
            .or_else(|| directories::BaseDirs::new().map(|dirs| dirs.home_dir().to_path_buf()))?;
        Some(Environment {
            home,
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            codex_home: var("CODEX_HOME"),
            gemini_cli_home: var("GEMINI_CLI_HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            path: std::env::var_os("PATH"),
            platform: Platform::CURRENT,
            services: ServiceManager::CURRENT,
        })
    }

    /// The `baton` that `PATH` finds, if it is the file `program` (however either is
    /// spelled: a symlink, a directory of the PATH that is one).
    pub fn baton_on_path(&self, program: &Path) -> Option<PathBuf> {
        let found = self.find_program("baton")?;
        let same = matches!(
            (fs::canonicalize(&found), fs::canonicalize(program)),
            (Ok(found), Ok(program)) if found == program
        );
        same.then_some(found)
    }

    /// The executable `program` on `PATH`, if there is one.
    pub fn find_program(&self, program: &str) -> Option<PathBuf> {
        match process::find_program(program, self.path.as_deref()) {
            ProgramLookup::Found(path) => Some(path),
            ProgramLookup::Missing | ProgramLookup::Relative => None,
        }
    }
}

/// The path clients should start baton by: the running binary, under the name `PATH` finds
/// it by when that is the same file (so a symlinked install keeps working after an upgrade).
pub fn baton_program(env: &Environment) -> Result<PathBuf> {
    let current = std::env::current_exe().map_err(|error| SetupError::NoProgramPath {
        cause: error.to_string(),
    })?;
    Ok(env.baton_on_path(&current).unwrap_or(current))
}

/// Where one client keeps the things setup wires (built by each client's module).
struct Layout {
    /// The client's configuration directory: its existence means the client is used here.
    config_dir: PathBuf,
    server: ServerSlot,
    hooks: Option<HookSlot>,
    /// Where baton's plugin goes, for a client whose hooks are plugins.
    plugin: Option<PluginSlot>,
    instructions: InstructionSlot,
    /// Told to the user when setup changes something for this client.
    notes: Vec<String>,
}

enum ServerSlot {
    /// `container.baton` in a JSON file.
    Json {
        file: PathBuf,
        container: &'static str,
        entry: fn(&Launch) -> CstInputValue,
        /// Where in the entry the argument list is (`args`, or opencode's `command`).
        args_key: &'static str,
    },
    /// `[mcp_servers.baton]` in Codex's config.toml.
    Toml { file: PathBuf },
}

struct HookSlot {
    /// A JSON file with a `hooks` object of events, each a list of matcher groups.
    file: PathBuf,
    /// The matcher group for one event, around its command line: baton's name for the
    /// event (`stop`, `pre-edit`), the tools it runs for (all when `None`), the command. The
    /// client's names for the events, and its hook timeout, come from [`Client::hooks`].
    group: fn(&Launch, &str, Option<&str>, String, &ClientHooks) -> CstInputValue,
}

/// A plugin file wholly setup's own, in the client's plugin directory (which other plugins
/// share).
struct PluginSlot {
    file: PathBuf,
    /// The plugin's text for one wiring.
    text: fn(&Launch) -> String,
    /// Whether a file's text is baton's plugin (of this baton or another): a file of the same
    /// name that is not is the user's, and setup neither replaces nor removes it.
    is_batons: fn(&str) -> bool,
}

enum InstructionSlot {
    /// A skill file wholly setup's own, in a directory of its own.
    Skill(PathBuf),
    /// A marked block in a Markdown file the client reads.
    Block(PathBuf),
}

/// Where `client` keeps the things setup wires.
fn layout(client: Client, env: &Environment) -> Layout {
    match client {
        Client::Claude => claude::layout(env),
        Client::Codex => codex::layout(env),
        Client::Gemini => gemini::layout(env),
        Client::Opencode => opencode::layout(env),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_parse_by_name() {
        assert_eq!("Codex".parse::<Client>().unwrap(), Client::Codex);
        assert!("cursor".parse::<Client>().is_err());
    }

    #[test]
    fn a_client_has_a_hook_file_exactly_when_the_client_table_gives_it_hooks() {
        let env = Environment {
            home: PathBuf::from("/home/someone"),
            ..Environment::default()
        };
        for client in Client::ALL {
            assert_eq!(
                layout(client, &env).hooks.is_some(),
                client.hooks().is_some(),
                "{client}"
            );
            assert_eq!(
                layout(client, &env).plugin.is_some(),
                client.plugin().is_some(),
                "{client}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn finds_programs_on_path_only_when_executable() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("claude");
        fs::write(&program, "#!/bin/sh\n").unwrap();
        let env = Environment {
            path: Some(dir.path().as_os_str().to_owned()),
            ..Environment::default()
        };
        assert_eq!(env.find_program("claude"), None);
        fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(env.find_program("claude"), Some(program));
        assert_eq!(env.find_program("codex"), None);
    }
}
