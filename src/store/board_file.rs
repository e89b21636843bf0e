//! The board's file: reading `board.json`, and writing it atomically (keeping
//! `board.json.bak`) with its activity lines journaled. A writer holds `board.lock` around
//! both (`crate::change` is the one way to change a board); readers never lock: [`read`]
//! sees the whole old board or the whole new one.

use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::board_layout::{self, Field};
use super::board_source::Source;
use super::journal::{self, Recovered};
use super::lock::FileLock;
use super::paths::Home;
use super::scan::{Kind, ScanError, Scanner};
use super::{StoreError, atomic, regular};
use crate::activity::ActivityRecord;
use crate::board::task::{Head, Priority, Status, TaskId};
use crate::board::{BOARD_SCHEMA, Board, StoredTasks};
use crate::time::Timestamp;

/// Reads a project's board without locking; a project with no board yet has an empty one.
///
/// A board in baton's layout is read a piece at a time and its file kept open: only the
/// heads of its tasks are held, and a task's text is read again when a command needs it.
/// Any other board is read whole and scanned strictly.
pub fn read(home: &Home, project: &str) -> Result<Board, StoreError> {
    read_path(home.board_file(project), project)
}

/// As [`read`], from the board file at `path`.
pub fn read_path(path: PathBuf, project: &str) -> Result<Board, StoreError> {
    let file = match regular::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Board::new(project)),
        Err(error) => return Err(StoreError::io(&path)(error)),
    };
    let size = file
        .metadata()
        .map_or(0, |metadata| metadata.len() as usize);
    if let Some(laid) = board_layout::read(&file, size) {
        check_schema(&path, laid.schema)?;
        return Ok(Board::stored(
            laid.schema as u32,
            laid.project,
            laid.next_id,
            Source::laid_out(path, file),
            laid.tasks,
        ));
    }
    let mut bytes = Vec::with_capacity(size);
    (&file)
        .seek(SeekFrom::Start(0))
        .and_then(|_| (&file).read_to_end(&mut bytes))
        .map_err(StoreError::io(&path))?;
    parse_with(&path, bytes, |_| None)
}

/// Parses board bytes, refusing anything that does not parse or has a newer schema.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Board, StoreError> {
    parse_owned(path, bytes.to_vec())
}

/// Parses board bytes, keeping them as the text its unchanged tasks are written back from.
/// The whole text is checked as JSON, and every task's head (and the type of each of its
/// fields) as a task; the rest of a task is decoded when a command needs it.
pub fn parse_owned(path: &Path, bytes: Vec<u8>) -> Result<Board, StoreError> {
    parse_with(path, bytes, |text| {
        board_layout::read(text.as_bytes(), text.len())
    })
}

/// As [`parse`], reading with the strict scanner alone: what the line reader must agree
/// with wherever it reads a board itself.
pub fn parse_strict(path: &Path, bytes: &[u8]) -> Result<Board, StoreError> {
    parse_with(path, bytes.to_vec(), |_| None)
}

/// Refuses a board with a newer schema than this binary knows.
fn check_schema(path: &Path, schema: u64) -> Result<(), StoreError> {
    if schema > u64::from(BOARD_SCHEMA) {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: schema,
            known: BOARD_SCHEMA,
        });
    }
    Ok(())
}

fn parse_with(
    path: &Path,
    bytes: Vec<u8>,
    laid_out: impl FnOnce(&str) -> Option<board_layout::Laid>,
) -> Result<Board, StoreError> {
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    let text = String::from_utf8(bytes)
        .map_err(|error| corrupt(format!("not UTF-8 text ({})", error.utf8_error())))?;
    let mut found = Found::default();
    // Boards as baton lays them out are read line by line; any other text, and any damage,
    // goes to the strict scanner, which reads all JSON and names what is wrong.
    let scanned = match laid_out(&text) {
        Some(laid) => {
            found = Found {
                schema: Some(laid.schema),
                project: Some(laid.project),
                next_id: Some(laid.next_id),
                tasks: Some(laid.tasks),
            };
            Ok(())
        }
        None => scan_board(&text, &mut found),
    };
    if let Some(schema) = found.schema {
        check_schema(path, schema)?;
    }
    scanned.map_err(|error| corrupt(error.to_string()))?;
    let missing = |field: &str| corrupt(format!("missing field `{field}`"));
    let schema = found.schema.ok_or_else(|| missing("schema"))?;
    let project = found.project.ok_or_else(|| missing("project"))?;
    let next_id = found.next_id.ok_or_else(|| missing("next_id"))?;
    let tasks = found.tasks.ok_or_else(|| missing("tasks"))?;
    let source = Source::text(path.to_path_buf(), text);
    // The schema is at most BOARD_SCHEMA here, so it fits.
    Ok(Board::stored(
        schema as u32,
        project,
        next_id,
        source,
        tasks,
    ))
}

