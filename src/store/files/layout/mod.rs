//! The fast way to read a board: line by line, for a board laid out exactly as baton (or
//! any pretty printer with two-space indents) writes it. JSON strings hold no raw newline,
//! so every line break in such a file is layout: a task opens and closes on lines indented
//! four spaces, its fields sit one to a line indented six, and anything nested goes deeper.
//! Only the lines of a task's head are read closely; the other fields are checked for the
//! type of their value by its first character and decoded when a command needs the task.
//!
//! Anything else — another layout, escapes where the head is read, an unknown status, a
//! missing field — gives `None`, and the board is read whole by serde_json instead
//! (`store::files::board`), which reads any JSON and names exactly what is wrong.

use std::borrow::Cow;
use std::io::{self, ErrorKind, Read};
use std::sync::Arc;

use crate::board::StoredTasks;
use crate::board::reservation::Reservation;
use crate::board::task::{Head, Priority, Status, TaskId};
use crate::store::head::Field;
use crate::time::Timestamp;

/// The board's own fields and its tasks, as the model keeps them: each one's head and
/// where its text is.
pub struct Laid {
    pub schema: u64,
    pub project: String,
    pub next_id: u64,
    /// Who holds what (SPEC section 18.2): few, so read whole.
    pub reservations: Vec<Reservation>,
    pub tasks: StoredTasks,
}

/// The agent names of a board, each kept once however many tasks name it.
#[derive(Default)]
pub struct Names {
    known: Vec<Arc<str>>,
    /// No name: what a head holds until its names are read.
    none: Arc<str>,
}

impl Names {
    pub fn get(&mut self, name: &[u8]) -> Option<Arc<str>> {
        if let Some(known) = self.known.iter().find(|known| known.as_bytes() == name) {
            return Some(Arc::clone(known));
        }
        let new: Arc<str> = Arc::from(std::str::from_utf8(name).ok()?);
        // A board names a handful of agents; past that, searching costs more than it saves.
        if self.known.len() < 32 {
            self.known.push(Arc::clone(&new));
        }
        Some(new)
    }
}

/// The lines of a board, each with the offset in the file it starts at: read a piece at a
/// time into one buffer, so a board of any size is read without holding all of it, or
/// borrowed from a board held whole already ([`Lines::whole`]), so nothing is copied. A
/// board's layout is ASCII; the rest is checked to be UTF-8 as it is read.
struct Lines<'a, R> {
    reader: R,
    buffer: Cow<'a, [u8]>,
    /// The offset in the file of `buffer[0]`.
    base: usize,
    /// Where the next line starts in `buffer`.
    at: usize,
    /// How much of `buffer` holds what was read.
    filled: usize,
    /// How much of `buffer` is checked: whole lines, valid UTF-8.
    checked: usize,
    /// Whether the reader is at its end.
    ended: bool,
    /// Whether reading failed (which must not pass for the end of the text).
    failed: bool,
}

/// How much is read at a time.
const PIECE: usize = 64 * 1024;

impl<'a> Lines<'a, io::Empty> {
    /// The lines of `bytes`, a board held whole: nothing is read or copied. `None` when
    /// they are not UTF-8 (the strict reader then says where).
    fn whole(bytes: &'a [u8]) -> Option<Self> {
        std::str::from_utf8(bytes).ok()?;
        Some(Lines {
            reader: io::empty(),
            buffer: Cow::Borrowed(bytes),
            base: 0,
            at: 0,
            filled: bytes.len(),
            checked: bytes.len(),
            ended: true,
            failed: false,
        })
    }
}

