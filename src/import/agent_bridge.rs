//! agent-bridge v2's SQLite database: `projects`, `agents`, `tasks`, `task_events` (each
//! task's thread, in `id` order) and `task_dependencies`.
//!
//! The database is opened read-only, so an agent-bridge that is running is never disturbed
//! (its writers hold their own locks; a reader waits at most a moment for them). One
//! baton project takes one agent-bridge project: a database that holds several must be told
//! which.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OpenFlags, Row};
use serde_json::Value;

use super::{
    ForeignAgent, ForeignBoard, ForeignTask, Format, ImportError, Origin, parse_time,
    unknown_status,
};
use crate::board::action::ActionKind;
use crate::board::task::{Priority, Status, ThreadEntry};

/// Reads the tasks of `project` (or of the only project there is) and every agent.
pub fn read(path: &Path, project: Option<&str>) -> Result<ForeignBoard, ImportError> {
    let unreadable = |detail: String| ImportError::Unreadable {
        path: path.display().to_string(),
        detail,
    };
    // SQLite would wait for ever on a FIFO where the database should be.
    if let Some(not_regular) = crate::file::regular::not_regular(path) {
        return Err(unreadable(not_regular.to_string()));
    }
    if !path.exists() {
        return Err(unreadable("no such file".into()));
    }
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|error| unreadable(error.to_string()))?;
    connection
        .busy_timeout(Duration::from_secs(2))
        .map_err(|error| unreadable(error.to_string()))?;
    let not_database = |error: rusqlite::Error| ImportError::NotTheFormat {
        path: path.display().to_string(),
        format: Format::AgentBridge,
        what: "database",
        detail: error.to_string(),
    };
    check_tables(&connection, path).map_err(|error| match error {
        Chosen::Sql(error) => not_database(error),
        Chosen::Refused(error) => error,
    })?;
    let project = choose_project(&connection, path, project).map_err(|error| match error {
        Chosen::Sql(error) => not_database(error),
        Chosen::Refused(error) => error,
    })?;
    let mut source = ForeignBoard::default();
    read_agents(&connection, &mut source).map_err(not_database)?;
    read_tasks(&connection, &mut source, &project).map_err(not_database)?;
    source.settle_names();
    Ok(source)
}

enum Chosen {
    Sql(rusqlite::Error),
    Refused(ImportError),
}

/// The names baton reads from: each must be a table, if the database has it at all (one
/// that lacks a table baton needs is refused when it is read).
const TABLES: [&str; 5] = [
    "projects",
    "agents",
    "tasks",
    "task_events",
    "task_dependencies",
];

