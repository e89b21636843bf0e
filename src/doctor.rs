//! `baton doctor`: looks the hub home over and reports, one line per finding, what is
//! wrong with it; and `doctor --restore`, which brings a board back from `board.json.bak`.
//!
//! The checks only read, with one exception: a change whose writer was killed before it
//! logged it is logged (or, if it never committed, its journal dropped), as the next write
//! would, and reported. Each check is a plain function in [`CHECKS`]; adding one (say, which
//! agent clients are wired) is writing a function and listing it there.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::{Duration as WallDuration, SystemTime};

use chrono::Duration;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::activity::{self, ActivityRecord, GENERATIONS};
use crate::archive;
use crate::board::Board;
use crate::board::delivery::UNSEEN_AFTER;
use crate::board::task::{Status, Task, TaskId};
use crate::error::{Error, Result};
use crate::names::{self, NameKind};
use crate::plural::{self, count};
use crate::process::{self, ProgramLookup, ProgramRules, find_program};
use crate::project;
use crate::registry::{self, AgentRecord};
use crate::setup;
use crate::store::journal::Recovered;
use crate::store::lock::{self, FileLock, LockPolicy};
use crate::store::paths::Home;
use crate::store::{StoreError, board_file, jsonl, platform, regular};
use crate::text;
use crate::time::{self, Timestamp};

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

    /// The project ids baton itself would see (a valid name and a project.json).
    fn project_ids(&self) -> Vec<String> {
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

/// Every check, in the order they print.
pub const CHECKS: &[CheckFn] = &[
    check_permissions,
    check_projects,
    check_boards,
    check_logs,
    check_activity,
    check_agents,
    check_tokens,
    check_alerts,
    check_last_seen,
    check_delivery,
    check_wake_commands,
    check_locks,
    check_leftovers,
    check_clients,
];

/// Runs every check on `home`. A home that does not exist yet is one warning and nothing
/// more: the first baton command creates it.
pub fn run(home: &Home, now: Timestamp) -> Vec<Check> {
    let inspection = Inspection {
        home,
        now,
        wall_now: SystemTime::now(),
    };
    let root = home.root();
    let mut checks = vec![match fs::metadata(root) {
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return vec![Check::warn(
                "home",
                format!(
                    "{} does not exist yet; the first baton command creates it",
                    root.display()
                ),
            )];
        }
        Err(error) => {
            return vec![Check::fail("home", format!("{}: {error}", root.display()))];
        }
        Ok(metadata) if !metadata.is_dir() => {
            return vec![Check::fail(
                "home",
                format!("{} is not a directory", root.display()),
            )];
        }
        Ok(_) => Check::ok("home", root.display().to_string()),
    }];
    for check in CHECKS {
        checks.extend(check(&inspection));
    }
    checks
}

/// Whether nothing failed (warnings allowed).
pub fn is_healthy(checks: &[Check]) -> bool {
    checks.iter().all(|check| check.status != Verdict::Fail)
}

/// Directories are 0700 and files 0600: anything open to others is reported. Writable by
/// others fails (anyone could change the board); readable only warns. Windows has no
/// permission bits to look at (the home is in the user's profile, private to the user), so
/// nothing is reported there.
fn check_permissions(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "permissions";
    if !cfg!(unix) {
        let line = "no permission bits here: the home is as private as the profile it is in";
        return vec![Check::ok(NAME, line.to_string())];
    }
    let mut writable = Vec::new();
    let mut readable = Vec::new();
    let (mut dirs, mut files) = (0, 0);
    for (path, metadata) in walk(inspection.home.root()) {
        let Some(mode) = platform::mode(&metadata).map(|mode| mode & 0o777) else {
            continue;
        };
        if metadata.is_dir() {
            dirs += 1;
        } else {
            files += 1;
        }
        let shown = format!("{} {mode:04o}", inspection.show(&path));
        if mode & 0o022 != 0 {
            writable.push(shown);
        } else if mode & 0o077 != 0 {
            readable.push(shown);
        }
    }
    let fix = format!("fix: chmod -R go-rwx {}", inspection.home.root().display());
    let mut checks = Vec::new();
    if !writable.is_empty() {
        checks.push(Check::fail(
            NAME,
            format!("writable by others: {}; {fix}", listing(&writable)),
        ));
    }
    if !readable.is_empty() {
        checks.push(Check::warn(
            NAME,
            format!("readable by others: {}; {fix}", listing(&readable)),
        ));
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!("{dirs} directories 0700 and {files} files 0600, as they should be"),
        ));
    }
    checks
}

