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

mod claude;
mod codex;
pub mod command;
pub mod diff;
mod gemini;
mod instructions;
mod json;
mod manifest;
mod opencode;
pub mod remote;
pub mod service;

use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde::Serialize;
use serde_json::Value;

use crate::client::{Client, ClientHooks, HookEvent};
use crate::error::{Error, Result};
use crate::names::{self, NameKind};
use crate::process::{self, ProgramLookup};
use crate::registry;
use crate::store::Store;
use crate::store::files::HomeFiles;
use crate::store::paths::Home;
use crate::store::{StoreError, atomic, platform, regular};
use crate::time::Timestamp;

pub use command::{HubAccess, Launch, Platform};
use json::{Document, KeyPath, Outcome};
use manifest::Manifest;
pub use remote::{RemoteHub, TokenValue};
use service::{ListenService, ServiceManager};

/// Whether setup is to (re)register its wake command for `client` over `wake`, what the
/// agent has: a command the user chose stays.
fn wants_wake_command(client: Client, wake: Option<&[String]>) -> bool {
    wake.is_none_or(|wake| client.is_former_wake_command(wake))
}

/// The wake command `record` is to have once `client` is unwired from it, when that changes
/// it: a wake command setup registered for `client` (today's or an earlier baton's) goes,
/// replaced by the wake command of a client still wired to the agent if there is one. A
/// command the user chose, or one another client's setup registered, stays.
fn wake_after_unwiring(
    hub: &Home,
    client: Client,
    record: &registry::AgentRecord,
) -> Option<Option<Vec<String>>> {
    let wake = record.wake.as_deref()?;
    let registered = wake == client.wake_command(Some(hub.root())).as_slice()
        || client.is_former_wake_command(wake);
    if !registered {
        return None;
    }
    let remaining = record
        .clients
        .iter()
        .filter(|name| *name != client.name())
        .find_map(|name| Client::from_name(name));
    Some(remaining.map(|other| other.wake_command(Some(hub.root()))))
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
    /// The matcher group for one event, around its command line; the client's names for the
    /// events, and its hook timeout, come from [`Client::hooks`].
    group: fn(&Launch, HookEvent, String, &ClientHooks) -> CstInputValue,
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
    },
    /// Wire the clients to a hub on another machine, as the agent of the token that each
    /// client reads from the hub's variable when it runs. With `listen`, also write the
    /// service that keeps `baton listen` running to wake the (one) client.
    Remote {
        baton: PathBuf,
        hub: RemoteHub,
        listen: Option<ListenRequest>,
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

/// One file's change.
#[derive(Debug, Clone)]
pub struct FileEdit {
    pub path: PathBuf,
    /// The text now; `None` when the file does not exist.
    pub before: Option<String>,
    /// The text wanted; `None` to delete the file.
    pub after: Option<String>,
    /// What changes, one line each.
    pub changes: Vec<String>,
    /// Where the previous contents were copied, once written.
    pub backup: Option<PathBuf>,
    format: Format,
    created_keys: Vec<KeyPath>,
    /// Deleting the file also removes its directory, if that is then empty.
    takes_empty_dir: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Toml,
    Markdown,
    /// A file whose whole content is setup's (the skill).
    Owned,
    /// A file whose whole content is setup's, in a directory it shares (a plugin).
    Plugin,
    /// The listen service's file (or the link that enables it), setup's in a directory the
    /// service manager shares.
    Service,
    /// The listen service's token: setup's, mode 0600, its text never shown.
    Secret,
}

impl Format {
    /// The whole file is setup's: it has no backup, and uninstall deletes it.
    fn is_setups_own(self) -> bool {
        matches!(
            self,
            Format::Owned | Format::Plugin | Format::Service | Format::Secret
        )
    }
}

/// What a file edit does, as the user sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAction {
    Create,
    Edit,
    Delete,
}

impl FileEdit {
    fn read(path: &Path, format: Format) -> Result<FileEdit> {
        let before = read_text(path)?;
        Ok(FileEdit {
            path: path.to_path_buf(),
            after: before.clone(),
            before,
            changes: Vec::new(),
            backup: None,
            format,
            created_keys: Vec::new(),
            // The skill's own directory goes with it.
            takes_empty_dir: format == Format::Owned,
        })
    }

    pub fn is_change(&self) -> bool {
        self.before != self.after
    }

    /// The file holds a secret (the listen service's token): its text is never shown.
    pub fn is_secret(&self) -> bool {
        self.format == Format::Secret
    }

    pub fn action(&self) -> FileAction {
        match (&self.before, &self.after) {
            (None, _) => FileAction::Create,
            (Some(_), None) => FileAction::Delete,
            (Some(_), Some(_)) => FileAction::Edit,
        }
    }

    /// The changed lines, for a dry run (none for a secret).
    pub fn diff(&self) -> Vec<diff::DiffLine> {
        if self.is_secret() {
            return Vec::new();
        }
        diff::diff_lines(
            self.before.as_deref().unwrap_or(""),
            self.after.as_deref().unwrap_or(""),
        )
    }

    fn document(&self) -> Result<Document> {
        Document::parse(&self.path, self.after.as_deref())
    }
}

/// Everything setup will do (or did) for one client.
#[derive(Debug, Clone)]
pub struct ClientPlan {
    pub client: Client,
    /// The agent wired to the client (for uninstall: the one found wired, if any); none for
    /// a remote hub, where the token names the agent.
    pub agent: Option<String>,
    /// The remote hub's URL, when the client is wired to one.
    pub hub: Option<String>,
    /// Files that change; unchanged files are left out.
    pub files: Vec<FileEdit>,
    /// Changes to the agent's registry record, one line each.
    pub registry: Vec<String>,
    pub notes: Vec<String>,
    registration: Option<Registration>,
}

impl ClientPlan {
    /// True when there is nothing to change.
    pub fn is_unchanged(&self) -> bool {
        self.files.is_empty() && self.registry.is_empty()
    }
}

#[derive(Debug, Clone)]
enum Registration {
    Wire { agent: String, client: Client },
    Unwire { agent: String, client: Client },
}