impl<R: Read> Lines<'_, R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            buffer: Cow::Owned(vec![0; PIECE]),
            base: 0,
            at: 0,
            filled: 0,
            checked: 0,
            ended: false,
            failed: false,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, &[u8])> {
        loop {
            let rest = &self.buffer[self.at..self.checked];
            if let Some(length) = memchr::memchr(b'\n', rest) {
                let start = self.at;
                self.at = start + length + 1;
                return Some((self.base + start, &self.buffer[start..start + length]));
            }
            if self.ended {
                // The last line, with no line break after it.
                if rest.is_empty() {
                    return None;
                }
                let start = self.at;
                self.at = self.checked;
                return Some((self.base + start, &self.buffer[start..self.checked]));
            }
            self.fill()?;
        }
    }

    fn line(&mut self) -> Option<&[u8]> {
        self.next().map(|(_, line)| line)
    }

    /// Reads the next piece, keeping the line not yet whole; `None` when the reader fails
    /// or the text is not UTF-8 (the strict reader then says which).
    #[cold]
    fn fill(&mut self) -> Option<()> {
        let buffer = self.buffer.to_mut();
        buffer.copy_within(self.at..self.filled, 0);
        self.base += self.at;
        self.filled -= self.at;
        self.checked -= self.at;
        self.at = 0;
        if self.filled == buffer.len() {
            // One line longer than the buffer: make room for it.
            buffer.resize(buffer.len() * 2, 0);
        }
        let read = loop {
            match self.reader.read(&mut buffer[self.filled..]) {
                Ok(read) => break read,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.failed = true;
                    return None;
                }
            }
        };
        let unchecked = self.checked..self.filled + read;
        self.filled += read;
        let whole = match read {
            0 => {
                self.ended = true;
                self.filled
            }
            _ => match memchr::memrchr(b'\n', &buffer[unchecked.clone()]) {
                Some(at) => unchecked.start + at + 1,
                None => return Some(()),
            },
        };
        std::str::from_utf8(&buffer[self.checked..whole]).ok()?;
        self.checked = whole;
        Some(())
    }
}

/// Reads a board from `reader` into the model's list of tasks; `size` (its length, if
/// known) sizes the list.
pub fn read(reader: impl Read, size: usize) -> Option<Laid> {
    read_lines(Lines::new(reader), size)
}

/// Reads a board held whole in `bytes`, borrowing its lines rather than copying them.
pub fn read_bytes(bytes: &[u8]) -> Option<Laid> {
    read_lines(Lines::whole(bytes)?, bytes.len())
}

fn read_lines(mut lines: Lines<'_, impl Read>, size: usize) -> Option<Laid> {
    if lines.line()? != b"{" {
        return None;
    }
    let schema = number(field(lines.line()?, b"  \"schema\": ")?.strip_suffix(b",")?)?;
    let project = std::str::from_utf8(plain_string(
        field(lines.line()?, b"  \"project\": ")?.strip_suffix(b",")?,
    )?)
    .ok()?
    .to_string();
    let next_id = number(field(lines.line()?, b"  \"next_id\": ")?.strip_suffix(b",")?)?;
    // A task takes some 600 bytes laid out; room for that many spares regrowing the list.
    let mut tasks = StoredTasks::with_capacity(size / 512);
    let mut names = Names::default();
    let mut reservations = Vec::new();
    let line = lines.line()?;
    let tasks_line: &[u8] = match field(line, b"  \"reservations\": ") {
        Some(value) => {
            let value = value.to_vec();
            reservations = reservations_from(&mut lines, &value)?;
            field(lines.line()?, b"  \"tasks\": ")?
        }
        None => field(line, b"  \"tasks\": ")?,
    };
    if tasks_line == b"[" {
        loop {
            let (start, line) = lines.next()?;
            if line != b"    {" {
                return None;
            }
            let (head, end, more) = task(&mut lines, &mut names)?;
            tasks.push(head, start + 4..end);
            if !more {
                break;
            }
        }
        if lines.line()? != b"  ]" {
            return None;
        }
    } else if tasks_line != b"[]" {
        return None;
    }
    if lines.line()? != b"}" || lines.next().is_some() || lines.failed {
        return None;
    }
    Some(Laid {
        schema,
        project,
        next_id,
        reservations,
        tasks,
    })
}

