//! One file's change as setup computes it (the text now, the text wanted, and why), and the
//! files of a plan being staged, each read once. The plan makes them, the parts that stage
//! a client's files (its A2A subagents, the listen service) add to them, and [`super::run`]
//! writes them.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Result, SetupError};
use crate::file::regular;
use crate::store::StoreError;

use super::diff;
use super::json::{Document, KeyPath};

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
    pub(super) format: Format,
    pub(super) created_keys: Vec<KeyPath>,
    /// Deleting the file also removes its directory, if that is then empty.
    pub(super) takes_empty_dir: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
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
    pub(super) fn is_setups_own(self) -> bool {
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
    pub(super) fn read(path: &Path, format: Format) -> Result<FileEdit> {
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

    pub(super) fn document(&self) -> Result<Document> {
        Document::parse(&self.path, self.after.as_deref())
    }
}

/// The files of one plan, each read once however many things change in it.
#[derive(Default)]
pub(super) struct Staging {
    pub(super) edits: Vec<FileEdit>,
    /// What the user should know of what this plan leaves out.
    pub(super) notes: Vec<String>,
}

impl Staging {
    pub(super) fn file(&mut self, path: &Path, format: Format) -> Result<&mut FileEdit> {
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

/// A file's text; `None` when it does not exist.
pub(super) fn read_text(path: &Path) -> Result<Option<String>> {
    match regular::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            SetupError::NotUtf8 {
                path: path.to_path_buf(),
            }
            .into()
        }),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path)(error).into()),
    }
}
