//! The board's file: reading `board.json`, and writing it atomically (keeping
//! `board.json.bak`) with its activity lines journaled. A writer holds `board.lock` around
//! both (the file store's board transaction is the one way to change a board); readers
//! never lock: [`read`] sees the whole old board or the whole new one.

use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::journal::{self, Line};
use super::layout;
#[cfg(unix)]
use super::source::BoardFile;
use super::source::{BoardText, placed_in_file};
use crate::board::reservation::Reservation;
use crate::board::{Board, StoredTasks};
use crate::file::lock::FileLock;
use crate::file::{atomic, regular};
use crate::home::Home;
use crate::store::head::{HeadFields, duplicate, once};
use crate::store::{Origin, Recovered, StoreError, Stored};

pub use crate::board::BOARD_SCHEMA;

/// Reads a project's board without locking; a project with no board yet has an empty one.
///
/// A board in baton's layout is read line by line (`layout`): only the heads of its tasks
/// are decoded, and a task is decoded when a command needs it, read again from the open
/// file ([`BoardFile`]; on Windows from the text held whole). Any other board is read whole,
/// strictly, by serde_json.
pub fn read(home: &Home, project: &str) -> Result<Board, StoreError> {
    read_path(home.board_file(project), project)
}

/// The board of `project` kept in the file at `path`, as errors name it.
pub fn origin(project: &str, path: &Path) -> Origin {
    Origin::file(
        Stored::Board {
            project: project.to_string(),
        },
        path,
    )
}

/// The board of `project` in its home, as errors name it.
pub fn origin_in(home: &Home, project: &str) -> Origin {
    origin(project, &home.board_file(project))
}

/// As [`read`], from the board file at `path`.
pub fn read_path(path: PathBuf, project: &str) -> Result<Board, StoreError> {
    let mut file = match regular::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Board::new(project)),
        Err(error) => return Err(StoreError::io(&path)(error)),
    };
    let size = file
        .metadata()
        .map_or(0, |metadata| metadata.len() as usize);
    // Where an open file does not stop the next write's rename, a board in baton's layout
    // is read a piece at a time and its tasks read again from the open file when needed.
    #[cfg(unix)]
    {
        use std::io::{BufReader, Seek};
        let laid = layout::read(BufReader::with_capacity(64 * 1024, &file), size);
        if let Some(laid) = laid {
            return from_layout(
                &origin(project, &path),
                laid,
                Arc::new(BoardFile::new(file)),
            );
        }
        // Any other layout is read whole, from the start.
        file.rewind().map_err(StoreError::io(&path))?;
    }
    // One more byte than the file holds, so a file read to its end takes no second
    // allocation to find that end.
    let mut bytes = Vec::with_capacity(size + 1);
    file.read_to_end(&mut bytes)
        .map_err(StoreError::io(&path))?;
    // Read whole and closed before anything is decoded: on Windows an open file would stop
    // the next write's rename.
    drop(file);
    parse_owned(&origin(project, &path), bytes)
}

/// The board in the file `origin` names, or `None` when there is no file there: for a look
/// at a board that may not exist (its backup, say), where an empty board would pass for
/// one.
pub fn read_if_there(origin: &Origin) -> Result<Option<Board>, StoreError> {
    let path = origin.path().unwrap_or(Path::new(""));
    match regular::read(path) {
        Ok(bytes) => parse_owned(origin, bytes).map(Some),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path)(error)),
    }
}

/// Parses board bytes, refusing anything that does not parse or has a newer schema.
pub fn parse(origin: &Origin, bytes: &[u8]) -> Result<Board, StoreError> {
    parse_owned(origin, bytes.to_vec())
}

/// Parses board bytes, keeping them as the text its undecoded tasks are decoded from and
/// its unchanged tasks written back from. A board in baton's layout has every task's head
/// read line by line; any other text is checked whole as JSON, and every task's head (and
/// the type of each of its fields) as a task. The rest of a task is decoded when a command
/// needs it.
pub fn parse_owned(origin: &Origin, bytes: Vec<u8>) -> Result<Board, StoreError> {
    if let Some(laid) = layout::read_bytes(&bytes) {
        return from_layout(origin, laid, Arc::new(BoardText::new(bytes)));
    }
    // The line reader has already failed on this text.
    parse_with(origin, bytes, |_| None)
}

