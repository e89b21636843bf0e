//! `baton doctor`: looks the hub home over and reports, one line per finding, what is
//! wrong with it; and `doctor --restore`, which brings a board back from `board.json.bak`.
//!
//! The checks only read, with one exception: a change whose writer was killed before it
//! logged it is logged (or, if it never committed, its journal dropped), as the next write
//! would, and reported. Each check is a plain function in [`CHECKS`]; adding one (say, which
//! agent clients are wired) is writing a function and listing it there. The checks of the
//! home's files are in `checks`, those of who is on the hub and how work reaches them in
//! `agents`, the agreement of the activity log with the boards in `agreement`; bringing a
//! board back is `restore`, through the store; the worktrees and landings of this machine
//! are looked at in `worktrees`.

mod agents;
mod agreement;
mod checks;
mod restore;
mod worktrees;

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration as WallDuration, SystemTime};

use chrono::Duration;
use serde::Serialize;

use crate::board::Board;
use crate::error::Result;
use crate::file::regular;
use crate::home::Home;
use crate::names::{self, NameKind};
use crate::plural::{self, count};
use crate::store::files::board;
use crate::store::{self, Origin, Store, StoreError};
use crate::time::{self, Timestamp};

use agents::{
    check_agents, check_alerts, check_clients, check_delivery, check_last_seen, check_tokens,
    check_wake_commands,
};
use agreement::check_activity;
use checks::{
    check_boards, check_dependencies, check_leftovers, check_locks, check_logs, check_names,
    check_permissions, check_projects, check_reservations,
};

use worktrees::check_worktrees;

pub use agreement::disagreements;
pub use checks::{LineReport, inspect_lines};
pub use restore::{RestorePlan, TaskChange, compare, plan_restore, restore};

/// Agents not seen for this long are reported.
pub const STALE_AFTER: Duration = Duration::days(7);
/// A write takes milliseconds; a temp file older than this was left by a writer that died.
pub const LEFTOVER_AFTER: WallDuration = WallDuration::from_secs(60);
/// A board or registry lock held longer than this is reported: commands wait for it and
/// give up after `BATON_LOCK_TIMEOUT`.
pub const LONG_HELD_AFTER: WallDuration = WallDuration::from_secs(60);

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    /// Worth knowing, nothing is broken: doctor still exits 0.
    Warn,
    /// Something is broken or will break: doctor exits non-zero.
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }
}

/// One finding: which check, how it came out, and what it saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Verdict,
    pub detail: String,
}

impl Check {
    pub fn ok(name: &str, detail: impl Into<String>) -> Check {
        Check::new(name, Verdict::Ok, detail)
    }

    pub fn warn(name: &str, detail: impl Into<String>) -> Check {
        Check::new(name, Verdict::Warn, detail)
    }

    pub fn fail(name: &str, detail: impl Into<String>) -> Check {
        Check::new(name, Verdict::Fail, detail)
    }

    fn new(name: &str, status: Verdict, detail: impl Into<String>) -> Check {
        Check {
            name: name.to_string(),
            status,
            detail: detail.into(),
        }
    }
}

/// What every check looks at.
pub struct Inspection<'a> {
    /// The hub's state, as its store keeps it.
    pub store: &'a dyn Store,
    /// The hub home, whose files the checks look at.
    pub home: &'a Home,
    /// The clock of the board (honours `BATON_NOW`), for `last_seen`.
    pub now: Timestamp,
    /// The real clock, for file times, which are always real.
    pub wall_now: SystemTime,
}

