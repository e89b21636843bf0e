//! The text log of a process that runs with nobody watching (the wake supervisor's
//! `wake/<agent>.log`, the alert sender's `alerts/alerts.log`): timed lines appended for a
//! person to read, kept under [`LIMIT`] by cutting it back to its last lines. Writing is
//! best-effort, as there is nobody to tell when it fails.

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::atomic::{self, private_open_options};
use super::regular;
use crate::time;

/// A log is cut back to its last [`KEEP`] bytes once it passes this.
pub const LIMIT: u64 = 1024 * 1024;
pub const KEEP: u64 = 256 * 1024;

/// One process's log, written by that process alone.
pub struct TextLog {
    path: PathBuf,
    /// Who writes it, at the start of each of its lines after the time: `baton wake`.
    writer: &'static str,
}

impl TextLog {
    pub fn new(path: PathBuf, writer: &'static str) -> TextLog {
        TextLog { path, writer }
    }

    /// The log opened for appending, its directory made (private) first: for a line of the
    /// writer's, or for the output of a program it runs.
    pub fn open(&self) -> io::Result<File> {
        if let Some(dir) = self.path.parent() {
            let _ = atomic::create_private_dir_all(dir);
        }
        regular::open_with(&self.path, private_open_options().create(true).append(true))
    }

    /// Appends one line, with the time and the writer's name.
    pub fn line(&self, text: &str) {
        if let Ok(mut file) = self.open() {
            let _ = writeln!(file, "[{}] {}: {text}", time::now(), self.writer);
        }
    }

    /// Cuts the log back to its last lines when it is past [`LIMIT`], and says so in a line.
    /// Called only when nothing else writes to it (between the runs of what writes there
    /// too, or by its one writer).
    pub fn trim(&self) {
        if let Ok(true) = trim(&self.path, LIMIT, KEEP) {
            self.line(&format!(
                "(older lines dropped to keep this log under {} KB)",
                LIMIT / 1024
            ));
        }
    }
}

/// Cuts `path` back to about its last `keep` bytes, from a line start, once it is longer
/// than `limit`. Returns whether it cut.
pub fn trim(path: &Path, limit: u64, keep: u64) -> io::Result<bool> {
    let length = match fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    if length <= limit {
        return Ok(false);
    }
    let mut file = regular::open(path)?;
    file.seek(SeekFrom::Start(length.saturating_sub(keep)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let start = tail
        .iter()
        .position(|byte| *byte == b'\n')
        .map_or(0, |newline| newline + 1);
    // Closed before the rename over it, which a system may refuse while it is open (Wine).
    drop(file);
    atomic::replace(path, &tail[start..], None).map_err(io::Error::other)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_log_keeps_its_last_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codex.log");
        let text: String = (0..100).map(|n| format!("line {n:03}\n")).collect();
        fs::write(&path, &text).unwrap();
        assert!(!trim(&path, 10_000, 100).unwrap(), "under the limit");
        assert!(trim(&path, 500, 100).unwrap());
        let kept = fs::read_to_string(&path).unwrap();
        assert!(kept.len() <= 100, "{kept}");
        assert!(kept.starts_with("line "), "cut at a line start: {kept}");
        assert!(kept.ends_with("line 099\n"), "{kept}");
        assert!(!trim(&dir.path().join("none.log"), 1, 1).unwrap());
    }

    #[test]
    fn a_log_past_its_limit_says_it_was_cut_and_carries_on() {
        let dir = tempfile::tempdir().unwrap();
        let log = TextLog::new(dir.path().join("logs/alerts.log"), "baton alert");
        log.line("first");
        let text = fs::read_to_string(dir.path().join("logs/alerts.log")).unwrap();
        assert!(text.ends_with("] baton alert: first\n"), "{text}");
        log.trim();
        assert_eq!(
            fs::read_to_string(dir.path().join("logs/alerts.log")).unwrap(),
            text,
            "under the limit nothing is cut"
        );
        let long: String = (0..LIMIT / 32).map(|n| format!("{n:031}\n")).collect();
        fs::write(dir.path().join("logs/alerts.log"), format!("{long}last\n")).unwrap();
        log.trim();
        let kept = fs::read_to_string(dir.path().join("logs/alerts.log")).unwrap();
        assert!(kept.len() as u64 <= KEEP + 200, "{}", kept.len());
        assert!(
            kept.contains("\nlast\n[") || kept.starts_with("last\n["),
            "{kept:.200}"
        );
        assert!(
            kept.ends_with("baton alert: (older lines dropped to keep this log under 1024 KB)\n"),
            "{kept:.200}"
        );
    }
}
