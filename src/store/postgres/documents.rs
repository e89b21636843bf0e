//! The small versioned documents on PostgreSQL (projects' records, agents, tokens, alerts
//! and the alert queue), each its file's bytes in a row with a count of its changes; this
//! machine's own documents stay files.

use super::client::{self, Statements};
use super::{BOARD_LOCKS, DOCUMENT_LOCKS, PgStore};
use crate::store::document::{
    Collection, Document, DocumentChange, Documents, Edit, Version, VersionAndTexts, Wait,
};
use crate::store::{Origin, StoreError, Stored};

impl Documents for PgStore {
    fn document_origin(&self, document: &Document) -> Origin {
        self.origin(Stored::Document(document.clone()))
    }

    fn load_document(&self, document: &Document) -> Result<Option<Vec<u8>>, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.load_document(document);
        };
        self.run(|client| select_document(client, kind, name))
    }

    fn document_version(&self, document: &Document) -> Option<Version> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.document_version(document);
        };
        self.run(|client| {
            Ok(client
                .query_opt(SELECT_VERSION, &[&kind, &name])?
                .map(|row| row.get::<_, i64>(0)))
        })
        .ok()
        .flatten()
        .map(counted)
    }

    /// In one round trip: the version's statement and each text's, pipelined.
    fn version_and_texts(
        &self,
        versioned: &Document,
        documents: &[Document],
    ) -> Result<VersionAndTexts, StoreError> {
        let places: Option<Vec<(&str, &str)>> = std::iter::once(versioned)
            .chain(documents)
            .map(place_of)
            .collect();
        let Some(places) = places else {
            let version = self.document_version(versioned);
            let texts = documents
                .iter()
                .map(|document| self.load_document(document))
                .collect::<Result<_, _>>()?;
            return Ok((version, texts));
        };
        let params: Vec<[&(dyn postgres::types::ToSql + Sync); 2]> = places
            .iter()
            .map(|(kind, name)| [kind as _, name as _])
            .collect();
        let statements: Vec<client::Piped<'_>> = params
            .iter()
            .enumerate()
            .map(|(index, params)| {
                let text = if index == 0 {
                    SELECT_VERSION
                } else {
                    SELECT_DOCUMENT
                };
                (text, &params[..])
            })
            .collect();
        let mut answers = self
            .run(|client| client.pipelined(&statements))?
            .into_iter();
        let version = answers
            .next()
            .and_then(|rows| rows.first().map(|row| counted(row.get::<_, i64>(0))));
        let texts = answers
            .map(|rows| rows.first().map(|row| row.get(0)))
            .collect();
        Ok((version, texts))
    }

    fn update_document(
        &self,
        document: &Document,
        wait: Wait,
        change: &mut DocumentChange<'_>,
    ) -> Result<bool, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.update_document(document, wait, change);
        };
        let mut connection = self.begin()?;
        let (class, key, what) = lock_of(document);
        if !self.take_lock(&mut connection, class, &key, &what, wait)? {
            return Ok(false);
        }
        let client = connection.client();
        let current = select_document(client, kind, name).map_err(|error| self.failed(&error))?;
        let Ok(edit) = change(current.as_deref()) else {
            return Ok(true);
        };
        let written = match edit {
            Edit::Keep => return Ok(true),
            Edit::Write(text) => write_document(client, kind, name, &text),
            Edit::WriteUnsynced(text) => {
                // What a power cut may lose harmlessly: committed without waiting for the
                // log to reach the disk, as the files write it without a sync.
                client
                    .batch_execute("SET LOCAL synchronous_commit = off")
                    .and_then(|()| write_document(client, kind, name, &text))
            }
            Edit::Remove => delete_document(client, kind, name),
        };
        written.map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))?;
        Ok(true)
    }

    fn save_document(&self, document: &Document, edit: Edit) -> Result<(), StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.save_document(document, edit);
        };
        let text = match edit {
            Edit::Keep => return Ok(()),
            Edit::Write(text) | Edit::WriteUnsynced(text) => Some(text),
            Edit::Remove => None,
        };
        let mut connection = self.begin()?;
        let client = connection.client();
        let written = match &text {
            Some(text) => write_document(client, kind, name, text),
            None => delete_document(client, kind, name),
        };
        written.map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))
    }

    fn remove_document(&self, document: &Document) -> Result<bool, StoreError> {
        let Some((kind, name)) = place_of(document) else {
            return self.shared.local.remove_document(document);
        };
        let mut connection = self.begin()?;
        // Only the sender removes a queued alert: it needs no lock.
        if !matches!(document, Document::QueuedAlert(_)) {
            let (class, key, what) = lock_of(document);
            self.take_lock(&mut connection, class, &key, &what, Wait::AsTheStoreDoes)?;
        }
        let removed = delete_document(connection.client(), kind, name)
            .map_err(|error| self.failed(&error))?;
        self.notify_document(connection.client(), document)?;
        connection.commit().map_err(|error| self.failed(&error))?;
        Ok(removed > 0)
    }

    fn list_documents(&self, collection: Collection) -> Result<Vec<String>, StoreError> {
        let kind = kind_of(collection);
        let names: Vec<String> = self.run(|client| {
            Ok(client
                .query(
                    "SELECT name FROM documents WHERE kind = $1 ORDER BY name",
                    &[&kind],
                )?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        // Sorted as the files sort them (bytewise), whatever the database's collation.
        let mut names: Vec<String> = names
            .into_iter()
            .filter(|name| is_listed(collection, name))
            .collect();
        names.sort();
        Ok(names)
    }

    fn load_collection(
        &self,
        collection: Collection,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let kind = kind_of(collection);
        let mut loaded: Vec<(String, Vec<u8>)> = self.run(|client| {
            Ok(client
                .query("SELECT name, body FROM documents WHERE kind = $1", &[&kind])?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })?;
        loaded.retain(|(name, _)| is_listed(collection, name));
        loaded.sort();
        Ok(loaded)
    }
}

/// The kind of the rows of `collection`.
fn kind_of(collection: Collection) -> &'static str {
    match collection {
        Collection::Projects => "project",
        Collection::Agents => "agent",
        Collection::QueuedAlerts => "queued-alert",
    }
}

/// Whether the document `name` of `collection` is listed: a name baton would give it.
fn is_listed(collection: Collection, name: &str) -> bool {
    match collection {
        Collection::Projects => crate::names::check(crate::names::NameKind::Project, name).is_ok(),
        Collection::Agents => crate::names::check(crate::names::NameKind::Agent, name).is_ok(),
        Collection::QueuedAlerts => name.ends_with(".json"),
    }
}

/// The text of the document `(kind, name)`, if there is one.
pub(super) fn select_document(
    client: &mut impl Statements,
    kind: &str,
    name: &str,
) -> Result<Option<Vec<u8>>, client::Error> {
    Ok(client
        .query_opt(SELECT_DOCUMENT, &[&kind, &name])?
        .map(|row| row.get(0)))
}

/// The version of the document ($1, $2).
const SELECT_VERSION: &str = "SELECT version FROM documents WHERE kind = $1 AND name = $2";

/// A document's version as the store counts it.
fn counted(version: i64) -> Version {
    Version::Counted(version as u64)
}

/// The text of the document ($1, $2).
pub(super) const SELECT_DOCUMENT: &str = "SELECT body FROM documents WHERE kind = $1 AND name = $2";

/// Removes the document `(kind, name)`: how many there were (0 or 1).
pub(super) fn delete_document(
    client: &mut impl Statements,
    kind: &str,
    name: &str,
) -> Result<u64, client::Error> {
    client.execute(
        "DELETE FROM documents WHERE kind = $1 AND name = $2",
        &[&kind, &name],
    )
}

/// Writes the text of the document `(kind, name)`, counting its version up.
pub(super) fn write_document(
    client: &mut impl Statements,
    kind: &str,
    name: &str,
    text: &[u8],
) -> Result<u64, client::Error> {
    client.execute(WRITE_DOCUMENT, &[&kind, &name, &text])
}

/// Writes the text ($3) of the document ($1, $2), counting its version up.
pub(super) const WRITE_DOCUMENT: &str = "INSERT INTO documents (kind, name, body, version) \
     VALUES ($1, $2, $3, 1) \
     ON CONFLICT (kind, name) DO UPDATE SET body = excluded.body, \
         version = documents.version + 1";

/// Where a document is kept: its kind and name, or `None` for this machine's own, which
/// are files.
pub(super) fn place_of(document: &Document) -> Option<(&'static str, &str)> {
    Some(match document {
        Document::Project(id) => ("project", id.as_str()),
        Document::Agent(name) => ("agent", name.as_str()),
        Document::Tokens => ("tokens", ""),
        Document::Alerts => ("alerts", ""),
        Document::AlertsDropped => ("alerts-dropped", ""),
        Document::QueuedAlert(name) => ("queued-alert", name.as_str()),
        Document::SetupManifest | Document::ProjectMap => return None,
    })
}

/// The lock that guards a document, and its words: a project's record is guarded by its
/// board's lock (a project change and a board change never interleave), the alert queue's
/// documents by the queue's one lock.
pub(super) fn lock_of(document: &Document) -> (i32, String, String) {
    match document {
        Document::Project(id) => (
            BOARD_LOCKS,
            id.clone(),
            format!("the board lock of project {id}"),
        ),
        Document::AlertsDropped | Document::QueuedAlert(_) => (
            DOCUMENT_LOCKS,
            "alert-queue".to_string(),
            "the alert queue lock".to_string(),
        ),
        other => {
            let (kind, name) = place_of(other).unwrap_or(("", ""));
            (
                DOCUMENT_LOCKS,
                format!("{kind}/{name}"),
                format!("the lock of {kind} {name}").trim_end().to_string(),
            )
        }
    }
}
