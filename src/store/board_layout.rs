//! The fast way to read a board: line by line, for a board laid out exactly as baton (or
//! any pretty printer with two-space indents) writes it. JSON strings hold no raw newline,
//! so every line break in such a file is layout: a task opens and closes on lines indented
//! four spaces, its fields sit one to a line indented six, and anything nested goes deeper.
//! Only the lines of a task's head are read closely; the other fields are checked for the
//! type of their value by its first character and decoded when a command needs the task.
//!
//! Anything else — another layout, escapes where the head is read, an unknown status, a
//! missing field — gives `None`, and the board is read by the strict scanner instead,
//! which reads any JSON and names exactly what is wrong.

use std::ops::Range;

use crate::board::task::{Head, Priority, Status, TaskId};
use crate::time::Timestamp;

/// The board's own fields and its tasks' heads with where each task's text is.
pub struct Laid {
    pub schema: u64,
    pub project: String,
    pub next_id: u64,
    pub tasks: Vec<(Head, Range<usize>)>,
}

/// The lines of a text with the offset each starts at, found with one vectorised pass for
/// line breaks (the lines of a board are short; a search per line would cost more).
struct Lines<'a> {
    text: &'a str,
    at: usize,
    breaks: memchr::Memchr<'a>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            text,
            at: 0,
            breaks: memchr::memchr_iter(b'\n', text.as_bytes()),
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        let start = self.at;
        if start >= self.text.len() {
            return None;
        }
        let end = self.breaks.next().unwrap_or(self.text.len());
        self.at = end + 1;
        // A line break is one byte, so both ends fall on character boundaries.
        self.text.get(start..end).map(|line| (start, line))
    }
}

pub fn read(text: &str) -> Option<Laid> {
    let mut lines = Lines::new(text);
    let mut next = || lines.next().map(|(_, line)| line);
    if next()? != "{" {
        return None;
    }
    let schema = number(field(next()?, "  ", "schema")?.strip_suffix(',')?)?;
    let project = plain_string(field(next()?, "  ", "project")?.strip_suffix(',')?)?.to_string();
    let next_id = number(field(next()?, "  ", "next_id")?.strip_suffix(',')?)?;
    let tasks_line = field(next()?, "  ", "tasks")?;
    let mut tasks = Vec::new();
    if tasks_line == "[" {
        loop {
            let (start, line) = lines.next()?;
            if line != "    {" {
                return None;
            }
            let (head, end, more) = task(&mut lines)?;
            tasks.push((head, start + 4..end));
            if !more {
                break;
            }
        }
        if lines.next()?.1 != "  ]" {
            return None;
        }
    } else if tasks_line != "[]" {
        return None;
    }
    if lines.next()?.1 != "}" || lines.next().is_some() {
        return None;
    }
    Some(Laid {
        schema,
        project,
        next_id,
        tasks,
    })
}

/// The value on a line `<indent>"name": value`.
fn field<'a>(line: &'a str, indent: &str, name: &str) -> Option<&'a str> {
    line.strip_prefix(indent)?
        .strip_prefix('"')?
        .strip_prefix(name)?
        .strip_prefix("\": ")
}

