//! Append-only files of one JSON object per line: the activity log, mail and archives.
//!
//! Appends happen under the lock of the file's owner, so lines never interleave. A writer
//! killed mid-append can leave a torn last line; readers skip it rather than fail, and the
//! next append starts on a fresh line so the torn bytes never glue onto a good record.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::file::atomic::{create_private_dir_all, private_open_options};
use crate::file::regular;
use crate::store::{Origin, StoreError, Stored};

/// Appends `records` as lines, then fsyncs, so an append that returned is on disk.
pub fn append<T: Serialize>(path: &Path, records: &[T]) -> Result<(), StoreError> {
    write_lines(path, records, true)
}

/// Appends without waiting for the disk: for the activity log, a record of changes whose
/// truth is the board. The lines survive a killed process (they are in the page cache), only
/// a power cut can lose the last few; the saved fsync is most of the cost of a change.
pub fn append_unsynced<T: Serialize>(path: &Path, records: &[T]) -> Result<(), StoreError> {
    write_lines(path, records, false)
}

fn write_lines<T: Serialize>(
    path: &Path,
    records: &[T],
    is_synced: bool,
) -> Result<(), StoreError> {
    if records.is_empty() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_private_dir_all(parent)?;
    }
    let mut file = regular::open_with(
        path,
        private_open_options().read(true).append(true).create(true),
    )
    .map_err(StoreError::io(path))?;
    let mut text = String::new();
    if ends_with_torn_line(&mut file).map_err(StoreError::io(path))? {
        text.push('\n');
    }
    for record in records {
        // Serializing plain data structures cannot fail: no maps with non-string keys.
        let line = serde_json::to_string(record).map_err(|error| {
            StoreError::corrupt(&Origin::file(Stored::Other, path))(error.to_string())
        })?;
        text.push_str(&line);
        text.push('\n');
    }
    file.write_all(text.as_bytes())
        .and_then(|()| if is_synced { file.sync_data() } else { Ok(()) })
        .map_err(StoreError::io(path))
}

fn ends_with_torn_line(file: &mut File) -> std::io::Result<bool> {
    let length = file.metadata()?.len();
    if length == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(length - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// What reading a JSON-lines file found.
#[derive(Debug)]
pub struct Lines<T> {
    pub records: Vec<T>,
    /// Line numbers (1-based) that did not parse: torn by a crash, or edited by hand.
    pub skipped: Vec<usize>,
}

impl<T> Lines<T> {
    /// The records, each line that did not parse named in `unreadable` (`PATH line N is
    /// not JSON`): for a reader that must not leave a line behind without a word (a copy).
    pub fn records_noting(self, path: &Path, unreadable: &mut Vec<String>) -> Vec<T> {
        for line in self.skipped {
            unreadable.push(format!(
                "{} line {line} does not read as a record",
                path.display()
            ));
        }
        self.records
    }
}

/// Reads every record of `path`; a missing file reads as empty.
pub fn read_all<T: DeserializeOwned>(path: &Path) -> Result<Lines<T>, StoreError> {
    read_where(path, |_| true)
}

/// Reads the records of `path` on the lines `may_hold` keeps, looking at each line's text
/// before parsing it: a search parses only the lines that may hold what it looks for. A
/// missing file reads as empty.
pub fn read_where<T: DeserializeOwned>(
    path: &Path,
    mut may_hold: impl FnMut(&[u8]) -> bool,
) -> Result<Lines<T>, StoreError> {
    let file = match regular::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Ok(Lines {
                records: Vec::new(),
                skipped: Vec::new(),
            });
        }
        Err(error) => return Err(StoreError::io(path)(error)),
    };
    let mut records = Vec::new();
    let mut skipped = Vec::new();
    for (index, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(StoreError::io(path))?;
        if line.iter().all(u8::is_ascii_whitespace) || !may_hold(&line) {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(record) => records.push(record),
            Err(_) => skipped.push(index + 1),
        }
    }
    Ok(Lines { records, skipped })
}

/// Counts the lines of `path` (0 when missing).
pub fn count_lines(path: &Path) -> Result<usize, StoreError> {
    match regular::read(path) {
        Ok(bytes) => Ok(bytes.iter().filter(|&&byte| byte == b'\n').count()),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(0),
        Err(error) => Err(StoreError::io(path)(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn a_torn_last_line_is_skipped_and_never_glued_to_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        append(&path, &[json!({"n": 1})]).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"n\": 2, \"tor")
            .unwrap();
        append(&path, &[json!({"n": 3}), json!({"n": 4})]).unwrap();
        let lines: Lines<Value> = read_all(&path).unwrap();
        let numbers: Vec<_> = lines
            .records
            .iter()
            .map(|record| record["n"].clone())
            .collect();
        assert_eq!(numbers, vec![json!(1), json!(3), json!(4)]);
        assert_eq!(lines.skipped, vec![2]);
        assert_eq!(count_lines(&path).unwrap(), 4);
    }
}
