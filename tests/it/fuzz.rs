//! Fuzzing, proptest-style, of every parser of stored files and of hook input: arbitrary
//! bytes and damaged copies of valid files must give a value or a clear error naming the
//! file, never a panic. `PROPTEST_CASES` sets the number of cases (256 by default, a short
//! run that CI can afford).

use std::fs;

use proptest::prelude::*;

use baton::board::task::{Status, TaskId};
use baton::home::Home;
use baton::hook::HookInput;
use baton::store::StoreError;
use baton::time::Timestamp;
use baton::{mail, store};

const VALID_BOARD: &str = r#"{
  "schema": 1,
  "project": "default",
  "next_id": 3,
  "tasks": [
    {"id": 1, "subject": "a", "body": "", "files": ["x.rs"], "from": "lead", "to": "dev",
     "reviewer": null, "status": "working", "priority": "high", "after": [], "skill": null,
     "review": true, "created_at": "2026-11-29T10:00:00.000Z",
     "updated_at": "2026-11-29T10:05:00.000Z", "claimed_at": "2026-11-29T10:05:00.000Z",
     "lease_expires_at": "2026-11-29T10:35:00.000Z", "result": null,
     "thread": [{"at": "2026-11-29T10:05:00.000Z", "by": "dev", "kind": "claim", "text": ""}]},
    {"id": 2, "subject": "b", "from": "lead", "to": "dev", "status": "pending",
     "after": [1], "created_at": "2026-11-29T10:00:00.000Z",
     "updated_at": "2026-11-29T10:00:00.000Z"}
  ]
}"#;

/// A board as baton lays it out, which the line reader reads without serde_json.
const LAID_OUT_BOARD: &str = r#"{
  "schema": 1,
  "project": "default",
  "next_id": 3,
  "tasks": [
    {
      "id": 1,
      "subject": "a",
      "body": "b\u00e9",
      "files": [
        "x.rs"
      ],
      "from": "lead",
      "to": "dev",
      "reviewer": null,
      "status": "working",
      "priority": "high",
      "after": [],
      "skill": null,
      "review": true,
      "created_at": "2026-11-29T10:00:00.000Z",
      "updated_at": "2026-11-29T10:05:00.000Z",
      "claimed_at": "2026-11-29T10:05:00.000Z",
      "lease_expires_at": "2026-11-29T10:35:00.000Z",
      "result": null,
      "thread": [
        {
          "at": "2026-11-29T10:05:00.000Z",
          "by": "dev",
          "kind": "claim",
          "text": ""
        }
      ]
    },
    {
      "id": 2,
      "subject": "b",
      "from": "lead",
      "to": "dev",
      "reviewer": "qa",
      "status": "pending",
      "after": [
        1
      ],
      "created_at": "2026-11-29T10:00:00.000Z",
      "updated_at": "2026-11-29T10:00:00.000Z"
    }
  ]
}
"#;

/// Valid text damaged in one of the ways a crash or a hand edit damages files.
fn damaged(valid: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let length = valid.len();
    let quotes: Vec<usize> = (0..length)
        .filter(|at| valid.as_bytes()[*at] == b'"')
        .collect();
    prop_oneof![
        (0..length).prop_map(move |cut| valid.as_bytes()[..cut].to_vec()),
        (0..length, any::<u8>()).prop_map(move |(at, byte)| {
            let mut bytes = valid.as_bytes().to_vec();
            bytes[at] = byte;
            bytes
        }),
        (0..length, proptest::collection::vec(any::<u8>(), 1..16)).prop_map(move |(at, junk)| {
            let mut bytes = valid.as_bytes().to_vec();
            bytes.splice(at..at, junk);
            bytes
        }),
        proptest::collection::vec(any::<u8>(), 0..512),
        // A `\u` escape, good or bad, after a quote: in a string it must be read as serde_json
        // reads it (a lone surrogate refused), and the line reader must not step over it
        // where it reads closely.
        (
            0..quotes.len(),
            prop_oneof![
                Just(r"\u0041"),
                Just(r"\u00e9"),
                Just(r"\ud83d\ude00"),
                Just(r"\ud800"),
                Just(r"\udc00"),
                Just(r"\ud800\u0041"),
                Just(r"\u00"),
                Just(r"\uzzzz"),
                Just(r"\u0022"),
                Just(r"\u005c"),
            ]
        )
            .prop_map(move |(quote, escape)| {
                // Just after a quote: inside a string half the time.
                let at = quotes[quote] + 1;
                let mut bytes = valid.as_bytes().to_vec();
                bytes.splice(at..at, escape.bytes());
                bytes
            }),
    ]
}

fn names_the_file(error: &StoreError, file: &str) -> bool {
    match error {
        StoreError::Corrupt { origin, .. } | StoreError::NewerSchema { origin, .. } => {
            origin.path().is_some_and(|path| path.ends_with(file))
        }
        _ => false,
    }
}

