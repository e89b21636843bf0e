//! What `baton setup` refuses: a wiring it cannot write, a client's file it will not edit.

use std::path::PathBuf;

use crate::client::Client;
use crate::text::{self, Face};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// `--listen-service` on a system with no service manager setup knows.
    #[error("{}", self.words(Face::Cli))]
    NoServiceManager,
    /// `--listen-service` for `clients` clients rather than one.
    #[error("{}", self.words(Face::Cli))]
    ListenServiceClients { clients: usize },
    /// `--as` for `clients` clients rather than one.
    #[error("{}", self.words(Face::Cli))]
    OneAgentManyClients { agent: String, clients: usize },
    /// `--url` that is no hub's address.
    #[error("{}", self.words(Face::Cli))]
    NotHubUrl { url: String },
    /// `--token-env` that is no variable's name.
    #[error("{}", self.words(Face::Cli))]
    NotVariableName { variable: String },
    /// A file where baton's own (`what`: its plugin, its listen service) would go.
    #[error("{} is not baton's {what}: setup leaves it as it is", path.display())]
    NotBatons { path: PathBuf, what: &'static str },
    #[error("cannot edit {}: it is not valid JSON ({cause})", path.display())]
    NotJson { path: PathBuf, cause: String },
    /// `what` (the top level, or a key in it) is not an object.
    #[error("cannot edit {}: {what} is not a JSON object", path.display())]
    NotJsonObject { path: PathBuf, what: String },
    #[error("cannot edit {}: it is not valid TOML ({cause})", path.display())]
    NotToml { path: PathBuf, cause: String },
    #[error("cannot edit {}: `{table}` is not a table", path.display())]
    NotTomlTable { path: PathBuf, table: &'static str },
    #[error("cannot edit {}: it is not UTF-8 text", path.display())]
    NotUtf8 { path: PathBuf },
    #[error("{client} kept changing its files while setup was editing them")]
    KeptChanging { client: Client },
    #[error("cannot tell where baton is: {cause}")]
    NoProgramPath { cause: String },
    /// `setup --git DIR` where DIR is in no git repository (or git is not there to say).
    #[error("{} is not in a git repository (or git is not installed)", dir.display())]
    NotGitRepository { dir: PathBuf },
    /// A `pre-commit` hook that is `what` rather than a regular file: setup cannot keep it
    /// and run it from its own.
    #[error(
        "{} is {what}: baton keeps only a regular file to run from its commit guard, and \
         leaves this one as it is",
        path.display()
    )]
    GitHookNotRegular { path: PathBuf, what: &'static str },
    /// Where setup keeps the hook it chains, something is already.
    #[error(
        "{} is there already, where baton would keep the pre-commit hook it runs after its own",
        path.display()
    )]
    GitChainedInTheWay { path: PathBuf },
    /// `value` (`what`: the hub's URL, the hub home…) would not reach `cmd.exe` intact
    /// through `client`'s hooks.
    #[error(
        "{client} runs hooks through cmd.exe, and {what} {} holds a space or one of \" & | < > \
         ^ % ( ) ! , ; =, which cannot reach cmd.exe through {client} intact",
        text::inline(value)
    )]
    UnsafeForCmd {
        client: Client,
        what: &'static str,
        value: String,
    },
}

impl SetupError {
    /// The refusal as `face` tells it, naming its arguments as `face` spells them.
    pub fn words(&self, face: Face) -> String {
        match self {
            SetupError::NoServiceManager => format!(
                "{} writes a systemd user unit (Linux) or a launchd agent (macOS), and this \
                 system has neither",
                face.argument("listen-service")
            ),
            SetupError::ListenServiceClients { clients } => format!(
                "{} wakes one client, but {clients} clients were asked for",
                face.argument("listen-service")
            ),
            SetupError::OneAgentManyClients { agent, clients } => format!(
                "{} names one agent, but {clients} clients were asked for",
                face.argument_with("as", agent)
            ),
            SetupError::NotHubUrl { url } => format!(
                "{} {} is not the URL of a hub: give http:// or https://, a host and nothing \
                 after the path, like http://10.0.0.5:7878",
                face.argument("url"),
                text::inline(url)
            ),
            SetupError::NotVariableName { variable } => format!(
                "{} {} is not the name of an environment variable: letters, digits and _, not \
                 starting with a digit, like BATON_HUB_TOKEN",
                face.argument("token-env"),
                text::inline(variable)
            ),
            other => other.to_string(),
        }
    }

    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> Option<String> {
        const FIX_THE_FILE: &str = "fix the file or move it away, then run `baton setup` again";
        Some(match self {
            SetupError::NoServiceManager => "run `baton listen --wake -- CMD …` with BATON_URL \
                 and BATON_TOKEN set, from whatever starts programs at login here"
                .to_string(),
            SetupError::ListenServiceClients { .. } => format!(
                "wire the clients first, then run setup again for the one to wake with {} {}",
                face.argument_with("client", "NAME"),
                face.argument("listen-service")
            ),
            SetupError::OneAgentManyClients { .. } => format!(
                "each client is its own agent: set them up one at a time with {} and {}",
                face.argument("client"),
                face.argument("as")
            ),
            SetupError::NotBatons { .. } => "move it aside and run `baton setup` again".to_string(),
            SetupError::NotJson { .. }
            | SetupError::NotJsonObject { .. }
            | SetupError::NotToml { .. }
            | SetupError::NotTomlTable { .. } => FIX_THE_FILE.to_string(),
            SetupError::KeptChanging { client } => {
                format!("quit {client} and run `baton setup` again")
            }
            SetupError::UnsafeForCmd { .. } => "put baton (and the hub) in a directory whose path \
                 has none of those, or put baton's directory on the PATH (install.ps1 does) and \
                 run `baton setup` again"
                .to_string(),
            SetupError::NotGitRepository { .. } => {
                "give the repository's directory: `baton setup --git DIR`".to_string()
            }
            SetupError::GitHookNotRegular { .. } | SetupError::GitChainedInTheWay { .. } => {
                "move it away (or make the hook a regular file) and run `baton setup --git` again"
                    .to_string()
            }
            SetupError::NotHubUrl { .. }
            | SetupError::NotVariableName { .. }
            | SetupError::NotUtf8 { .. }
            | SetupError::NoProgramPath { .. } => return None,
        })
    }
}
