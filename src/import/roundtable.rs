//! roundtable's board (v1.1): one `board.json` per project, `{"tasks": [TASK, …]}`, and in
//! some installs a registry JSON of agents beside it.
//!
//! A task that cannot be read is skipped and named; the rest of the board still comes over.
//! roundtable keeps a task's words as keys of their own (`question`, `answer`, `result`,
//! `review_note`, `reason`): they become the thread, in that order.

use std::path::Path;

use serde_json::{Map, Value};

use super::{
    ForeignAgent, ForeignBoard, ForeignTask, Format, ImportError, Origin, parse_time,
    unknown_status,
};
use crate::board::action::ActionKind;
use crate::board::task::{Priority, Status, ThreadEntry};
use crate::time::Timestamp;

/// Reads the board at `board_path` and, when given, the agents of `registry_path`.
pub fn read(board_path: &Path, registry_path: Option<&Path>) -> Result<ForeignBoard, ImportError> {
    let board = read_json(board_path, "board")?;
    let Some(tasks) = board.get("tasks").and_then(Value::as_array) else {
        return Err(not_board(board_path, "it has no `tasks` list"));
    };
    let mut source = ForeignBoard::default();
    // The board's own project name, when a task does not say.
    let fallback_project = board
        .get("project")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    for (place, task) in tasks.iter().enumerate() {
        let Some(fields) = task.as_object() else {
            source.skip(format!("task #{}", place + 1), "it is not a JSON object");
            continue;
        };
        read_task(&mut source, fields, place, &fallback_project);
    }
    if let Some(registry_path) = registry_path {
        read_agents(&mut source, registry_path)?;
    }
    source.settle_names();
    Ok(source)
}

