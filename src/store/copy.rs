//! `baton store copy`: a whole hub's state carried from one store to another (the files of
//! a hub home to PostgreSQL to move up, PostgreSQL to files for a snapshot), through the
//! [`Store`] seam alone, so any two stores copy alike.
//!
//! Each project travels as one [`ProjectImage`], read by the source with no change half made
//! (on files its board, log, archive and record under the board lock, its mail under the
//! mail lock; on PostgreSQL all in one transaction) and written by the destination whole
//! (under the same locks, or in one transaction); the small documents (agents, tokens as their
//! hashes, alerts and their queue) travel as their bytes. A copy is idempotent: what the
//! destination already holds alike is left untouched (no write, no version counted up), and
//! what it holds differently is refused, naming it, unless the copy is asked to replace.
//! Nothing is removed from the destination: what only it holds stays.
//!
//! What is copied is read as every other read takes it: the store refuses a document
//! reached through a symbolic link or longer than any baton writes, and the domains above
//! the store ([`Vetting`]) refuse one that does not read as theirs (a registry record naming
//! another agent than its file) and say what of a document is a hub's own bookkeeping, left
//! out when the two stores' copies are compared. What is refused is skipped and named, never
//! copied; so is a line of a log or of the mail that does not read.

use serde::Serialize;

use super::document::{Collection, Document, Edit, Wait};
use super::{Origin, Store, StoreError};
use crate::board::Board;
use crate::board::mail::{Message, ReadPositions};
use crate::board::record::ActivityRecord;
use crate::board::reservation::Reservation;
use crate::board::task::Task;
use crate::file::FileError;

/// Everything a store holds of one project but its presence: its record, its board, its
/// activity log in order (its numbers are the places), its archive, its mail with the read
/// positions, and the mail's archive. Made to compare equal whichever store read it: tasks
/// by id, archives in the order the files keep them (by month).
#[derive(Debug, Clone, Serialize)]
pub struct ProjectImage {
    /// The project's record (`project.json`), as its bytes; `None` for none.
    #[serde(skip)]
    pub record: Option<Vec<u8>>,
    pub board: Option<BoardImage>,
    pub log: Vec<ActivityRecord>,
    pub archive: Vec<Task>,
    pub mail: Vec<Message>,
    /// `None` when nobody has read anything yet (no record of positions kept).
    pub read_positions: Option<ReadPositions>,
    pub mail_archive: Vec<Message>,
    /// The lines of the source's logs, archive and mail that did not read, each named (`PATH
    /// line N …`): not in the image, and not compared.
    #[serde(skip)]
    pub unreadable: Vec<String>,
}

/// A board's own fields, its reservations (in the order taken) and its tasks, in id order.
#[derive(Debug, Clone, Serialize)]
pub struct BoardImage {
    pub schema: u32,
    pub next_id: u64,
    pub reservations: Vec<Reservation>,
    pub tasks: Vec<Task>,
}

impl BoardImage {
    /// The image of `board` (kept at `origin`), every task decoded.
    pub fn of(board: &Board, origin: &Origin) -> Result<BoardImage, StoreError> {
        let mut tasks = board
            .tasks()
            .map(|task| task.cloned())
            .collect::<Result<Vec<Task>, _>>()
            .map_err(|refused| StoreError::board(origin.clone(), refused))?;
        tasks.sort_by_key(|task| task.id);
        Ok(BoardImage {
            schema: board.schema,
            next_id: board.next_id,
            reservations: board.reservations().to_vec(),
            tasks,
        })
    }

    /// The board of `project` this image is.
    pub fn board(&self, project: &str) -> Board {
        let mut board = Board::new(project);
        board.schema = self.schema;
        board.next_id = self.next_id;
        board.set_reservations(self.reservations.clone());
        for task in &self.tasks {
            board.push(task.clone());
        }
        board
    }
}

impl ProjectImage {
    /// The image of a project a store does not hold.
    pub fn empty() -> ProjectImage {
        ProjectImage {
            record: None,
            board: None,
            log: Vec::new(),
            archive: Vec::new(),
            mail: Vec::new(),
            read_positions: None,
            mail_archive: Vec::new(),
            unreadable: Vec::new(),
        }
    }

    /// Puts the archives in the order the files keep them (each month's file in turn, each
    /// in the order archived), so that images of the same state compare equal.
    pub fn normalized(mut self) -> ProjectImage {
        self.archive.sort_by_key(|task| task.updated_at.month());
        self.mail_archive.sort_by_key(|message| message.at.month());
        self
    }

    /// Whether the store holds nothing of the project.
    pub fn is_empty(&self) -> bool {
        self.record.is_none()
            && self.board.is_none()
            && self.log.is_empty()
            && self.archive.is_empty()
            && self.mail.is_empty()
            && self.read_positions.is_none()
            && self.mail_archive.is_empty()
    }