/// Plans (with `dry_run`, only plans) and carries out `wiring` for `clients`, under the
/// setup lock. Returns what changed, client by client.
pub fn run(
    store: &dyn Store,
    local: &HomeFiles,
    env: &Environment,
    clients: &[Client],
    wiring: &Wiring,
    dry_run: bool,
    now: Timestamp,
) -> Result<Vec<ClientPlan>> {
    if let Wiring::Remote {
        listen: Some(_), ..
    } = wiring
    {
        check_listen_service(env, clients)?;
    }
    if let Wiring::Install {
        agent: Some(agent), ..
    } = wiring
    {
        names::check(NameKind::Agent, agent)?;
        if clients.len() > 1 {
            return Err(Error::invalid_with_hint(
                format!(
                    "--as {agent} names one agent, but {} clients were asked for",
                    clients.len()
                ),
                "each client is its own agent: set them up one at a time with --client and --as",
            ));
        }
    }
    let hub = local.home();
    if dry_run {
        let manifest = Manifest::load(local)?;
        return clients
            .iter()
            .map(|client| plan(store, hub, env, &manifest, *client, wiring))
            .collect();
    }
    let mut done = Vec::new();
    for client in clients {
        // Under the manifest's lock (the setup lock), which is let go between clients.
        let plan = Manifest::update(local, |manifest| {
            carry_out(store, hub, env, manifest, *client, wiring, now)
        })?;
        if let Some(registration) = &plan.registration {
            register(store, hub, now, registration)?;
        }
        done.push(plan);
    }
    Ok(done)
}

/// How often a client's plan is made again when the client rewrites its file meanwhile
/// (Claude Code writes `.claude.json` while it runs).
const ATTEMPTS: usize = 3;

fn carry_out(
    store: &dyn Store,
    hub: &Home,
    env: &Environment,
    manifest: &mut Manifest,
    client: Client,
    wiring: &Wiring,
    now: Timestamp,
) -> Result<ClientPlan> {
    for _ in 0..ATTEMPTS {
        let mut plan = plan(store, hub, env, manifest, client, wiring)?;
        let mut is_current = true;
        for edit in &plan.files {
            is_current &= read_text(&edit.path)? == edit.before;
        }
        if !is_current {
            continue;
        }
        let mut emptied_dirs = Vec::new();
        for edit in &mut plan.files {
            write_edit(edit, manifest, &mut emptied_dirs, wiring, now)?;
        }
        // Deepest first, so a directory is empty by the time its parent is tried.
        emptied_dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
        for dir in emptied_dirs {
            // Not empty means someone else put something there: it stays.
            let _ = fs::remove_dir(&dir);
        }
        return Ok(plan);
    }
    Err(Error::invalid_with_hint(
        format!("{client} kept changing its files while setup was editing them"),
        format!("quit {client} and run `baton setup` again"),
    ))
}

/// Backs up, writes (or deletes) one file and keeps the manifest in step.
fn write_edit(
    edit: &mut FileEdit,
    manifest: &mut Manifest,
    emptied_dirs: &mut Vec<PathBuf>,
    wiring: &Wiring,
    now: Timestamp,
) -> Result<()> {
    let record = manifest.record(&edit.path).cloned().unwrap_or_default();
    let is_setups_own = edit.format.is_setups_own()
        || (edit.after.is_none() && record.created_file)
        || edit.before.is_none();
    if !is_setups_own {
        edit.backup = Some(back_up(&edit.path, now)?);
    }
    match &edit.after {
        Some(text) => {
            let mode = match edit.format {
                Format::Json | Format::Toml => Mode::KeepElse(0o600),
                // Whoever could read it could act as the agent on the hub.
                Format::Secret => Mode::Exactly(0o600),
                Format::Markdown | Format::Owned | Format::Plugin | Format::Service => {
                    Mode::KeepElse(0o644)
                }
            };
            let created_dirs = write_file(&edit.path, text, mode)?;
            if !matches!(wiring, Wiring::Uninstall) {
                manifest.remember(
                    &edit.path,
                    edit.before.is_none(),
                    &edit.created_keys,
                    &created_dirs,
                );
                if let Some(before) = &edit.before
                    && !edit.format.is_setups_own()
                {
                    manifest.remember_original(&edit.path, before, text);
                }
            }
        }
        None => {
            fs::remove_file(&edit.path).map_err(StoreError::io(&edit.path))?;
            if let Some(record) = manifest.forget(&edit.path) {
                emptied_dirs.extend(record.created_dirs);
            }
            if edit.takes_empty_dir
                && let Some(dir) = edit.path.parent()
            {
                emptied_dirs.push(dir.to_path_buf());
            }
        }
    }
    if matches!(wiring, Wiring::Uninstall) && edit.after.is_some() {
        manifest.forget(&edit.path);
    }
    Ok(())
}

