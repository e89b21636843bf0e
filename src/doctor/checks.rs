//! The checks of the hub home's files: their permissions, the projects, the boards and
//! what they hold (readable tasks, waits that can end, names baton allows), the logs, the
//! locks, and what writers left behind.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::activity::{self, ActivityRecord, GENERATIONS};
use crate::board::task::{Task, TaskId};
use crate::error::Result;
use crate::file::lock;
use crate::file::{platform, regular};
use crate::names::{self, NameKind};
use crate::process::{self};
use crate::project;
use crate::store::files::jsonl;
use crate::store::{self, StoreError};
use crate::text;

use super::{
    Check, Inspection, LEFTOVER_AFTER, LONG_HELD_AFTER, count, count_parse, listing, numbers,
    plural_lines, read_board, read_dir_sorted, show_error, walk, wall_age,
};

/// Directories are 0700 and files 0600: anything open to others is reported (what is under
/// the tasks' worktrees is the user's own, and left to them). Writable by
/// others fails (anyone could change the board); readable only warns. Windows has no
/// permission bits to look at (the home is in the user's profile, private to the user), so
/// nothing is reported there.
pub(super) fn check_permissions(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "permissions";
    if !cfg!(unix) {
        let line = "no permission bits here: the home is as private as the profile it is in";
        return vec![Check::ok(NAME, line.to_string())];
    }
    let mut writable = Vec::new();
    let mut readable = Vec::new();
    let (mut dirs, mut files) = (0, 0);
    // Tasks' worktrees hold the user's own files, with the repository's permissions; the
    // directory that holds them is private, which keeps them from others.
    let worktrees = inspection.home.worktrees_root();
    for (path, metadata) in walk(inspection.home.root()) {
        if path.starts_with(&worktrees) && path != worktrees {
            continue;
        }
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
pub(super) fn check_projects(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "projects";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut good = Vec::new();
    let mut workspaces: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    // A database holds records by id alone: no directory to look at.
    let candidates: Vec<(String, Option<PathBuf>)> = match inspection.on_files() {
        true => inspection
            .project_dirs()
            .into_iter()
            .map(|(id, dir)| (id, Some(dir)))
            .collect(),
        false => inspection
            .project_ids()
            .into_iter()
            .map(|id| (id, None))
            .collect(),
    };
    for (id, dir) in candidates {
        if let Some(dir) = &dir
            && names::check(NameKind::Project, &id).is_err()
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} is not a valid project name; baton ignores it",
                    inspection.show(dir)
                ),
            ));
            continue;
        }
        if let Some(dir) = &dir
            && !dir.join("project.json").exists()
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} has no project.json; baton does not see this project",
                    inspection.show(dir)
                ),
            ));
            continue;
        }
        match project::load(inspection.store, &id) {
            Err(error) => checks.push(Check::fail(NAME, error.to_string())),
            Ok(None) => {}
            Ok(Some(found)) if found.id != id => checks.push(Check::fail(
                NAME,
                format!(
                    "{} names itself `{}`, not `{id}`",
                    match inspection.on_files() {
                        true => inspection.show(&home.project_file(&id)),
                        false => format!("the record of project {id}"),
                    },
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
pub(super) fn check_boards(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "boards";
    let mut checks = Vec::new();
    let (mut boards, mut tasks) = (0, 0);
    for id in inspection.project_ids() {
        let (shown, read) = inspection.board(&id);
        match read {
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
                            shown,
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
                        format!("{} says it is the board of `{}`", shown, board.project),
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
        let backup = match inspection.on_files() {
            true => read_board(&store::previous_board_origin(inspection.store, &id)).map(drop),
            false => inspection
                .store
                .previous_board(&id)
                .map(drop)
                .map_err(Into::into),
        };
        if let Err(error) = backup {
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

/// No open tasks wait on each other in a circle (a board edited by hand): none of them
/// could ever start, and nobody's inbox would show them. A board that does not read is the
/// boards check's finding, not this one's.
pub(super) fn check_dependencies(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "waits";
    let mut checks = Vec::new();
    for (shown, board, project) in inspection.readable_boards() {
        for circle in board.circles() {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{project}{} wait on each other: none can start; cancel one of them \
                     (`baton cancel {}`), or take its wait out of {} by hand",
                    circle_text(&circle),
                    circle[0],
                    shown
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(NAME, "no tasks wait on each other in a circle"));
    }
    checks
}

/// The reservations of each board (SPEC section 18.2) make sense: each pattern reads, and
/// one a claim took belongs to an open task of its holder. A board edited by hand may break
/// either: a pattern that does not read holds the whole workspace (so nothing is let in by
/// mistake), and a claim's reservation whose task ended holds until it is ended by hand.
pub(super) fn check_reservations(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "reservations";
    let now = crate::time::now();
    let mut checks = Vec::new();
    let mut held = 0;
    for (shown, board, project) in inspection.readable_boards() {
        for reservation in board.live_reservations(now) {
            held += 1;
            let pattern = crate::text::inline(&reservation.pattern);
            let agent = crate::text::inline(&reservation.agent);
            if crate::board::scope::Pattern::parse(&reservation.pattern).is_err() {
                checks.push(Check::warn(
                    NAME,
                    format!(
                        "{project}{agent}'s reservation of `{pattern}` does not read as a \
                         pattern, so it holds the whole workspace; end it with `baton \
                         unreserve '{pattern}' --agent {agent}` or fix it in {shown}"
                    ),
                ));
            }
            let Some(task) = reservation.task else {
                continue;
            };
            let open = board
                .task(task)
                .ok()
                .flatten()
                .is_some_and(|task| task.status.is_open() && task.to == reservation.agent);
            if !open {
                checks.push(Check::warn(
                    NAME,
                    format!(
                        "{project}{agent} holds `{pattern}` for {task}, which is not an open \
                         task of theirs; end it with `baton unreserve '{pattern}' --agent {agent}`"
                    ),
                ));
            }
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            match held {
                0 => "nobody holds a reservation".to_string(),
                _ => format!(
                    "{} held, each of an open task or by hand",
                    count(held, "reservation")
                ),
            },
        ));
    }
    checks
}

/// `T-1 → T-2 → T-3 → T-1`; a circle of more than six tasks shortened, with its count.
fn circle_text(circle: &[TaskId]) -> String {
    let Some(first) = circle.first() else {
        return String::new();
    };
    let mut shown: Vec<String> = circle.iter().map(TaskId::to_string).collect();
    if shown.len() > 6 {
        let last = shown.len() - 1;
        shown.drain(3..last);
        shown.insert(3, "…".to_string());
    }
    let mut text = format!("{} → {first}", shown.join(" → "));
    if circle.len() > 6 {
        text.push_str(&format!(" ({} tasks)", circle.len()));
    }
    text
}

/// Every agent name the boards and the mail hold is one baton allows (SPEC section 1): a
/// task's `from`, `to`, `reviewer`, its delivery's `to` and each thread entry's `by`, a
/// message's `from` and `to`. Only a hand edit puts any other there (baton refuses such a
/// name before it writes it), and one with a line break or an escape in it could pass, in
/// a listing, for words of baton's own: it is shown escaped here, and cut short.
pub(super) fn check_names(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "names";
    let home = inspection.home;
    let mut checks = Vec::new();
    let (mut tasks, mut messages) = (0, 0);
    let mut report = |shown: &str, bad: Vec<String>| {
        if !bad.is_empty() {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{}: {} not {} agent {} (a-z, 0-9, `.`, `_` and `-`, at most 64 \
                     characters): {}; nobody can act as {}: fix {} by hand",
                    shown,
                    if bad.len() == 1 {
                        "a name that is"
                    } else {
                        "names that are"
                    },
                    if bad.len() == 1 { "a valid" } else { "valid" },
                    if bad.len() == 1 { "name" } else { "names" },
                    listing(&bad),
                    if bad.len() == 1 { "it" } else { "them" },
                    if bad.len() == 1 { "it" } else { "them" },
                ),
            ));
        }
    };
    for id in inspection.project_ids() {
        let (shown, read) = inspection.board(&id);
        if let Ok(Some(board)) = read {
            let mut bad = Vec::new();
            for task in board.tasks().filter_map(Result::ok) {
                tasks += 1;
                let mut held = vec![("from", task.from.as_str()), ("to", task.to.as_str())];
                held.extend(task.reviewer.as_deref().map(|name| ("reviewer", name)));
                held.extend(
                    task.delivery
                        .as_ref()
                        .map(|delivery| ("delivery to", delivery.to.as_str())),
                );
                held.extend(
                    task.thread
                        .iter()
                        .map(|entry| ("thread by", entry.by.as_str())),
                );
                bad.extend(
                    held.into_iter()
                        .filter(|(_, name)| names::check(NameKind::Agent, name).is_err())
                        .map(|(field, name)| format!("{} {field} `{}`", task.id, shown_name(name))),
                );
            }
            report(&shown, bad);
        }
        let mail = home.mail_file(&id);
        // Lines that do not parse are the logs check's finding.
        let read = match inspection.on_files() {
            true => jsonl::read_all::<serde_json::Map<String, serde_json::Value>>(&mail)
                .map(|lines| lines.records),
            false => inspection.store.mail(&id).map(|messages| {
                messages
                    .iter()
                    .filter_map(|message| match serde_json::to_value(message) {
                        Ok(serde_json::Value::Object(fields)) => Some(fields),
                        _ => None,
                    })
                    .collect()
            }),
        };
        let shown = match inspection.on_files() {
            true => inspection.show(&mail),
            false => format!("the mail of {id}"),
        };
        if let Ok(records) = read {
            let mut bad = Vec::new();
            for message in &records {
                messages += 1;
                let seq = message
                    .get("seq")
                    .map_or_else(|| "?".to_string(), ToString::to_string);
                for field in ["from", "to"] {
                    let Some(name) = message.get(field).and_then(serde_json::Value::as_str) else {
                        continue;
                    };
                    let is_broadcast = field == "to" && name == crate::mail::BROADCAST;
                    if !is_broadcast && names::check(NameKind::Agent, name).is_err() {
                        bad.push(format!("message {seq} {field} `{}`", shown_name(name)));
                    }
                }
            }
            report(&shown, bad);
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "every agent name in {} and {} is valid",
                count(tasks, "task"),
                count(messages, "message")
            ),
        ));
    }
    checks
}

/// The logs of a database: read through the store, whole (a transaction writes a record
/// whole or not at all, so none is cut short).
fn logs_in_the_database(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "logs";
    let (mut records, mut messages) = (0, 0);
    for id in inspection.project_ids() {
        let read = inspection
            .store
            .log(&id, None, None)
            .and_then(|log| Ok((log.len(), inspection.store.mail(&id)?.len())));
        match read {
            Ok((log, mail)) => {
                records += log;
                messages += mail;
            }
            Err(error) => return vec![Check::fail(NAME, show_error(inspection, &error))],
        }
    }
    vec![Check::ok(
        NAME,
        format!(
            "{} and {} read from {}",
            count(records, "activity record"),
            count(messages, "message"),
            inspection.store.location()
        ),
    )]
}

/// A name from a file as a finding shows it: escaped, and cut a little past the longest
/// name baton allows.
fn shown_name(name: &str) -> String {
    text::excerpt(name, 80)
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
pub(super) fn check_logs(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "logs";
    let home = inspection.home;
    if !inspection.on_files() {
        return logs_in_the_database(inspection);
    }
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

/// Lock files. With `flock` the kernel drops a lock when its process dies, so a dead
/// command never blocks anyone and an unheld lock file is normal. What can go wrong is a
/// lock that stays held: by a child process that inherited it after the process that took
/// it (the pid in the file) died, or for a long time by a stuck command.
pub(super) fn check_locks(inspection: &Inspection<'_>) -> Vec<Check> {
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
pub(super) fn check_leftovers(inspection: &Inspection<'_>) -> Vec<Check> {
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
