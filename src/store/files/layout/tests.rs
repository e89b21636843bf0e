//! The line reader's tests: boards read as baton lays them out, read in small pieces, and
//! what it leaves to the strict reader.

use super::*;
use std::ops::Range;

type Heads = Vec<(Head, Range<usize>)>;

/// Each task's head and where its text is, as the reader read them.
fn heads(laid: &Laid) -> Heads {
    laid.tasks
        .iter()
        .map(|(head, place)| (head.clone(), place.clone()))
        .collect()
}

fn laid(reader: impl Read, size: usize) -> Option<Laid> {
    read(reader, size)
}

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
    let laid = laid(BOARD.as_bytes(), BOARD.len()).expect("the layout is baton's");
    assert_eq!(
        (laid.schema, laid.project.as_str(), laid.next_id),
        (1, "p", 3)
    );
    let tasks = heads(&laid);
    let (first, second) = (&tasks[0], &tasks[1]);
    assert_eq!(first.0.status, Status::Completed);
    assert!(BOARD[first.1.clone()].starts_with("{\n      \"id\": 1,"));
    assert!(BOARD[first.1.clone()].ends_with("]\n    }"));
    assert_eq!(second.0.after, vec![TaskId(1)]);
    assert_eq!(second.0.reviewer.as_deref(), Some("cy"));
    assert_eq!(second.0.priority, Priority::High);
    assert!(second.0.lease_expires_at.is_some());
    assert!(BOARD[second.1.clone()].ends_with("}\n    }"));
}

/// Hands out its bytes a few at a time, as a short read would.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let length = self.step.min(buffer.len()).min(self.bytes.len());
        buffer[..length].copy_from_slice(&self.bytes[..length]);
        self.bytes = &self.bytes[length..];
        Ok(length)
    }
}

#[test]
fn a_board_read_in_small_pieces_or_with_long_lines_reads_the_same() {
    // A subject of two-byte characters longer than the buffer: it grows, and the
    // characters split between pieces are checked whole.
    let long_subject = format!("\"subject\": \"{}\"", "é".repeat(PIECE));
    let long = BOARD.replacen("\"subject\": \"two\"", &long_subject, 1);
    for text in [BOARD.to_string(), long] {
        let whole = laid(text.as_bytes(), text.len()).expect("read at once");
        assert_eq!(whole.tasks.len(), 2);
        let borrowed = read_bytes(text.as_bytes()).expect("read where it is held");
        assert_eq!(heads(&borrowed), heads(&whole), "borrowed, not copied");
        for step in [1, 2, 3, 7, 4096, PIECE + 1] {
            let pieces = laid(
                Trickle {
                    bytes: text.as_bytes(),
                    step,
                },
                0,
            )
            .unwrap_or_else(|| panic!("read {step} bytes at a time"));
            assert_eq!(heads(&pieces), heads(&whole), "{step} at a time");
            assert_eq!(pieces.next_id, whole.next_id);
        }
        for (_, span) in heads(&whole) {
            assert!(text[span].ends_with("\n    }"));
        }
    }
}

#[test]
fn text_that_is_not_utf8_or_cannot_be_read_is_left_to_the_strict_reader() {
    let mut bytes = BOARD.as_bytes().to_vec();
    let at = BOARD.find("\"two\"").unwrap() + 2;
    bytes[at] = 0xff;
    for step in [1, 5, PIECE] {
        let trickle = Trickle {
            bytes: &bytes,
            step,
        };
        assert!(laid(trickle, 0).is_none(), "{step} at a time");
    }
    assert!(read_bytes(&bytes).is_none(), "held whole");

    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("the disk is gone"))
        }
    }
    assert!(laid(BOARD.as_bytes().chain(Failing), 0).is_none());
}

#[test]
fn anything_else_is_left_to_the_strict_reader() {
    let empty =
        "{\n  \"schema\": 1,\n  \"project\": \"p\",\n  \"next_id\": 1,\n  \"tasks\": []\n}\n";
    assert!(laid(empty.as_bytes(), 0).is_some());
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
        assert!(laid(changed.as_bytes(), 0).is_none(), "{to}");
    }
}