/// Computes what `wiring` changes for `client`, reading but writing nothing.
fn plan(
    store: &dyn Store,
    hub: &Home,
    env: &Environment,
    manifest: &Manifest,
    client: Client,
    wiring: &Wiring,
) -> Result<ClientPlan> {
    let layout = layout(client, env);
    let mut staging = Staging::default();
    let mut remote_hub = None;
    let (agent, registration) = match wiring {
        Wiring::Install {
            agent,
            baton,
            hub_home,
        } => {
            let agent = agent.clone().unwrap_or_else(|| client.name().to_string());
            let launch = Launch {
                baton: baton.clone(),
                access: HubAccess::Local {
                    agent: agent.clone(),
                    home: hub_home.clone(),
                },
                platform: env.platform,
                baton_on_path: env.baton_on_path(baton).is_some(),
            };
            install(&layout, client, &launch, &mut staging)?;
            let registration = Registration::Wire {
                agent: agent.clone(),
                client,
            };
            (Some(agent), Some(registration))
        }
        Wiring::Remote {
            baton,
            hub: remote,
            listen,
        } => {
            let launch = Launch {
                baton: baton.clone(),
                access: HubAccess::Remote(remote.clone()),
                platform: env.platform,
                baton_on_path: env.baton_on_path(baton).is_some(),
            };
            install(&layout, client, &launch, &mut staging)?;
            if let Some(listen) = listen {
                let service = ListenService {
                    client,
                    baton: baton.clone(),
                    hub: remote.clone(),
                    token_file: listen_token_file(hub),
                    hub_home: listen.hub_home.clone(),
                    path: env
                        .path
                        .as_ref()
                        .and_then(|path| path.to_str())
                        .map(str::to_string),
                };
                install_listen_service(env, &service, listen.token.as_ref(), &mut staging)?;
            }
            remote_hub = Some(remote.base_url().to_string());
            // The agent lives on the hub: nothing is registered here.
            (None, None)
        }
        Wiring::Uninstall => {
            let server = wired_server(&layout)?;
            remote_hub = server.as_ref().and_then(|server| server.hub.clone());
            let agent = server.and_then(|server| server.agent);
            uninstall_listen_service(hub, env, client, manifest, &mut staging)?;
            uninstall(&layout, manifest, &mut staging)?;
            let registration = agent
                .clone()
                .map(|agent| Registration::Unwire { agent, client });
            (agent, registration)
        }
    };
    let registry = match &registration {
        Some(registration) => describe_registration(store, hub, registration)?,
        None => Vec::new(),
    };
    let files: Vec<FileEdit> = staging
        .edits
        .into_iter()
        .filter(FileEdit::is_change)
        .collect();
    let mut notes = staging.notes;
    if !files.is_empty() && !matches!(wiring, Wiring::Uninstall) {
        notes.extend(layout.notes);
    }
    Ok(ClientPlan {
        client,
        agent,
        hub: remote_hub,
        files,
        registry,
        notes,
        registration,
    })
}

/// The files of one plan, each read once however many things change in it.
#[derive(Default)]
struct Staging {
    edits: Vec<FileEdit>,
    /// What the user should know of what this plan leaves out.
    notes: Vec<String>,
}

impl Staging {
    fn file(&mut self, path: &Path, format: Format) -> Result<&mut FileEdit> {
        let index = match self.edits.iter().position(|edit| edit.path == path) {
            Some(index) => index,
            None => {
                self.edits.push(FileEdit::read(path, format)?);
                self.edits.len() - 1
            }
        };
        Ok(&mut self.edits[index])
    }
}

fn describe_outcome(outcome: Outcome, what: String) -> Option<String> {
    match outcome {
        Outcome::Added => Some(format!("add {what}")),
        Outcome::Updated => Some(format!("update {what}")),
        Outcome::Unchanged => None,
    }
}

fn install(layout: &Layout, client: Client, launch: &Launch, staging: &mut Staging) -> Result<()> {
    match &layout.server {
        ServerSlot::Json {
            file,
            container,
            entry,
            ..
        } => {
            let edit = staging.file(file, Format::Json)?;
            let document = edit.document()?;
            let outcome = document.set_entry(
                container,
                SERVER_NAME,
                entry(launch),
                &mut edit.created_keys,
            )?;
            if let Some(change) = describe_outcome(
                outcome,
                format!(
                    "MCP server {container}.{SERVER_NAME}: {}",
                    server_line(launch)
                ),
            ) {
                edit.changes.push(change);
                edit.after = Some(document.text());
            }
        }
        ServerSlot::Toml { file } => {
            let edit = staging.file(file, Format::Toml)?;
            let (text, outcome, created) =
                codex::set_server(&edit.path, edit.after.as_deref(), launch)?;
            if let Some(change) = describe_outcome(
                outcome,
                format!(
                    "MCP server [mcp_servers.{SERVER_NAME}]: {}",
                    server_line(launch)
                ),
            ) {
                edit.changes.push(change);
                edit.created_keys.extend(created);
                edit.after = Some(text);
            }
        }
    }
    if let Some(hooks) = &layout.hooks
        && let Some(client_hooks) = client.hooks()
    {
        let commands: Result<Vec<String>> = HookEvent::ALL
            .iter()
            .map(|event| launch.hook_command(*event, client))
            .collect();
        match commands {
            Ok(commands) => write_hooks(launch, hooks, client_hooks, commands, staging)?,
            // The rest of the wiring does without (the server and the instructions work),
            // and this client, not the next one, is the one left without hooks.
            Err(error) => {
                let mut note = format!("{client}'s hooks were not written: {error}");
                if let Some(hint) = error.hint() {
                    note.push_str(&format!("; {hint}"));
                }
                staging.notes.push(note);
            }
        }
    }
    if let Some(plugin) = &layout.plugin {
        let edit = staging.file(&plugin.file, Format::Plugin)?;
        if let Some(before) = edit.before.as_deref()
            && !(plugin.is_batons)(before)
        {
            return Err(Error::invalid_with_hint(
                format!(
                    "{} is not baton's plugin: setup leaves it as it is",
                    edit.path.display()
                ),
                "move it aside and run `baton setup` again",
            ));
        }
        let text = (plugin.text)(launch);
        if edit.after.as_deref() != Some(&text) {
            edit.changes.push(if edit.before.is_none() {
                "add the baton plugin".to_string()
            } else {
                "update the baton plugin".to_string()
            });
            edit.after = Some(text);
        }
    }
    let guide = match &launch.access {
        HubAccess::Local { agent, .. } => instructions::guide(agent),
        HubAccess::Remote(hub) => instructions::remote_guide(hub),
    };
    match &layout.instructions {
        InstructionSlot::Skill(path) => {
            let edit = staging.file(path, Format::Owned)?;
            let text = instructions::skill(&guide);
            if edit.after.as_deref() != Some(&text) {
                edit.changes.push(if edit.before.is_none() {
                    "add the baton skill".to_string()
                } else {
                    "update the baton skill".to_string()
                });
                edit.after = Some(text);
            }
        }
        InstructionSlot::Block(path) => {
            let edit = staging.file(path, Format::Markdown)?;
            let text = instructions::with_block(edit.after.as_deref(), &guide);
            if edit.after.as_deref() != Some(&text) {
                let verb = if edit.before.as_deref().is_some_and(instructions::has_block) {
                    "update"
                } else {
                    "add"
                };
                edit.changes
                    .push(format!("{verb} the baton instructions block"));
                edit.after = Some(text);
            }
        }
    }
    Ok(())
}