impl Inspection<'_> {
    /// `path` as shown in findings: relative to the home, which the first line names.
    fn show(&self, path: &Path) -> String {
        match path.strip_prefix(self.home.root()) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
            _ => path.display().to_string(),
        }
    }

    /// How long ago `path` was last modified, by the real clock.
    fn age_of(&self, path: &Path) -> Option<WallDuration> {
        let modified = fs::metadata(path).ok()?.modified().ok()?;
        self.wall_now.duration_since(modified).ok()
    }

    /// The project directories: every entry of `projects/` that is a directory.
    fn project_dirs(&self) -> Vec<(String, PathBuf)> {
        let mut dirs: Vec<(String, PathBuf)> = read_dir_sorted(&self.home.projects_dir())
            .into_iter()
            .filter(|path| path.is_dir())
            .filter_map(|path| Some((path.file_name()?.to_str()?.to_string(), path)))
            .collect();
        dirs.sort();
        dirs
    }

    /// Whether the hub's state is the home's files; else it is a database's, looked at
    /// through the store.
    fn on_files(&self) -> bool {
        self.store.readable_files().is_some()
    }

    /// Every board that reads, with how it is shown and the words that name its project
    /// before a finding (`api: `, or nothing while there is one project): what a check that
    /// looks into the boards walks. A board that does not read is the boards check's
    /// finding, not theirs.
    fn readable_boards(&self) -> Vec<(String, Board, String)> {
        let projects = self.project_ids();
        let mut boards = Vec::new();
        for id in &projects {
            let (shown, read) = self.board(id);
            let Ok(Some(board)) = read else {
                continue;
            };
            let project = match projects.len() {
                1 => String::new(),
                _ => format!("{id}: "),
            };
            boards.push((shown, board, project));
        }
        boards
    }

    /// The board of project `id`, every task of it whole, and how a finding names it;
    /// `None` when the project has none.
    fn board(&self, id: &str) -> (String, Result<Option<Board>>) {
        if self.on_files() {
            let path = self.home.board_file(id);
            return (self.show(&path), read_board(&board::origin(id, &path)));
        }
        let shown = format!("the board of {id}");
        let read = match self.store.snapshot(id) {
            Ok(Some(snapshot)) => snapshot.board.map_err(Into::into).and_then(|board| {
                if let Some(board) = &board {
                    let origin = || store::board_origin(self.store, id);
                    board
                        .tasks()
                        .try_for_each(|task| task.map(drop))
                        .map_err(|refused| StoreError::board(origin(), refused))?;
                }
                Ok(board)
            }),
            Ok(None) => Ok(None),
            Err(error) => Err(error.into()),
        };
        (shown, read)
    }

    /// Whether the hub holds `document`, kept at `path` on the files (anything there
    /// counts, a broken link too: its check names it).
    fn holds(&self, path: &Path, document: &crate::store::Document) -> bool {
        match self.on_files() {
            true => fs::symlink_metadata(path).is_ok(),
            false => self
                .store
                .load_document(document)
                .map_or(true, |text| text.is_some()),
        }
    }

    /// The project ids baton itself would see (a valid name and a project.json).
    fn project_ids(&self) -> Vec<String> {
        if !self.on_files() {
            return self
                .store
                .list_documents(crate::store::Collection::Projects)
                .unwrap_or_default();
        }
        self.project_dirs()
            .into_iter()
            .filter(|(id, path)| {
                names::check(NameKind::Project, id).is_ok() && path.join("project.json").exists()
            })
            .map(|(id, _)| id)
            .collect()
    }
}

/// A check: looks at the home and returns its findings, at least one line.
pub type CheckFn = fn(&Inspection<'_>) -> Vec<Check>;

/// What a check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Looks {
    /// The hub's state, through the store (files or a database), and this machine's setup.
    AtTheHub,
    /// Only the files of this machine's home: nothing to look at where there is none.
    AtTheHomeFiles,
}

/// Every check, in the order they print, with what it looks at.
pub const CHECKS: &[(CheckFn, Looks)] = &[
    (check_permissions, Looks::AtTheHomeFiles),
    (check_projects, Looks::AtTheHub),
    (check_boards, Looks::AtTheHub),
    (check_dependencies, Looks::AtTheHub),
    (check_reservations, Looks::AtTheHub),
    (check_worktrees, Looks::AtTheHub),
    (check_names, Looks::AtTheHub),
    (check_logs, Looks::AtTheHub),
    (check_activity, Looks::AtTheHub),
    (check_agents, Looks::AtTheHub),
    (check_tokens, Looks::AtTheHub),
    (check_alerts, Looks::AtTheHub),
    (check_last_seen, Looks::AtTheHub),
    (check_delivery, Looks::AtTheHub),
    (check_wake_commands, Looks::AtTheHub),
    (check_locks, Looks::AtTheHomeFiles),
    (check_leftovers, Looks::AtTheHomeFiles),
    (check_clients, Looks::AtTheHub),
];