/// The board's reservations, their line's value taken: the lines up to the list's closing
/// one, read as JSON.
fn reservations_from(lines: &mut Lines<'_, impl Read>, value: &[u8]) -> Option<Vec<Reservation>> {
    match value {
        b"[]," => return Some(Vec::new()),
        b"[" => {}
        _ => return None,
    }
    let mut text = b"[".to_vec();
    loop {
        let line = lines.line()?;
        if line == b"  ]," {
            text.push(b']');
            return serde_json::from_slice(&text).ok();
        }
        if !line.starts_with(b"    ") {
            return None;
        }
        text.extend_from_slice(line);
        text.push(b'\n');
    }
}

/// The value on a line that starts with `prefix` (indent, quoted name, colon and space).
fn field<'a>(line: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    line.strip_prefix(prefix)
}

/// One task, its opening line taken: its head, where its closing brace ends, and whether
/// another task follows.
fn task(lines: &mut Lines<'_, impl Read>, names: &mut Names) -> Option<(Head, usize, bool)> {
    let mut head = Head::unread(Arc::clone(&names.none));
    let mut seen = 0u32;
    let mut comma = true;
    let mut expected = 0;
    loop {
        let (start, line) = lines.next()?;
        // Fields come in the order baton writes them; a line that starts as expected needs
        // no name read.
        if let Some((field, prefix)) = IN_ORDER.get(expected)
            && let Some(value) = strip_field(line, prefix)
        {
            expected += 1;
            if !comma {
                return None;
            }
            let more = take(*field, value, names, &mut head, &mut seen, &mut comma)?;
            more.read(lines, &mut head, &mut comma)?;
            continue;
        }
        expected = usize::MAX;
        let Some(field) = line.strip_prefix(b"      \"") else {
            // Not a field: it must be the task's closing brace, after a last field without
            // a comma, with a comma of its own unless it is the last task.
            let more = match line {
                b"    }," => true,
                b"    }" => false,
                _ => return None,
            };
            return (!comma && Field::missing(seen).is_none()).then_some((head, start + 5, more));
        };
        if !comma {
            return None;
        }
        let quote = field.iter().position(|byte| *byte == b'"')?;
        let (name, value) = field.split_at(quote);
        let value = value.strip_prefix(b"\": ")?;
        let more = take(
            Field::named(name),
            value,
            names,
            &mut head,
            &mut seen,
            &mut comma,
        )?;
        more.read(lines, &mut head, &mut comma)?;
    }
}

/// `line` after `prefix`, the start of a field's line (at least eight bytes), compared eight
/// bytes at a time, the last eight overlapping the ones before: cheaper than a call to
/// compare memory, once a line.
#[inline(always)]
fn strip_field<'a>(line: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let length = prefix.len();
    if line.len() < length || length < 8 {
        return None;
    }
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
    };
    let mut at = 0;
    while at + 8 < length {
        if word(line, at) != word(prefix, at) {
            return None;
        }
        at += 8;
    }
    (word(line, length - 8) == word(prefix, length - 8)).then(|| &line[length..])
}

/// The fields as baton writes them, each with the start of its line.
const IN_ORDER: [(Field, &[u8]); 22] = [
    (Field::Id, b"      \"id\": "),
    (Field::Subject, b"      \"subject\": "),
    (Field::Body, b"      \"body\": "),
    (Field::Files, b"      \"files\": "),
    (Field::From, b"      \"from\": "),
    (Field::To, b"      \"to\": "),
    (Field::Reviewer, b"      \"reviewer\": "),
    (Field::Status, b"      \"status\": "),
    (Field::Priority, b"      \"priority\": "),
    (Field::After, b"      \"after\": "),
    (Field::Skill, b"      \"skill\": "),
    (Field::Review, b"      \"review\": "),
    (Field::CreatedAt, b"      \"created_at\": "),
    (Field::UpdatedAt, b"      \"updated_at\": "),
    (Field::ClaimedAt, b"      \"claimed_at\": "),
    (Field::LeaseExpiresAt, b"      \"lease_expires_at\": "),
    (Field::Result, b"      \"result\": "),
    (Field::Thread, b"      \"thread\": "),
    (Field::Delivery, b"      \"delivery\": "),
    (Field::Imported, b"      \"imported\": "),
    (Field::Touches, b"      \"touches\": "),
    (Field::Labels, b"      \"labels\": "),
];