/// Every project.json parses, has a schema this baton knows and names its own directory;
/// bound workspaces still exist.
fn check_projects(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "projects";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut good = Vec::new();
    let mut workspaces: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for (id, dir) in inspection.project_dirs() {
        if names::check(NameKind::Project, &id).is_err() {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} is not a valid project name; baton ignores it",
                    inspection.show(&dir)
                ),
            ));
            continue;
        }
        if !dir.join("project.json").exists() {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} has no project.json; baton does not see this project",
                    inspection.show(&dir)
                ),
            ));
            continue;
        }
        match project::load(home, &id) {
            Err(error) => checks.push(Check::fail(NAME, error.to_string())),
            Ok(None) => {}
            Ok(Some(found)) if found.id != id => checks.push(Check::fail(
                NAME,
                format!(
                    "{} names itself `{}`, not `{id}`",
                    inspection.show(&home.project_file(&id)),
                    found.id
                ),
            )),
            Ok(Some(found)) => {
                if let Some(workspace) = &found.workspace {
                    if !workspace.is_dir() {
                        checks.push(Check::warn(
                            NAME,
                            format!(
                                "project {id} is bound to {}, which is gone; nobody can use \
                                 the project until it is back",
                                workspace.display()
                            ),
                        ));
                    }
                    workspaces
                        .entry(project::canonical(workspace))
                        .or_default()
                        .push(id.clone());
                }
                good.push(id);
            }
        }
    }
    for (workspace, ids) in workspaces {
        if ids.len() > 1 {
            checks.push(Check::fail(
                NAME,
                format!(
                    "projects {} are all bound to {}; a directory picks one arbitrarily",
                    ids.join(", "),
                    workspace.display()
                ),
            ));
        }
    }
    if good.is_empty() && checks.is_empty() {
        checks.push(Check::ok(NAME, "no projects yet"));
    } else if !good.is_empty() {
        checks.insert(
            0,
            Check::ok(
                NAME,
                format!(
                    "{} readable: {}",
                    count(good.len(), "project"),
                    good.join(", ")
                ),
            ),
        );
    }
    checks
}

/// Every board.json parses with a known schema; every board.json.bak too (a warning: it
/// only matters to `--restore`).
fn check_boards(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "boards";
    let home = inspection.home;
    let mut checks = Vec::new();
    let (mut boards, mut tasks) = (0, 0);
    for id in inspection.project_ids() {
        let path = home.board_file(&id);
        match read_board(&path) {
            Ok(None) => {}
            Ok(Some(board)) => {
                boards += 1;
                tasks += board.len();
                for duplicated in board.duplicated_ids() {
                    checks.push(Check::fail(
                        NAME,
                        format!(
                            "{} holds more than one task numbered {duplicated} ({}); commands \
                             that name {duplicated} refuse until all but one are given an id no \
                             task has, by hand (T-{} is free)",
                            inspection.show(&path),
                            board
                                .heads()
                                .enumerate()
                                .filter(|(_, head)| head.id == *duplicated)
                                .map(|(index, _)| board.task_at(index).map_or_else(
                                    |_| "?".to_string(),
                                    |task| format!(
                                        "`{}` from {}",
                                        text::inline(&task.subject),
                                        task.from
                                    )
                                ))
                                .collect::<Vec<_>>()
                                .join(" and "),
                            board.next_free_id(0).0
                        ),
                    ));
                }
                if board.project != id {
                    checks.push(Check::warn(
                        NAME,
                        format!(
                            "{} says it is the board of `{}`",
                            inspection.show(&path),
                            board.project
                        ),
                    ));
                }
            }
            Err(error) => checks.push(Check::fail(
                NAME,
                format!(
                    "{}; see what the backup holds with `baton doctor --restore {id}`",
                    show_error(inspection, &error)
                ),
            )),
        }
        let backup = home.board_backup(&id);
        if let Err(error) = read_board(&backup) {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{}; `--restore {id}` cannot use it",
                    show_error(inspection, &error)
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "{} (schema {}), {} on them",
                count_parse(boards, "board"),
                crate::board::BOARD_SCHEMA,
                count(tasks, "task")
            ),
        ));
    }
    checks
}

/// What a JSON-lines file holds, line by line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LineReport {
    pub lines: usize,
    /// Lines cut short (the JSON ends early): a writer was interrupted. Readers skip them.
    pub torn: Vec<usize>,
    /// Lines that are not a record at all, with why.
    pub bad: Vec<(usize, String)>,
}

/// Reads `bytes` as JSON lines of `T`. A line that ends before its JSON does is torn (what
/// a crash mid-append leaves, even once a later append has started a fresh line after it);
/// anything else that does not parse is bad.
pub fn inspect_lines<T: DeserializeOwned>(bytes: &[u8]) -> LineReport {
    let mut report = LineReport::default();
    for (index, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        report.lines += 1;
        match serde_json::from_slice::<T>(line) {
            Ok(_) => {}
            Err(error) if error.is_eof() => report.torn.push(index + 1),
            Err(error) => report.bad.push((index + 1, error.to_string())),
        }
    }
    report
}

