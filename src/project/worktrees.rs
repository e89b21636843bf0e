//! A project's worktree and landing settings (SPEC sections 18.4 and 18.5): whether each
//! task gets a git worktree of its own, from which base branch, what is copied into it and
//! run there, and how finished work lands.
//!
//! The commands it holds (`--setup`, `--verify`) run on the machine whose workspace it is;
//! so the settings are signed by that machine's key when they are set there, and a machine
//! runs them only under its own signature: whoever can write the store cannot make a
//! workspace's machine run a command of theirs.

use serde::{Deserialize, Serialize};

use super::Project;
use crate::secret::machine_key::{MachineKey, MachineKeyError};

/// The longest a `--verify` may be given to run, and its default.
pub const VERIFY_MOST_SECONDS: u64 = 24 * 60 * 60;
pub const VERIFY_DEFAULT_SECONDS: u64 = 10 * 60;
/// How long `--setup` may run in a new worktree.
pub const SETUP_SECONDS: u64 = 10 * 60;

/// How a task's commits go onto the base branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LandMode {
    /// One commit: the task's subject and id.
    #[default]
    Squash,
    /// Each commit replayed on the tip.
    Rebase,
    /// A merge commit of the branch.
    Merge,
}

impl LandMode {
    pub fn as_str(self) -> &'static str {
        match self {
            LandMode::Squash => "squash",
            LandMode::Rebase => "rebase",
            LandMode::Merge => "merge",
        }
    }
}

impl std::str::FromStr for LandMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "squash" => Ok(LandMode::Squash),
            "rebase" => Ok(LandMode::Rebase),
            "merge" => Ok(LandMode::Merge),
            other => Err(format!(
                "landing is squash, rebase or merge, not {}",
                crate::text::inline(other)
            )),
        }
    }
}

/// The settings of `project set --worktrees on …`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worktrees {
    /// Whether a claim gives a task a worktree. Tasks that have one keep it, and land,
    /// when this is turned off.
    pub on: bool,
    /// The branch work starts from and lands on.
    pub base: String,
    /// Untracked files copied from the workspace into each new worktree (`.env`).
    #[serde(default)]
    pub copy: Vec<String>,
    /// Run in each new worktree, bounded, its output in a log.
    #[serde(default)]
    pub setup: Option<String>,
    #[serde(default)]
    pub land: LandMode,
    /// Run on the landed result before the base branch moves.
    #[serde(default)]
    pub verify: Option<String>,
    #[serde(default = "default_verify_seconds")]
    pub verify_timeout_seconds: u64,
    /// With several machines: the remote reviews push to and landings work against.
    #[serde(default)]
    pub remote: Option<String>,
    /// The signature of the machine that set them ([`Project::worktrees_signed_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

fn default_verify_seconds() -> u64 {
    VERIFY_DEFAULT_SECONDS
}

impl Worktrees {
    /// Worktrees on, from `base`, with every other setting at its default.
    pub fn on(base: &str) -> Worktrees {
        Worktrees {
            on: true,
            base: base.to_string(),
            copy: Vec::new(),
            setup: None,
            land: LandMode::default(),
            verify: None,
            verify_timeout_seconds: VERIFY_DEFAULT_SECONDS,
            remote: None,
            signature: None,
        }
    }
}

impl Project {
    /// The project's worktree settings, when they were set on the machine whose key is
    /// `key` and not changed since by anyone else: the only ones that machine acts on.
    pub fn worktrees_signed_by(&self, key: &MachineKey) -> Option<&Worktrees> {
        let settings = self.settings.worktrees.as_ref()?;
        let signature = settings.signature.as_deref()?;
        key.is_latest(
            &self.worktrees_subject(),
            &self.signed_worktrees(settings),
            signature,
        )
        .then_some(settings)
    }

    /// Signs the worktree settings as set on the machine whose key is `key`.
    pub fn sign_worktrees(&mut self, key: &MachineKey) -> Result<(), MachineKeyError> {
        let Some(settings) = self.settings.worktrees.clone() else {
            return Ok(());
        };
        let signature =
            key.sign_latest(&self.worktrees_subject(), &self.signed_worktrees(&settings))?;
        if let Some(settings) = &mut self.settings.worktrees {
            settings.signature = Some(signature);
        }
        Ok(())
    }

