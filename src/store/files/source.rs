//! A board file's text as read, held in memory: what the board (`crate::board`) decodes a
//! task from when a command needs it whole ([`BoardText`], the file store's
//! [`Undecoded`]), and what the tasks nobody changed are copied back from when the board is
//! written ([`write`]).

use std::any::Any;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::board::task::Task;
use crate::board::{Board, Kept, Undecoded};

/// The text of a board file, whole, with where it was read from.
#[derive(Debug)]
pub struct BoardText {
    path: PathBuf,
    bytes: Vec<u8>,
    /// Whether the line reader read every task (`layout`): consecutive tasks are then
    /// separated by exactly [`BETWEEN_TASKS`].
    is_laid_out: bool,
}

impl BoardText {
    /// The text of a board whose every task the line reader has read. Its bytes are UTF-8:
    /// the line reader checked them.
    pub fn laid_out(path: PathBuf, bytes: Vec<u8>) -> Self {
        BoardText {
            path,
            bytes,
            is_laid_out: true,
        }
    }

    /// The text of a board in any other layout, read by serde_json.
    pub fn text(path: PathBuf, text: String) -> Self {
        BoardText {
            path,
            bytes: text.into_bytes(),
            is_laid_out: false,
        }
    }

    /// The file the board was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes at `span`.
    fn bytes(&self, span: Range<usize>) -> io::Result<&[u8]> {
        self.bytes
            .get(span)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    }

    /// Whether the task ending at `end` and the one starting at `start` have only a comma
    /// between them, so both can be copied as one piece.
    fn adjacent(&self, end: usize, start: usize) -> bool {
        if self.is_laid_out {
            return start == end + BETWEEN_TASKS.len();
        }
        self.bytes
            .get(end..start)
            .is_some_and(|gap| gap.trim_ascii() == b",")
    }
}

impl Undecoded for BoardText {
    /// A task whose text does not decode is named with its line and column in the file.
    fn decode(&self, place: &Range<usize>) -> Result<Task, String> {
        let text = self
            .bytes(place.clone())
            .map_err(|error| format!("could not be read again ({error})"))?;
        serde_json::from_slice::<Task>(text).map_err(|error| {
            let before = &self.bytes[..place.start];
            super::board::placed_in_file(&error, before, text)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What separates two tasks in baton's layout of a board.
pub const BETWEEN_TASKS: &str = ",\n    ";

/// Writes `board` as pretty-printed JSON, exactly as serde_json would print it, but copying
/// the text of every task read from a board file and not changed since (runs of such tasks
/// in one piece) instead of encoding it again. A task some other store read is decoded and
/// encoded afresh.
pub fn write<W: Write>(out: &mut W, board: &Board) -> io::Result<()> {
    let text = board
        .undecoded()
        .and_then(|undecoded| undecoded.as_any().downcast_ref::<BoardText>());
    write!(
        out,
        "{{\n  \"schema\": {},\n  \"project\": {},\n  \"next_id\": {},\n  \"tasks\": [",
        board.schema,
        serde_json::to_string(&board.project)?,
        board.next_id
    )?;
    let mut run: Option<Range<usize>> = None;
    let mut first = true;
    let mut encoded = Vec::new();
    for (index, kept) in board.kept().enumerate() {
        let decoded;
        let task = match (kept, text) {
            (Kept::Stored(span), Some(text)) => {
                match &mut run {
                    Some(open) if text.adjacent(open.end, span.start) => open.end = span.end,
                    _ => {
                        if let Some(done) = run.replace(span.clone()) {
                            out.write_all(separator(&mut first))?;
                            out.write_all(text.bytes(done)?)?;
                        }
                    }
                }
                continue;
            }
            (Kept::Stored(_), None) => {
                decoded = board.task_at(index).map_err(io::Error::other)?;
                &decoded
            }
            (Kept::Changed(task), _) => task,
        };
        if let (Some(done), Some(text)) = (run.take(), text) {
            out.write_all(separator(&mut first))?;
            out.write_all(text.bytes(done)?)?;
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
    if let (Some(done), Some(text)) = (run, text) {
        out.write_all(separator(&mut first))?;
        out.write_all(text.bytes(done)?)?;
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
