//! Where each file lives under the hub home (SPEC section 2). Only checked names get here.

use std::path::{Path, PathBuf};

use crate::setting::SettingError;

/// The hub home and the layout beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    pub fn new(root: PathBuf) -> Self {
        Home { root }
    }

    /// `$BATON_HOME`, else the platform data directory: `~/.local/share/baton` on Linux,
    /// `~/Library/Application Support/baton` on macOS, `%APPDATA%\baton\data` on Windows.
    /// An empty `BATON_HOME` counts as unset, as XDG treats its empty variables. A relative
    /// one is refused: it would make a new hub in every directory a command runs in.
    pub fn from_environment() -> Result<Self, SettingError> {
        if let Some(root) = std::env::var_os("BATON_HOME").filter(|value| !value.is_empty()) {
            let root = PathBuf::from(root);
            if !root.is_absolute() {
                let example = std::env::current_dir()
                    .map(|cwd| format!("BATON_HOME={}", cwd.join(&root).display()))
                    .unwrap_or_else(|_| "BATON_HOME=$HOME/.local/share/baton".to_string());
                return Err(SettingError::new(
                    format!(
                        "BATON_HOME must be an absolute path, not `{}`",
                        root.display().to_string().escape_debug()
                    ),
                    Some(format!(
                        "a relative home would be a new hub in every directory; e.g. {example}"
                    )),
                ));
            }
            return Ok(Home::new(root));
        }
        directories::ProjectDirs::from("", "", "baton")
            .map(|dirs| Home::new(dirs.data_dir().to_path_buf()))
            .ok_or_else(|| {
                SettingError::new(
                    "cannot find a home directory for baton's data; set BATON_HOME",
                    None,
                )
            })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn agents_dir(&self) -> PathBuf {
        self.root.join("agents")
    }

    pub fn agent_file(&self, agent: &str) -> PathBuf {
        self.agents_dir().join(format!("{agent}.json"))
    }

    pub fn agent_lock(&self, agent: &str) -> PathBuf {
        self.agents_dir().join(format!("{agent}.lock"))
    }

    pub fn projects_dir(&self) -> PathBuf {
        self.root.join("projects")
    }

    pub fn project_dir(&self, project: &str) -> PathBuf {
        self.projects_dir().join(project)
    }

    pub fn project_file(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("project.json")
    }

    pub fn board_file(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("board.json")
    }

    pub fn board_backup(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("board.json.bak")
    }

    pub fn board_lock(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("board.lock")
    }

    pub fn activity_file(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("activity.jsonl")
    }

    /// The activity lines of a change on their way into the log (`store::files::journal`); there
    /// only while a change is being written, or after its writer was killed.
    pub fn activity_journal(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("activity.journal")
    }

    pub fn archive_dir(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("archive")
    }

    pub fn mail_file(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("mail.jsonl")
    }

    pub fn mail_lock(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("mail.lock")
    }

    /// Each agent's read position in the project's mail.
    pub fn mail_cursor_file(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("mail.read.json")
    }

    pub fn wake_dir(&self) -> PathBuf {
        self.root.join("wake")
    }

    pub fn wake_lock(&self, agent: &str) -> PathBuf {
        self.wake_dir().join(format!("{agent}.lock"))
    }

    pub fn wake_log(&self, agent: &str) -> PathBuf {
        self.wake_dir().join(format!("{agent}.log"))
    }

    /// Where this machine keeps the git worktrees of tasks (SPEC section 18.4): one
    /// directory per project, one per task under it (`T-4`).
    pub fn worktrees_root(&self) -> PathBuf {
        self.root.join("worktrees")
    }

    pub fn worktrees_dir(&self, project: &str) -> PathBuf {
        self.worktrees_root().join(project)
    }

    /// The logs of worktrees' `--setup` runs and landings' `--verify` runs of a project.
    pub fn worktree_logs(&self, project: &str) -> PathBuf {
        self.worktrees_root().join(".logs").join(project)
    }

    /// This machine's key, which signs the wake commands registered here
    /// (`secret::machine_key`): a file of this machine's home on any store, never copied.
    pub fn machine_key_file(&self) -> PathBuf {
        self.wake_dir().join("machine.key")
    }

    /// Where live sessions announce themselves (`store::presence`), by project and agent.
    pub fn live_root(&self) -> PathBuf {
        self.root.join("live")
    }

    /// Where `agent`'s live sessions in `project` announce themselves (`store::presence`).
    pub fn live_dir(&self, project: &str, agent: &str) -> PathBuf {
        self.live_root().join(project).join(agent)
    }

    /// Where listeners announce themselves (`store::presence`), by agent.
    pub fn listeners_root(&self) -> PathBuf {
        self.root.join("listeners")
    }

    /// Where `agent`'s listeners (`baton listen` on its machine, following this hub's event
    /// stream) announce themselves while their stream is open (`store::presence`).
    pub fn listener_dir(&self, agent: &str) -> PathBuf {
        self.listeners_root().join(agent)
    }

    /// What `baton setup` created around its entries in the clients' files, so uninstall can
    /// remove exactly that.
    /// What may be lost and made again (a PostgreSQL store's schema, as last seen).
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    pub fn setup_manifest(&self) -> PathBuf {
        self.root.join("setup.json")
    }

    pub fn setup_lock(&self) -> PathBuf {
        self.root.join("setup.lock")
    }

    /// The hashes of `baton serve`'s tokens and whom each acts as.
    pub fn tokens_file(&self) -> PathBuf {
        self.root.join("tokens.json")
    }

    pub fn tokens_lock(&self) -> PathBuf {
        self.root.join("tokens.lock")
    }

    /// On an agent's machine: the local directories standing for a remote hub's projects.
    pub fn project_map_file(&self) -> PathBuf {
        self.root.join("project-map.json")
    }

    pub fn project_map_lock(&self) -> PathBuf {
        self.root.join("project-map.lock")
    }

    /// The alerts (SPEC section 14): where each posts, in which format, with its secret.
    pub fn alerts_file(&self) -> PathBuf {
        self.root.join("alerts.json")
    }

    pub fn alerts_lock(&self) -> PathBuf {
        self.root.join("alerts.lock")
    }

    /// The alert queue, the sender's lock and its log.
    pub fn alerts_dir(&self) -> PathBuf {
        self.root.join("alerts")
    }

    /// One file per alert waiting to be posted.
    pub fn alert_queue_dir(&self) -> PathBuf {
        self.alerts_dir().join("queue")
    }

    /// Held while a command counts the queue and adds to it, so the queue's cap holds.
    pub fn alert_queue_lock(&self) -> PathBuf {
        self.alerts_dir().join("queue.lock")
    }

    /// How many alerts the full queue turned away since the sender last logged it.
    pub fn alert_dropped(&self) -> PathBuf {
        self.alerts_dir().join("dropped.json")
    }

    /// Held by the one alert sender that runs.
    pub fn alert_sender_lock(&self) -> PathBuf {
        self.alerts_dir().join("sender.lock")
    }

    /// One line per attempt to post an alert.
    pub fn alert_log(&self) -> PathBuf {
        self.alerts_dir().join("alerts.log")
    }
}
