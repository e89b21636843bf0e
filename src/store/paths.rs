//! Where each file lives under the hub home (SPEC section 2). Only checked names get here.

use std::path::{Path, PathBuf};

/// The hub home and the layout beneath it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    pub fn new(root: PathBuf) -> Self {
        Home { root }
    }

    /// `$BATON_HOME`, else the platform data directory (`~/.local/share/baton` on Linux).
    pub fn from_environment() -> Option<Self> {
        if let Some(root) = std::env::var_os("BATON_HOME").filter(|value| !value.is_empty()) {
            return Some(Home::new(PathBuf::from(root)));
        }
        directories::ProjectDirs::from("", "", "baton")
            .map(|dirs| Home::new(dirs.data_dir().to_path_buf()))
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

    /// The activity lines of a change on their way into the log (`store::journal`); there
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

    /// What `baton setup` created around its entries in the clients' files, so uninstall can
    /// remove exactly that.
    pub fn setup_manifest(&self) -> PathBuf {
        self.root.join("setup.json")
    }

    pub fn setup_lock(&self) -> PathBuf {
        self.root.join("setup.lock")
    }
}