    /// Whether `other` holds the same.
    fn is_same_as(&self, other: &ProjectImage) -> bool {
        // Compared as their JSON: every type in an image serializes, not all compare.
        self.record == other.record
            && serde_json::to_vec(self).ok() == serde_json::to_vec(other).ok()
    }
}

/// What a copy is asked to do with what the destination already holds differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Differing {
    /// Refuse the copy, writing nothing.
    Refuse,
    /// Write the source's over it.
    Replace,
}

/// What the domains know of the documents a copy carries and the store does not: whether
/// one reads as baton reads it, and which of its parts are a hub's own bookkeeping rather
/// than what a user wrote.
pub trait Vetting {
    /// Why `text`, the source's `document` (kept at `origin`), is not one baton would read;
    /// `None` when it is.
    fn refusal(&self, document: &Document, origin: &Origin, text: &[u8]) -> Option<String>;

    /// What of `text` two stores must hold alike for the copy to leave the destination's as
    /// it is: `text` less what a hub writes for itself as it runs.
    fn compared(&self, document: &Document, text: &[u8]) -> Vec<u8>;
}

/// Something of the source a copy left behind, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// `agent bob`, `project app`, `a line of project app`.
    pub what: String,
    pub why: String,
}

/// What a copy carried (counted in the source) and what it had to write.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Copied {
    pub projects: usize,
    /// On the boards and in the archives.
    pub tasks: usize,
    pub log_records: usize,
    /// In the mail and its archive.
    pub messages: usize,
    pub agents: usize,
    pub tokens: usize,
    /// Alerts set up and alerts queued.
    pub alerts: usize,
    /// The projects and documents written; 0 when the destination held them all already.
    pub written: usize,
    /// The projects and documents the destination held differently and were replaced.
    pub replaced: Vec<String>,
    /// What only the destination holds (left as it is).
    pub only_in_destination: Vec<String>,
    /// What of the source was not copied: documents that do not read as baton reads them,
    /// lines of a log or the mail that do not read.
    pub skipped: Vec<Skipped>,
}

/// Why a copy did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the source and the destination are the same store, {0}")]
    SameStore(String),
    /// The destination holds some of the same things differently; nothing was written.
    #[error("{destination} already holds {} differently; nothing was copied", listing(.differing))]
    Differs {
        destination: String,
        differing: Vec<String>,
    },
}

fn listing(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut shown = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        shown.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    shown
}

/// One thing a copy carries: a project whole, or a document.
enum Item {
    Project(String, Box<ProjectImage>),
    Document(Document, Vec<u8>),
}

impl Item {
    fn name(&self) -> String {
        match self {
            Item::Project(id, _) => format!("project {id}"),
            Item::Document(document, _) => document_name(document),
        }
    }
}

fn document_name(document: &Document) -> String {
    match document {
        Document::Project(id) => format!("project {id}"),
        Document::Agent(name) => format!("agent {name}"),
        Document::Tokens => "the tokens".to_string(),
        Document::Alerts => "the alerts".to_string(),
        Document::AlertsDropped => "the alert queue's dropped count".to_string(),
        Document::QueuedAlert(name) => format!("queued alert {name}"),
        Document::SetupManifest => "the setup manifest".to_string(),
        Document::ProjectMap => "the project map".to_string(),
    }
}