/// Puts baton's hook for each event, running its line of `commands`, into the hooks file.
fn write_hooks(
    launch: &Launch,
    hooks: &HookSlot,
    client_hooks: &ClientHooks,
    commands: Vec<String>,
    staging: &mut Staging,
) -> Result<()> {
    let edit = staging.file(&hooks.file, Format::Json)?;
    let document = edit.document()?;
    for (event, command) in HookEvent::ALL.into_iter().zip(commands) {
        let client_event = client_hooks.event_name(event);
        let outcome = document.set_hook(
            "hooks",
            client_event,
            (hooks.group)(launch, event, command.clone(), client_hooks),
            &mut edit.created_keys,
        )?;
        if let Some(change) = describe_outcome(outcome, format!("hook {client_event}: {command}")) {
            edit.changes.push(change);
        }
    }
    edit.after = Some(document.text());
    Ok(())
}

fn server_line(launch: &Launch) -> String {
    if let Some(hub) = launch.remote() {
        return format!("{} (token from ${})", hub.mcp_url(), hub.token_env());
    }
    let mut words = vec![command::shell_quote(&launch.baton.display().to_string())];
    words.extend(launch.mcp_args());
    words.join(" ")
}

fn uninstall(layout: &Layout, manifest: &Manifest, staging: &mut Staging) -> Result<()> {
    match &layout.server {
        ServerSlot::Json {
            file, container, ..
        } => {
            let edit = staging.file(file, Format::Json)?;
            let document = edit.document()?;
            if document.remove_entry(container, SERVER_NAME) {
                edit.changes
                    .push(format!("remove MCP server {container}.{SERVER_NAME}"));
                edit.after = Some(document.text());
            }
        }
        ServerSlot::Toml { file } => {
            let edit = staging.file(file, Format::Toml)?;
            if let Some(text) = codex::remove_server(&edit.path, edit.after.as_deref())? {
                edit.changes
                    .push(format!("remove MCP server [mcp_servers.{SERVER_NAME}]"));
                edit.after = Some(text);
            }
        }
    }
    if let Some(hooks) = &layout.hooks {
        let edit = staging.file(&hooks.file, Format::Json)?;
        let document = edit.document()?;
        let events = document.remove_hooks("hooks");
        if !events.is_empty() {
            edit.changes
                .push(format!("remove baton hooks: {}", events.join(", ")));
            edit.after = Some(document.text());
        }
    }
    if let Some(plugin) = &layout.plugin {
        let edit = staging.file(&plugin.file, Format::Plugin)?;
        if edit.before.as_deref().is_some_and(plugin.is_batons) {
            edit.changes.push("remove the baton plugin".to_string());
            edit.after = None;
        }
    }
    match &layout.instructions {
        InstructionSlot::Skill(path) => {
            let edit = staging.file(path, Format::Owned)?;
            if edit.before.is_some() {
                edit.changes.push("remove the baton skill".to_string());
                edit.after = None;
            }
        }
        InstructionSlot::Block(path) => {
            let edit = staging.file(path, Format::Markdown)?;
            if let Some(text) = edit.after.as_deref().and_then(instructions::without_block) {
                edit.changes
                    .push("remove the baton instructions block".to_string());
                edit.after = Some(text);
            }
        }
    }
    // What setup created around its entries goes once they are gone, if nothing else moved in.
    for edit in staging.edits.iter_mut().filter(|edit| edit.is_change()) {
        let Some(record) = manifest.record(&edit.path) else {
            continue;
        };
        // A file nobody but setup has written since it was the user's goes back byte for byte.
        if let Some(original) = edit
            .before
            .as_deref()
            .and_then(|current| manifest.original_if_untouched(&edit.path, current))
        {
            edit.after = Some(original.to_string());
            continue;
        }
        let Some(text) = edit.after.clone() else {
            continue;
        };
        let mut keys = record.created_keys.clone();
        keys.sort_by_key(|key| std::cmp::Reverse(key.len()));
        let (text, is_empty) = match edit.format {
            Format::Json => {
                let document = Document::parse(&edit.path, Some(&text))?;
                for key in &keys {
                    document.prune(key);
                }
                (document.text(), document.is_empty())
            }
            Format::Toml => codex::prune(&edit.path, &text, &keys)?,
            Format::Markdown
            | Format::Owned
            | Format::Plugin
            | Format::Service
            | Format::Secret => {
                let is_empty = text.trim().is_empty();
                (text, is_empty)
            }
        };
        edit.after = if record.created_file && is_empty {
            None
        } else {
            Some(text)
        };
    }
    Ok(())
}

/// Refuses a listen service setup cannot write: one for more than one client (it wakes one
/// agent through one client's command), or on a system without a service manager it knows.
fn check_listen_service(env: &Environment, clients: &[Client]) -> Result<()> {
    if env.services == ServiceManager::Unknown {
        return Err(Error::invalid_with_hint(
            "--listen-service writes a systemd user unit (Linux) or a launchd agent (macOS), \
             and this system has neither",
            "run `baton listen --wake -- CMD …` with BATON_URL and BATON_TOKEN set, from \
             whatever starts programs at login here",
        ));
    }
    if clients.len() > 1 {
        return Err(Error::invalid_with_hint(
            format!(
                "--listen-service wakes one client, but {} clients were asked for",
                clients.len()
            ),
            "wire the clients first, then run setup again for the one to wake with \
             --client NAME --listen-service",
        ));
    }
    Ok(())
}

/// Where the listen service's token is kept: in the hub home of this machine, whose
/// directories are the user's alone.
fn listen_token_file(hub: &Home) -> PathBuf {
    hub.root().join("listen-token")
}

