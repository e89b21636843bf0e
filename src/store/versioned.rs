//! Small JSON files with a `schema` number: read with the schema checked, written whole and
//! atomically. The project, agent registry records, mail read positions and the setup
//! manifest are all kept this way, so each says only what it holds.
//!
//! The board is not: it has its own byte-exact layout (`board_layout`), read line by line.

use std::io::ErrorKind;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{StoreError, atomic, regular};

/// A file format with a `schema` number in it.
pub trait Versioned: Serialize + DeserializeOwned {
    /// The schema this binary writes, and the highest it reads.
    const SCHEMA: u32;

    /// The schema the value was read with.
    fn schema(&self) -> u32;
}

/// Reads the file at `path`, or `None` when there is none. Anything but a regular file is
/// refused (see [`regular`]), and so is a schema newer than [`Versioned::SCHEMA`]: a newer
/// baton wrote it, and this one would lose what it does not know.
pub fn load<T: Versioned>(path: &Path) -> Result<Option<T>, StoreError> {
    let bytes = match regular::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(StoreError::io(path)(error)),
    };
    decode(path, &bytes).map(Some)
}

/// The value in `bytes`, the text of the file at `path`, with its schema checked.
pub fn decode<T: Versioned>(path: &Path, bytes: &[u8]) -> Result<T, StoreError> {
    let value: T = serde_json::from_slice(bytes).map_err(|error| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    if value.schema() > T::SCHEMA {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: u64::from(value.schema()),
            known: T::SCHEMA,
        });
    }
    Ok(value)
}

/// Writes `value` to `path` atomically, pretty-printed with a final newline, and durably: it
/// is on disk when this returns. The caller holds whatever lock guards the file.
pub fn save<T: Versioned>(path: &Path, value: &T) -> Result<(), StoreError> {
    atomic::replace(path, &text_of(path, value)?, None)
}

/// As [`save`], but not durable: written whole and atomically, with nothing synced
/// ([`atomic::replace_unsynced`]). For a change that only records activity (an agent's last
/// seen, a token's last use): losing it to a power cut is harmless, and it comes often
/// enough that two syncs each time would be a large part of a command's cost.
pub fn save_unsynced<T: Versioned>(path: &Path, value: &T) -> Result<(), StoreError> {
    atomic::replace_unsynced(path, &text_of(path, value)?)
}

/// Writes `text`, a document as [`text_of`] makes it, to `path` atomically and durably.
pub fn save_bytes(path: &Path, text: &[u8]) -> Result<(), StoreError> {
    atomic::replace(path, text, None)
}

/// The file `value` is saved as: pretty-printed JSON with a final newline.
pub fn text_of<T: Versioned>(path: &Path, value: &T) -> Result<Vec<u8>, StoreError> {
    let mut text = serde_json::to_vec_pretty(value).map_err(|error| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: error.to_string(),
    })?;
    text.push(b'\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

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
        assert_eq!(load::<Note>(&path).unwrap(), None);
        let note = Note {
            schema: 2,
            text: "hi".into(),
        };
        save(&path, &note).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"schema\": 2,\n  \"text\": \"hi\"\n}\n"
        );
        assert_eq!(load::<Note>(&path).unwrap(), Some(note));
    }

    #[test]
    fn an_unsynced_save_writes_the_same_whole_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let durable = dir.path().join("durable.json");
        let activity = dir.path().join("activity.json");
        let note = Note {
            schema: 2,
            text: "seen".into(),
        };
        save(&durable, &note).unwrap();
        std::fs::write(
            &activity,
            "{\"schema\": 2, \"text\": \"an older, longer note\"}",
        )
        .unwrap();
        save_unsynced(&activity, &note).unwrap();
        assert_eq!(
            std::fs::read(&activity).unwrap(),
            std::fs::read(&durable).unwrap()
        );
        assert_eq!(load::<Note>(&activity).unwrap(), Some(note));
        assert!(!atomic::temp_path(&activity).exists());
    }

    #[test]
    fn refuses_a_newer_schema_garbage_and_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("note.json");
        std::fs::write(&path, "{\"schema\": 3, \"text\": \"\"}").unwrap();
        assert!(matches!(
            load::<Note>(&path),
            Err(StoreError::NewerSchema {
                found: 3,
                known: 2,
                ..
            })
        ));
        std::fs::write(&path, "{\"schema\": ").unwrap();
        assert!(matches!(
            load::<Note>(&path),
            Err(StoreError::Corrupt { .. })
        ));
        assert!(matches!(
            load::<Note>(dir.path()),
            Err(StoreError::NotRegular { .. })
        ));
    }
}