/// The board the line reader read, its tasks undecoded in `undecoded`; refused when its
/// schema is newer than this binary knows.
fn from_layout(
    origin: &Origin,
    laid: layout::Laid,
    undecoded: Arc<dyn crate::board::Undecoded>,
) -> Result<Board, StoreError> {
    check_schema(origin, laid.schema)?;
    let mut board = Board::from_store(
        // The schema is at most BOARD_SCHEMA here, so it fits.
        laid.schema as u32,
        laid.project,
        laid.next_id,
        laid.tasks,
        undecoded,
    );
    board.set_reservations(laid.reservations);
    Ok(board)
}

/// As [`parse`], reading with serde_json alone (the strict reader): what the line reader must agree
/// with wherever it reads a board itself.
pub fn parse_strict(origin: &Origin, bytes: &[u8]) -> Result<Board, StoreError> {
    parse_with(origin, bytes.to_vec(), |_| None)
}

/// Refuses a board with a newer schema than this binary knows.
fn check_schema(origin: &Origin, schema: u64) -> Result<(), StoreError> {
    if schema > u64::from(BOARD_SCHEMA) {
        return Err(StoreError::NewerSchema {
            origin: origin.clone(),
            found: schema,
            known: BOARD_SCHEMA,
        });
    }
    Ok(())
}

fn parse_with(
    origin: &Origin,
    bytes: Vec<u8>,
    laid_out: impl FnOnce(&str) -> Option<layout::Laid>,
) -> Result<Board, StoreError> {
    let corrupt = |detail: String| StoreError::corrupt(origin)(detail);
    let text = String::from_utf8(bytes)
        .map_err(|error| corrupt(format!("not UTF-8 text ({})", error.utf8_error())))?;
    // Boards as baton lays them out are read line by line; any other text, and any damage,
    // is read whole by serde_json, which reads all JSON and names what is wrong.
    let laid = match laid_out(&text) {
        Some(laid) => laid,
        None => read_whole(origin, &text)?,
    };
    from_layout(origin, laid, Arc::new(BoardText::new(text.into_bytes())))
}

/// Reads a board in any layout with serde_json: its own fields, and each task's head with
/// where the task's text is. A newer schema is refused as such even when what follows it
/// would not read as this version's board.
fn read_whole(origin: &Origin, text: &str) -> Result<layout::Laid, StoreError> {
    let corrupt = |detail: String| StoreError::corrupt(origin)(detail);
    let mut found = Found::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let read = BoardFields(&mut found)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    if let Some(schema) = found.schema {
        check_schema(origin, schema)?;
    }
    read.map_err(|error| corrupt(placed_in_file(&error, b"", text.as_bytes())))?;
    let missing = |field: &str| corrupt(format!("missing field `{field}`"));
    let schema = found.schema.ok_or_else(|| missing("schema"))?;
    let project = found.project.ok_or_else(|| missing("project"))?;
    let next_id = found.next_id.ok_or_else(|| missing("next_id"))?;
    let raw_tasks = found.tasks.ok_or_else(|| missing("tasks"))?;
    let mut tasks = StoredTasks::with_capacity(raw_tasks.len());
    for raw in raw_tasks {
        let task = raw.get();
        // A raw value borrows its text from `text`: where it starts is how far it is in.
        let start = task.as_ptr() as usize - text.as_ptr() as usize;
        let span = start..start + task.len();
        debug_assert_eq!(&text[span.clone()], task);
        let head = serde_json::Deserializer::from_str(task)
            .deserialize_map(HeadFields)
            .map_err(|error| {
                corrupt(placed_in_file(
                    &error,
                    &text.as_bytes()[..start],
                    task.as_bytes(),
                ))
            })?;
        tasks.push(head, span);
    }
    Ok(layout::Laid {
        schema,
        project,
        next_id,
        reservations: found.reservations.unwrap_or_default(),
        tasks,
    })
}