/// Stages the listen service's file, and its token file when setup has the token.
fn install_listen_service(
    env: &Environment,
    service: &ListenService,
    token: Option<&TokenValue>,
    staging: &mut Staging,
) -> Result<()> {
    let manager = env.services;
    let (Some(file), Some(text)) = (manager.file(env), manager.text(service, env)) else {
        // check_listen_service refused this before anything was planned.
        return Ok(());
    };
    let edit = staging.file(&file, Format::Service)?;
    let before_client = edit.before.as_deref().map(service::client_of_service);
    if let Some(None) = before_client {
        return Err(Error::invalid_with_hint(
            format!(
                "{} is not baton's listen service: setup leaves it as it is",
                edit.path.display()
            ),
            "move it aside and run `baton setup` again",
        ));
    }
    let changed = edit.after.as_deref() != Some(&text);
    if changed {
        let wake = service.client.wake_command(None).join(" ");
        edit.changes.push(match before_client.flatten() {
            None => format!("add the listen service: baton listen --wake -- {wake}"),
            Some(other) if other != service.client => format!(
                "update the listen service: it wakes {} instead of {other}",
                service.client
            ),
            Some(_) => format!("update the listen service: baton listen --wake -- {wake}"),
        });
        edit.after = Some(text);
    }
    let variable = service.hub.token_env();
    match token {
        Some(token) => {
            let edit = staging.file(&service.token_file, Format::Secret)?;
            if edit.after.as_deref() != Some(token.expose()) {
                edit.changes
                    .push(format!("write the token from ${variable} (mode 0600)"));
                edit.after = Some(token.expose().to_string());
            }
        }
        None if !service.token_file.is_file() => staging.notes.push(format!(
            "${variable} is not set here, so the service has no token yet: set it and run \
             this setup again, or write the token into {} yourself (mode 0600)",
            service.token_file.display()
        )),
        None => {}
    }
    if changed {
        staging.notes.push(format!(
            "start the listen service: {}",
            manager.start_command(&file)
        ));
    }
    Ok(())
}

/// Stages the removal of the listen service when it wakes `client`: its file, the link
/// `systemctl --user enable` made to it, and the token file setup wrote.
fn uninstall_listen_service(
    hub: &Home,
    env: &Environment,
    client: Client,
    manifest: &Manifest,
    staging: &mut Staging,
) -> Result<()> {
    let manager = env.services;
    let Some(file) = manager.file(env) else {
        return Ok(());
    };
    let edit = staging.file(&file, Format::Service)?;
    if edit.before.as_deref().and_then(service::client_of_service) != Some(client) {
        return Ok(());
    }
    edit.changes.push("remove the listen service".to_string());
    edit.after = None;
    if let Some(link) = manager.enable_link(env)
        && let (Ok(target), Ok(unit)) = (fs::canonicalize(&link), fs::canonicalize(&file))
        && target == unit
    {
        let edit = staging.file(&link, Format::Service)?;
        edit.changes
            .push("remove the link `systemctl --user enable` made".to_string());
        edit.after = None;
        // `default.target.wants`, emptied: what `systemctl --user disable` leaves.
        edit.takes_empty_dir = true;
    }
    let token_file = listen_token_file(hub);
    if manifest.record(&token_file).is_some() {
        let edit = staging.file(&token_file, Format::Secret)?;
        if edit.before.is_some() {
            edit.changes.push("remove the token file".to_string());
            edit.after = None;
        }
    }
    staging.notes.push(format!(
        "stop the listen service if it runs: {}",
        manager.stop_command()
    ));
    Ok(())
}

/// baton's MCP server as a client's configuration holds it.
struct WiredServer {
    /// From `--as NAME` in its arguments, else `BATON_AGENT` in its environment.
    agent: Option<String>,
    /// The program the client starts.
    program: Option<PathBuf>,
    /// A remote hub's base URL, for a server the client reaches over HTTP.
    hub: Option<String>,
    /// The variable a remote hub's token is read from.
    token_env: Option<String>,
}

/// baton's MCP server in the client's configuration, if it is there.
fn wired_server(layout: &Layout) -> Result<Option<WiredServer>> {
    let (entry, args_key) = match &layout.server {
        ServerSlot::Json {
            file,
            container,
            args_key,
            ..
        } => {
            let text = read_text(file)?;
            let entry = Document::parse(file, text.as_deref())?.entry(container, SERVER_NAME);
            (entry, *args_key)
        }
        ServerSlot::Toml { file } => (
            codex::server_entry(file, read_text(file)?.as_deref())?,
            "args",
        ),
    };
    let Some(entry) = entry else {
        return Ok(None);
    };
    // Over HTTP: `url` (Gemini CLI: `httpUrl`), the token's variable in the header or, for
    // Codex, in `bearer_token_env_var`.
    if let Some(url) = ["url", "httpUrl"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_str))
    {
        let token_env = entry
            .get("bearer_token_env_var")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                entry
                    .get("headers")
                    .and_then(|headers| headers.get("Authorization"))
                    .and_then(Value::as_str)
                    .and_then(remote::token_env_in_header)
            });
        return Ok(Some(WiredServer {
            agent: None,
            program: None,
            hub: Some(remote::hub_of_mcp_url(url)),
            token_env,
        }));
    }
    let args: Vec<&str> = entry
        .get(args_key)
        .and_then(|args| args.as_array())
        .map(|args| args.iter().filter_map(|arg| arg.as_str()).collect())
        .unwrap_or_default();
    let from_env = ["env", "environment"].iter().find_map(|key| {
        entry
            .get(*key)
            .and_then(|env| env.get("BATON_AGENT"))
            .and_then(|agent| agent.as_str())
            .map(str::to_string)
    });
    let agent = command::agent_in_args(args.iter().copied())
        .or(from_env)
        .filter(|name| names::check(NameKind::Agent, name).is_ok());
    // opencode keeps the program as the first word of its `command` list.
    let program = match entry.get("command") {
        Some(Value::String(program)) => Some(program.as_str()),
        Some(Value::Array(words)) => words.first().and_then(Value::as_str),
        _ => None,
    }
    .map(PathBuf::from);
    Ok(Some(WiredServer {
        agent,
        program,
        hub: None,
        token_env: None,
    }))
}