#[derive(Default)]
struct Found {
    schema: Option<u64>,
    project: Option<String>,
    next_id: Option<u64>,
    tasks: Option<StoredTasks>,
}

fn scan_board(text: &str, found: &mut Found) -> Result<(), ScanError> {
    let mut scanner = Scanner::new(text);
    scanner.object(|scanner, key| {
        let key = key.value();
        match key.as_ref() {
            "schema" => once(scanner, &key, found.schema.is_some())
                .and_then(|()| whole_number(scanner, &key))
                .map(|schema| found.schema = Some(schema)),
            "project" => once(scanner, &key, found.project.is_some())
                .and_then(|()| string(scanner, &key))
                .map(|project| found.project = Some(project)),
            "next_id" => once(scanner, &key, found.next_id.is_some())
                .and_then(|()| whole_number(scanner, &key))
                .map(|next_id| found.next_id = Some(next_id)),
            "tasks" => {
                once(scanner, &key, found.tasks.is_some())?;
                if found
                    .schema
                    .is_some_and(|schema| schema > u64::from(BOARD_SCHEMA))
                {
                    // A newer board is refused as such; its tasks need not make sense to us.
                    return scanner.value().map(drop);
                }
                expect(scanner, &key, Kind::Array)?;
                let mut tasks = StoredTasks::default();
                scanner.array(|scanner| {
                    let start = scanner.next_start();
                    let head = task_head(scanner)?;
                    tasks.push(head, start..scanner.position());
                    Ok(())
                })?;
                found.tasks = Some(tasks);
                Ok(())
            }
            _ => scanner.value().map(drop),
        }
    })?;
    scanner.finish()
}

/// Reads one task's head, and checks the type of each of its other fields, so that a task
/// decoded later fails only on damage deep inside a list.
fn task_head(scanner: &mut Scanner<'_>) -> Result<Head, ScanError> {
    expect(scanner, "task", Kind::Object)?;
    let start = scanner.next_start();
    let mut head = Head::unread(Arc::from(""));
    let mut seen = 0u32;
    scanner.object(|scanner, key| {
        let key = key.value();
        let field = Field::named(key.as_bytes());
        if field == Field::Unknown {
            return scanner.value().map(drop);
        }
        once(scanner, &key, seen & field.bit() != 0)?;
        seen |= field.bit();
        match field {
            Field::Id => head.id = TaskId(whole_number(scanner, &key)?),
            Field::Status => head.status = named(scanner, &key, &Status::ALL, Status::as_str)?,
            Field::Priority => {
                head.priority = named(scanner, &key, &Priority::ALL, Priority::as_str)?;
            }
            Field::From => head.from = Arc::from(string(scanner, &key)?),
            Field::To => head.to = Arc::from(string(scanner, &key)?),
            Field::Reviewer => {
                head.reviewer = optional(scanner, |scanner| string(scanner, &key))?.map(Arc::from);
            }
            Field::After => {
                expect(scanner, &key, Kind::Array)?;
                scanner.array(|scanner| {
                    head.after.push(TaskId(whole_number(scanner, &key)?));
                    Ok(())
                })?;
            }
            Field::CreatedAt => head.created_at = time(scanner, &key)?,
            Field::UpdatedAt => head.updated_at = time(scanner, &key)?,
            Field::LeaseExpiresAt => {
                head.lease_expires_at = optional(scanner, |scanner| time(scanner, &key))?;
            }
            Field::ClaimedAt => optional(scanner, |scanner| time(scanner, &key)).map(drop)?,
            Field::Subject | Field::Body => string(scanner, &key).map(drop)?,
            Field::Skill | Field::Result => {
                optional(scanner, |scanner| string(scanner, &key)).map(drop)?
            }
            Field::Review => {
                expect(scanner, &key, Kind::Bool).and_then(|()| scanner.value().map(drop))?
            }
            // Lists, checked item by item when the task is decoded.
            Field::Files | Field::Thread | Field::Unknown => {
                expect(scanner, &key, Kind::Array).and_then(|()| scanner.value().map(drop))?
            }
        }
        Ok(())
    })?;
    if let Some(field) = Field::missing(seen) {
        return Err(scanner.error_at(start, &format!("task without `{field}`")));
    }
    Ok(head)
}