/// A board's own fields as far as they were read: kept when a later part of the text
/// fails, so that a newer schema is still told as such.
#[derive(Default)]
struct Found<'text> {
    schema: Option<u64>,
    project: Option<String>,
    next_id: Option<u64>,
    reservations: Option<Vec<Reservation>>,
    tasks: Option<Vec<&'text RawValue>>,
}

/// Reads a board's object into [`Found`], field by field.
struct BoardFields<'found, 'text>(&'found mut Found<'text>);

impl<'text> DeserializeSeed<'text> for BoardFields<'_, 'text> {
    type Value = ();

    fn deserialize<D: Deserializer<'text>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'text> Visitor<'text> for BoardFields<'_, 'text> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a board")
    }

    fn visit_map<A: MapAccess<'text>>(self, mut map: A) -> Result<(), A::Error> {
        let found = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "schema" => found.schema = Some(once(&found.schema, &key, &mut map)?),
                "project" => found.project = Some(once(&found.project, &key, &mut map)?),
                "next_id" => found.next_id = Some(once(&found.next_id, &key, &mut map)?),
                "reservations" => {
                    found.reservations = Some(once(&found.reservations, &key, &mut map)?)
                }
                "tasks" => {
                    if found.tasks.is_some() {
                        return Err(duplicate(&key));
                    }
                    if found
                        .schema
                        .is_some_and(|schema| schema > u64::from(BOARD_SCHEMA))
                    {
                        // A newer board is refused as such; its tasks need not make sense
                        // to us.
                        map.next_value::<IgnoredAny>()?;
                        found.tasks = Some(Vec::new());
                    } else {
                        found.tasks = Some(map.next_value()?);
                    }
                }
                _ => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        Ok(())
    }
}

/// Completes or drops the journal of a change whose writer was killed (`store::files::journal`).
/// The caller holds the board lock.
pub fn recover_log<R: Line>(
    home: &Home,
    project: &str,
) -> Result<Option<Recovered<R>>, StoreError> {
    journal::recover(
        &home.activity_journal(project),
        &home.board_file(project),
        &home.activity_file(project),
    )
}

/// As [`recover_log`] for a reader that holds no lock: when a journal is there and nobody
/// holds the board lock, takes it and recovers; when a writer holds it, that writer is
/// finishing its change (or will recover the journal first), so this leaves it alone.
pub fn try_recover_log<R: Line>(
    home: &Home,
    project: &str,
) -> Result<Option<Recovered<R>>, StoreError> {
    if !home.activity_journal(project).exists() {
        return Ok(None);
    }
    match FileLock::try_acquire(&home.board_lock(project))? {
        Some(_guard) => recover_log(home, project),
        None => Ok(None),
    }
}

/// Writes the board and its activity lines so that the log holds a change's lines exactly
/// when the change committed, whatever moment the writer is killed at: the new board is
/// staged and synced, its journal written, the board renamed into place (and the directory
/// synced), and only then are the lines appended and the journal removed. A writer killed
/// in between leaves the journal, which the next writer completes or drops
/// (`store::files::journal`). A failure (a full disk) before the rename leaves board and log as
/// they were; once the rename is done the change stands.
///
/// On a power cut the promise is weaker, as neither the journal nor the log is synced (an
/// fsync more per change would cost about as much as the rest of the write): the board is
/// the one that was last renamed and synced, a line is never in the log for a change that
/// did not commit (the lines are written after the synced rename), but the last lines
/// before the cut may be missing. The caller holds the board lock.
pub fn persist<R: Line>(
    home: &Home,
    project: &str,
    board: &Board,
    records: &[R],
) -> Result<(), StoreError> {
    let path = home.board_file(project);
    let backup = home.board_backup(project);
    let staged = atomic::stage_with(&path, |out| write_board(out, board))?;
    if records.is_empty() {
        return Ok(staged.commit(Some(&backup))?);
    }
    let journal_path = home.activity_journal(project);
    let log = home.activity_file(project);
    if let Err(error) = journal::write(&journal_path, staged.identity(), &log, records) {
        staged.discard();
        journal::discard(&journal_path);
        return Err(error);
    }
    if let Err(error) = staged.commit(Some(&backup)) {
        // The rename may have happened with only the directory's sync failing: the journal
        // tells, and logs the change if it stands.
        let _ = recover_log::<R>(home, project);
        return Err(error.into());
    }
    journal::finish(&journal_path, &log, records);
    Ok(())
}

