//! A board file's text as read: what the board (`crate::board`) decodes a task from when a
//! command needs it whole (the file store's [`Undecoded`]: [`BoardText`], held in memory,
//! or [`BoardFile`], read again from the open file), and what the tasks nobody changed are
//! copied back from when the board is written ([`write`]).

use std::borrow::Cow;
use std::io::{self, Write};
use std::ops::Range;

use crate::board::task::Task;
use crate::board::{Board, Kept, Undecoded};

/// How much of the text read [`write`] copies at a time.
const PIECE: usize = 64 * 1024;

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

    fn text(&self, span: Range<usize>) -> Option<Cow<'_, [u8]>> {
        self.bytes.get(span).map(Cow::Borrowed)
    }
}

/// A board file kept open, its tasks read again from it when needed: the board is read a
/// piece at a time and never held whole, so a command that shows ten tasks of ten thousand
/// reads their heads and those ten, and the memory of the rest is never taken. What was
/// read stays what it was while the file is open: baton replaces a board file by renaming
/// another over it, which leaves the open one as it was. (Only where an open file does not
/// stop that rename: elsewhere the board is held whole, [`BoardText`].) A file changed in
/// place by hand under an open board reads short or does not decode: a damaged board, never
/// another's tasks passed off as these.
#[cfg(unix)]
#[derive(Debug)]
pub struct BoardFile {
    file: std::fs::File,
}

#[cfg(unix)]
impl BoardFile {
    /// The board file `file`, whose tasks' places were read from it.
    pub fn new(file: std::fs::File) -> Self {
        BoardFile { file }
    }

    fn read(&self, span: Range<usize>) -> io::Result<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0; span.len()];
        self.file.read_exact_at(&mut bytes, span.start as u64)?;
        Ok(bytes)
    }
}

#[cfg(unix)]
impl Undecoded for BoardFile {
    /// A task whose text does not decode is named with its line and column in the file.
    fn decode(&self, place: &Range<usize>) -> Result<Task, String> {
        let text = self
            .read(place.clone())
            .map_err(|error| format!("could not be read again ({error})"))?;
        serde_json::from_slice::<Task>(&text).map_err(|error| {
            // Read again for the place only when there is a failure to place.
            let before = self.read(0..place.start).unwrap_or_default();
            placed_in_file(&error, &before, &text)
        })
    }

    fn text(&self, span: Range<usize>) -> Option<Cow<'_, [u8]>> {
        self.read(span).ok().map(Cow::Owned)
    }
}

/// Writes `board` as pretty-printed JSON, exactly as serde_json would print it, but copying
/// the text of every task read from a board file and not changed since (runs of such tasks
/// in one piece) instead of encoding it again. A task some other store read is decoded and
/// encoded afresh.
pub fn write<W: Write>(out: &mut W, board: &Board) -> io::Result<()> {
    let undecoded = board.undecoded();
    // The end of the last task copied: no piece is read past it.
    let end = board
        .kept()
        .filter_map(|kept| match kept {
            Kept::Stored { place: span, .. } => Some(span.end),
            Kept::Changed(_) => None,
        })
        .max()
        .unwrap_or(0);
    let mut read = Window::new(undecoded.map(|undecoded| undecoded.as_ref()), end);
    let keeps_text = undecoded.is_some_and(|undecoded| undecoded.text(0..0).is_some());
    write!(
        out,
        "{{\n  \"schema\": {},\n  \"project\": {},\n  \"next_id\": {},\n",
        board.schema,
        serde_json::to_string(&board.project)?,
        board.next_id
    )?;
    if !board.reservations().is_empty() {
        // Nested one level deeper than serde_json starts it, as the tasks are.
        let encoded = serde_json::to_string_pretty(board.reservations())?;
        out.write_all(b"  \"reservations\": ")?;
        out.write_all(encoded.replace('\n', "\n  ").as_bytes())?;
        out.write_all(b",\n")?;
    }
    out.write_all(b"  \"tasks\": [")?;
    let mut run: Option<Range<usize>> = None;
    let mut first = true;
    let mut encoded = Vec::new();
    for (index, kept) in board.kept().enumerate() {
        let decoded;
        let task = match kept {
            Kept::Stored { place: span, .. } if keeps_text => {
                match &mut run {
                    // Only a comma between the two in the text read: one piece.
                    Some(open) if read.get(open.end..span.start)?.trim_ascii() == b"," => {
                        open.end = span.end
                    }
                    _ => {
                        if let Some(done) = run.replace(span.clone()) {
                            out.write_all(separator(&mut first))?;
                            read.copy(out, done)?;
                        }
                    }
                }
                continue;
            }
            Kept::Stored { .. } => {
                decoded = board.task_at(index).map_err(io::Error::other)?;
                &decoded
            }
            Kept::Changed(task) => task,
        };
        if let Some(done) = run.take() {
            out.write_all(separator(&mut first))?;
            read.copy(out, done)?;
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
        read.copy(out, done)?;
    }
    match first {
        // No task: serde_json writes an empty list on one line.
        true => out.write_all(b"]\n}\n"),
        false => out.write_all(b"\n  ]\n}\n"),
    }
}

/// The text read, looked at through a window of [`PIECE`] bytes that moves as it is asked
/// for what lies beyond it: asked in the order of the file, as a write asks, a board file
/// is read again a piece at a time rather than a gap between two tasks at a time.
struct Window<'a> {
    undecoded: Option<&'a dyn Undecoded>,
    /// How far a piece is read ahead at most.
    end: usize,
    /// Where in the text `piece` starts.
    at: usize,
    piece: Cow<'a, [u8]>,
}

impl<'a> Window<'a> {
    fn new(undecoded: Option<&'a dyn Undecoded>, end: usize) -> Self {
        Window {
            undecoded,
            end,
            at: 0,
            piece: Cow::Borrowed(&[]),
        }
    }

    /// The text at `span`. A span the text does not hold is a board that changed under the
    /// writer, which no write may paper over.
    fn get(&mut self, span: Range<usize>) -> io::Result<&[u8]> {
        if span.end < span.start {
            // Two tasks the other way round in the text read: nothing between them.
            return Ok(&[]);
        }
        let held = self.at..self.at + self.piece.len();
        if span.start < held.start || span.end > held.end {
            let ahead = span.start..span.end.max(self.end.min(span.start + PIECE));
            self.piece = self
                .undecoded
                .and_then(|text| text.text(ahead))
                .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
            self.at = span.start;
        }
        Ok(&self.piece[span.start - self.at..span.end - self.at])
    }

    /// Writes the text at `span` to `out`, a piece at a time.
    fn copy(&mut self, out: &mut impl Write, span: Range<usize>) -> io::Result<()> {
        let mut at = span.start;
        while at < span.end {
            let end = span.end.min(at + PIECE);
            out.write_all(self.get(at..end)?)?;
            at = end;
        }
        Ok(())
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
