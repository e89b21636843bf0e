//! The board's file: reading `board.json`, and writing it atomically (keeping
//! `board.json.bak`) with its activity lines journaled. A writer holds `board.lock` around
//! both (`crate::change` is the one way to change a board); readers never lock: [`read`]
//! sees the whole old board or the whole new one.

use std::io::{self, ErrorKind, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::board_layout::{self, Field};
use super::board_source::Source;
use super::journal::{self, Line, Recovered};
use super::lock::FileLock;
use super::paths::Home;
use super::scan::{Kind, ScanError, Scanner};
use super::{StoreError, atomic, regular};
use crate::time::Timestamp;

/// The `schema` this binary writes and the highest it reads.
pub const BOARD_SCHEMA: u32 = 1;

/// A board as a model holds it: built from what the store read, and written back as bytes.
/// The model (`crate::board`) implements it, so the store reads and writes board files
/// without knowing what a task means.
pub trait BoardModel: Sized {
    /// How a task's status and priority are spelled in the file.
    const NAMES: TaskNames;
    /// The board of a project that has none on disk yet.
    fn empty(project: &str) -> Self;
    /// The board read from a file: its own fields, and each task's head and byte range.
    fn from_stored(stored: StoredBoard) -> Self;
    /// Writes the board as its file holds it.
    fn write_to<W: Write>(&self, out: &mut W) -> io::Result<()>;
}

/// The words a task's head may hold, as the file spells them; a reader records a status or
/// a priority as its place in these lists.
#[derive(Debug, Clone, Copy)]
pub struct TaskNames {
    pub statuses: &'static [&'static str],
    pub priorities: &'static [&'static str],
}

/// A board file as read: its own fields, where its tasks' text is, and their heads.
#[derive(Debug)]
pub struct StoredBoard {
    pub schema: u32,
    pub project: String,
    pub next_id: u64,
    pub source: Source,
    pub tasks: StoredTasks,
}

/// The fields of a stored task that both readers take in closely, as plain data: what a
/// command needs of every task on a board. The rest of a task stays as its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredHead {
    pub id: u64,
    /// The place of the task's status in [`TaskNames::statuses`].
    pub status: usize,
    /// The place of its priority in [`TaskNames::priorities`]; `None` when it has none.
    pub priority: Option<usize>,
    /// Agent names are shared: a board of thousands of tasks names a handful of agents.
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub reviewer: Option<Arc<str>>,
    pub after: Vec<u64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    pub lease_expires_at: Option<Timestamp>,
}

impl StoredHead {
    /// What a reader starts a task's head from, before any field is read; `nobody` stands
    /// in for the names until they are.
    pub fn unread(nobody: Arc<str>) -> StoredHead {
        StoredHead {
            id: 0,
            status: 0,
            priority: None,
            from: Arc::clone(&nobody),
            to: nobody,
            reviewer: None,
            after: Vec::new(),
            created_at: Timestamp::EPOCH,
            updated_at: Timestamp::EPOCH,
            lease_expires_at: None,
        }
    }
}

/// The tasks of a board as a reader finds them: each one's head and where its text is, in
/// board order.
#[derive(Debug, Default)]
pub struct StoredTasks(Vec<(StoredHead, Range<usize>)>);

impl StoredTasks {
    pub fn with_capacity(capacity: usize) -> Self {
        StoredTasks(Vec::with_capacity(capacity))
    }

    pub fn push(&mut self, head: StoredHead, span: Range<usize>) {
        self.0.push((head, span));
    }

    /// Each task's head and where its text is, in board order.
    pub fn heads(&self) -> impl Iterator<Item = (&StoredHead, &Range<usize>)> {
        self.0.iter().map(|(head, span)| (head, span))
    }
}