fn describe_registration(
    store: &dyn Store,
    hub: &Home,
    registration: &Registration,
) -> Result<Vec<String>> {
    let mut changes = Vec::new();
    match registration {
        Registration::Wire { agent, client } => {
            let record = registry::load(store, agent)?;
            match &record {
                None => changes.push(format!("register agent {agent}")),
                Some(record) if !record.clients.contains(&client.name().to_string()) => {
                    changes.push(format!("add {client} to the clients of agent {agent}"));
                }
                Some(_) => {}
            }
            if record
                .as_ref()
                .is_none_or(|record| record.strengths.is_empty())
            {
                changes.push(format!("strengths: {}", client.default_strengths()));
            }
            if wants_wake_command(
                *client,
                record.as_ref().and_then(|record| record.wake.as_deref()),
            ) {
                changes.push(format!(
                    "wake command: {}",
                    client.wake_command(Some(hub.root())).join(" ")
                ));
            }
        }
        Registration::Unwire { agent, client } => {
            let Some(record) = registry::load(store, agent)? else {
                return Ok(changes);
            };
            if record.clients.contains(&client.name().to_string()) {
                changes.push(format!("remove {client} from the clients of agent {agent}"));
            }
            match wake_after_unwiring(hub, *client, &record) {
                None => {}
                Some(None) => changes.push(format!(
                    "remove the wake command setup registered: {}",
                    record.wake.unwrap_or_default().join(" ")
                )),
                Some(Some(wake)) => changes.push(format!("wake command: {}", wake.join(" "))),
            }
        }
    }
    Ok(changes)
}

/// Registers the agent: a wake command or strengths the user set are never replaced (a wake
/// command an earlier setup registered is brought up to date).
fn register(
    store: &dyn Store,
    hub: &Home,
    now: Timestamp,
    registration: &Registration,
) -> Result<()> {
    match registration {
        Registration::Wire { agent, client } => registry::update(store, agent, now, |record, _| {
            if record.strengths.is_empty() {
                record.strengths = client.default_strengths().to_string();
            }
            if wants_wake_command(*client, record.wake.as_deref()) {
                record.wake = Some(client.wake_command(Some(hub.root())));
            }
            if !record.clients.iter().any(|name| name == client.name()) {
                record.clients.push(client.name().to_string());
            }
            Ok(())
        }),
        Registration::Unwire { agent, client } => {
            if registry::load(store, agent)?.is_none() {
                return Ok(());
            }
            registry::update(store, agent, now, |record, _| {
                if let Some(wake) = wake_after_unwiring(hub, *client, record) {
                    record.wake = wake;
                }
                record.clients.retain(|name| name != client.name());
                Ok(())
            })
        }
    }
}

/// How one client stands: found on this machine, and what of baton is wired into it.
#[derive(Debug, Clone, Serialize)]
pub struct ClientStatus {
    pub client: Client,
    /// The client's program on `PATH`.
    pub program: Option<PathBuf>,
    pub config_dir: PathBuf,
    pub has_config_dir: bool,
    /// baton's MCP server is in the client's configuration.
    pub server: bool,
    /// The agent the server is wired as, when it says.
    pub agent: Option<String>,
    /// The program the client starts as baton's server.
    pub server_program: Option<PathBuf>,
    /// The hub the client's server reaches over HTTP, when it is a remote one.
    pub hub: Option<String>,
    /// The variable the client reads a remote hub's token from.
    pub token_env: Option<String>,
    /// setup's listen service wakes this client.
    pub listen_service: bool,
    /// The client events that run a baton hook.
    pub hooks: Vec<String>,
    /// baton's plugin is in the client's plugin directory.
    pub plugin: bool,
    /// Whether baton's instructions (skill or block) are in place.
    pub instructions: bool,
    /// A file that could not be read, which makes the rest uncertain.
    pub problem: Option<String>,
}

impl ClientStatus {
    /// Found on this machine: its program is on `PATH` or its configuration directory exists.
    pub fn is_found(&self) -> bool {
        self.program.is_some() || self.has_config_dir
    }

    /// Anything of baton is wired into the client.
    pub fn is_wired(&self) -> bool {
        self.server
            || !self.hooks.is_empty()
            || self.plugin
            || self.instructions
            || self.listen_service
    }

    /// Everything setup wires is there: the server, the instructions, and the hooks or the
    /// plugin where the client has them.
    pub fn is_fully_wired(&self) -> bool {
        let wants_hooks = self.client.hooks().is_some();
        let wants_plugin = self.client.plugin().is_some();
        self.server
            && self.instructions
            && (!wants_hooks || self.hooks.len() == 3)
            && (!wants_plugin || self.plugin)
    }

    /// What of baton is wired, in a few words: `mcp as claude · hooks … · instructions`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.server {
            parts.push(match (&self.hub, &self.agent, &self.token_env) {
                (Some(hub), _, Some(variable)) => {
                    format!("wired to the hub at {hub} (token from ${variable})")
                }
                (Some(hub), _, None) => format!("wired to the hub at {hub}"),
                (None, Some(agent), _) => format!("mcp as {agent}"),
                (None, None, _) => "mcp".to_string(),
            });
        }
        if !self.hooks.is_empty() {
            parts.push(format!("hooks {}", self.hooks.join(",")));
        }
        if self.plugin {
            parts.push("plugin".to_string());
        }
        if self.instructions {
            parts.push("instructions".to_string());
        }
        if self.listen_service {
            parts.push("listen service".to_string());
        }
        if parts.is_empty() {
            "not wired".to_string()
        } else {
            parts.join(" · ")
        }
    }
}

/// How every client stands (for `setup --auto`, `doctor` and plain `setup`).
pub fn status(env: &Environment) -> Vec<ClientStatus> {
    Client::ALL
        .iter()
        .map(|client| client_status(env, *client))
        .collect()
}