/// Writes the board atomically, keeping the previous one as `board.json.bak`, with no
/// activity line (restores and repairs). The caller holds the board lock.
pub fn write(home: &Home, project: &str, board: &Board) -> Result<(), StoreError> {
    let path = home.board_file(project);
    atomic::stage_with(&path, |out| write_board(out, board))?
        .commit(Some(&home.board_backup(project)))?;
    Ok(())
}

/// Writes `board` as its file holds it (`source::write`).
pub fn write_board<W: Write>(out: &mut W, board: &Board) -> io::Result<()> {
    super::source::write(out, board)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::TaskId;
    use crate::time::Timestamp;

    const PATH: &str = "/hub/projects/p/board.json";

    fn at() -> Origin {
        origin("p", Path::new(PATH))
    }

    /// A board in no layout of baton's, so that serde_json reads it.
    fn board(tasks: &str) -> String {
        format!(r#"{{"schema": 1, "project": "p", "next_id": 9, "tasks": [{tasks}]}}"#)
    }

    const TASK: &str = r#"{"id": 1, "subject": "s", "from": "ada", "to": "bob",
        "status": "pending", "created_at": "2026-11-29T10:00:00.000Z",
        "updated_at": "2026-11-29T10:00:00.000Z"}"#;

    fn error(text: &str) -> String {
        parse_strict(&at(), text.as_bytes())
            .expect_err(text)
            .to_string()
    }

    #[test]
    fn a_board_in_any_layout_reads_with_the_text_of_each_task() {
        let text = board(&format!("{TASK},\n {TASK}"));
        let board = parse_strict(&at(), text.as_bytes()).unwrap();
        assert_eq!((board.project.as_str(), board.next_id), ("p", 9));
        assert_eq!(board.len(), 2);
        for task in board.tasks() {
            assert_eq!(task.unwrap().subject, "s");
        }
    }

    #[test]
    fn reservations_and_scopes_are_written_and_read_back_by_both_readers() {
        use crate::board::reservation::Grant;
        use crate::board::scope::Pattern;
        use crate::board::task::{Status, Task};
        let now = Timestamp::parse_stored("2026-12-01T10:00:00Z").unwrap();
        let mut board = Board::new("p");
        for id in 1..=2 {
            let mut task = Task::example(Status::Pending, now);
            task.id = TaskId(id);
            task.touches = vec!["src/date/**".into(), format!("port:300{id}")];
            board.push(task);
        }
        let grant = Grant {
            task: None,
            lasts: Some(chrono::Duration::minutes(30)),
            exclusive: false,
            reason: Some("a \"quoted\" reason".into()),
        };
        let patterns = [
            Pattern::parse("docs/").unwrap(),
            Pattern::parse("db:x").unwrap(),
        ];
        board.reserve("bob", &patterns, &grant, now).unwrap();
        let mut text = Vec::new();
        write_board(&mut text, &board).unwrap();
        let fast = layout::read_bytes(&text).expect("baton's own layout reads line by line");
        assert_eq!(fast.reservations, board.reservations());
        let heads: Vec<_> = fast
            .tasks
            .iter()
            .map(|(head, _)| head.touches.clone())
            .collect();
        assert_eq!(heads[1], ["src/date/**", "port:3002"]);
        let strict = parse_strict(&at(), &text).unwrap();
        assert_eq!(strict, board);
        assert_eq!(parse(&at(), &text).unwrap(), board);
        assert_eq!(strict.head(TaskId(2)).unwrap().touches, heads[1]);
    }

    #[test]
    fn what_is_wrong_is_named_with_its_line_and_column() {
        for (text, what) in [
            (
                "{\n  \"schema\": 1\n  \"project\": \"p\"\n}",
                "expected `,` or `}` at line 3 column 3",
            ),
            ("[]", "expected a board at line 1 column"),
            (
                &board("").replace("9", "-1"),
                "expected u64 at line 1 column",
            ),
            (
                &board(&TASK.replace("\"pending\"", "\"resting\"")),
                "`status` is `resting`, expected one of pending, working,",
            ),
            (&board(&TASK.replace("\"s\"", "\"\\ud800\"")), "hex escape"),
            (
                &board(&TASK.replace("\"s\"", "1")),
                "invalid type: integer `1`, expected a string",
            ),
            (
                &board(&TASK.replace("\"id\": 1,", "")),
                "missing field `id`",
            ),
            (
                &board(TASK).replace("\"next_id\": 9,", ""),
                "missing field `next_id`",
            ),
            (&format!("{} {{}}", board("")), "trailing characters"),
        ] {
            let error = error(text);
            assert!(error.contains(what), "{text}: {error}");
            assert!(error.contains("board.json"), "{error}");
        }
        // A task's place is counted in the whole file.
        let text = board(&format!("{TASK},\n{}", TASK.replace("\"bob\"", "7")));
        assert!(
            error(&text).ends_with("at line 4 column 48"),
            "{}",
            error(&text)
        );
    }

    #[test]
    fn an_error_just_past_a_line_break_is_placed_at_the_end_of_its_line() {
        // serde_json says "line 2 column 0" for the end of the text after a line break.
        let text = "{\"schema\": 1,\n";
        assert!(
            error(text).ends_with("at line 1 column 14"),
            "{}",
            error(text)
        );
        let text = board(&TASK.replace("\"s\"", "\"s\n"));
        assert!(
            error(&text).contains("at line 1 column"),
            "{}",
            error(&text)
        );
    }

    #[test]
    fn a_field_given_twice_is_refused_on_the_board_and_in_a_task() {
        let text = board("").replace(
            "\"project\": \"p\"",
            "\"project\": \"p\", \"project\": \"q\"",
        );
        assert!(error(&text).contains("duplicate field `project`"));
        // Every field the line reader knows is known here too: given twice, it is refused.
        let fields = TASK.replace('\n', " ").replace("{", "").replace("}", "");
        let known = [
            ("id", "1"),
            ("body", "\"\""),
            ("files", "[]"),
            ("reviewer", "null"),
            ("priority", "\"low\""),
            ("after", "[]"),
            ("skill", "null"),
            ("review", "false"),
            ("claimed_at", "null"),
            ("lease_expires_at", "null"),
            ("result", "null"),
            ("thread", "[]"),
        ];
        for (field, value) in known {
            let task = format!("{{{fields}, \"{field}\": {value}, \"{field}\": {value}}}");
            let text = board(&task);
            assert!(
                error(&text).contains(&format!("duplicate field `{field}`")),
                "{field}"
            );
        }
        // A field baton does not know may repeat, as serde lets it.
        let task = format!("{{{fields}, \"later\": 1, \"later\": 2}}");
        assert!(parse_strict(&at(), board(&task).as_bytes()).is_ok());
    }

    #[test]
    fn a_newer_schema_is_refused_as_such_whatever_follows_it() {
        for text in [
            r#"{"schema": 7, "tasks": [ oops"#,
            r#"{"schema": 7, "project": "p", "next_id": 1, "tasks": [{"id": "one"}]}"#,
        ] {
            let refused = parse_strict(&at(), text.as_bytes()).unwrap_err();
            assert!(
                matches!(refused, StoreError::NewerSchema { found: 7, .. }),
                "{refused}"
            );
        }
    }

    #[test]
    fn damage_deep_inside_a_task_is_named_when_the_task_is_read() {
        let text = board(&TASK.replace("\"id\": 1,", "\"id\": 1, \"files\": [3],"));
        let board = parse_strict(&at(), text.as_bytes()).expect("the heads read");
        let error = board.tasks().next().unwrap().unwrap_err().to_string();
        assert!(
            error.contains("T-1") && error.contains("expected a string"),
            "{error}"
        );
    }
}
