//! Where the tasks of a board read from disk are, as bytes: the board file held open and
//! read again a stretch at a time, or the board's whole text. The board (`crate::board`)
//! keeps the byte range of each stored task and asks for its bytes here when it needs the
//! task whole, or copies them into a new board when the task did not change.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::Serialize;

use super::platform;

/// Where the tasks of a board read from disk are: its file, held open, or its whole text.
#[derive(Debug)]
pub struct Source {
    path: PathBuf,
    stored: Stored,
}

#[derive(Debug)]
enum Stored {
    /// The board file itself, read again where a task is needed. board.json is only ever
    /// replaced by a rename, never written in place (SPEC section 2), so an open handle
    /// keeps reading the very bytes the board was read from, whatever is written since.
    File(File, Mutex<Window>),
    Text(String),
}

/// The stretch of the file read last. Tasks are mostly read in the order they are stored
/// (an inbox, a listing, the first few for a hook), so one read fetches many of them.
#[derive(Debug, Default)]
struct Window {
    start: usize,
    bytes: Vec<u8>,
}

/// How much of the file is read at once: for a task needed whole, and for unchanged tasks
/// copied into a new board.
pub const READ_AHEAD: usize = 64 * 1024;

impl Source {
    /// An open board file whose every task the line reader has read: consecutive tasks in
    /// it are separated by exactly [`BETWEEN_TASKS`].
    pub fn laid_out(path: PathBuf, file: File) -> Self {
        Source {
            path,
            stored: Stored::File(file, Mutex::default()),
        }
    }

    pub fn text(path: PathBuf, text: String) -> Self {
        Source {
            path,
            stored: Stored::Text(text),
        }
    }

    /// The file the board was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the tasks are read again from the open file (a board in baton's layout)
    /// rather than held as text.
    pub fn is_held_open(&self) -> bool {
        matches!(self.stored, Stored::File(..))
    }

    /// The bytes at `span`.
    pub fn bytes(&self, span: Range<usize>) -> io::Result<Cow<'_, [u8]>> {
        match &self.stored {
            Stored::Text(text) => text
                .as_bytes()
                .get(span)
                .map(Cow::Borrowed)
                .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof)),
            Stored::File(file, window) => {
                let mut window = window.lock().unwrap_or_else(PoisonError::into_inner);
                let held = window.start..window.start + window.bytes.len();
                if span.start < held.start || span.end > held.end {
                    window.start = span.start;
                    window.bytes.resize(span.len().max(READ_AHEAD), 0);
                    let read = platform::read_at_most(file, &mut window.bytes, span.start as u64);
                    // What failed to be read is not kept as if it had been.
                    window.bytes.truncate(*read.as_ref().unwrap_or(&0));
                    let read = read?;
                    if read < span.len() {
                        return Err(io::ErrorKind::UnexpectedEof.into());
                    }
                }
                let at = span.start - window.start;
                Ok(Cow::Owned(window.bytes[at..at + span.len()].to_vec()))
            }
        }
    }

    /// Writes the bytes at `span` to `out`, a piece at a time.
    pub fn copy(&self, span: Range<usize>, out: &mut impl Write) -> io::Result<()> {
        match &self.stored {
            Stored::Text(_) => out.write_all(&self.bytes(span)?),
            Stored::File(file, _) => {
                let mut piece = vec![0; span.len().min(READ_AHEAD)];
                let mut at = span.start;
                while at < span.end {
                    let part = &mut piece[..(span.end - at).min(READ_AHEAD)];
                    platform::read_exact_at(file, part, at as u64)?;
                    out.write_all(part)?;
                    at += part.len();
                }
                Ok(())
            }
        }
    }

    /// Whether the task ending at `end` and the one starting at `start` have only a comma
    /// between them, so both can be copied as one piece.
    pub fn adjacent(&self, end: usize, start: usize) -> bool {
        match &self.stored {
            Stored::File(..) => start == end + BETWEEN_TASKS.len(),
            Stored::Text(text) => text.get(end..start).is_some_and(|gap| gap.trim() == ","),
        }
    }
}

/// What separates two tasks in baton's layout of a board.
pub const BETWEEN_TASKS: &str = ",\n    ";

/// A board's own fields, written before its tasks.
pub struct Header<'a> {
    pub schema: u32,
    pub project: &'a str,
    pub next_id: u64,
}

/// One task of a board being written: the byte range of its text as read, unchanged, or
/// the task to encode.
pub enum Piece<'a, T> {
    Stored(Range<usize>),
    Changed(&'a T),
}

/// Writes a board as pretty-printed JSON, exactly as serde_json would print it, but copying
/// the text of every task read from `source` and not changed since (runs of such tasks in
/// one piece) instead of encoding it again.
pub fn write<'a, W: Write, T: Serialize + 'a>(
    out: &mut W,
    header: &Header<'_>,
    source: Option<&Source>,
    tasks: impl Iterator<Item = Piece<'a, T>>,
) -> io::Result<()> {
    write!(
        out,
        "{{\n  \"schema\": {},\n  \"project\": {},\n  \"next_id\": {},\n  \"tasks\": [",
        header.schema,
        serde_json::to_string(header.project)?,
        header.next_id
    )?;
    let copy = |span: Range<usize>, out: &mut W| match source {
        Some(source) => source.copy(span, out),
        None => Ok(()),
    };
    let mut run: Option<Range<usize>> = None;
    let mut first = true;
    let mut encoded = Vec::new();
    for piece in tasks {
        let task = match piece {
            Piece::Stored(span) => {
                match &mut run {
                    Some(open)
                        if source.is_some_and(|source| source.adjacent(open.end, span.start)) =>
                    {
                        open.end = span.end;
                    }
                    _ => {
                        if let Some(done) = run.replace(span) {
                            out.write_all(separator(&mut first))?;
                            copy(done, out)?;
                        }
                    }
                }
                continue;
            }
            Piece::Changed(task) => task,
        };
        if let Some(done) = run.take() {
            out.write_all(separator(&mut first))?;
            copy(done, out)?;
        }
        encoded.clear();
        serde_json::to_writer_pretty(&mut encoded, task)?;
        out.write_all(separator(&mut first))?;
        // Nested one level deeper than serde_json starts it; JSON strings hold no raw
        // newline, so every newline in the text is formatting.
        for (index, line) in encoded.split(|byte| *byte == b'\n').enumerate() {
            if index > 0 {
                out.write_all(b"\n    ")?;
            }
            out.write_all(line)?;
        }
    }
    if let Some(done) = run {
        out.write_all(separator(&mut first))?;
        copy(done, out)?;
    }
    match first {
        // No task: serde_json writes an empty list on one line.
        true => out.write_all(b"]\n}\n"),
        false => out.write_all(b"\n  ]\n}\n"),
    }
}

fn separator(first: &mut bool) -> &'static [u8] {
    if std::mem::take(first) {
        b"\n    "
    } else {
        b",\n    "
    }
}