/// What follows the line of a field whose value goes on over more lines.
enum More {
    Nothing,
    /// The ids of `after`, one to a line.
    Ids,
    /// The patterns of `touches`, one to a line.
    Patterns,
    /// A nested value, up to its closing line.
    Until(&'static [u8]),
}

impl More {
    #[inline(always)]
    fn read(
        self,
        lines: &mut Lines<'_, impl Read>,
        head: &mut Head,
        comma: &mut bool,
    ) -> Option<()> {
        match self {
            More::Nothing => {}
            More::Ids => (head.after, *comma) = numbers(lines, TaskId)?,
            More::Patterns => (head.touches, *comma) = strings(lines)?,
            More::Until(closing) => *comma = close(lines, closing)?,
        }
        Some(())
    }
}

/// Takes the value of one field of a task into `head`, or checks it; says what of it is on
/// the lines that follow. (Inlined: it runs once a line, and the call cost a tenth of
/// reading a board.)
#[inline(always)]
fn take(
    field: Field,
    value: &[u8],
    names: &mut Names,
    head: &mut Head,
    seen: &mut u32,
    comma: &mut bool,
) -> Option<More> {
    let value = match value.strip_suffix(b",") {
        Some(value) => value,
        None => {
            *comma = false;
            value
        }
    };
    let bit = field.bit();
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    match field {
        Field::Id => head.id = TaskId(number(value)?),
        Field::Status => head.status = Status::ALL[named(value, &Status::NAMES)?],
        Field::Priority => head.priority = Priority::ALL[named(value, &Priority::NAMES)?],
        Field::From => head.from = names.get(plain_string(value)?)?,
        Field::To => head.to = names.get(plain_string(value)?)?,
        Field::Reviewer => {
            head.reviewer = nullable(value, |value| names.get(plain_string(value)?))?
        }
        Field::CreatedAt => head.created_at = time(value)?,
        Field::UpdatedAt => head.updated_at = time(value)?,
        Field::LeaseExpiresAt => head.lease_expires_at = nullable(value, time)?,
        Field::After => match value {
            b"[]" => {}
            b"[" => return Some(More::Ids),
            _ => return None,
        },
        Field::Touches => match value {
            b"[]" => {}
            b"[" => return Some(More::Patterns),
            _ => return None,
        },
        _ => {
            // Not part of the head: check the kind of value, and step over it whole.
            let first = *value.first()?;
            let fits = match field {
                Field::Subject | Field::Body => first == b'"',
                Field::Files | Field::Thread | Field::Labels => first == b'[',
                Field::Review => value == b"true" || value == b"false",
                Field::Delivery | Field::Imported => value == b"{" || value == b"null",
                Field::Skill | Field::Result | Field::ClaimedAt => {
                    first == b'"' || value == b"null"
                }
                _ => true,
            };
            if !fits {
                return None;
            }
            match value {
                b"[" => return Some(More::Until(b"      ]")),
                b"{" => return Some(More::Until(b"      }")),
                _ => {}
            }
        }
    }
    Some(More::Nothing)
}

/// Steps over the lines of a nested value up to its closing line, `closing` with or
/// without a comma; whether it had one.
fn close(lines: &mut Lines<'_, impl Read>, closing: &[u8]) -> Option<bool> {
    loop {
        let line = lines.line()?;
        if let Some(rest) = line.strip_prefix(closing) {
            return match rest {
                b"" => Some(false),
                b"," => Some(true),
                _ => None,
            };
        }
        if !line.starts_with(b"        ") {
            return None;
        }
    }
}

/// The ids of a list laid out one to a line, up to its closing line; and whether that
/// line had a comma.
fn numbers<Id>(
    lines: &mut Lines<'_, impl Read>,
    id: impl Fn(u64) -> Id,
) -> Option<(Vec<Id>, bool)> {
    items(lines, |item| number(item).map(&id))
}

/// The strings of a list laid out one to a line, as [`numbers`]. A string with anything to
/// unescape is left to the strict reader.
fn strings(lines: &mut Lines<'_, impl Read>) -> Option<(Vec<String>, bool)> {
    items(lines, |item| {
        std::str::from_utf8(plain_string(item)?)
            .ok()
            .map(str::to_string)
    })
}

/// The items of a list laid out one to a line, each read by `read`, up to its closing line;
/// and whether that line had a comma.
fn items<T>(
    lines: &mut Lines<'_, impl Read>,
    read: impl Fn(&[u8]) -> Option<T>,
) -> Option<(Vec<T>, bool)> {
    let mut items = Vec::new();
    let mut comma = true;
    loop {
        let line = lines.line()?;
        if let Some(rest) = line.strip_prefix(b"      ]") {
            return match (comma, rest) {
                (false, b"") => Some((items, false)),
                (false, b",") => Some((items, true)),
                _ => None,
            };
        }
        if !comma {
            return None;
        }
        let item = line.strip_prefix(b"        ")?;
        let item = match item.strip_suffix(b",") {
            Some(item) => item,
            None => {
                comma = false;
                item
            }
        };
        items.push(read(item)?);
    }
}

/// A whole number as JSON writes it: digits, no leading zero.
fn number(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 19 || (text.len() > 1 && text[0] == b'0') {
        return None;
    }
    text.iter().try_fold(0u64, |value, byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + u64::from(byte - b'0'))
    })
}