/// Refuses a database where a name baton reads from is anything but a plain table. A view
/// is a query run when it is read, and one written never to end (a recursive one) would
/// keep the import spinning, or eating memory, for ever; a virtual table runs a module's
/// code. Checked before anything is read, so nothing is.
fn check_tables(connection: &Connection, path: &Path) -> Result<(), Chosen> {
    // SQLite looks names up without regard to case, and tables, views, indexes and
    // triggers share them: at most one object answers to each.
    let mut statement = connection
        .prepare("SELECT type, sql FROM sqlite_master WHERE name = ?1 COLLATE NOCASE")
        .map_err(Chosen::Sql)?;
    for name in TABLES {
        let found: Vec<(Option<String>, Option<String>)> = statement
            .query_map([name], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(Chosen::Sql)?
            .collect::<Result<_, _>>()
            .map_err(Chosen::Sql)?;
        for (kind, sql) in found {
            let is_virtual = sql.as_deref().is_some_and(|sql| {
                let mut words = sql.split_whitespace();
                words
                    .next()
                    .is_some_and(|word| word.eq_ignore_ascii_case("create"))
                    && words
                        .next()
                        .is_some_and(|word| word.eq_ignore_ascii_case("virtual"))
            });
            let kind = match kind.as_deref() {
                Some("table") if !is_virtual => continue,
                Some("table") => "virtual table".to_string(),
                Some(kind) => kind.to_string(),
                None => "nameless kind of object".to_string(),
            };
            return Err(Chosen::Refused(ImportError::NotATable {
                path: path.display().to_string(),
                name,
                kind,
            }));
        }
    }
    Ok(())
}

/// The project asked for, or the only one with tasks.
fn choose_project(
    connection: &Connection,
    path: &Path,
    asked: Option<&str>,
) -> Result<String, Chosen> {
    let mut statement = connection
        .prepare("SELECT DISTINCT project_id FROM tasks ORDER BY project_id")
        .map_err(Chosen::Sql)?;
    let projects: Vec<String> = statement
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(Chosen::Sql)?
        .collect::<Result<_, _>>()
        .map_err(Chosen::Sql)?;
    let listed = || {
        if projects.is_empty() {
            "none".to_string()
        } else {
            projects.join(", ")
        }
    };
    match asked {
        Some(asked) if projects.iter().any(|project| project == asked) => Ok(asked.to_string()),
        Some(asked) => Err(Chosen::Refused(ImportError::NoSuchProject {
            path: path.display().to_string(),
            project: asked.to_string(),
            projects: listed(),
        })),
        None if projects.len() <= 1 => Ok(projects.into_iter().next().unwrap_or_default()),
        None => Err(Chosen::Refused(ImportError::WhichProject {
            path: path.display().to_string(),
            projects: listed(),
        })),
    }
}

/// A text column as text whatever SQLite stored in it (numbers as their digits).
fn text_of(value: Sql) -> Option<String> {
    match value {
        Sql::Text(text) => Some(text),
        Sql::Integer(number) => Some(number.to_string()),
        Sql::Real(number) => Some(number.to_string()),
        Sql::Blob(bytes) => String::from_utf8(bytes).ok(),
        Sql::Null => None,
    }
}

fn column(row: &Row<'_>, name: &str) -> Option<String> {
    row.get::<_, Sql>(name).ok().and_then(text_of)
}

fn read_agents(connection: &Connection, source: &mut ForeignBoard) -> rusqlite::Result<()> {
    let mut statement = connection.prepare("SELECT * FROM agents ORDER BY name")?;
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> = statement
        .query_map([], |row| {
            Ok((
                column(row, "name"),
                column(row, "capabilities_json"),
                column(row, "launch_argv_json"),
            ))
        })?
        .collect::<Result<_, _>>()?;
    for (written, capabilities, launch) in rows {
        let Some(written) = written else { continue };
        if !source.note_agent(&written) {
            source.skip(
                format!("agent {written}"),
                "its name cannot be made a baton agent name",
            );
            continue;
        }
        // Capabilities are a list of words, or of objects with a name.
        let skills = capabilities
            .and_then(|json| serde_json::from_str::<Vec<Value>>(&json).ok())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|capability| match capability {
                Value::String(word) => Some(word),
                Value::Object(fields) => fields
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                _ => None,
            })
            .collect();
        let had_wake = launch
            .and_then(|json| serde_json::from_str::<Vec<Value>>(&json).ok())
            .is_some_and(|argv| !argv.is_empty());
        source.agents.push(ForeignAgent {
            name: written,
            skills,
            strengths: String::new(),
            had_wake,
        });
    }
    Ok(())
}

/// One row of `task_events`, as read.
struct Event {
    kind: String,
    actor: Option<String>,
    payload: Option<String>,
    at: Option<String>,
}

fn read_tasks(
    connection: &Connection,
    source: &mut ForeignBoard,
    project: &str,
) -> rusqlite::Result<()> {
    let mut events: HashMap<String, Vec<Event>> = HashMap::new();
    let mut statement = connection.prepare(
        "SELECT e.task_id, e.kind, e.actor, e.payload_json, e.created_at FROM task_events e \
         JOIN tasks t ON t.id = e.task_id WHERE t.project_id = ?1 ORDER BY e.id",
    )?;
    let rows = statement.query_map([project], |row| {
        Ok((
            column(row, "task_id"),
            Event {
                kind: column(row, "kind").unwrap_or_default(),
                actor: column(row, "actor"),
                payload: column(row, "payload_json"),
                at: column(row, "created_at"),
            },
        ))
    })?;
    for row in rows {
        let (task, event) = row?;
        if let Some(task) = task {
            events.entry(task).or_default().push(event);
        }
    }
    let mut after: HashMap<String, Vec<String>> = HashMap::new();
    // Older databases may not have the table: no dependencies then.
    if let Ok(mut statement) =
        connection.prepare("SELECT task_id, depends_on_task_id FROM task_dependencies")
    {
        let rows = statement.query_map([], |row| {
            Ok((column(row, "task_id"), column(row, "depends_on_task_id")))
        })?;
        for row in rows {
            if let (Some(task), Some(dependency)) = row? {
                after.entry(task).or_default().push(dependency);
            }
        }
    }
    let mut statement = connection
        .prepare("SELECT * FROM tasks WHERE project_id = ?1 ORDER BY created_at, rowid")?;
    let rows: Vec<TaskRow> = statement
        .query_map([project], |row| {
            Ok(TaskRow {
                id: column(row, "id"),
                sender: column(row, "sender"),
                assignee: column(row, "assignee"),
                state: column(row, "state"),
                subject: column(row, "subject"),
                body: column(row, "body"),
                priority: row.get::<_, i64>("priority").unwrap_or(0),
                created_at: column(row, "created_at"),
                updated_at: column(row, "updated_at"),
            })
        })?
        .collect::<Result<_, _>>()?;
    for row in rows {
        let Some(id) = row.id.clone() else { continue };
        let events = events.remove(&id).unwrap_or_default();
        let after = after.remove(&id).unwrap_or_default();
        carry_task(source, project, id, row, events, after);
    }
    Ok(())
}