/// Every activity log (and its rotated generations), mail file and archive parses line by
/// line; the mail read positions parse.
fn check_logs(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "logs";
    let home = inspection.home;
    let mut checks = Vec::new();
    let (mut files, mut lines) = (0, 0);
    let mut look = |path: &Path, inspect: fn(&[u8]) -> LineReport| {
        let bytes = match regular::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == ErrorKind::NotFound => return,
            Err(error) => {
                checks.push(Check::fail(
                    NAME,
                    show_error(inspection, &StoreError::io(path)(error)),
                ));
                return;
            }
        };
        let report = inspect(&bytes);
        files += 1;
        lines += report.lines;
        let shown = inspection.show(path);
        if !report.bad.is_empty() {
            let (line, why) = &report.bad[0];
            checks.push(Check::fail(
                NAME,
                format!(
                    "{shown}: {} not a record (line {line}: {why}); readers skip {}",
                    plural_lines(report.bad.len(), "is", "are"),
                    if report.bad.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
        if !report.torn.is_empty() {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{shown}: {} cut short by an interrupted write (line {}); readers skip {}",
                    plural_lines(report.torn.len(), "was", "were"),
                    numbers(&report.torn),
                    if report.torn.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
    };
    for id in inspection.project_ids() {
        let activity_file = home.activity_file(&id);
        for number in (1..=GENERATIONS).rev() {
            look(
                &activity::generation(&activity_file, number),
                inspect_lines::<ActivityRecord>,
            );
        }
        look(&activity_file, inspect_lines::<ActivityRecord>);
        look(
            &home.mail_file(&id),
            inspect_lines::<serde_json::Map<String, serde_json::Value>>,
        );
        for path in read_dir_sorted(&home.archive_dir(&id)) {
            let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
                continue;
            };
            if !name.ends_with(".jsonl") {
                continue;
            }
            // Archived mail (`mail-*.jsonl`) sits beside archived tasks.
            if name.starts_with("mail-") {
                look(
                    &path,
                    inspect_lines::<serde_json::Map<String, serde_json::Value>>,
                );
            } else {
                look(&path, inspect_lines::<Task>);
            }
        }
    }
    for id in inspection.project_ids() {
        let cursors = home.mail_cursor_file(&id);
        match regular::read(&cursors) {
            Ok(bytes) => {
                if let Err(error) = serde_json::from_slice::<serde_json::Value>(&bytes) {
                    checks.push(Check::fail(
                        NAME,
                        format!("{} does not parse: {error}", inspection.show(&cursors)),
                    ));
                }
            }
            Err(error) if error.kind() == ErrorKind::NotFound => {}
            Err(error) => checks.push(Check::fail(
                NAME,
                show_error(inspection, &StoreError::io(&cursors)(error)),
            )),
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "{}, {}",
                count_parse(files, "log file"),
                count(lines, "line")
            ),
        ));
    }
    checks
}

/// The activity log and the board agree (SPEC section 2): first a change a killed writer
/// left unlogged is logged, or its journal dropped if it never committed; then, with board
/// and log read under the board lock so that no change is half made while it looks, and the
/// archive after, every line that names a task
/// names one on the board or in the archive, no task has two `send` lines and each matches
/// its task, every task has its `send` line (unless it is older than the oldest line kept:
/// rotation drops the sixth generation), each task's last logged status is its status, and
/// `next_id` is above every id.
fn check_activity(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "activity";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut agreeing = 0;
    for id in inspection.project_ids() {
        let guard = match FileLock::try_acquire(&home.board_lock(&id)) {
            Ok(Some(guard)) => guard,
            Ok(None) => {
                checks.push(Check::ok(
                    NAME,
                    format!("project {id}: a change is being written; not checked now"),
                ));
                continue;
            }
            Err(error) => {
                checks.push(Check::fail(NAME, show_error(inspection, &error)));
                continue;
            }
        };
        match board_file::recover_log(home, &id) {
            Ok(None) => {}
            Ok(Some(recovered)) => checks.push(Check::warn(
                NAME,
                format!(
                    "project {id}: {}",
                    describe_recovered(&recovered, &inspection.show(&home.activity_journal(&id)))
                ),
            )),
            Err(error) => {
                checks.push(Check::fail(NAME, show_error(inspection, &error)));
                continue;
            }
        }
        // Unreadable boards, archives and logs are the other checks' findings.
        let Ok(Some(board)) = read_board(&home.board_file(&id)) else {
            continue;
        };
        let Ok(records) = activity::read(&home.activity_file(&id)) else {
            continue;
        };
        // The archive only gains tasks that were on the board just read, so it can be read
        // (it may be large) without keeping writers waiting.
        drop(guard);
        let mut archived = Vec::new();
        for path in archive::task_files(home, &id).unwrap_or_default() {
            if let Ok(lines) = jsonl::read_all::<Task>(&path) {
                archived.extend(lines.records);
            }
        }
        let findings = disagreements(&board, &archived, &records);
        if findings.is_empty() {
            agreeing += 1;
        }
        for (verdict, finding) in findings {
            checks.push(Check::new(
                NAME,
                verdict,
                format!("project {id}: {finding}"),
            ));
        }
    }
    if checks.iter().all(|check| check.status == Verdict::Ok) {
        checks.push(Check::ok(
            NAME,
            format!(
                "the log and the board agree in {}",
                count(agreeing, "project")
            ),
        ));
    }
    checks
}

fn describe_recovered(recovered: &Recovered<ActivityRecord>, journal: &str) -> String {
    let tasks = |records: &[ActivityRecord]| {
        let mut ids: Vec<String> = records
            .iter()
            .filter_map(|record| record.task.map(|task| task.to_string()))
            .collect();
        ids.dedup();
        match ids.is_empty() {
            true => String::new(),
            false => format!(" ({})", ids.join(", ")),
        }
    };
    match recovered {
        Recovered::Completed(records) => format!(
            "a writer was killed after its change committed but before it was logged; {} \
             from {journal} now added to the log{}",
            count(records.len(), "line"),
            tasks(records)
        ),
        Recovered::Dropped(records) => format!(
            "a writer was killed before its change committed; {journal} (the change's log \
             lines{}) removed, as the change never happened",
            tasks(records)
        ),
        Recovered::Torn => format!(
            "a writer was killed while writing {journal}, before its change committed; removed"
        ),
    }
}

/// What one task is, as far as the log can check it.
struct Known<'a> {
    task: &'a Task,
    on_board: bool,
}

