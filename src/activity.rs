//! The activity log: one JSON line per successful change, written in the same locked section
//! as the change, rotated at 10,000 lines so `tail -f` stays cheap forever.

use std::path::{Path, PathBuf};

use crate::store::{StoreError, log};

pub use crate::store::log::{GENERATIONS, ROTATE_AT_LINES};

/// One line of `activity.jsonl`.
pub use crate::board::record::ActivityRecord;

/// Appends `records` and rotates when the log has passed [`ROTATE_AT_LINES`].
/// The caller holds the board lock.
pub fn append(path: &Path, records: &[ActivityRecord]) -> Result<(), StoreError> {
    log::append(path, records)
}

/// `activity.jsonl.N` for generation N.
pub fn generation(path: &Path, number: usize) -> PathBuf {
    log::generation(path, number)
}

/// Every record, oldest first, across the rotated generations and the live log.
pub fn read(path: &Path) -> Result<Vec<ActivityRecord>, StoreError> {
    log::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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
