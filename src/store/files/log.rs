//! A jsonl log that never grows past a size `tail -f` reads cheaply: past
//! [`ROTATE_AT_LINES`] lines the live file becomes generation `.1`, the older ones move up
//! one, and the oldest of [`GENERATIONS`] is dropped. What its lines mean is its user's
//! business (`crate::activity`).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::jsonl;
use crate::store::StoreError;

/// Lines a log holds before it is rotated.
pub const ROTATE_AT_LINES: usize = 10_000;
/// Rotated generations kept: `activity.jsonl.1` … `.5`.
pub const GENERATIONS: usize = 5;
/// No line of a log is shorter than this, so a smaller file cannot need rotating and the
/// lines need not be counted (which keeps every write cheap until the log is large).
const SHORTEST_RECORD_BYTES: u64 = 64;

/// Appends `records` and rotates when the log has passed [`ROTATE_AT_LINES`].
/// The caller holds the board lock.
pub fn append<R: Serialize>(path: &Path, records: &[R]) -> Result<(), StoreError> {
    jsonl::append_unsynced(path, records)?;
    let size = match fs::metadata(path) {
        Ok(metadata) => metadata.len(),
        Err(error) if error.kind() == ErrorKind::NotFound => 0,
        Err(error) => return Err(StoreError::io(path)(error)),
    };
    if size > ROTATE_AT_LINES as u64 * SHORTEST_RECORD_BYTES
        && jsonl::count_lines(path)? > ROTATE_AT_LINES
    {
        rotate(path)?;
    }
    Ok(())
}

/// `activity.jsonl.N` for generation N.
pub fn generation(path: &Path, number: usize) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{number}"));
    path.with_file_name(name)
}

/// Shifts `.1`…`.4` up one (dropping `.5`), and moves the live log to `.1`.
fn rotate(path: &Path) -> Result<(), StoreError> {
    for number in (1..GENERATIONS).rev() {
        let older = generation(path, number);
        if older.exists() {
            let target = generation(path, number + 1);
            fs::rename(&older, &target).map_err(StoreError::io(&target))?;
        }
    }
    let first = generation(path, 1);
    fs::rename(path, &first).map_err(StoreError::io(&first))
}

/// Every record, oldest first, across the rotated generations and the live log.
pub fn read<R: DeserializeOwned>(path: &Path) -> Result<Vec<R>, StoreError> {
    read_noting(path, &mut Vec::new())
}

/// [`read`], each line that did not parse named in `unreadable`.
pub fn read_noting<R: DeserializeOwned>(
    path: &Path,
    unreadable: &mut Vec<String>,
) -> Result<Vec<R>, StoreError> {
    let mut records = Vec::new();
    for number in (1..=GENERATIONS).rev() {
        let file = generation(path, number);
        records.extend(jsonl::read_all(&file)?.records_noting(&file, unreadable));
    }
    records.extend(jsonl::read_all(path)?.records_noting(path, unreadable));
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::record::ActivityRecord;

    fn record(n: usize) -> ActivityRecord {
        ActivityRecord {
            at: "2026-11-29T12:00:00Z".parse().unwrap(),
            project: "default".into(),
            actor: "claude".into(),
            action: "note".into(),
            task: None,
            from_status: None,
            to_status: None,
            text: Some(format!("line {n}")),
        }
    }

    #[test]
    fn rotates_past_ten_thousand_lines_keeping_five_generations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("activity.jsonl");
        let batch: Vec<_> = (0..ROTATE_AT_LINES).map(record).collect();
        append(&path, &batch).unwrap();
        assert!(!generation(&path, 1).exists(), "exactly 10,000 lines stay");
        append(&path, &[record(1)]).unwrap();
        assert!(generation(&path, 1).exists());
        assert!(!path.exists());
        for _ in 0..6 {
            append(&path, &batch).unwrap();
            append(&path, &[record(2)]).unwrap();
        }
        assert!(generation(&path, 5).exists());
        assert!(
            !generation(&path, 6).exists(),
            "the sixth generation is dropped"
        );
    }
}