/// Copies everything `from` holds to `to`. First every item is read from both and compared
/// (as `vetting` says); if the destination holds any differently and `differing` says to
/// refuse, nothing is written. Then each item the destination lacks or holds differently
/// is written, each whole; what it holds alike is not touched. What of the source does not
/// read is skipped, named in [`Copied::skipped`]. Hubs should not be writing either store
/// meanwhile: each project is read as one moment's state, but two projects (or a project
/// and the agents) may be read at different moments.
pub fn copy(
    from: &dyn Store,
    to: &dyn Store,
    differing: Differing,
    vetting: &dyn Vetting,
) -> Result<Copied, CopyError> {
    if from.location() == to.location() {
        return Err(CopyError::SameStore(from.location()));
    }
    let mut copied = Copied::default();
    let mut items = Vec::new();
    for id in from.list_documents(Collection::Projects)? {
        let project = Document::Project(id.clone());
        let skip = |why: String| Skipped {
            what: document_name(&project),
            why,
        };
        let image = match from.export_project(&id) {
            Ok(image) => image,
            Err(error) if is_unreadable(&error) => {
                copied.skipped.push(skip(error.to_string()));
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        if let Some(record) = &image.record
            && let Some(why) = vetting.refusal(&project, &from.document_origin(&project), record)
        {
            copied.skipped.push(skip(why));
            continue;
        }
        copied
            .skipped
            .extend(image.unreadable.iter().map(|line| Skipped {
                what: format!("a line of project {id}"),
                why: line.clone(),
            }));
        copied.projects += 1;
        copied.tasks += image.board.as_ref().map_or(0, |board| board.tasks.len());
        copied.tasks += image.archive.len();
        copied.log_records += image.log.len();
        copied.messages += image.mail.len() + image.mail_archive.len();
        items.push(Item::Project(id, Box::new(image)));
    }
    let mut documents = vec![Document::Tokens, Document::Alerts, Document::AlertsDropped];
    for name in from.list_documents(Collection::Agents)? {
        documents.push(Document::Agent(name));
    }
    for name in from.list_documents(Collection::QueuedAlerts)? {
        documents.push(Document::QueuedAlert(name));
    }
    for document in documents {
        let text = match from.load_document_to_copy(&document) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(error) if is_unreadable(&error) => {
                copied.skipped.push(Skipped {
                    what: document_name(&document),
                    why: error.to_string(),
                });
                continue;
            }
            Err(error) => return Err(error.into()),
        };
        if let Some(why) = vetting.refusal(&document, &from.document_origin(&document), &text) {
            copied.skipped.push(Skipped {
                what: document_name(&document),
                why,
            });
            continue;
        }
        match &document {
            Document::Agent(_) => copied.agents += 1,
            Document::Tokens => copied.tokens += count_entries(&text, "tokens"),
            Document::Alerts => copied.alerts += count_entries(&text, "alerts"),
            Document::QueuedAlert(_) => copied.alerts += 1,
            _ => {}
        }
        items.push(Item::Document(document, text));
    }

    // What the destination holds of each, compared before anything is written.
    let mut to_write = Vec::new();
    let mut differs = Vec::new();
    for item in items {
        let held = match &item {
            Item::Project(id, image) => {
                let held = to.export_project(id)?;
                match held.is_empty() {
                    true => Held::Nothing,
                    false if held.is_same_as(image) => Held::Alike,
                    false => Held::Differently,
                }
            }
            Item::Document(document, text) => match to.load_document(document)? {
                None => Held::Nothing,
                Some(held)
                    if held == *text
                        || vetting.compared(document, &held)
                            == vetting.compared(document, text) =>
                {
                    Held::Alike
                }
                Some(_) => Held::Differently,
            },
        };
        match held {
            Held::Nothing => to_write.push(item),
            Held::Alike => {}
            Held::Differently => {
                differs.push(item.name());
                to_write.push(item);
            }
        }
    }
    if !differs.is_empty() && differing == Differing::Refuse {
        return Err(CopyError::Differs {
            destination: to.location(),
            differing: differs,
        });
    }
    copied.only_in_destination = only_in(to, from)?;
    for item in to_write {
        match &item {
            Item::Project(id, image) => to.import_project(id, image)?,
            Item::Document(document, text) => {
                let text = text.clone();
                to.update_document(document, Wait::AsTheStoreDoes, &mut |_| {
                    Ok(Edit::Write(text.clone()))
                })?;
            }
        }
        copied.written += 1;
    }
    copied.replaced = differs;
    Ok(copied)
}

/// Whether `error` says what was read does not read (a link, a device, too long, not
/// baton's or a newer baton's): skipped, where any other failure ends the copy.
fn is_unreadable(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::File(FileError::NotRegular { .. })
            | StoreError::Corrupt { .. }
            | StoreError::NewerSchema { .. }
    )
}

/// What the destination holds of an item.
enum Held {
    Nothing,
    Alike,
    Differently,
}

/// The projects, agents and queued alerts `to` holds that `from` does not.
fn only_in(to: &dyn Store, from: &dyn Store) -> Result<Vec<String>, StoreError> {
    let mut only = Vec::new();
    for (collection, word) in [
        (Collection::Projects, "project"),
        (Collection::Agents, "agent"),
        (Collection::QueuedAlerts, "queued alert"),
    ] {
        let source = from.list_documents(collection)?;
        for name in to.list_documents(collection)? {
            if !source.contains(&name) {
                only.push(format!("{word} {name}"));
            }
        }
    }
    Ok(only)
}

/// How many entries the list `field` of a JSON document holds (0 when it does not read).
fn count_entries(text: &[u8], field: &str) -> usize {
    serde_json::from_slice::<serde_json::Value>(text)
        .ok()
        .and_then(|value| value.get(field)?.as_array().map(Vec::len))
        .unwrap_or(0)
}

/// For the store's own tests (those of PostgreSQL, Unix only): every document taken as it
/// is, compared byte for byte.
#[cfg(all(test, unix))]
pub(crate) struct Unvetted;

#[cfg(all(test, unix))]
impl Vetting for Unvetted {
    fn refusal(&self, _: &Document, _: &Origin, _: &[u8]) -> Option<String> {
        None
    }

    fn compared(&self, _: &Document, text: &[u8]) -> Vec<u8> {
        text.to_vec()
    }
}
