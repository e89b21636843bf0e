//! Reading a growing log as `tail -f` does: the file store's `log --follow`
//! ([`crate::store::Boards::tail_log`]) and its feed of the hub's changes.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::file::{platform, regular};

/// An append-only file read as it grows, a whole line at a time. When it is replaced (the
/// log rotated, the mail swept), what the old file gained before it went is read from where
/// it now is (`activity.jsonl.1`), then the new file from its start.
pub struct Tail {
    path: PathBuf,
    id: Option<u64>,
    offset: u64,
    pending: Vec<u8>,
}

impl Tail {
    pub fn new(path: PathBuf) -> Tail {
        Tail {
            path,
            id: None,
            offset: 0,
            pending: Vec::new(),
        }
    }

    /// Goes on from where the file ends now.
    pub fn skip_to_end(&mut self) {
        if let Ok(meta) = fs::metadata(&self.path) {
            self.id = Some(platform::file_id(&self.path, &meta));
            self.offset = meta.len();
        }
    }

    /// The whole lines written since the last look.
    pub fn fresh_lines(&mut self) -> Vec<String> {
        let Ok(meta) = fs::metadata(&self.path) else {
            return Vec::new();
        };
        let id = platform::file_id(&self.path, &meta);
        let mut fresh = Vec::new();
        if self.id.is_some_and(|known| known != id) {
            // Replaced: the rest of the old file, wherever the rotation put it.
            let rotated = super::log::generation(&self.path, 1);
            if fs::metadata(&rotated)
                .is_ok_and(|old| Some(platform::file_id(&rotated, &old)) == self.id)
            {
                self.read_from(&rotated, &mut fresh);
            }
            self.offset = 0;
            self.pending.clear();
        } else if meta.len() < self.offset {
            // Cut back past a killed writer's torn line: go on from where it ends now.
            self.offset = meta.len();
            self.pending.clear();
        }
        self.id = Some(id);
        let path = self.path.clone();
        self.read_from(&path, &mut fresh);
        fresh
    }

    fn read_from(&mut self, path: &Path, lines: &mut Vec<String>) {
        let Ok(mut file) = regular::open(path) else {
            return;
        };
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(self.offset)).is_err() || file.read_to_end(&mut bytes).is_err()
        {
            return;
        }
        self.offset += bytes.len() as u64;
        self.pending.extend_from_slice(&bytes);
        while let Some(end) = self.pending.iter().position(|&byte| byte == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            if let Ok(line) = String::from_utf8(line) {
                let line = line.trim();
                if !line.is_empty() {
                    lines.push(line.to_string());
                }
            }
        }
    }
}

/// The file store's tail of a log: a log file that cannot be read has no fresh lines, and is
/// read again at the next call.
impl crate::store::LogTail for Tail {
    fn fresh_lines(&mut self) -> Result<Vec<String>, crate::store::StoreError> {
        Ok(Tail::fresh_lines(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_reads_whole_lines_as_they_come_and_follows_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("activity.jsonl");
        fs::write(&path, "old\n").unwrap();
        let mut tail = Tail::new(path.clone());
        tail.skip_to_end();
        assert!(tail.fresh_lines().is_empty());
        fs::write(&path, "old\nfirst\nhal").unwrap();
        assert_eq!(tail.fresh_lines(), vec!["first"]);
        fs::write(&path, "old\nfirst\nhalf\n").unwrap();
        assert_eq!(tail.fresh_lines(), vec!["half"]);
        // Rotated after one more line: that line, then the new file's.
        fs::write(&path, "old\nfirst\nhalf\nlast of old\n").unwrap();
        fs::rename(&path, super::super::log::generation(&path, 1)).unwrap();
        fs::write(&path, "new\n").unwrap();
        assert_eq!(tail.fresh_lines(), vec!["last of old", "new"]);
        assert!(tail.fresh_lines().is_empty());
    }
}