/// Where the log and the board (with the archive) disagree, one finding each.
pub fn disagreements(
    board: &Board,
    archived: &[Task],
    records: &[ActivityRecord],
) -> Vec<(Verdict, String)> {
    let mut findings = Vec::new();
    let mut known: HashMap<TaskId, Vec<Known<'_>>> = HashMap::new();
    // Tasks the board holds twice (reported with the board) are not matched against lines.
    let duplicated = board.duplicated_ids();
    for task in board.tasks().filter_map(Result::ok) {
        known.entry(task.id).or_default().push(Known {
            task,
            on_board: true,
        });
    }
    // An archived task may be there twice, or on the board as well, after a crash in the
    // middle of archiving: the board's copy, then the last archived copy, is the task.
    for task in archived.iter().rev() {
        let copies = known.entry(task.id).or_default();
        if copies.is_empty() {
            copies.push(Known {
                task,
                on_board: false,
            });
        }
    }
    let task_of = |id: TaskId| match known.get(&id) {
        Some(copies) if copies.len() == 1 && !duplicated.contains(&id) => Some(copies[0].task),
        _ => None,
    };
    // A restore brings back an older board: lines before it may name tasks it took away,
    // and statuses it changed.
    let since_restore = records
        .iter()
        .rposition(|record| record.action == "restore")
        .map_or(0, |at| at + 1);

    let mut unknown: BTreeMap<TaskId, Vec<&str>> = BTreeMap::new();
    let mut sends: BTreeMap<TaskId, Vec<&ActivityRecord>> = BTreeMap::new();
    // A task is made by `send` or carried over by `import`: either gives it its id.
    let mut made: BTreeMap<TaskId, Vec<&ActivityRecord>> = BTreeMap::new();
    let mut last_status: HashMap<TaskId, &ActivityRecord> = HashMap::new();
    for (index, record) in records.iter().enumerate() {
        let Some(id) = record.task else {
            continue;
        };
        if record.action == "send" {
            sends.entry(id).or_default().push(record);
        }
        if record.action == "send" || record.action == "import" {
            made.entry(id).or_default().push(record);
        }
        if index < since_restore {
            continue;
        }
        if !known.contains_key(&id) {
            unknown.entry(id).or_default().push(&record.action);
        }
        if record.to_status.is_some() {
            last_status.insert(id, record);
        }
    }
    let unknown: Vec<String> = unknown
        .iter()
        .map(|(id, actions)| format!("{id} ({})", actions.join(", ")))
        .collect();
    if !unknown.is_empty() {
        findings.push((
            Verdict::Fail,
            format!(
                "the log has lines for tasks on neither the board nor in the archive, changes \
                 that never happened: {}",
                listing(&unknown)
            ),
        ));
    }
    let twice: Vec<String> = made
        .iter()
        .filter(|(_, lines)| lines.len() > 1)
        .map(|(id, lines)| {
            let texts: Vec<String> = lines
                .iter()
                .map(|line| format!("`{}`", line.text.as_deref().unwrap_or("")))
                .collect();
            format!("{id} ({})", texts.join(", "))
        })
        .collect();
    if !twice.is_empty() {
        findings.push((
            Verdict::Fail,
            format!(
                "the log sends one id more than once: {}; one id was given to two tasks",
                listing(&twice)
            ),
        ));
    }
    let mismatched: Vec<String> = sends
        .iter()
        .filter(|(_, lines)| lines.len() == 1)
        .filter_map(|(id, lines)| {
            let task = task_of(*id)?;
            let logged = lines[0].text.as_deref().unwrap_or("");
            let matches = logged.starts_with(&format!("{} → ", task.from))
                && logged.ends_with(&format!(": {}", task.subject));
            (!matches).then(|| {
                format!(
                    "{id} is `{}` but was sent as `{}`",
                    text::inline(&task.subject),
                    text::inline(logged)
                )
            })
        })
        .collect();
    if !mismatched.is_empty() {
        findings.push((
            Verdict::Fail,
            format!(
                "send lines that do not match their task: {}",
                listing(&mismatched)
            ),
        ));
    }
    // Tasks older than the oldest line kept may have lost their send line to rotation.
    if let Some(oldest) = records.first().map(|record| record.at) {
        let mut unsent: Vec<TaskId> = known
            .iter()
            .filter(|(id, copies)| {
                !sends.contains_key(id) && copies.iter().any(|copy| copy.task.created_at >= oldest)
            })
            .map(|(id, _)| *id)
            .collect();
        unsent.sort();
        if !unsent.is_empty() {
            let shown: Vec<String> = unsent.iter().map(TaskId::to_string).collect();
            findings.push((
                Verdict::Warn,
                format!(
                    "tasks without their send line in the log: {}; the log lost lines (a \
                     power cut, or an edit); the board is the record",
                    listing(&shown)
                ),
            ));
        }
    }
    let mut stale: Vec<(TaskId, String)> = last_status
        .iter()
        .filter_map(|(id, record)| {
            let task = task_of(*id)?;
            let logged = record.to_status?;
            (logged != task.status).then(|| {
                (
                    *id,
                    format!(
                        "{id} is {} but its last line ({} at {}) left it {logged}",
                        task.status, record.action, record.at
                    ),
                )
            })
        })
        .collect();
    stale.sort();
    if !stale.is_empty() {
        let shown: Vec<String> = stale.into_iter().map(|(_, text)| text).collect();
        findings.push((
            Verdict::Warn,
            format!(
                "statuses the log does not lead to: {}; the log lost a line or has one too \
                 many",
                listing(&shown)
            ),
        ));
    }
    let highest = known.keys().map(|id| id.0).max().unwrap_or(0);
    if board.next_id <= highest {
        findings.push((
            Verdict::Warn,
            format!(
                "board.json says next_id {}, but T-{highest} is {}; the next task gets T-{} \
                 all the same (ids are never reused)",
                board.next_id,
                match known
                    .get(&TaskId(highest))
                    .is_some_and(|copies| copies.iter().any(|copy| copy.on_board))
                {
                    true => "on the board",
                    false => "archived",
                },
                highest + 1
            ),
        ));
    }
    findings
}