/// Runs every check on `home`. A home that does not exist yet is one warning and nothing
/// more: the first baton command creates it.
///
/// A store kept in a database is looked at first: one that cannot be reached, or whose
/// schema a newer baton made, is the whole answer (the error, exit 6 or 4, as any command
/// gives it); else a `store` line says it answers and which schema it holds, and the checks
/// that follow read it through the store, whether or not this machine has a home of its
/// own (without one, the checks of the home's files alone have nothing to look at).
pub fn run(store: &dyn Store, home: &Home, now: Timestamp) -> Result<Vec<Check>> {
    let schema = store.schema_version()?;
    // Without its index a search of the archive still answers, reading every row's words.
    let unindexed = schema
        .filter(|schema| schema.words_index.is_none())
        .map(|_| {
            Check::warn(
                "search",
                "no trigram index on the archive's words (the pg_trgm extension could not be \
             made): a search of the archive reads it through; as the database's owner, \
             `CREATE EXTENSION pg_trgm; CREATE INDEX archive_words_trgm ON archive USING gin \
             (words gin_trgm_ops);` makes it"
                    .to_string(),
            )
        });
    let database = schema.map(|schema| {
        Check::ok(
            "store",
            match schema.found == schema.known {
                true => format!(
                    "{} answers; schema {}, the one this baton writes",
                    store.location(),
                    schema.found
                ),
                false => format!(
                    "{} answers; schema {}, which this baton (schema {}) reads",
                    store.location(),
                    schema.found,
                    schema.known
                ),
            },
        )
    });
    // Which store was read: on the files it says so too (the line the database's answer
    // would be), since BATON_STORE wins over BATON_HOME.
    let is_database = database.is_some();
    let database = database.or_else(|| Some(Check::ok("store", crate::store::named(store))));
    let inspection = Inspection {
        store,
        home,
        now,
        wall_now: SystemTime::now(),
    };
    let root = home.root();
    let home_line = match fs::metadata(root) {
        // The hub's state is all in the database: this machine's home holds only its own
        // files (the setup manifest, wake logs), made when first needed.
        Err(error) if error.kind() == ErrorKind::NotFound && is_database => Ok(Check::ok(
            "home",
            format!(
                "{} does not exist yet: this machine keeps nothing of its own so far",
                root.display()
            ),
        )),
        Err(error) if error.kind() == ErrorKind::NotFound => Err(Check::warn(
            "home",
            format!(
                "{} does not exist yet; the first baton command creates it",
                root.display()
            ),
        )),
        Err(error) => Err(Check::fail("home", format!("{}: {error}", root.display()))),
        Ok(metadata) if !metadata.is_dir() => Err(Check::fail(
            "home",
            format!("{} is not a directory", root.display()),
        )),
        Ok(_) => Ok(Check::ok("home", root.display().to_string())),
    };
    let mut checks = match home_line {
        Ok(line) => vec![line],
        // Without a home there is nothing more to look at, but for a database's answer.
        Err(line) => {
            return Ok([line]
                .into_iter()
                .chain(database)
                .chain(unindexed)
                .collect());
        }
    };
    checks.extend(database);
    checks.extend(unindexed);
    let has_home = root.is_dir();
    for (check, looks) in CHECKS {
        if *looks == Looks::AtTheHomeFiles && !has_home {
            continue;
        }
        checks.extend(check(&inspection));
    }
    Ok(checks)
}

/// Whether nothing failed (warnings allowed).
pub fn is_healthy(checks: &[Check]) -> bool {
    checks.iter().all(|check| check.status != Verdict::Fail)
}

/// Every entry under `root` (not `root` itself), depth first, without following symlinks.
fn walk(root: &Path) -> Vec<(PathBuf, fs::Metadata)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    if let Ok(metadata) = fs::symlink_metadata(root) {
        found.push((root.to_path_buf(), metadata));
    }
    while let Some(dir) = pending.pop() {
        for path in read_dir_sorted(&dir) {
            let Ok(metadata) = fs::symlink_metadata(&path) else {
                continue;
            };
            if metadata.is_symlink() {
                continue;
            }
            if metadata.is_dir() {
                pending.push(path.clone());
            }
            found.push((path, metadata));
        }
    }
    found
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

/// Reads a board file, every task of it whole (commands decode only the tasks they touch;
/// the doctor looks at all); `None` when there is none.
fn read_board(origin: &Origin) -> Result<Option<Board>> {
    let path = origin.path().unwrap_or(Path::new(""));
    match regular::read(path) {
        Ok(bytes) => {
            let board = board::parse_owned(origin, bytes)?;
            board
                .tasks()
                .try_for_each(|task| task.map(drop))
                .map_err(|refused| StoreError::board(origin.clone(), refused))?;
            Ok(Some(board))
        }
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path)(error).into()),
    }
}

/// An error with the home's prefix taken off its path.
fn show_error(inspection: &Inspection<'_>, error: &dyn std::fmt::Display) -> String {
    let root = format!("{}/", inspection.home.root().display());
    error.to_string().replace(&root, "")
}

/// "1 board parses", "3 boards parse".
fn count_parse(number: usize, noun: &str) -> String {
    format!(
        "{} parse{}",
        count(number, noun),
        if number == 1 { "s" } else { "" }
    )
}

fn plural_lines(number: usize, one: &str, many: &str) -> String {
    plural::count_either(number, &format!("line {one}"), &format!("lines {many}"))
}

/// Up to five items, then how many more.
fn listing(items: &[String]) -> String {
    let mut text = items.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > 5 {
        text.push_str(&format!(" and {} more", items.len() - 5));
    }
    text
}

