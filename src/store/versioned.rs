//! Small JSON documents with a `schema` number: read with the schema checked, written whole
//! and atomically. Projects, agent registry records, mail read positions, the tokens, the
//! alerts, the setup manifest and the project map are all kept this way, so each says only
//! what it holds, and each is changed by the one lock-load-edit-save, [`update`], wherever
//! it is kept ([`Documents`]).
//!
//! The board is not: it has its own byte-exact layout (`files::layout`), read line by line.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::document::{Document, Documents, Edit, Version, Wait};
use super::{GaveUp, Origin, StoreError, Stored};
use crate::file::{atomic, regular};

/// A file format with a `schema` number in it.
pub trait Versioned: Serialize + DeserializeOwned {
    /// The schema this binary writes, and the highest it reads.
    const SCHEMA: u32;

    /// The schema the value was read with.
    fn schema(&self) -> u32;
}

/// Reads `what` from the file at `path`, or `None` when there is none. Anything but a
/// regular file is refused (see [`regular`]), and so is a schema newer than
/// [`Versioned::SCHEMA`]: a newer baton wrote it, and this one would lose what it does not
/// know.
pub fn load<T: Versioned>(what: Stored, path: &Path) -> Result<Option<T>, StoreError> {
    let bytes = match regular::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(path)(error)),
    };
    decode(&Origin::file(what, path), &bytes).map(Some)
}

/// The value in `bytes`, the text of what `origin` names, with its schema checked.
pub fn decode<T: Versioned>(origin: &Origin, bytes: &[u8]) -> Result<T, StoreError> {
    let value: T = serde_json::from_slice(bytes)
        .map_err(|error| StoreError::corrupt(origin)(error.to_string()))?;
    if value.schema() > T::SCHEMA {
        return Err(StoreError::NewerSchema {
            origin: origin.clone(),
            found: u64::from(value.schema()),
            known: T::SCHEMA,
        });
    }
    Ok(value)
}

/// Writes `value` to `path` atomically, pretty-printed with a final newline, and durably: it
/// is on disk when this returns. The caller holds whatever lock guards the file.
pub fn save<T: Versioned>(what: Stored, path: &Path, value: &T) -> Result<(), StoreError> {
    let text = text_of(&Origin::file(what, path), value)?;
    Ok(atomic::replace(path, &text, None)?)
}

/// The text `value` is kept as (at `origin`): pretty-printed JSON with a final newline.
pub fn text_of<T: Versioned>(origin: &Origin, value: &T) -> Result<Vec<u8>, StoreError> {
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|error| StoreError::corrupt(origin)(error.to_string()))?;
    text.push(b'\n');
    Ok(text)
}

/// How durably a change of a document is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// On disk when the change returns.
    Durable,
    /// Written whole and atomically, not synced ([`Edit::WriteUnsynced`]).
    Unsynced,
}

/// The value of `document`, its schema checked; `None` when there is none. Read without a
/// lock: a reader sees the whole old value or the whole new one.
pub fn read<T: Versioned>(
    documents: &dyn Documents,
    document: &Document,
) -> Result<Option<T>, StoreError> {
    let origin = documents.document_origin(document);
    documents
        .load_document(document)?
        .map(|text| decode(&origin, &text))
        .transpose()
}

/// The one lock-load-edit-save of a versioned document: `change` gets its value under the
/// document's lock (`None` for none yet), and what it leaves is written, durably, when it
/// differs from what was read (`None` where there was a value removes it). A change that
/// fails writes nothing.
pub fn update<T, R, E>(
    documents: &dyn Documents,
    document: &Document,
    change: impl FnOnce(&mut Option<T>) -> Result<R, E>,
) -> Result<R, E>
where
    T: Versioned + Clone + PartialEq,
    E: From<StoreError>,
{
    let done = update_with(documents, document, Wait::AsTheStoreDoes, |value| {
        change(value).map(|result| (result, Durability::Durable))
    })?;
    // Only a change that need not wait can find the lock busy.
    done.ok_or_else(|| StoreError::Unfinished.into())
}