#[test]
fn a_plain_run_ends_at_the_first_special_byte_wherever_it_is() {
    for length in 0..40 {
        let plain = vec![b'a'; length];
        assert_eq!(plain_run(&plain), length);
        for special in [b'"', b'\\', b'\n', 0x1f, 0] {
            for at in 0..length {
                let mut bytes = plain.clone();
                bytes[at] = special;
                // Bytes the word-wise test could flag by mistake sit after a match.
                for later in at + 1..length {
                    bytes[later] = [0x21, 0x5d, 0x23, 0x80][later % 4];
                }
                assert_eq!(plain_run(&bytes), at, "{special:#x} at {at} of {length}");
            }
        }
    }
}

/// The fields of a task are written out in several places here (the order they are
/// written in, their names, which a task must have) and once more in `Task`: a field
/// added to one and not the others would read fine and fail later as damage.
#[test]
fn the_line_reader_knows_every_field_of_a_task_and_no_other() {
    use crate::board::action::ActionKind;
    use crate::board::task::{Task, ThreadEntry};
    let at = Timestamp::EPOCH;
    // Every field given a value, so that every one is written.
    let task = Task {
        id: TaskId(1),
        subject: "s".into(),
        body: "b".into(),
        files: vec!["f".into()],
        from: "ada".into(),
        to: "bob".into(),
        reviewer: Some("cy".into()),
        status: Status::Working,
        priority: Priority::High,
        after: vec![TaskId(2)],
        skill: Some("rust".into()),
        review: true,
        created_at: at,
        updated_at: at,
        claimed_at: Some(at),
        lease_expires_at: Some(at),
        result: Some("r".into()),
        thread: vec![ThreadEntry {
            at,
            by: "bob".into(),
            kind: ActionKind::Claim,
            text: String::new(),
        }],
        delivery: Some(crate::board::delivery::Delivery::queued("bob", at)),
        imported: Some(crate::board::task::Origin {
            from: "roundtable".into(),
            project: "p".into(),
            id: "1".into(),
        }),
        touches: vec!["src/**".into()],
        worktree: None,
        landed: None,
        labels: Vec::new(),
    };
    let serde_json::Value::Object(written) = serde_json::to_value(&task).unwrap() else {
        panic!("a task is written as an object");
    };
    // The keys in the order Task writes them: one to a line, indented two spaces.
    let pretty = serde_json::to_string_pretty(&task).unwrap();
    let names: Vec<&str> = pretty
        .lines()
        .filter_map(|line| line.strip_prefix("  \"")?.split_once('"'))
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names.len(), written.len());
    let in_order: Vec<&str> = IN_ORDER
        .iter()
        .map(|(_, prefix)| {
            let name = prefix.strip_prefix(b"      \"").unwrap();
            std::str::from_utf8(name.strip_suffix(b"\": ").unwrap()).unwrap()
        })
        .collect();
    assert_eq!(
        in_order, names,
        "the line reader's order is the order Task writes"
    );
    let mut every = 0;
    for ((field, _), name) in IN_ORDER.iter().zip(&names) {
        assert!(
            Field::named(name.as_bytes()) == *field,
            "`{name}` is its own field"
        );
        assert!(every & field.bit() == 0, "`{name}` has a bit of its own");
        every |= field.bit();
    }
    for ((field, _), name) in IN_ORDER.iter().zip(&names) {
        // A task must have the field exactly when Task cannot be read without it.
        let mut without = written.clone();
        without.remove(*name);
        let required = serde_json::from_value::<Task>(without.into()).is_err();
        let missing = Field::missing(every & !field.bit());
        assert_eq!(missing == Some(*name), required, "`{name}` required");
        assert!(missing.is_none() || required, "only `{name}` is missing");
    }
    assert_eq!(Field::missing(every), None);
}
