//! Whether the activity log and the boards agree (SPEC section 2): a change's lines are in
//! the log exactly when the change is on its board.

use std::collections::{BTreeMap, HashMap};

use crate::activity::{ActivityRecord, LogAction};
use crate::board::Board;
use crate::board::task::{Task, TaskId};
use crate::error::Result;
use crate::store::Recovered;
use crate::store::files::jsonl;
use crate::text;

use super::{Check, Inspection, Verdict, count, listing, show_error};

/// The activity log and the board agree (SPEC section 2): first a change a killed writer
/// left unlogged is logged, or its journal dropped if it never committed; then, with board
/// and log read under the board lock so that no change is half made while it looks, and the
/// archive after, every line that names a task
/// names one on the board or in the archive, no task has two `send` lines and each matches
/// its task, every task has its `send` line (unless it is older than the oldest line kept:
/// rotation drops the sixth generation), each task's last logged status is its status, and
/// `next_id` is above every id.
pub(super) fn check_activity(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "activity";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut agreeing = 0;
    for id in inspection.project_ids() {
        let snapshot = match inspection.store.snapshot(&id) {
            Ok(Some(snapshot)) => snapshot,
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
        if let Some(recovered) = &snapshot.recovered {
            checks.push(Check::warn(
                NAME,
                format!(
                    "project {id}: {}",
                    describe_recovered(recovered, &inspection.show(&home.activity_journal(&id)))
                ),
            ));
        }
        // Unreadable boards, archives and logs are the other checks' findings.
        let Ok(Some(board)) = snapshot.board else {
            continue;
        };
        if board.tasks().any(|task| task.is_err()) {
            continue;
        }
        let Ok(records) = snapshot.log else {
            continue;
        };
        // The archive only gains tasks that were on the board just read, so it can be read
        // (it may be large) after the look, without keeping writers waiting.
        let mut archived = Vec::new();
        if inspection.on_files() {
            for path in crate::store::files::archive::task_files(home, &id).unwrap_or_default() {
                if let Ok(lines) = jsonl::read_all::<Task>(&path) {
                    archived.extend(lines.records);
                }
            }
        } else {
            archived = inspection.store.archived_tasks(&id).unwrap_or_default();
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
        .rposition(|record| record.action == LogAction::Restore)
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
        if record.action == LogAction::Send {
            sends.entry(id).or_default().push(record);
        }
        if matches!(record.action, LogAction::Send | LogAction::Import) {
            made.entry(id).or_default().push(record);
        }
        if index < since_restore {
            continue;
        }
        if !known.contains_key(&id) {
            unknown.entry(id).or_default().push(record.action.as_str());
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