/// Every registry record parses, has a known schema, and names its own file.
fn check_agents(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "agents";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut good = 0;
    for path in read_dir_sorted(&home.agents_dir()) {
        let Some(name) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".json"))
        else {
            continue;
        };
        if names::check(NameKind::Agent, name).is_err() {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} is not named after a valid agent; baton ignores it",
                    inspection.show(&path)
                ),
            ));
            continue;
        }
        match registry::load(home, name) {
            Err(error) => checks.push(Check::fail(
                NAME,
                format!(
                    "agent {name}: {}; baton will not overwrite it",
                    show_error(inspection, &error)
                ),
            )),
            Ok(None) => {}
            Ok(Some(record)) if record.name != name => checks.push(Check::warn(
                NAME,
                format!(
                    "{} names itself `{}`; baton knows it as {name}",
                    inspection.show(&path),
                    record.name
                ),
            )),
            Ok(Some(_)) => good += 1,
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "{} (schema {})",
                count_parse(good, "registry record"),
                registry::AGENT_SCHEMA
            ),
        ));
    }
    checks
}

/// `baton serve`'s tokens read, where there are any: a file that does not lets no request in.
/// A web login that expired is worth a warning: it lets nobody in, but it sits in the file
/// until the next `baton serve` removes it.
fn check_tokens(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "tokens";
    let path = inspection.home.tokens_file();
    if fs::symlink_metadata(&path).is_err() {
        return Vec::new();
    }
    let read = crate::tokens::list(inspection.home).and_then(|rows| {
        Ok((
            rows,
            crate::tokens::expired_logins(inspection.home, crate::time::now())?,
        ))
    });
    match read {
        Ok((rows, stale)) => {
            let logins = rows.iter().filter(|row| row.login).count();
            let mut checks = vec![Check::ok(
                NAME,
                format!(
                    "{} ({} among them); only their hashes are kept",
                    count(rows.len(), "token"),
                    count(logins, "web login")
                ),
            )];
            for login in stale {
                checks.push(Check::warn(
                    NAME,
                    format!(
                        "the web login of {} made {} expired {} and is refused already; the \
                         next `baton serve` removes it from {}",
                        login.name,
                        login.created_at,
                        login.expired_at,
                        inspection.show(&path)
                    ),
                ));
            }
            checks
        }
        Err(error) => vec![Check::fail(
            NAME,
            format!(
                "{}; baton serve lets no request in until it is fixed (or removed, \
                 which drops every token)",
                show_error(inspection, &error)
            ),
        )],
    }
}

/// The alerts parse, and what waits in their queue (SPEC section 14): how many, since when,
/// the last error; never a URL or a secret.
fn check_alerts(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "alerts";
    let home = inspection.home;
    let path = home.alerts_file();
    if fs::symlink_metadata(&path).is_err() && fs::symlink_metadata(home.alerts_dir()).is_err() {
        return Vec::new();
    }
    let mut checks = vec![match crate::alert::load(home) {
        Ok(alerts) => {
            let names: Vec<String> = alerts.iter().map(|alert| alert.name.clone()).collect();
            Check::ok(
                NAME,
                if names.is_empty() {
                    count(0, "alert")
                } else {
                    format!("{} ({})", count(names.len(), "alert"), names.join(", "))
                },
            )
        }
        Err(error) => Check::fail(
            NAME,
            format!(
                "{}; no alert is sent until it is fixed",
                show_error(inspection, &error)
            ),
        ),
    }];
    let waiting = crate::alert::queue::waiting(home);
    let sender = if lock::is_locked(&home.alert_sender_lock()) {
        "the sender is at it"
    } else {
        "no sender runs: the next alert queued starts one"
    };
    if waiting.count > 0 {
        let oldest = waiting
            .oldest
            .map(|oldest| {
                format!(
                    ", the oldest queued {} ago",
                    time::age(oldest, inspection.now)
                )
            })
            .unwrap_or_default();
        let line = format!(
            "{} to send{oldest}; {sender}",
            count(waiting.count, "alert")
        );
        checks.push(match &waiting.last_error {
            Some(error) => Check::warn(
                NAME,
                format!(
                    "{line}; last error: {}; see {}",
                    text::inline(error),
                    inspection.show(&home.alert_log())
                ),
            ),
            None => Check::ok(NAME, line),
        });
    } else {
        checks.push(Check::ok(NAME, "nothing waits to be sent"));
    }
    if waiting.dropped > 0 {
        checks.push(Check::warn(
            NAME,
            format!(
                "{} dropped: the queue held its limit of {}; {sender}",
                count(waiting.dropped as usize, "alert"),
                crate::alert::queue::QUEUE_LIMIT
            ),
        ));
    }
    if waiting.unreadable > 0 {
        checks.push(Check::warn(
            NAME,
            format!(
                "{} in {} cannot be read and waits for a look (named in {})",
                count(waiting.unreadable, "queued file"),
                inspection.show(&home.alert_queue_dir()),
                inspection.show(&home.alert_log())
            ),
        ));
    }
    checks
}

