//! Small versioned documents, by what they are rather than where they live: an agent's
//! registry record, a project's record, the tokens, the alerts. A store keeps the hub's;
//! this machine's own (the setup manifest, the project map) are always files under the
//! home ([`super::files::HomeFiles`]). Each is read without a lock and changed by one
//! locked read-change-write ([`Documents::update_document`]), whose typed form is
//! `store::versioned::update`.

use std::fmt;

use super::cache::Stamp;
use super::{GaveUp, Origin, StoreError};

/// The longest document a copy carries: far more than baton writes in any (a registry
/// record, the tokens of thousands of agents), far less than what fills a machine's memory.
pub const COPIED_LIMIT: u64 = 16 * 1024 * 1024;

/// The refusal of a document at `origin` longer than [`COPIED_LIMIT`].
pub fn too_long(origin: Origin) -> StoreError {
    StoreError::Corrupt {
        origin,
        detail: format!(
            "longer than {} MiB, more than baton writes in any document",
            COPIED_LIMIT / (1024 * 1024)
        ),
    }
}

/// A small versioned document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Document {
    /// A project's record: its workspace, coordinator, settings (`projects/<id>/project.json`,
    /// guarded by the board lock, so a project change and a board change never interleave).
    Project(String),
    /// An agent's registry record (`agents/<name>.json`).
    Agent(String),
    /// The tokens of `baton serve`, hashed (`tokens.json`).
    Tokens,
    /// The alerts: where each posts, with its secret (`alerts.json`).
    Alerts,
    /// The alerts the full queue turned away since the sender last logged them
    /// (`alerts/dropped.json`, guarded by the queue's lock).
    AlertsDropped,
    /// One alert waiting to be posted (`alerts/queue/<name>`): the queue's lock guards
    /// adding one; only the one sender rewrites or removes them.
    QueuedAlert(String),
    /// This machine's: what `baton setup` created in the clients' files (`setup.json`).
    SetupManifest,
    /// This machine's: the local directories standing for a remote hub's projects
    /// (`project-map.json`).
    ProjectMap,
}

impl Document {
    /// The document's name in a store that names things rather than files: its kind, and
    /// its own name where there are many (`agent/bob`, `tokens`).
    pub fn name(&self) -> String {
        match self {
            Document::Project(id) => format!("project/{id}"),
            Document::Agent(name) => format!("agent/{name}"),
            Document::Tokens => "tokens".to_string(),
            Document::Alerts => "alerts".to_string(),
            Document::AlertsDropped => "alerts-dropped".to_string(),
            Document::QueuedAlert(name) => format!("queued-alert/{name}"),
            Document::SetupManifest => "setup".to_string(),
            Document::ProjectMap => "project-map".to_string(),
        }
    }
}

/// The documents listed together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collection {
    /// The ids of the projects.
    Projects,
    /// The names of the registered agents.
    Agents,
    /// The names of the alerts waiting to be posted, oldest first.
    QueuedAlerts,
}

impl Collection {
    /// The document of `collection` named `name`.
    pub fn document(self, name: &str) -> Document {
        match self {
            Collection::Projects => Document::Project(name.to_string()),
            Collection::Agents => Document::Agent(name.to_string()),
            Collection::QueuedAlerts => Document::QueuedAlert(name.to_string()),
        }
    }
}

/// What a change of a document leaves to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Nothing: the document stays as it was.
    Keep,
    /// The new text, durable when the change returns.
    Write(Vec<u8>),
    /// The new text, written whole and atomically but not synced: for a change that only
    /// records activity (an agent's last seen), which a power cut may lose harmlessly and
    /// which comes often enough that syncing it would be much of a command's cost.
    WriteUnsynced(Vec<u8>),
    /// No document any more.
    Remove,
}

/// Whether a change waits for a document's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// As the store's lock policy says, then fails.
    AsTheStoreDoes,
    /// Not at all: a busy lock leaves the document unchanged (a token's last use, which
    /// the next request records).
    Never,
}

/// One version of a document: it changes whenever the document does, so what was parsed
/// of one version can be kept until the next (a server reads the tokens on every request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// A file's identity and times ([`Stamp`]).
    File(Stamp),
    /// How many times a database's row was written.
    Counted(u64),
}

/// A change of a document's text (`None` for none yet): what to write, or [`GaveUp`].
pub type DocumentChange<'a> = dyn FnMut(Option<&[u8]>) -> Result<Edit, GaveUp> + 'a;

/// A document's version and other documents' texts, read together
/// ([`Documents::version_and_texts`]).
pub type VersionAndTexts = (Option<Version>, Vec<Option<Vec<u8>>>);

/// Where small versioned documents are kept.
pub trait Documents: fmt::Debug + Send + Sync {
    /// What `document` is and where, to name it in errors and messages (its file, or its
    /// row).
    fn document_origin(&self, document: &Document) -> Origin;

    /// The text of `document`, read without a lock; `None` when there is none.
    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError>;

    /// The text of `document` as a copy to another store takes it (`store copy`): as
    /// [`Documents::load_document`] reads it, but never through a symbolic link (refused as
    /// [`StoreError::NotRegular`]) and never longer than [`COPIED_LIMIT`] (refused as
    /// [`StoreError::Corrupt`]), so that a copy carries no file a link points at and reads
    /// no file of any size whole.
    fn load_document_to_copy(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        match self.load_document(document)? {
            Some(text) if text.len() as u64 > COPIED_LIMIT => {
                Err(too_long(self.document_origin(document)))
            }
            text => Ok(text),
        }
    }

    /// The version of `document` now; `None` when there is none (or it cannot be told).
    fn document_version(&self, document: &Document) -> Option<Version>;

    /// One change of `document` under its lock: its text is read again, `change` is run
    /// on it once (`None` for no document yet) and what it returns is written. A change
    /// that gave up writes nothing. With [`Wait::Never`], false when the lock was busy and
    /// nothing was done.
    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError>;

    /// Writes `text` as `document` without its lock: for documents that one writer alone
    /// rewrites (a queued alert, by the sender).
    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError>;

    /// Removes `document` (under its lock, but for a queued alert, which only the sender
    /// removes); whether it was there.
    fn remove_document(&self, document: &Document) -> Result<bool, StoreError>;

    /// The names of the documents in `collection`, sorted.
    fn list_documents(&self, collection: Collection) -> Result<Vec<String>, StoreError>;

    /// The documents of `collection`, each its name and text, sorted by name: its names
    /// ([`Documents::list_documents`]) and each one's text ([`Documents::load_document`]),
    /// one removed meanwhile left out. A store may read them all at once.
    fn load_collection(
        &self,
        collection: Collection,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut loaded = Vec::new();
        for name in self.list_documents(collection)? {
            if let Some(text) = self.load_document(&collection.document(&name))? {
                loaded.push((name, text));
            }
        }
        Ok(loaded)
    }

    /// The version of `versioned` now ([`Documents::document_version`]) and the texts of
    /// `documents` ([`Documents::load_document`]), read together: what a hub's token check
    /// reads with the session its request opens. A store may read them all in one round
    /// trip; the version is read first.
    fn version_and_texts(
        &self,
        versioned: &Document,
        documents: &[Document],
    ) -> Result<VersionAndTexts, StoreError> {
        let version = self.document_version(versioned);
        let texts = documents
            .iter()
            .map(|document| self.load_document(document))
            .collect::<Result<_, _>>()?;
        Ok((version, texts))
    }
}