fn client_status(env: &Environment, client: Client) -> ClientStatus {
    let layout = layout(client, env);
    let mut status = ClientStatus {
        client,
        program: env.find_program(client.name()),
        has_config_dir: layout.config_dir.is_dir(),
        config_dir: layout.config_dir.clone(),
        server: false,
        agent: None,
        server_program: None,
        hub: None,
        token_env: None,
        listen_service: false,
        hooks: Vec::new(),
        plugin: false,
        instructions: false,
        problem: None,
    };
    let result = (|| -> Result<()> {
        if let Some(server) = wired_server(&layout)? {
            status.server = true;
            status.agent = server.agent;
            status.server_program = server.program;
            status.hub = server.hub;
            status.token_env = server.token_env;
        }
        if let Some(file) = env.services.file(env) {
            status.listen_service = read_text(&file)?
                .as_deref()
                .and_then(service::client_of_service)
                == Some(client);
        }
        if let Some(hooks) = &layout.hooks {
            let text = read_text(&hooks.file)?;
            status.hooks =
                Document::parse(&hooks.file, text.as_deref())?.baton_hook_events("hooks");
        }
        if let Some(plugin) = &layout.plugin {
            status.plugin = read_text(&plugin.file)?.is_some_and(|text| (plugin.is_batons)(&text));
        }
        status.instructions = match &layout.instructions {
            InstructionSlot::Skill(path) => path.is_file(),
            InstructionSlot::Block(path) => {
                read_text(path)?.is_some_and(|text| instructions::has_block(&text))
            }
        };
        Ok(())
    })();
    if let Err(error) = result {
        status.problem = Some(error.to_string());
    }
    status
}

/// The clients `--auto` wires: those found on this machine.
pub fn found_clients(env: &Environment) -> Vec<Client> {
    status(env)
        .into_iter()
        .filter(ClientStatus::is_found)
        .map(|status| status.client)
        .collect()
}

/// The clients that have baton wired (what a plain `--uninstall` removes).
pub fn wired_clients(env: &Environment) -> Vec<Client> {
    status(env)
        .into_iter()
        .filter(ClientStatus::is_wired)
        .map(|status| status.client)
        .collect()
}

/// The path clients should start baton by: the running binary, under the name `PATH` finds
/// it by when that is the same file (so a symlinked install keeps working after an upgrade).
pub fn baton_program(env: &Environment) -> Result<PathBuf> {
    let current = std::env::current_exe()
        .map_err(|error| Error::invalid(format!("cannot tell where baton is: {error}")))?;
    Ok(env.baton_on_path(&current).unwrap_or(current))
}

/// A file's text; `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<String>> {
    match regular::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            Error::invalid(format!(
                "cannot edit {}: it is not UTF-8 text",
                path.display()
            ))
        }),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path)(error).into()),
    }
}

/// Copies `path` to `<path>.baton-backup-<time>` (a free name) before it changes.
fn back_up(path: &Path, now: Timestamp) -> Result<PathBuf> {
    let stamp = now.datetime().format("%Y%m%dT%H%M%SZ").to_string();
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut backup = path.with_file_name(format!("{name}.baton-backup-{stamp}"));
    let mut counter = 1;
    while fs::symlink_metadata(&backup).is_ok() {
        counter += 1;
        backup = path.with_file_name(format!("{name}.baton-backup-{stamp}-{counter}"));
    }
    // fs::copy follows a symbolic link and keeps the permissions, as a backup should.
    fs::copy(path, &backup).map_err(StoreError::io(&backup))?;
    Ok(backup)
}

/// The permission bits a written file gets, where the system has them (Unix).
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// The file's own, or these for a new file.
    KeepElse(u32),
    /// These, whatever the file had.
    Exactly(u32),
}

