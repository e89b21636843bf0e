//! A board file's text as read, held in memory: what the board (`crate::board`) decodes a
//! task from when a command needs it whole ([`BoardText`], the file store's
//! [`Undecoded`]), and what the tasks nobody changed are copied back from when the board is
//! written ([`write`]).

use std::io::{self, Write};
use std::ops::Range;

use crate::board::task::Task;
use crate::board::{Board, Kept, Undecoded};

/// The text of a board file, whole.
#[derive(Debug)]
pub struct BoardText {
    bytes: Vec<u8>,
}

impl BoardText {
    /// The text of a board file as read (UTF-8: the line reader or serde_json checked it).
    pub fn new(bytes: Vec<u8>) -> Self {
        BoardText { bytes }
    }
}

impl Undecoded for BoardText {
    /// A task whose text does not decode is named with its line and column in the file.
    fn decode(&self, place: &Range<usize>) -> Result<Task, String> {
        let text = self.bytes.get(place.clone()).ok_or_else(|| {
            let error = io::Error::from(io::ErrorKind::UnexpectedEof);
            format!("could not be read again ({error})")
        })?;
        serde_json::from_slice::<Task>(text).map_err(|error| {
            let before = &self.bytes[..place.start];
            placed_in_file(&error, before, text)
        })
    }

    fn text(&self, span: Range<usize>) -> Option<&[u8]> {
        self.bytes.get(span)
    }
}

/// Writes `board` as pretty-printed JSON, exactly as serde_json would print it, but copying
/// the text of every task read from a board file and not changed since (runs of such tasks
/// in one piece) instead of encoding it again. A task some other store read is decoded and
/// encoded afresh.
pub fn write<W: Write>(out: &mut W, board: &Board) -> io::Result<()> {
    let undecoded = board.undecoded();
    // The text read, asked for a span: a span the text does not hold is a board that
    // changed under the writer, which no write may paper over.
    let text = |span: Range<usize>| -> io::Result<&[u8]> {
        undecoded
            .and_then(|undecoded| undecoded.text(span))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    };
    // Whether the task ending at `end` and the one starting at `start` have only a comma
    // between them in the text read, so both can be copied as one piece.
    let adjacent = |end: usize, start: usize| {
        undecoded
            .and_then(|undecoded| undecoded.text(end..start))
            .is_some_and(|gap| gap.trim_ascii() == b",")
    };
    let keeps_text = undecoded.is_some_and(|undecoded| undecoded.text(0..0).is_some());
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
        let task = match kept {
            Kept::Stored(span) if keeps_text => {
                match &mut run {
                    Some(open) if adjacent(open.end, span.start) => open.end = span.end,
                    _ => {
                        if let Some(done) = run.replace(span.clone()) {
                            out.write_all(separator(&mut first))?;
                            out.write_all(text(done)?)?;
                        }
                    }
                }
                continue;
            }
            Kept::Stored(_) => {
                decoded = board.task_at(index).map_err(io::Error::other)?;
                &decoded
            }
            Kept::Changed(task) => task,
        };
        if let Some(done) = run.take() {
            out.write_all(separator(&mut first))?;
            out.write_all(text(done)?)?;
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
        out.write_all(text(done)?)?;
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

/// serde_json's message for an error in `text`, with the place counted in the whole file,
/// whose text before `text` is `before`. serde_json counts columns in bytes, as this does.
pub(crate) fn placed_in_file(error: &serde_json::Error, before: &[u8], text: &[u8]) -> String {
    let message = error.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(what, _)| what);
    let (mut line, mut column) = (error.line(), error.column());
    if line == 0 {
        // Not placed (serde_json places every error in text it reads).
        return message.to_string();
    }
    if column == 0 && line > 1 {
        // serde_json places an error found just past a line break (the text ending there)
        // at column 0 of the next line: it is at the end of the line the break ends.
        line -= 1;
        let ended = text.split(|byte| *byte == b'\n').nth(line - 1);
        column = ended.map_or(0, <[u8]>::len) + 1;
    }
    let first_line = memchr::memchr_iter(b'\n', before).count() + 1;
    let first_column = before.len() - memchr::memrchr(b'\n', before).map_or(0, |at| at + 1) + 1;
    if line == 1 {
        column += first_column - 1;
    }
    format!(
        "{message} at line {} column {column}",
        first_line + line - 1
    )
}

#[cfg(test)]
mod tests;
