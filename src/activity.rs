//! The activity log: one JSON line per successful change, written in the same locked section
//! as the change, rotated at 10,000 lines so `tail -f` stays cheap forever.

use std::path::{Path, PathBuf};

use crate::store::files::log;

pub use crate::store::files::log::{GENERATIONS, ROTATE_AT_LINES};

/// One line of `activity.jsonl`, and what it says was done.
pub use crate::board::record::{ActivityRecord, LogAction};

/// `activity.jsonl.N` for generation N.
pub fn generation(path: &Path, number: usize) -> PathBuf {
    log::generation(path, number)
}