/// The records that parse (the others are `check_agents`' business).
fn readable_agents(home: &Home) -> Vec<AgentRecord> {
    registry::list(home)
        .map(|(records, _)| records)
        .unwrap_or_default()
}

/// Agents not seen for [`STALE_AFTER`]: perhaps gone, perhaps renamed.
fn check_last_seen(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "last-seen";
    let agents = readable_agents(inspection.home);
    let mut checks: Vec<Check> = agents
        .iter()
        .filter(|record| record.last_seen.until(inspection.now) >= STALE_AFTER)
        .map(|record| {
            Check::warn(
                NAME,
                format!(
                    "{} was last seen {} ago ({}); if it is gone for good: \
                     `baton agent rm {}`",
                    record.name,
                    time::age(record.last_seen, inspection.now),
                    record.last_seen,
                    record.name
                ),
            )
        })
        .collect();
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            if agents.is_empty() {
                "no agents yet".to_string()
            } else {
                format!(
                    "every agent seen within the last {} days",
                    STALE_AFTER.num_days()
                )
            },
        ));
    }
    checks
}

/// Work handed over and not seen by its agent for more than five minutes (SPEC section
/// 11): worth knowing, nothing is broken, so a warning per task. A board that does not
/// read is the boards check's finding, not this one's.
fn check_delivery(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "delivery";
    let projects = inspection.project_ids();
    let mut checks = Vec::new();
    for id in &projects {
        let Ok(Some(board)) = read_board(&inspection.home.board_file(id)) else {
            continue;
        };
        for task in board.tasks().filter_map(|task| task.ok()) {
            let Some(delivery) = &task.delivery else {
                continue;
            };
            if !task.status.is_open() || delivery.unseen_for(inspection.now).is_none() {
                continue;
            }
            let project = if projects.len() > 1 {
                format!("{id}: ")
            } else {
                String::new()
            };
            checks.push(Check::warn(
                NAME,
                format!(
                    "{project}{} handed to {} {} ago, not seen yet ({})",
                    task.id,
                    text::inline(&delivery.to),
                    time::age(delivery.since, inspection.now),
                    delivery.state
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "no work waits unseen for more than {} minutes",
                UNSEEN_AFTER.num_minutes()
            ),
        ));
    }
    checks
}

/// Every wake command's program can be found on this process's PATH (hooks and MCP servers
/// that hand work over usually run with the same PATH as the shell).
fn check_wake_commands(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "wake";
    let path_variable = std::env::var_os("PATH");
    let mut checks = Vec::new();
    let mut found = 0;
    for record in readable_agents(inspection.home) {
        let Some(argv) = &record.wake else {
            continue;
        };
        let Some(program) = argv.first().filter(|program| !program.trim().is_empty()) else {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{} has an empty wake command; set one with `baton agent add {} --wake -- \
                     CMD ARGS` or remove it with --no-wake-command",
                    record.name, record.name
                ),
            ));
            continue;
        };
        match find_program(program, path_variable.as_deref()) {
            ProgramLookup::Found(_) => found += 1,
            ProgramLookup::Relative => checks.push(Check::warn(
                NAME,
                format!(
                    "{}'s wake program `{program}` is a relative path; it is looked up in each \
                     project's workspace",
                    record.name
                ),
            )),
            ProgramLookup::Missing => checks.push(Check::fail(
                NAME,
                format!(
                    "{}'s wake program `{program}` is not {}; waking {} will fail",
                    record.name,
                    if ProgramRules::of_this_system().is_path(program) {
                        "an executable file"
                    } else {
                        "on PATH"
                    },
                    record.name
                ),
            )),
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            if found == 0 {
                "no wake commands set".to_string()
            } else {
                format!("{} found", count(found, "wake program"))
            },
        ));
    }
    checks
}