/// One task, its opening line taken: its head, where its closing brace ends, and whether
/// another task follows.
fn task(lines: &mut Lines<'_>) -> Option<(Head, usize, bool)> {
    let mut head = Head {
        id: TaskId(0),
        status: Status::Pending,
        priority: Priority::Normal,
        from: String::new(),
        to: String::new(),
        reviewer: None,
        after: Vec::new(),
        created_at: Timestamp::EPOCH,
        updated_at: Timestamp::EPOCH,
        lease_expires_at: None,
    };
    let mut seen = 0u32;
    let mut comma = true;
    loop {
        let (start, line) = lines.next()?;
        if let Some(close) = line.strip_prefix("    }") {
            // The last field has no comma; the task's closing brace has one unless last.
            if REQUIRED & !seen != 0 {
                return None;
            }
            return match (comma, close) {
                (false, ",") => Some((head, start + 5, true)),
                (false, "") => Some((head, start + 5, false)),
                _ => None,
            };
        }
        if !comma {
            return None;
        }
        let field = line.strip_prefix("      \"")?;
        let (name, value) = field.split_at(field.find('"')?);
        let value = value.strip_prefix("\": ")?;
        let value = match value.strip_suffix(',') {
            Some(value) => value,
            None => {
                comma = false;
                value
            }
        };
        let bit = bit(name);
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        match name {
            "id" => head.id = TaskId(number(value)?),
            "status" => head.status = named(value, &Status::ALL, Status::as_str)?,
            "priority" => head.priority = named(value, &Priority::ALL, Priority::as_str)?,
            "from" => head.from = plain_string(value)?.to_string(),
            "to" => head.to = plain_string(value)?.to_string(),
            "reviewer" => {
                head.reviewer = nullable(value, |value| Some(plain_string(value)?.to_string()))?
            }
            "created_at" => head.created_at = time(value)?,
            "updated_at" => head.updated_at = time(value)?,
            "lease_expires_at" => head.lease_expires_at = nullable(value, time)?,
            "after" => match value {
                "[]" => {}
                "[" => (head.after, comma) = numbers(lines)?,
                _ => return None,
            },
            _ => {
                // Not part of the head: check the kind of value, and step over it whole.
                let first = value.bytes().next()?;
                let fits = match name {
                    "subject" | "body" => first == b'"',
                    "files" | "thread" => first == b'[',
                    "review" => value == "true" || value == "false",
                    "skill" | "result" | "claimed_at" => first == b'"' || value == "null",
                    _ => true,
                };
                if !fits {
                    return None;
                }
                match value {
                    "[" => comma = close(lines, "      ]")?,
                    "{" => comma = close(lines, "      }")?,
                    _ => {}
                }
            }
        }
    }
}

/// id, subject, from, to, status, created_at and updated_at: what a task must have.
const REQUIRED: u32 = 1 | 1 << 1 | 1 << 4 | 1 << 5 | 1 << 7 | 1 << 12 | 1 << 13;

/// The bit of each known task field (the same order as the stored task's fields); unknown
/// fields share bit 31 and are stepped over.
fn bit(name: &str) -> u32 {
    let bit = match name {
        "id" => 0,
        "subject" => 1,
        "body" => 2,
        "files" => 3,
        "from" => 4,
        "to" => 5,
        "reviewer" => 6,
        "status" => 7,
        "priority" => 8,
        "after" => 9,
        "skill" => 10,
        "review" => 11,
        "created_at" => 12,
        "updated_at" => 13,
        "claimed_at" => 14,
        "lease_expires_at" => 15,
        "result" => 16,
        "thread" => 17,
        // An unknown field may repeat as far as this reader cares; serde ignores it too.
        _ => return 0,
    };
    1 << bit
}

/// Steps over the lines of a nested value up to its closing line, `closing` with or
/// without a comma; whether it had one.
fn close(lines: &mut Lines<'_>, closing: &str) -> Option<bool> {
    loop {
        let (_, line) = lines.next()?;
        if let Some(rest) = line.strip_prefix(closing) {
            return match rest {
                "" => Some(false),
                "," => Some(true),
                _ => None,
            };
        }
        if !line.starts_with("        ") {
            return None;
        }
    }
}

/// The numbers of a list laid out one to a line, up to its closing line; and whether that
/// line had a comma.
fn numbers(lines: &mut Lines<'_>) -> Option<(Vec<TaskId>, bool)> {
    let mut ids = Vec::new();
    let mut comma = true;
    loop {
        let (_, line) = lines.next()?;
        if let Some(rest) = line.strip_prefix("      ]") {
            return match (comma, rest) {
                (false, "") => Some((ids, false)),
                (false, ",") => Some((ids, true)),
                _ => None,
            };
        }
        if !comma {
            return None;
        }
        let item = line.strip_prefix("        ")?;
        let item = match item.strip_suffix(',') {
            Some(item) => item,
            None => {
                comma = false;
                item
            }
        };
        ids.push(TaskId(number(item)?));
    }
}

/// A whole number as JSON writes it: digits, no leading zero.
fn number(text: &str) -> Option<u64> {
    let plain = !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    plain.then(|| text.parse().ok()).flatten()
}

/// A string with nothing to unescape: quotes around text with no quote, backslash or
/// control character.
fn plain_string(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let plain = inner
        .bytes()
        .all(|byte| byte >= 0x20 && byte != b'"' && byte != b'\\');
    plain.then_some(inner)
}