fn numbers(numbers: &[usize]) -> String {
    let shown: Vec<String> = numbers.iter().map(usize::to_string).collect();
    listing(&shown)
}

fn wall_age(age: WallDuration) -> String {
    let seconds = i64::try_from(age.as_secs()).unwrap_or(i64::MAX);
    let start = Timestamp::from_datetime(chrono::DateTime::UNIX_EPOCH);
    time::age(start, start.plus(Duration::seconds(seconds)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::ActivityRecord;
    use crate::board::task::{Status, Task, TaskId};

    /// T-`id` as [`Task::example`] makes it, its thread `thread` questions long.
    fn task(id: u64, status: Status, thread: usize) -> Task {
        let at: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        Task {
            id: TaskId(id),
            subject: format!("task {id}"),
            thread: (0..thread)
                .map(|n| crate::board::task::ThreadEntry {
                    at,
                    by: "codex".into(),
                    kind: crate::board::action::ActionKind::Ask,
                    text: format!("q{n}"),
                })
                .collect(),
            ..Task::example(status, at)
        }
    }

    #[test]
    fn torn_lines_are_told_apart_from_garbage() {
        let text = b"{\"a\": 1}\n{\"a\": 2, \"b\n\n{\"a\": 3}\nnot json\n{\"a\": [1, 2";
        let report = inspect_lines::<serde_json::Value>(text);
        assert_eq!(report.lines, 5);
        assert_eq!(report.torn, vec![2, 6]);
        assert_eq!(
            report.bad.iter().map(|(line, _)| *line).collect::<Vec<_>>(),
            vec![5]
        );
        let typed = inspect_lines::<ActivityRecord>(b"{\"at\": 3}\n");
        assert_eq!(
            typed.bad.len(),
            1,
            "JSON of the wrong shape is bad, not torn"
        );
    }

    #[test]
    fn compare_lists_what_a_restore_loses() {
        let board = |tasks: [Task; 3]| {
            let mut board = Board::new("api");
            tasks.into_iter().for_each(|task| board.push(task));
            board
        };
        let backup = board([
            task(1, Status::Completed, 0),
            task(2, Status::Working, 1),
            task(3, Status::Pending, 0),
        ]);
        let current = board([
            task(2, Status::InputRequired, 3),
            task(3, Status::Pending, 0),
            task(4, Status::Pending, 0),
        ]);
        let changes = compare(&current, &backup);
        let described: Vec<(u64, String)> = changes
            .iter()
            .map(|change| (change.task.0, change.describe()))
            .collect();
        assert_eq!(
            described,
            vec![
                (1, "comes back as completed".to_string()),
                (
                    2,
                    "goes back from input_required to working; 2 thread entries lost".to_string()
                ),
                (4, "vanishes (it is pending now)".to_string()),
            ]
        );
    }

    fn line(at: &str, action: &str, id: Option<u64>, text: &str) -> ActivityRecord {
        ActivityRecord {
            at: at.parse().unwrap(),
            project: "api".into(),
            actor: "claude".into(),
            action: action.into(),
            task: id.map(TaskId),
            from_status: None,
            to_status: id.map(|_| Status::Pending),
            text: Some(text.into()),
        }
    }

    #[test]
    fn lines_lost_to_rotation_or_taken_back_by_a_restore_are_not_findings() {
        let mut board = Board::new("api");
        let mut old = task(1, Status::Pending, 0);
        old.created_at = "2026-11-01T12:00:00Z".parse().unwrap();
        board.push(old);
        board.push(task(2, Status::Pending, 0));
        board.next_id = 3;
        let records = [
            // The oldest line kept: T-1 is older, its send line went with a dropped generation.
            line("2026-11-20T12:00:00Z", "note", None, "hello"),
            line(
                "2026-11-29T12:00:00Z",
                "send",
                Some(2),
                "claude → codex: task 2",
            ),
            // T-3 was sent, then taken away by restoring an older board.
            line(
                "2026-11-29T12:00:00Z",
                "send",
                Some(3),
                "claude → codex: task 3",
            ),
            line(
                "2026-11-29T12:00:00Z",
                "restore",
                None,
                "board.json brought back",
            ),
        ];
        assert_eq!(disagreements(&board, &[], &records), Vec::new());
        // Without the restore, T-3's line names a task that is nowhere.
        let findings = disagreements(&board, &[], &records[..3]);
        assert!(
            findings.len() == 1 && findings[0].1.contains("T-3 (send)"),
            "{findings:?}"
        );
        // A task newer than the oldest line kept must have its send line.
        let findings = disagreements(&board, &[], &records[..1]);
        assert!(
            findings.len() == 1 && findings[0].1.contains("send line in the log: T-2"),
            "{findings:?}"
        );
    }
}