/// Which agent clients are on this machine and what `baton setup` wired into each: one line
/// per client found or wired. A client whose baton server points at a program that is gone,
/// or is wired only in part, or as an agent baton does not know, is worth a warning. One
/// wired to a remote hub names the hub (its agent is the token's, known only there).
fn check_clients(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "clients";
    let Some(env) = setup::Environment::from_process() else {
        return vec![Check::warn(
            NAME,
            "no home directory: cannot look for agent clients",
        )];
    };
    let mut checks = Vec::new();
    for status in setup::status(&env) {
        let client = status.client;
        if let Some(problem) = &status.problem {
            checks.push(Check::warn(NAME, format!("{client}: {problem}")));
            continue;
        }
        if !status.is_wired() {
            if status.is_found() {
                checks.push(Check::ok(
                    NAME,
                    format!("{client}: found, not wired (`baton setup --client {client}`)"),
                ));
            }
            continue;
        }
        let rerun = format!("run `baton setup --client {client}` again");
        let summary = status.summary();
        if let Some(program) = &status.server_program
            && !program.is_file()
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{client} starts baton as {}, which is not there; {rerun}",
                    program.display()
                ),
            ));
        } else if !status.is_fully_wired() {
            checks.push(Check::warn(
                NAME,
                format!("{client} is wired only in part ({summary}); {rerun}"),
            ));
        } else if let Some(agent) = &status.agent
            && !matches!(registry::load(inspection.home, agent), Ok(Some(_)))
        {
            checks.push(Check::warn(
                NAME,
                format!("{client} is wired as agent {agent}, which is not registered; {rerun}"),
            ));
        } else if let Some(variable) = &status.token_env
            && std::env::var_os(variable).is_none_or(|value| value.is_empty())
        {
            // Wired right: the token is for the client's environment, which need not be this
            // shell's.
            checks.push(Check::ok(
                NAME,
                format!("{client}: {summary}; ${variable} is not set in this shell"),
            ));
        } else {
            checks.push(Check::ok(NAME, format!("{client}: {summary}")));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            "no agent client found (claude, codex, gemini, opencode); `baton setup --auto` \
             wires those it finds",
        ));
    }
    checks
}

/// Lock files. With `flock` the kernel drops a lock when its process dies, so a dead
/// command never blocks anyone and an unheld lock file is normal. What can go wrong is a
/// lock that stays held: by a child process that inherited it after the process that took
/// it (the pid in the file) died, or for a long time by a stuck command.
fn check_locks(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "locks";
    let wake_dir = inspection.home.wake_dir();
    let (live_root, listeners_root) = (
        inspection.home.live_root(),
        inspection.home.listeners_root(),
    );
    let mut checks = Vec::new();
    let (mut files, mut held) = (0, 0);
    for (path, _) in walk(inspection.home.root()) {
        if path.extension().is_none_or(|extension| extension != "lock") {
            continue;
        }
        if let Some(found) = regular::not_regular(&path) {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{} is {}, not a regular file: commands that take this lock fail (exit 4) \
                     until it is moved away",
                    inspection.show(&path),
                    found.kind
                ),
            ));
            continue;
        }
        files += 1;
        if !lock::is_locked(&path) {
            continue;
        }
        held += 1;
        let shown = inspection.show(&path);
        let holder = lock::read_holder_of(&path);
        let is_gone = match holder {
            Some(pid) => process::is_process_alive(pid) == Some(false),
            None => false,
        };
        if is_gone {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{shown} is held, but pid {} that took it is gone: a process it started \
                     still holds it, and baton commands will wait and fail with exit 3 until \
                     that ends (`fuser {}` names it)",
                    holder.unwrap_or_default(),
                    path.display()
                ),
            ));
            continue;
        }
        // A wake supervisor holds its lock for as long as the agent works, a live session
        // or a listener's stream for as long as it runs, and the alert sender while alerts
        // wait (a day at most): that is normal, and no command waits on them.
        if path.starts_with(&wake_dir)
            || path.starts_with(&live_root)
            || path.starts_with(&listeners_root)
            || path == inspection.home.alert_sender_lock()
        {
            continue;
        }
        if let Some(age) = inspection.age_of(&path)
            && age >= LONG_HELD_AFTER
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{shown} has been held by {} for {}; baton commands wait for it \
                     (BATON_LOCK_TIMEOUT) and then fail with exit 3",
                    holder.map_or_else(
                        || "an unknown process".to_string(),
                        |pid| format!("pid {pid}")
                    ),
                    wall_age(age)
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "{}, {held} held now; a lock dies with its process, so none is stale",
                count(files, "lock file")
            ),
        ));
    }
    checks
}

/// Temp files (`*.tmp`) older than [`LEFTOVER_AFTER`]: a writer was killed between writing
/// and renaming. What they hold was never committed; the next write replaces them.
fn check_leftovers(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "leftovers";
    let mut checks = Vec::new();
    for (path, metadata) in walk(inspection.home.root()) {
        if !metadata.is_file() || path.extension().is_none_or(|extension| extension != "tmp") {
            continue;
        }
        if let Some(age) = inspection.age_of(&path)
            && age >= LEFTOVER_AFTER
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} was left {} ago by a write that never finished (the writer was \
                     killed); nothing in it was committed, and it is safe to delete",
                    inspection.show(&path),
                    wall_age(age)
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(NAME, "no half-written files"));
    }
    checks
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
fn read_board(path: &Path) -> Result<Option<Board>, StoreError> {
    match regular::read(path) {
        Ok(bytes) => {
            let board: Board = board_file::parse_owned(path, bytes)?;
            board.tasks().try_for_each(|task| task.map(drop))?;
            Ok(Some(board))
        }
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StoreError::io(path)(error)),
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

/// What `doctor --restore` does, or would do, to a board.
#[derive(Debug, Clone, Serialize)]
pub struct RestorePlan {
    pub project: String,
    /// Why board.json cannot be read, when it cannot; then `changes` cannot list what the
    /// current board holds beyond the backup, and `recent_activity` hints at it.
    pub current_error: Option<String>,
    pub current_tasks: Option<usize>,
    pub backup_tasks: usize,
    /// Every task that restoring changes.
    pub changes: Vec<TaskChange>,
    /// The last lines of the activity log, when the current board cannot be read.
    pub recent_activity: Vec<ActivityRecord>,
    /// The id the next task gets after restoring: past every id already handed out, so a
    /// lost task's number is never reused.
    pub next_id: u64,
    pub restored: bool,
}

/// One task that restoring changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskChange {
    pub task: TaskId,
    pub subject: String,
    /// Its status in board.json now (none: not on the current board).
    pub current: Option<Status>,
    /// Its status once restored (none: it vanishes).
    pub restored: Option<Status>,
    /// Thread entries (questions, answers, notes) that would be lost.
    pub lost_thread_entries: usize,
}