fn nullable<T>(text: &str, read: impl FnOnce(&str) -> Option<T>) -> Option<Option<T>> {
    match text {
        "null" => Some(None),
        _ => read(text).map(Some),
    }
}

fn time(text: &str) -> Option<Timestamp> {
    Timestamp::parse_stored(plain_string(text)?).ok()
}

fn named<T: Copy>(text: &str, choices: &[T], name: impl Fn(T) -> &'static str) -> Option<T> {
    let text = plain_string(text)?;
    choices.iter().copied().find(|choice| name(*choice) == text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOARD: &str = r#"{
  "schema": 1,
  "project": "p",
  "next_id": 3,
  "tasks": [
    {
      "id": 1,
      "subject": "one",
      "body": "",
      "files": [
        "a.rs",
        "b.rs"
      ],
      "from": "ada",
      "to": "bob",
      "reviewer": null,
      "status": "completed",
      "priority": "normal",
      "after": [],
      "skill": null,
      "review": false,
      "created_at": "2026-11-29T12:00:00.000Z",
      "updated_at": "2026-11-29T12:00:00.000Z",
      "claimed_at": null,
      "lease_expires_at": null,
      "result": "done",
      "thread": [
        {
          "at": "2026-11-29T12:00:00.000Z",
          "by": "bob",
          "kind": "result",
          "text": "done"
        }
      ]
    },
    {
      "id": 2,
      "subject": "two",
      "from": "ada",
      "to": "bob",
      "reviewer": "cy",
      "status": "working",
      "priority": "high",
      "after": [
        1
      ],
      "created_at": "2026-11-29T12:00:00.000Z",
      "updated_at": "2026-11-29T12:01:00.000Z",
      "lease_expires_at": "2026-11-29T12:31:00.000Z",
      "unknown": {
        "kept": true
      }
    }
  ]
}
"#;

    #[test]
    fn reads_a_board_as_baton_lays_it_out() {
        let laid = read(BOARD).expect("the layout is baton's");
        assert_eq!(
            (laid.schema, laid.project.as_str(), laid.next_id),
            (1, "p", 3)
        );
        let (first, second) = (&laid.tasks[0], &laid.tasks[1]);
        assert_eq!(first.0.status, Status::Completed);
        assert!(BOARD[first.1.clone()].starts_with("{\n      \"id\": 1,"));
        assert!(BOARD[first.1.clone()].ends_with("]\n    }"));
        assert_eq!(second.0.after, vec![TaskId(1)]);
        assert_eq!(second.0.reviewer.as_deref(), Some("cy"));
        assert_eq!(second.0.priority, Priority::High);
        assert!(second.0.lease_expires_at.is_some());
        assert!(BOARD[second.1.clone()].ends_with("}\n    }"));
    }

    #[test]
    fn anything_else_is_left_to_the_strict_reader() {
        let empty =
            "{\n  \"schema\": 1,\n  \"project\": \"p\",\n  \"next_id\": 1,\n  \"tasks\": []\n}\n";
        assert!(read(empty).is_some());
        for (from, to) in [
            ("\"status\": \"working\"", "\"status\": \"resting\""),
            ("\"id\": 2,", "\"id\": 2"),
            (
                "\"to\": \"bob\",\n      \"reviewer\": \"cy\"",
                "\"to\": \"b\\u006fb\",\n      \"reviewer\": \"cy\"",
            ),
            ("\"subject\": \"two\"", "\"subject\": 2"),
            ("\"id\": 2,", "\"id\": 02,"),
            ("      \"subject\": \"two\",\n", ""),
            (
                "\"from\": \"ada\",\n      \"to\"",
                "\"from\": \"ada\",\n      \"from\": \"ada\",\n      \"to\"",
            ),
            ("    },\n    {", "    }\n    {"),
            ("  ]\n}\n", "  ]\n}\n{}"),
            ("\"schema\": 1,", "\"schema\":1,"),
            ("        1\n", "        1,\n"),
        ] {
            assert!(BOARD.contains(from), "{from}");
            let changed = BOARD.replacen(from, to, 1);
            assert!(read(&changed).is_none(), "{to}");
        }
    }
}