/// [`update`], with the change saying how durably it is written, and with `wait` saying
/// whether to wait for a busy lock: `None` when it did not and nothing was done.
pub fn update_with<T, R, E>(
    documents: &dyn Documents,
    document: &Document,
    wait: Wait,
    change: impl FnOnce(&mut Option<T>) -> Result<(R, Durability), E>,
) -> Result<Option<R>, E>
where
    T: Versioned + Clone + PartialEq,
    E: From<StoreError>,
{
    let origin = documents.document_origin(document);
    let mut change = Some(change);
    let mut outcome: Option<Result<R, E>> = None;
    let done = documents.update_document(document, wait, &mut |text| {
        // A store runs a change once; were it asked again, the change has nothing to give.
        let change = change.take().ok_or(GaveUp)?;
        let edit = edit_value(&origin, text, change);
        let (result, edit) = match edit {
            Ok(done) => done,
            Err(failed) => {
                outcome = Some(Err(failed));
                return Err(GaveUp);
            }
        };
        outcome = Some(Ok(result));
        Ok(edit)
    });
    match (done, outcome) {
        (_, Some(Err(failed))) => Err(failed),
        (Err(failed), _) => Err(failed.into()),
        (Ok(false), _) => Ok(None),
        (Ok(true), Some(Ok(result))) => Ok(Some(result)),
        (Ok(true), None) => Err(StoreError::Unfinished.into()),
    }
}

/// Runs `change` on the value in `text` (the document at `origin`), and says what to write.
fn edit_value<T, R, E>(
    origin: &Origin,
    text: Option<&[u8]>,
    change: impl FnOnce(&mut Option<T>) -> Result<(R, Durability), E>,
) -> Result<(R, Edit), E>
where
    T: Versioned + Clone + PartialEq,
    E: From<StoreError>,
{
    let before: Option<T> = text.map(|text| decode(origin, text)).transpose()?;
    let mut value = before.clone();
    let (result, durability) = change(&mut value)?;
    let edit = match &value {
        Some(changed) if value != before => {
            let text = text_of(origin, changed)?;
            match durability {
                Durability::Durable => Edit::Write(text),
                Durability::Unsynced => Edit::WriteUnsynced(text),
            }
        }
        None if before.is_some() => Edit::Remove,
        _ => Edit::Keep,
    };
    Ok((result, edit))
}

/// Values parsed from documents, each kept with the version it was read at and handed out
/// until the document changes (a server reads the tokens on every request).
#[derive(Debug)]
pub struct Kept<T> {
    kept: Mutex<HashMap<Document, (Version, T)>>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            kept: Mutex::default(),
        }
    }
}

impl<T: Clone> Kept<T> {
    /// The value of `document`: the one kept if the document is still the version it was
    /// read at, else what `load` reads now (kept for next time). The version is taken
    /// before the document is read, so a document changed in between is read again at the
    /// next look. A document that is not there is loaded every time.
    pub fn get<E>(
        &self,
        documents: &dyn Documents,
        document: &Document,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        self.get_at(documents.document_version(document), document, load)
    }

    /// [`Kept::get`], given the version of `document` as just read (`None`: there is none).
    pub fn get_at<E>(
        &self,
        version: Option<Version>,
        document: &Document,
        load: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let kept = || self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(version) = version else {
            kept().remove(document);
            return load();
        };
        if let Some((at, value)) = kept().get(document)
            && *at == version
        {
            return Ok(value.clone());
        }
        let value = load()?;
        kept().insert(document.clone(), (version, value.clone()));
        Ok(value)
    }

    /// The value kept of `document`, whatever its version now (`None` before the first
    /// read): a guess, to be confirmed by [`Kept::get_at`].
    pub fn last(&self, document: &Document) -> Option<T> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get(document).map(|(_, value)| value.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::file::FileError;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Note {
        schema: u32,
        text: String,
    }

    impl Versioned for Note {
        const SCHEMA: u32 = 2;

        fn schema(&self) -> u32 {
            self.schema
        }
    }

    #[test]
    fn saves_pretty_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.json");
        assert_eq!(load::<Note>(Stored::Other, &path).unwrap(), None);
        let note = Note {
            schema: 2,
            text: "hi".into(),
        };
        save(Stored::Other, &path, &note).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"schema\": 2,\n  \"text\": \"hi\"\n}\n"
        );
        assert_eq!(load::<Note>(Stored::Other, &path).unwrap(), Some(note));
    }

    #[test]
    fn refuses_a_newer_schema_garbage_and_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.json");
        std::fs::write(&path, "{\"schema\": 3, \"text\": \"\"}").unwrap();
        assert!(matches!(
            load::<Note>(Stored::Other, &path),
            Err(StoreError::NewerSchema {
                found: 3,
                known: 2,
                ..
            })
        ));
        std::fs::write(&path, "{\"schema\": ").unwrap();
        assert!(matches!(
            load::<Note>(Stored::Other, &path),
            Err(StoreError::Corrupt { .. })
        ));
        assert!(matches!(
            load::<Note>(Stored::Other, dir.path()),
            Err(StoreError::File(FileError::NotRegular { .. }))
        ));
    }
}