/// A string with nothing to unescape: quotes around text with no quote, backslash or
/// control character.
fn plain_string(text: &[u8]) -> Option<&[u8]> {
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    (plain_run(inner) == inner.len()).then_some(inner)
}

fn nullable<T>(text: &[u8], read: impl FnOnce(&[u8]) -> Option<T>) -> Option<Option<T>> {
    match text {
        b"null" => Some(None),
        _ => read(text).map(Some),
    }
}

fn time(text: &[u8]) -> Option<Timestamp> {
    // A stored time is digits and separators, each checked as it is read.
    Timestamp::from_stored_bytes(text.strip_prefix(b"\"")?.strip_suffix(b"\"")?)
}

/// The place of one of `choices` among them.
fn named(text: &[u8], choices: &[&'static str]) -> Option<usize> {
    // The names hold nothing a string escapes, so matching one is reading it.
    let text = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    choices.iter().position(|choice| choice.as_bytes() == text)
}

/// How many bytes at the start of `bytes` can sit in a string as they are: up to the first
/// quote, backslash or control character. Strings are most of a board.
pub fn plain_run(bytes: &[u8]) -> usize {
    first_byte(
        bytes,
        |word| below(word, 0x20) | equal(word, b'"') | equal(word, b'\\'),
        |byte| matches!(byte, b'"' | b'\\' | 0..=0x1f),
    )
    .unwrap_or(bytes.len())
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Where the first byte that `flags` (eight bytes at a time) and `is` (for the last few)
/// pick out is. `flags` sets the high bit of the bytes it picks in a word read little-endian,
/// built from [`equal`] and [`below`]: each may also flag bytes above a true match, never
/// below one, so the lowest flag is exact.
#[inline(always)]
pub fn first_byte(
    bytes: &[u8],
    flags: impl Fn(u64) -> u64,
    is: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut offset = 0;
    while let Some(chunk) = bytes.get(offset..offset + 8) {
        let found = flags(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    bytes[offset..]
        .iter()
        .position(|byte| is(*byte))
        .map(|at| offset + at)
}

/// Flags the bytes of `word` equal to `byte`.
#[inline(always)]
pub fn equal(word: u64, byte: u8) -> u64 {
    let diff = word ^ (ONES * u64::from(byte));
    diff.wrapping_sub(ONES) & !diff & HIGH
}

/// Flags the bytes of `word` below `limit` (at most 0x80).
#[inline(always)]
pub fn below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGH
}

#[cfg(test)]
mod tests;