fn read_json(path: &Path, what: &'static str) -> Result<Value, ImportError> {
    let bytes = crate::file::regular::read(path).map_err(|error| ImportError::Unreadable {
        path: path.display().to_string(),
        detail: error.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|error| ImportError::NotTheFormat {
        path: path.display().to_string(),
        format: Format::Roundtable,
        what,
        detail: error.to_string(),
    })
}

fn not_board(path: &Path, detail: &str) -> ImportError {
    ImportError::NotTheFormat {
        path: path.display().to_string(),
        format: Format::Roundtable,
        what: "board",
        detail: detail.to_string(),
    }
}

/// A string field; numbers are taken as their digits (some versions number their ids).
fn text(fields: &Map<String, Value>, key: &str) -> Option<String> {
    match fields.get(key)? {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The strings of the list under `key` (none when it is not a list).
fn strings(fields: &Map<String, Value>, key: &str) -> Vec<String> {
    match fields.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Words kept under `key`: a string as it is, anything else but null as its JSON.
fn words(fields: &Map<String, Value>, key: &str) -> Option<String> {
    match fields.get(key)? {
        Value::Null => None,
        Value::String(text) if text.trim().is_empty() => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

fn read_task(source: &mut ForeignBoard, fields: &Map<String, Value>, place: usize, project: &str) {
    let Some(id) = text(fields, "id").filter(|id| !id.trim().is_empty()) else {
        source.skip(format!("task #{}", place + 1), "it has no id");
        return;
    };
    let what = format!("task {id}");
    let found = text(fields, "status");
    let Some(status) = found
        .as_deref()
        .and_then(|found| found.parse::<Status>().ok())
    else {
        source.skip(what, unknown_status("status", found.as_deref()));
        return;
    };
    let (Some(from), Some(to)) = (text(fields, "from"), text(fields, "to")) else {
        source.skip(what, "it has no `from` or no `to`");
        return;
    };
    if !(source.note_agent(&from) && source.note_agent(&to)) {
        source.skip(what, "its `from` or `to` cannot be made a baton agent name");
        return;
    }
    let times = (
        text(fields, "created").as_deref().and_then(parse_time),
        text(fields, "updated").as_deref().and_then(parse_time),
    );
    let (created_at, updated_at) = match times {
        (Some(created), Some(updated)) => (created, updated),
        (Some(created), None) => (created, created),
        (None, Some(updated)) => (updated, updated),
        (None, None) => {
            source.skip(what, "it has no `created` or `updated` time baton can read");
            return;
        }
    };
    let files = strings(fields, "files");
    let skill = text(fields, "skill").filter(|skill| !skill.trim().is_empty());
    let thread = thread_of(fields, status, &from, &to, updated_at);
    source.tasks.push(ForeignTask {
        origin: Origin {
            from: Format::Roundtable.as_str().to_string(),
            project: text(fields, "project").unwrap_or_else(|| project.to_string()),
            id,
        },
        subject: text(fields, "subject").unwrap_or_default(),
        body: words(fields, "body").unwrap_or_default(),
        files,
        from,
        to,
        status,
        priority: Priority::Normal,
        skill,
        created_at,
        updated_at,
        result: words(fields, "result"),
        thread,
        after: Vec::new(),
    });
}

/// The words roundtable kept on a task, as thread entries in the order questions, answers,
/// results, review notes and reasons come in a task's life; each is dated when the task was
/// last changed, the only time roundtable kept.
fn thread_of(
    fields: &Map<String, Value>,
    status: Status,
    from: &str,
    to: &str,
    at: Timestamp,
) -> Vec<ThreadEntry> {
    let review_note = match status {
        Status::ChangesRequested => (ActionKind::RequestChanges, from),
        Status::Completed => (ActionKind::Approve, from),
        _ => (ActionKind::Review, to),
    };
    let reason = match status {
        Status::Canceled => (ActionKind::Cancel, from),
        _ => (ActionKind::Fail, to),
    };
    let kinds = [
        ("question", (ActionKind::Ask, to)),
        ("answer", (ActionKind::Answer, from)),
        ("result", (ActionKind::Done, to)),
        ("review_note", review_note),
        ("reason", reason),
    ];
    kinds
        .into_iter()
        .filter_map(|(key, (kind, by))| {
            words(fields, key).map(|text| ThreadEntry {
                at,
                by: by.to_string(),
                kind,
                text,
            })
        })
        .collect()
}

/// The registry JSON: `{"agents": [{name, skills, strengths, wake}, …]}`.
fn read_agents(source: &mut ForeignBoard, path: &Path) -> Result<(), ImportError> {
    let registry = read_json(path, "agent registry")?;
    let Some(agents) = registry.get("agents").and_then(Value::as_array) else {
        return Err(ImportError::NotTheFormat {
            path: path.display().to_string(),
            format: Format::Roundtable,
            what: "agent registry",
            detail: "it has no `agents` list".into(),
        });
    };
    for agent in agents {
        let Some(fields) = agent.as_object() else {
            continue;
        };
        let Some(written) = text(fields, "name") else {
            source.skip("an agent", "it has no name");
            continue;
        };
        if !source.note_agent(&written) {
            source.skip(
                format!("agent {written}"),
                "its name cannot be made a baton agent name",
            );
            continue;
        }
        let skills = match fields.get("skills") {
            Some(Value::String(skills)) => skills.split(',').map(str::to_string).collect(),
            _ => strings(fields, "skills"),
        };
        let had_wake = match fields.get("wake") {
            Some(Value::Array(argv)) => !argv.is_empty(),
            Some(Value::String(command)) => !command.trim().is_empty(),
            _ => false,
        };
        source.agents.push(ForeignAgent {
            name: written,
            skills,
            strengths: words(fields, "strengths").unwrap_or_default(),
            had_wake,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(board: &str) -> ForeignBoard {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.json");
        std::fs::write(&path, board).unwrap();
        read(&path, None).unwrap()
    }

    #[test]
    fn words_kept_as_keys_become_the_thread_in_order() {
        let source = read_text(
            r#"{"version": 2, "tasks": [{"id": "rt-1", "subject": "s", "body": "b",
                "from": "claude", "to": "codex", "status": "changes_requested", "skill": "",
                "created": "2026-11-01T10:00:00Z", "updated": "2026-11-02T10:00:00Z",
                "files": ["a.rs"], "project": "api", "review_note": "redo it",
                "question": "which one?", "answer": "the first"}]}"#,
        );
        assert!(source.skipped.is_empty(), "{:?}", source.skipped);
        let task = &source.tasks[0];
        assert_eq!(task.origin.project, "api");
        assert_eq!(task.skill, None);
        let kinds: Vec<_> = task
            .thread
            .iter()
            .map(|entry| (entry.kind, entry.by.as_str(), entry.text.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ActionKind::Ask, "codex", "which one?"),
                (ActionKind::Answer, "claude", "the first"),
                (ActionKind::RequestChanges, "claude", "redo it"),
            ]
        );
    }

    #[test]
    fn a_task_that_cannot_be_read_is_named_and_the_rest_come_over() {
        let source = read_text(
            r#"{"tasks": [
                {"id": "1", "subject": "ok", "from": "a", "to": "b", "status": "pending",
                 "created": "2026-11-01T10:00:00Z"},
                {"id": "2", "subject": "odd", "from": "a", "to": "b", "status": "paused",
                 "created": "2026-11-01T10:00:00Z"},
                {"subject": "no id"},
                7,
                {"id": "1", "subject": "again", "from": "a", "to": "b", "status": "pending",
                 "created": "2026-11-01T10:00:00Z"}]}"#,
        );
        // The task whose id came before is the session's to refuse (it checks every source).
        assert_eq!(source.tasks.len(), 2);
        let skipped: Vec<_> = source.skipped.iter().map(|s| s.what.as_str()).collect();
        assert_eq!(skipped, vec!["task 2", "task #3", "task #4"]);
    }
}