    /// What the signature covers: the project, its workspace and every setting but the
    /// signature, in one unambiguous encoding.
    fn signed_worktrees(&self, settings: &Worktrees) -> Vec<u8> {
        let unsigned = Worktrees {
            signature: None,
            ..settings.clone()
        };
        let signed = ("baton worktrees 1", &self.id, &self.workspace, unsigned);
        serde_json::to_vec(&signed).unwrap_or_default()
    }

    fn worktrees_subject(&self) -> String {
        format!("worktrees-{}", self.id)
    }
}

/// What `project set` changes of the worktree settings: each `None` left as it is; an
/// empty command or remote clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeChange {
    pub on: Option<bool>,
    pub base: Option<String>,
    pub copy: Option<Vec<String>>,
    pub setup: Option<String>,
    pub land: Option<LandMode>,
    pub verify: Option<String>,
    pub verify_timeout_seconds: Option<u64>,
    pub remote: Option<String>,
}

impl WorktreeChange {
    pub fn is_empty(&self) -> bool {
        *self == WorktreeChange::default()
    }

    /// `settings` (none yet: worktrees off, from `current_branch`) with this change made.
    /// The signature is dropped: the caller signs what it keeps.
    pub fn apply(&self, settings: Option<&Worktrees>, current_branch: &str) -> Worktrees {
        let mut next = settings.cloned().unwrap_or_else(|| Worktrees {
            on: false,
            ..Worktrees::on(current_branch)
        });
        let cleared = |value: &String| Some(value.trim().to_string()).filter(|v| !v.is_empty());
        if let Some(on) = self.on {
            next.on = on;
        }
        if let Some(base) = &self.base {
            next.base = base.trim().to_string();
        }
        if let Some(copy) = &self.copy {
            next.copy = copy
                .iter()
                .map(|pattern| pattern.trim().to_string())
                .filter(|pattern| !pattern.is_empty())
                .collect();
        }
        if let Some(setup) = &self.setup {
            next.setup = cleared(setup);
        }
        if let Some(land) = self.land {
            next.land = land;
        }
        if let Some(verify) = &self.verify {
            next.verify = cleared(verify);
        }
        if let Some(seconds) = self.verify_timeout_seconds {
            next.verify_timeout_seconds = seconds;
        }
        if let Some(remote) = &self.remote {
            next.remote = cleared(remote);
        }
        next.signature = None;
        next
    }
}

/// A `--verify-timeout` as given: `90s`, `10m`, `1h`, from a second to a day.
pub fn parse_verify_timeout(text: &str) -> Result<u64, String> {
    let length = crate::time::parse_duration(text)?;
    let seconds = u64::try_from(length.num_seconds()).unwrap_or(0);
    if !(1..=VERIFY_MOST_SECONDS).contains(&seconds) {
        return Err(format!(
            "a verify timeout is from 1s to 1d, not {}",
            crate::text::inline(text.trim())
        ));
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_keeps_what_it_does_not_name_and_an_empty_command_clears() {
        let first = WorktreeChange {
            on: Some(true),
            verify: Some("cargo test".into()),
            copy: Some(vec![" .env ".into(), String::new()]),
            ..WorktreeChange::default()
        }
        .apply(None, "main");
        assert!(first.on);
        assert_eq!(first.base, "main");
        assert_eq!(first.copy, [".env"]);
        assert_eq!(first.verify.as_deref(), Some("cargo test"));
        let mut signed = first.clone();
        signed.signature = Some("sig".into());
        let second = WorktreeChange {
            verify: Some("  ".into()),
            land: Some(LandMode::Rebase),
            ..WorktreeChange::default()
        }
        .apply(Some(&signed), "other");
        assert_eq!(second.verify, None);
        assert_eq!(second.base, "main", "the base stays once set");
        assert_eq!(second.land, LandMode::Rebase);
        assert_eq!(second.signature, None, "a change is signed anew");
        assert_eq!("Merge".parse::<LandMode>(), Ok(LandMode::Merge));
        assert!("octopus".parse::<LandMode>().is_err());
        assert_eq!(parse_verify_timeout("90s"), Ok(90));
        assert!(parse_verify_timeout("2d").is_err());
    }
}