impl TaskChange {
    /// What restoring does to this task, in words.
    pub fn describe(&self) -> String {
        let lost = match self.lost_thread_entries {
            0 => String::new(),
            1 => "; 1 thread entry lost".to_string(),
            entries => format!("; {entries} thread entries lost"),
        };
        match (self.current, self.restored) {
            (Some(current), None) => format!("vanishes (it is {current} now){lost}"),
            (None, Some(restored)) => format!("comes back as {restored}{lost}"),
            (Some(current), Some(restored)) if current != restored => {
                format!("goes back from {current} to {restored}{lost}")
            }
            _ => format!("loses its latest edits{lost}"),
        }
    }
}

/// The tasks that differ between the current board and the backup.
pub fn compare(current: &Board, backup: &Board) -> Vec<TaskChange> {
    let mut ids: Vec<TaskId> = current
        .heads()
        .chain(backup.heads())
        .map(|task| task.id)
        .collect();
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .filter_map(|id| {
            // Both boards were read whole by `read_board`, so every task decodes.
            let now = current.task(id).ok().flatten();
            let then = backup.task(id).ok().flatten();
            if now == then {
                return None;
            }
            let subject = now.or(then).map(|task| task.subject.clone())?;
            let lost_thread_entries = match (now, then) {
                (Some(now), Some(then)) => now.thread.len().saturating_sub(then.thread.len()),
                (Some(now), None) => now.thread.len(),
                _ => 0,
            };
            Some(TaskChange {
                task: id,
                subject,
                current: now.map(|task| task.status),
                restored: then.map(|task| task.status),
                lost_thread_entries,
            })
        })
        .collect()
}

/// Reads both boards of `project` and works out what restoring the backup would do.
/// Refuses when there is no backup or it does not parse: it would not be worth restoring.
fn plan(home: &Home, project: &str) -> Result<(RestorePlan, Board)> {
    let backup_path = home.board_backup(project);
    let backup = read_board(&backup_path)?.ok_or_else(|| {
        Error::invalid_with_hint(
            format!("project {project} has no board.json.bak: there is nothing to restore"),
            "a backup is kept from the second change to a board on",
        )
    })?;
    let (current, current_error) = match read_board(&home.board_file(project)) {
        Ok(current) => (current, None),
        Err(error) => (None, Some(error.to_string())),
    };
    let activity = activity::read(&home.activity_file(project)).unwrap_or_default();
    let highest_logged = activity
        .iter()
        .filter_map(|record| record.task)
        .map(|id| id.0)
        .max()
        .unwrap_or(0);
    let next_id = backup
        .next_id
        .max(current.as_ref().map_or(0, |board| board.next_id))
        .max(highest_logged + 1);
    let changes = match &current {
        Some(current) => compare(current, &backup),
        None if current_error.is_none() => compare(&Board::new(project), &backup),
        None => Vec::new(),
    };
    let recent_activity = if current_error.is_some() {
        let skip = activity.len().saturating_sub(5);
        activity[skip..].to_vec()
    } else {
        Vec::new()
    };
    let plan = RestorePlan {
        project: project.to_string(),
        current_error,
        current_tasks: current.as_ref().map(Board::len),
        backup_tasks: backup.len(),
        changes,
        recent_activity,
        next_id,
        restored: false,
    };
    Ok((plan, backup))
}

/// What `restore` would do, changing nothing.
pub fn plan_restore(home: &Home, project: &str) -> Result<RestorePlan> {
    names::check(NameKind::Project, project)?;
    Ok(plan(home, project)?.0)
}

/// Puts `board.json.bak` back as the board, under the board lock, and logs it. The board it
/// replaces becomes the backup (as every write does), so running it again undoes it until
/// the next change. Returns the plan as it stood under the lock.
pub fn restore(
    home: &Home,
    project: &str,
    lock: LockPolicy,
    now: Timestamp,
    actor: &str,
) -> Result<RestorePlan> {
    names::check(NameKind::Project, project)?;
    let _guard = FileLock::acquire(&home.board_lock(project), "the board lock", lock)?;
    board_file::recover_log::<ActivityRecord>(home, project)?;
    let (mut plan, mut board) = plan(home, project)?;
    board.next_id = plan.next_id;
    board_file::persist(
        home,
        project,
        &board,
        &[ActivityRecord {
            at: now,
            project: project.to_string(),
            actor: actor.to_string(),
            action: "restore".into(),
            task: None,
            from_status: None,
            to_status: None,
            text: Some(format!(
                "board.json brought back from board.json.bak ({} changed)",
                count(plan.changes.len(), "task")
            )),
        }],
    )?;
    plan.restored = true;
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    kind: crate::board::task::EntryKind::Question,
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