/// Replaces the file at `path` (through a symbolic link, keeping its permissions unless
/// `mode` says otherwise) with a temp-file-and-rename write. Returns the directories it had
/// to create.
fn write_file(path: &Path, text: &str, mode: Mode) -> Result<Vec<PathBuf>> {
    let is_link = fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    let target = if is_link {
        fs::canonicalize(path).map_err(StoreError::io(path))?
    } else {
        path.to_path_buf()
    };
    let dir = target.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut created_dirs = Vec::new();
    let mut missing = dir.as_path();
    while !missing.exists() {
        created_dirs.push(missing.to_path_buf());
        match missing.parent() {
            Some(parent) => missing = parent,
            None => break,
        }
    }
    fs::create_dir_all(&dir).map_err(StoreError::io(&dir))?;
    let mode = match mode {
        Mode::KeepElse(mode_if_new) => fs::metadata(&target)
            .ok()
            .and_then(|meta| platform::mode(&meta))
            .unwrap_or(mode_if_new),
        Mode::Exactly(mode) => mode,
    };
    atomic::replace_user_file(&target, text.as_bytes(), mode)?;
    Ok(created_dirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::files::FileStore;
    use crate::store::lock::LockPolicy;

    fn quiet_lock() -> LockPolicy {
        LockPolicy::silent(std::time::Duration::from_secs(1))
    }

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

    /// The hook entries planned for `client` on `platform`, as (command, shell) per event.
    fn planned_hooks(platform: Platform, client: Client) -> Vec<(String, Option<String>)> {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment {
            home: dir.path().join("home"),
            platform,
            ..Environment::default()
        };
        let wiring = Wiring::Install {
            agent: None,
            baton: PathBuf::from(r"C:\Users\ann\.local\bin\baton.exe"),
            hub_home: Some(PathBuf::from(r"D:\hub")),
        };
        let hub = Home::new(dir.path().join("hub"));
        let plan = plan(
            &FileStore::new(hub.clone(), quiet_lock()),
            &hub,
            &env,
            &Manifest::default(),
            client,
            &wiring,
        )
        .unwrap();
        let hooks_file = layout(client, &env).hooks.unwrap().file;
        let edit = plan
            .files
            .iter()
            .find(|edit| edit.path == hooks_file)
            .unwrap();
        let document: Value = serde_json::from_str(edit.after.as_deref().unwrap()).unwrap();
        let names = client.hooks().unwrap();
        HookEvent::ALL
            .iter()
            .map(|event| {
                let hook = &document["hooks"][names.event_name(*event)][0]["hooks"][0];
                let text = |key: &str| hook[key].as_str().map(str::to_string);
                (text("command").unwrap(), text("shell"))
            })
            .collect()
    }

    #[test]
    fn codex_without_a_hook_line_for_cmd_is_wired_without_hooks_and_told_why() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment {
            home: dir.path().join("home"),
            platform: Platform::Windows,
            ..Environment::default()
        };
        let wiring = Wiring::Install {
            agent: None,
            baton: PathBuf::from(r"C:\Users\Ann Lee\bin\baton.exe"),
            hub_home: None,
        };
        let hub = Home::new(dir.path().join("hub"));
        let plan = plan(
            &FileStore::new(hub.clone(), quiet_lock()),
            &hub,
            &env,
            &Manifest::default(),
            Client::Codex,
            &wiring,
        )
        .unwrap();
        let layout = layout(Client::Codex, &env);
        let written: Vec<&Path> = plan.files.iter().map(|edit| edit.path.as_path()).collect();
        assert!(
            !written.contains(&layout.hooks.unwrap().file.as_path()),
            "{written:?}"
        );
        let ServerSlot::Toml { file: config } = layout.server else {
            panic!("Codex's server is in its config.toml");
        };
        assert!(written.contains(&config.as_path()), "{written:?}");
        let note = plan
            .notes
            .iter()
            .find(|note| note.starts_with("codex's hooks were not written"))
            .unwrap_or_else(|| panic!("no word of the hooks: {:?}", plan.notes));
        assert!(note.contains("cmd.exe") && note.contains("PATH"), "{note}");
    }

    #[test]
    fn on_windows_each_client_gets_hooks_in_the_shell_it_runs_them_with() {
        let claude = planned_hooks(Platform::Windows, Client::Claude);
        assert_eq!(
            claude[0],
            (
                r"$env:BATON_HOME = 'D:\hub'; & 'C:\Users\ann\.local\bin\baton.exe' --as claude hook session-start --client claude".to_string(),
                Some("powershell".to_string())
            )
        );
        let gemini = planned_hooks(Platform::Windows, Client::Gemini);
        assert_eq!(
            gemini[2],
            (
                r"$env:BATON_HOME = 'D:\hub'; & 'C:\Users\ann\.local\bin\baton.exe' --as gemini hook stop --client gemini".to_string(),
                None
            )
        );
        let codex = planned_hooks(Platform::Windows, Client::Codex);
        assert_eq!(
            codex[1],
            (
                r"set BATON_HOME=D:\hub&& C:\Users\ann\.local\bin\baton.exe --as codex hook prompt --client codex".to_string(),
                None
            )
        );
        // On Unix nobody is told a shell, and the line is a POSIX shell's.
        for client in [Client::Claude, Client::Codex, Client::Gemini] {
            for (command, shell) in planned_hooks(Platform::Unix, client) {
                assert!(command.starts_with(r"BATON_HOME='D:\hub' "), "{command}");
                assert_eq!(shell, None);
            }
        }
    }

    fn remote_wiring(token: Option<&str>) -> Wiring {
        Wiring::Remote {
            baton: PathBuf::from("/opt/baton"),
            hub: RemoteHub::new("http://10.0.0.5:7878", "HUB_TOKEN").unwrap(),
            listen: Some(ListenRequest {
                token: token.map(|token| TokenValue::new(token.to_string())),
                hub_home: None,
            }),
        }
    }

    #[test]
    fn a_listen_service_is_planned_for_the_system_s_manager_with_its_token_kept_secret() {
        for (services, file) in [
            (
                ServiceManager::Systemd,
                "xdg/systemd/user/baton-listen.service",
            ),
            (
                ServiceManager::Launchd,
                "home/Library/LaunchAgents/local.baton.listen.plist",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let env = Environment {
                home: dir.path().join("home"),
                xdg_config_home: Some(dir.path().join("xdg")),
                services,
                ..Environment::default()
            };
            let hub = Home::new(dir.path().join("hub"));
            let wiring = remote_wiring(Some("baton_secret"));
            let plan = plan(
                &FileStore::new(hub.clone(), quiet_lock()),
                &hub,
                &env,
                &Manifest::default(),
                Client::Gemini,
                &wiring,
            )
            .unwrap();
            assert!(plan.agent.is_none() && plan.registration.is_none());
            assert_eq!(plan.hub.as_deref(), Some("http://10.0.0.5:7878"));
            let service = plan
                .files
                .iter()
                .find(|edit| edit.path == dir.path().join(file))
                .unwrap_or_else(|| panic!("no {file} in {:?}", plan.files));
            let text = service.after.as_deref().unwrap();
            assert_eq!(service::client_of_service(text), Some(Client::Gemini));
            assert!(text.contains("gemini"), "{text}");
            let token = plan
                .files
                .iter()
                .find(|edit| edit.path == listen_token_file(&hub))
                .unwrap();
            assert!(token.is_secret() && token.diff().is_empty());
            for edit in plan.files.iter().filter(|edit| !edit.is_secret()) {
                let text = edit.after.as_deref().unwrap_or_default();
                assert!(!text.contains("baton_secret"), "{}", edit.path.display());
            }
            assert!(
                plan.notes
                    .iter()
                    .any(|note| note.starts_with("start the listen service: ")),
                "{:?}",
                plan.notes
            );
        }
    }

    #[test]
    fn a_listen_service_is_refused_without_a_manager_or_for_two_clients() {
        let dir = tempfile::tempdir().unwrap();
        let hub = Home::new(dir.path().join("hub"));
        let wiring = remote_wiring(None);
        let now = crate::time::now();
        let mut env = Environment {
            home: dir.path().join("home"),
            services: ServiceManager::Unknown,
            ..Environment::default()
        };
        let refused = |env: &Environment, clients: &[Client]| {
            let lock = LockPolicy::silent(std::time::Duration::from_secs(1));
            run(
                &FileStore::new(hub.clone(), lock),
                &HomeFiles::new(hub.clone(), lock),
                env,
                clients,
                &wiring,
                false,
                now,
            )
            .unwrap_err()
            .to_string()
        };
        assert!(refused(&env, &[Client::Codex]).contains("neither"));
        env.services = ServiceManager::Systemd;
        assert!(refused(&env, &[Client::Codex, Client::Claude]).contains("wakes one client"));
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

    #[cfg(unix)]
    #[test]
    fn writes_through_symlinks_and_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, "{\"a\": 1}", Mode::KeepElse(0o600)).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), "{\"a\": 1}");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );

        let fresh = dir.path().join("a/b/new.json");
        let created = write_file(&fresh, "{}", Mode::KeepElse(0o600)).unwrap();
        assert_eq!(created, vec![dir.path().join("a/b"), dir.path().join("a")]);
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
}