struct TaskRow {
    id: Option<String>,
    sender: Option<String>,
    assignee: Option<String>,
    state: Option<String>,
    subject: Option<String>,
    body: Option<String>,
    priority: i64,
    created_at: Option<String>,
    updated_at: Option<String>,
}

fn carry_task(
    source: &mut ForeignBoard,
    project: &str,
    id: String,
    row: TaskRow,
    events: Vec<Event>,
    after: Vec<String>,
) {
    let what = format!("task {id}");
    let Some(status) = row
        .state
        .as_deref()
        .and_then(|state| state.parse::<Status>().ok())
    else {
        source.skip(what, unknown_status("state", row.state.as_deref()));
        return;
    };
    let (Some(from), Some(to)) = (row.sender, row.assignee) else {
        source.skip(what, "it has no sender or no assignee");
        return;
    };
    if !(source.note_agent(&from) && source.note_agent(&to)) {
        source.skip(
            what,
            "its sender or assignee cannot be made a baton agent name",
        );
        return;
    }
    let created_at = row.created_at.as_deref().and_then(parse_time);
    let updated_at = row.updated_at.as_deref().and_then(parse_time);
    let Some(created_at) = created_at.or(updated_at) else {
        source.skip(what, "it has no created_at time baton can read");
        return;
    };
    let updated_at = updated_at.unwrap_or(created_at);
    let mut thread = Vec::new();
    for event in events {
        let kind = event.kind.strip_prefix("task.").unwrap_or(&event.kind);
        let text = event
            .payload
            .as_deref()
            .and_then(|json| serde_json::from_str::<Value>(json).ok())
            .and_then(|payload| words_of(&payload))
            .unwrap_or_default();
        let Some(kind) = entry_kind(kind) else {
            // Events that carry no words (the task's creation, deliveries) add nothing a
            // thread shows; words under an unknown kind are named, not dropped in silence.
            if !text.is_empty() && kind != "created" {
                source.skip(
                    format!("{what}: a `{}` event", event.kind),
                    "baton's thread has no such kind",
                );
            }
            continue;
        };
        let by = event
            .actor
            .filter(|actor| source.note_agent(actor))
            .unwrap_or_else(|| from.clone());
        thread.push(ThreadEntry {
            at: event
                .at
                .as_deref()
                .and_then(parse_time)
                .unwrap_or(updated_at),
            by,
            kind,
            text,
        });
    }
    let result = match status {
        Status::Completed | Status::Failed => thread
            .iter()
            .rev()
            .find(|entry| matches!(entry.kind, ActionKind::Done | ActionKind::Fail))
            .map(|entry| entry.text.clone())
            .filter(|text| !text.is_empty()),
        _ => None,
    };
    source.tasks.push(ForeignTask {
        origin: Origin {
            from: Format::AgentBridge.as_str().to_string(),
            project: project.to_string(),
            id,
        },
        subject: row.subject.unwrap_or_default(),
        body: row.body.unwrap_or_default(),
        files: Vec::new(),
        from,
        to,
        status,
        priority: priority_of(row.priority),
        skill: None,
        created_at,
        updated_at,
        result,
        thread,
        after,
    });
}

/// agent-bridge's actions (`task.claim`, `task.question`, …) as baton's thread kinds.
fn entry_kind(kind: &str) -> Option<ActionKind> {
    Some(match kind {
        "claim" => ActionKind::Claim,
        "release" => ActionKind::Release,
        "question" | "ask" => ActionKind::Ask,
        "answer" => ActionKind::Answer,
        "request_review" | "review" => ActionKind::Review,
        "approve" => ActionKind::Approve,
        "changes" | "request_changes" => ActionKind::RequestChanges,
        "done" | "complete" | "result" => ActionKind::Done,
        "fail" => ActionKind::Fail,
        "cancel" => ActionKind::Cancel,
        "reassign" => ActionKind::Reassign,
        _ => return None,
    })
}

/// The words of an event: its `body`, else the first of the other keys words are kept under.
fn words_of(payload: &Value) -> Option<String> {
    [
        "body", "question", "answer", "result", "note", "text", "reason",
    ]
    .iter()
    .find_map(|key| payload.get(key).and_then(Value::as_str))
    .map(str::to_string)
}

/// agent-bridge counts priority up from 0 (normal).
fn priority_of(number: i64) -> Priority {
    match number {
        n if n >= 2 => Priority::Urgent,
        1 => Priority::High,
        0 => Priority::Normal,
        _ => Priority::Low,
    }
}