impl IntoIterator for StoredTasks {
    type Item = (StoredHead, Range<usize>);
    type IntoIter = std::vec::IntoIter<(StoredHead, Range<usize>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Reads a project's board without locking; a project with no board yet has an empty one.
///
/// A board in baton's layout is read a piece at a time and its file kept open: only the
/// heads of its tasks are held, and a task's text is read again when a command needs it.
/// Any other board is read whole and scanned strictly.
pub fn read<B: BoardModel>(home: &Home, project: &str) -> Result<B, StoreError> {
    read_path(home.board_file(project), project)
}

/// As [`read`], from the board file at `path`.
pub fn read_path<B: BoardModel>(path: PathBuf, project: &str) -> Result<B, StoreError> {
    let file = match regular::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(B::empty(project)),
        Err(error) => return Err(StoreError::io(&path)(error)),
    };
    let size = file
        .metadata()
        .map_or(0, |metadata| metadata.len() as usize);
    if let Some(laid) = board_layout::read(&file, size, &B::NAMES) {
        check_schema(&path, laid.schema)?;
        return Ok(B::from_stored(StoredBoard {
            // The schema is at most BOARD_SCHEMA here, so it fits.
            schema: laid.schema as u32,
            project: laid.project,
            next_id: laid.next_id,
            source: Source::laid_out(path, file),
            tasks: laid.tasks,
        }));
    }
    let mut bytes = Vec::with_capacity(size);
    (&file)
        .seek(SeekFrom::Start(0))
        .and_then(|_| (&file).read_to_end(&mut bytes))
        .map_err(StoreError::io(&path))?;
    parse_with(&path, bytes, |_| None)
}

/// Parses board bytes, refusing anything that does not parse or has a newer schema.
pub fn parse<B: BoardModel>(path: &Path, bytes: &[u8]) -> Result<B, StoreError> {
    parse_owned(path, bytes.to_vec())
}

/// Parses board bytes, keeping them as the text its unchanged tasks are written back from.
/// The whole text is checked as JSON, and every task's head (and the type of each of its
/// fields) as a task; the rest of a task is decoded when a command needs it.
pub fn parse_owned<B: BoardModel>(path: &Path, bytes: Vec<u8>) -> Result<B, StoreError> {
    parse_with(path, bytes, |text| {
        board_layout::read(text.as_bytes(), text.len(), &B::NAMES)
    })
}

/// As [`parse`], reading with the strict scanner alone: what the line reader must agree
/// with wherever it reads a board itself.
pub fn parse_strict<B: BoardModel>(path: &Path, bytes: &[u8]) -> Result<B, StoreError> {
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

fn parse_with<B: BoardModel>(
    path: &Path,
    bytes: Vec<u8>,
    laid_out: impl FnOnce(&str) -> Option<board_layout::Laid>,
) -> Result<B, StoreError> {
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
        None => scan_board(&text, &B::NAMES, &mut found),
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
    Ok(B::from_stored(StoredBoard {
        // The schema is at most BOARD_SCHEMA here, so it fits.
        schema: schema as u32,
        project,
        next_id,
        source,
        tasks,
    }))
}

#[derive(Default)]
struct Found {
    schema: Option<u64>,
    project: Option<String>,
    next_id: Option<u64>,
    tasks: Option<StoredTasks>,
}

fn scan_board(text: &str, names: &TaskNames, found: &mut Found) -> Result<(), ScanError> {
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
                    let head = task_head(scanner, names)?;
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
fn task_head(scanner: &mut Scanner<'_>, names: &TaskNames) -> Result<StoredHead, ScanError> {
    expect(scanner, "task", Kind::Object)?;
    let start = scanner.next_start();
    let mut head = StoredHead::unread(Arc::from(""));
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
            Field::Id => head.id = whole_number(scanner, &key)?,
            Field::Status => head.status = named(scanner, &key, names.statuses)?,
            Field::Priority => head.priority = Some(named(scanner, &key, names.priorities)?),
            Field::From => head.from = Arc::from(string(scanner, &key)?),
            Field::To => head.to = Arc::from(string(scanner, &key)?),
            Field::Reviewer => {
                head.reviewer = optional(scanner, |scanner| string(scanner, &key))?.map(Arc::from);
            }
            Field::After => {
                expect(scanner, &key, Kind::Array)?;
                scanner.array(|scanner| {
                    head.after.push(whole_number(scanner, &key)?);
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

/// One of a fixed set of names, spelled exactly as stored: its place among them.
fn named(
    scanner: &mut Scanner<'_>,
    field: &str,
    choices: &[&'static str],
) -> Result<usize, ScanError> {
    expect(scanner, field, Kind::String)?;
    let value = scanner.string()?.value();
    choices
        .iter()
        .position(|choice| *choice == value)
        .ok_or_else(|| {
            scanner.error(&format!(
                "`{field}` is `{value}`, expected one of {}",
                choices.join(", ")
            ))
        })
}

/// Completes or drops the journal of a change whose writer was killed (`store::journal`).
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
/// (`store::journal`). A failure (a full disk) before the rename leaves board and log as
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
    board: &impl BoardModel,
    records: &[R],
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
        let _ = recover_log::<R>(home, project);
        return Err(error);
    }
    journal::finish(&journal_path, &log, records);
    Ok(())
}

/// Writes the board atomically, keeping the previous one as `board.json.bak`, with no
/// activity line (restores and repairs). The caller holds the board lock.
pub fn write(home: &Home, project: &str, board: &impl BoardModel) -> Result<(), StoreError> {
    let path = home.board_file(project);
    atomic::stage_with(&path, |out| board.write_to(out))?.commit(Some(&home.board_backup(project)))
}