proptest! {
    #[test]
    fn board_parsing_never_panics_and_names_the_file(bytes in damaged(VALID_BOARD)) {
        let origin = store::files::board::origin("p", std::path::Path::new("/hub/projects/p/board.json"));
        match store::files::board::parse(&origin, &bytes) {
            Ok(board) => {
                prop_assert!(board.schema <= baton::board::BOARD_SCHEMA);
                // Tasks are decoded whole only when used; damage found then is named too,
                // and a task that decodes agrees with the head read up front.
                for (head, task) in board.heads().zip(board.tasks()) {
                    match task {
                        Ok(task) => prop_assert_eq!(head, &baton::board::task::Head::of(task)),
                        // The model names the task; the store adds where the board is.
                        Err(error) => prop_assert!(error.to_string().contains(&head.id.to_string()), "{error}"),
                    }
                }
            }
            Err(error) => prop_assert!(names_the_file(&error, "board.json"), "{error}"),
        }
    }

    /// The line reader reads a board without checking the words inside its tasks; whatever
    /// it reads, the strict reader reads the same, or the damage it stepped over shows the
    /// moment a command reads the tasks whole.
    #[test]
    fn the_line_reader_never_hides_what_the_strict_reader_refuses(bytes in damaged(LAID_OUT_BOARD)) {
        let origin = store::files::board::origin("p", std::path::Path::new("/hub/projects/p/board.json"));
        let laid_out = store::files::layout::read(&bytes[..], bytes.len()).is_some();
        match (store::files::board::parse(&origin, &bytes), store::files::board::parse_strict(&origin, &bytes)) {
            (Ok(lazy), Ok(strict)) => prop_assert!(lazy.heads().eq(strict.heads())),
            (Ok(lazy), Err(error)) => {
                prop_assert!(laid_out);
                prop_assert!(lazy.tasks().any(|task| task.is_err()), "hidden: {error}");
                // And the damage is not on a line of a task's head, which the line reader
                // reads as closely as the strict one.
                let text = String::from_utf8_lossy(&bytes);
                let line = error
                    .to_string()
                    .rsplit_once(" at line ")
                    .and_then(|(_, place)| place.split(' ').next()?.parse::<usize>().ok())
                    .and_then(|number| text.lines().nth(number - 1))
                    .unwrap_or_default()
                    .to_string();
                let head_fields = ["id", "status", "priority", "from", "to", "reviewer", "after",
                    "created_at", "updated_at", "lease_expires_at"];
                prop_assert!(
                    !head_fields.iter().any(|field| line.starts_with(&format!("      \"{field}\""))),
                    "a head line the line reader should have refused: {line:?} ({error})"
                );
            }
            (Err(lazy), Err(_)) => prop_assert!(names_the_file(&lazy, "board.json")),
            (Err(lazy), Ok(_)) => prop_assert!(false, "only the line reader refused: {lazy}"),
        }
    }

    /// From its file, a board reads as from the same bytes in memory: the same heads, tasks
    /// and errors.
    #[test]
    fn a_board_read_from_its_file_reads_as_its_bytes(bytes in damaged(LAID_OUT_BOARD)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        std::fs::write(&path, &bytes).unwrap();
        match (store::files::board::read_path(path.clone(), "p"), store::files::board::parse(&store::files::board::origin("p", &path), &bytes)) {
            (Ok(from_file), Ok(in_memory)) => {
                prop_assert!(from_file.heads().eq(in_memory.heads()));
                prop_assert_eq!(from_file.len(), in_memory.len());
                for (left, right) in from_file.tasks().zip(in_memory.tasks()) {
                    match (left, right) {
                        (Ok(left), Ok(right)) => prop_assert_eq!(left, right),
                        (Err(left), Err(right)) => prop_assert_eq!(left.to_string(), right.to_string()),
                        (left, right) => prop_assert!(false, "{:?} / {:?}", left.err(), right.err()),
                    }
                }
            }
            (Err(left), Err(right)) => prop_assert_eq!(left.to_string(), right.to_string()),
            (left, right) => prop_assert!(false, "{:?} / {:?}", left.err(), right.err()),
        }
    }

    #[test]
    fn jsonl_reading_skips_what_it_cannot_read(lines in proptest::collection::vec(
        prop_oneof![
            Just(r#"{"at":"2026-11-29T10:00:00.000Z","project":"p","actor":"a","action":"note"}"#.as_bytes().to_vec()),
            proptest::collection::vec(any::<u8>(), 0..80),
        ],
        0..20,
    )) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("activity.jsonl");
        fs::write(&path, lines.join(&b'\n')).unwrap();
        let read = baton::store::files::log::read::<baton::activity::ActivityRecord>(&path).expect("a log with bad lines still reads");
        prop_assert!(read.len() <= lines.len());
    }

    #[test]
    fn mail_and_read_positions_never_panic(mail_bytes in proptest::collection::vec(any::<u8>(), 0..600),
                                           positions in damaged(r#"{"schema": 1, "positions": {"dev": 3, "lead": 1}}"#)) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().to_path_buf());
        fs::create_dir_all(home.project_dir("p")).unwrap();
        fs::write(home.mail_file("p"), &mail_bytes).unwrap();
        fs::write(home.mail_cursor_file("p"), &positions).unwrap();
        let store = baton::store::files::FileStore::new(
            home.clone(),
            baton::file::lock::LockPolicy::silent(std::time::Duration::from_secs(5)),
        );
        let _ = mail::read(&store, "p").expect("mail with bad lines still reads");
        if let Err(error) = mail::read_positions(&store, "p") {
            prop_assert!(names_the_file(&error, "mail.read.json"), "{error}");
        }
    }

    #[test]
    fn hook_input_of_any_shape_is_taken_or_ignored(text in prop_oneof![
        ".*",
        damaged(r#"{"session_id":"s","cwd":"/work/api","hook_event_name":"Stop","stop_hook_active":true}"#)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ]) {
        let input = HookInput::parse(&text);
        if input.stop_hook_active {
            prop_assert!(text.contains("true"));
        }
    }

    #[test]
    fn ids_statuses_and_times_parse_or_refuse(text in ".{0,40}") {
        let _ = text.parse::<TaskId>();
        let _ = text.parse::<Status>();
        if let Ok(at) = text.parse::<Timestamp>() {
            // Whatever parses prints in the stored form and reads back the same.
            prop_assert_eq!(at.to_string().parse::<Timestamp>().unwrap(), at);
        }
    }
}