fn once(scanner: &Scanner<'_>, key: &str, seen: bool) -> Result<(), ScanError> {
    match seen {
        true => Err(scanner.error(&format!("duplicate field `{key}`"))),
        false => Ok(()),
    }
}

fn expect(scanner: &mut Scanner<'_>, field: &str, kind: Kind) -> Result<(), ScanError> {
    let found = scanner.peek()?;
    match found == kind {
        true => Ok(()),
        false => Err(scanner.error(&format!(
            "`{field}` is {}, expected {}",
            found.name(),
            kind.name()
        ))),
    }
}

fn whole_number(scanner: &mut Scanner<'_>, field: &str) -> Result<u64, ScanError> {
    expect(scanner, field, Kind::Number)?;
    scanner.unsigned()
}

fn string(scanner: &mut Scanner<'_>, field: &str) -> Result<String, ScanError> {
    expect(scanner, field, Kind::String)?;
    Ok(scanner.string()?.value().into_owned())
}

fn optional<T>(
    scanner: &mut Scanner<'_>,
    read: impl FnOnce(&mut Scanner<'_>) -> Result<T, ScanError>,
) -> Result<Option<T>, ScanError> {
    match scanner.null()? {
        true => Ok(None),
        false => read(scanner).map(Some),
    }
}

fn time(scanner: &mut Scanner<'_>, field: &str) -> Result<Timestamp, ScanError> {
    expect(scanner, field, Kind::String)?;
    let value = scanner.string()?.value();
    Timestamp::parse_stored(&value).map_err(|error| scanner.error(&format!("`{field}`: {error}")))
}

/// One of a fixed set of names, spelled exactly as stored.
fn named<T: Copy>(
    scanner: &mut Scanner<'_>,
    field: &str,
    choices: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<T, ScanError> {
    expect(scanner, field, Kind::String)?;
    let value = scanner.string()?.value();
    choices
        .iter()
        .copied()
        .find(|choice| name(*choice) == value)
        .ok_or_else(|| {
            let names: Vec<_> = choices.iter().map(|choice| name(*choice)).collect();
            scanner.error(&format!(
                "`{field}` is `{value}`, expected one of {}",
                names.join(", ")
            ))
        })
}

/// Completes or drops the journal of a change whose writer was killed (`store::journal`).
/// The caller holds the board lock.
pub fn recover_log(home: &Home, project: &str) -> Result<Option<Recovered>, StoreError> {
    journal::recover(
        &home.activity_journal(project),
        &home.board_file(project),
        &home.activity_file(project),
    )
}

/// As [`recover_log`] for a reader that holds no lock: when a journal is there and nobody
/// holds the board lock, takes it and recovers; when a writer holds it, that writer is
/// finishing its change (or will recover the journal first), so this leaves it alone.
pub fn try_recover_log(home: &Home, project: &str) -> Result<Option<Recovered>, StoreError> {
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
/// (`store::journal`). A failure (a full disk) before the rename leaves board and log as
/// they were; once the rename is done the change stands.
///
/// On a power cut the promise is weaker, as neither the journal nor the log is synced (an
/// fsync more per change would cost about as much as the rest of the write): the board is
/// the one that was last renamed and synced, a line is never in the log for a change that
/// did not commit (the lines are written after the synced rename), but the last lines
/// before the cut may be missing. The caller holds the board lock.
pub fn persist(
    home: &Home,
    project: &str,
    board: &Board,
    records: &[ActivityRecord],
) -> Result<(), StoreError> {
    let path = home.board_file(project);
    let backup = home.board_backup(project);
    let staged = atomic::stage_with(&path, |out| board.write_to(out))?;
    if records.is_empty() {
        return staged.commit(Some(&backup));
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
        let _ = recover_log(home, project);
        return Err(error);
    }
    journal::finish(&journal_path, &log, records);
    Ok(())
}

/// Writes the board atomically, keeping the previous one as `board.json.bak`, with no
/// activity line (restores and repairs). The caller holds the board lock.
pub fn write(home: &Home, project: &str, board: &Board) -> Result<(), StoreError> {
    let path = home.board_file(project);
    atomic::stage_with(&path, |out| board.write_to(out))?.commit(Some(&home.board_backup(project)))
}
