//! A baton task as A2A shows it (SPEC section 17): its states, its status message, its
//! result as an artifact, its thread as history, and the ids A2A names it by. Pure: from a
//! [`TaskView`] to the protocol's objects, so the mapping is tested without a server.
//!
//! Text from agents leaves here as baton's human-readable faces show it (SPEC section 10):
//! control characters and bidirectional overrides as visible escapes (`\u{1b}`), never raw;
//! a one-line field (the subject) on one line. Each text is a part of its own, never joined
//! to baton's words, so none of its lines can pass for baton's.

use serde_json::{Value, json};

use super::protocol::{
    Artifact, Message, Part, Place, Role, State, StatusUpdate, Task, TaskStatus, Version,
};
use crate::board::action::ActionKind;
use crate::board::task::{Status, TaskId, ThreadEntry};
use crate::session::TaskView;
use crate::text;
use crate::time::Timestamp;

/// A2A's state for a baton status (SPEC section 17).
pub fn state_of(status: Status) -> State {
    match status {
        Status::Pending => State::Submitted,
        Status::Working | Status::ChangesRequested => State::Working,
        Status::InputRequired | Status::ReviewRequested => State::InputRequired,
        Status::Completed => State::Completed,
        Status::Failed => State::Failed,
        Status::Canceled => State::Canceled,
    }
}

/// The status a task has right after a thread entry of `kind` was written: every
/// transition writes one entry, so the thread tells each change of status, in order; none
/// for an entry that leaves the status as it was (an edit's).
pub fn status_after(kind: ActionKind) -> Option<Status> {
    kind.row().to
}

/// The id A2A knows a task by: its project and number, `default/T-12`.
pub fn task_ref(project: &str, id: TaskId) -> String {
    format!("{project}/{id}")
}

/// A task id as a caller gives it: `default/T-12` (or `default/12`), or the number alone
/// (`T-12`, `12`), whose project comes from elsewhere.
pub fn parse_task_ref(text: &str) -> Result<(Option<&str>, TaskId), String> {
    let (project, number) = match text.rsplit_once('/') {
        Some((project, number)) => (Some(project), number),
        None => (None, text),
    };
    let id = number.parse::<TaskId>().map_err(|_| {
        format!(
            "`{}` is not a task id of this hub (expected PROJECT/T-12, as a task's `id` says)",
            text::inline(text)
        )
    })?;
    Ok((project, id))
}

/// Whether `caller` may see and act on `task` through A2A: the tasks it sent or reviews
/// are its own; any other is not found, as if it did not exist.
pub fn is_callers(view: &TaskView, caller: &str) -> bool {
    view.task.from == caller || view.task.reviewer.as_deref() == Some(caller)
}

/// How much of a task to show.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    /// The last this many messages of its history (none at 0; all when unset).
    pub history_length: Option<i64>,
    pub artifacts: bool,
}

impl Shown {
    pub const ALL: Shown = Shown {
        history_length: None,
        artifacts: true,
    };
}

/// The task of `view` in `project`, as `version` spells it.
pub fn task(version: Version, project: &str, view: &TaskView, shown: Shown) -> Task {
    let found = &view.task;
    let id = task_ref(project, found.id);
    let current = found.status;
    // The entry that brought the task where it is, when it said something.
    let last = found
        .thread
        .iter()
        .enumerate()
        .next_back()
        .filter(|(_, entry)| status_after(entry.kind) == Some(current));
    let message = last
        .and_then(|(index, entry)| status_message(version, project, view, index, entry, current));
    let status = TaskStatus {
        state: version.state(state_of(current)),
        message,
        timestamp: iso(found.updated_at),
    };
    let artifacts = shown
        .artifacts
        .then(|| result_artifact(version, view).into_iter().collect());
    let history = match shown.history_length {
        Some(length) if length <= 0 => None,
        length => {
            let all = history(version, project, view);
            let keep = length.map_or(all.len(), |length| {
                usize::try_from(length).unwrap_or(usize::MAX).min(all.len())
            });
            Some(all[all.len() - keep..].to_vec())
        }
    };
    Task {
        kind: Task::kind(version),
        id,
        context_id: project.to_string(),
        status,
        artifacts,
        history,
        metadata: task_metadata(project, view),
    }
}

/// What A2A has no word for, under `metadata.baton`: baton's own status, who sent it, who
/// has it, whose turn it is, its labels, and where its work is done (`work_in`, while it has a worktree
/// and is open: SPEC section 18.4).
fn task_metadata(project: &str, view: &TaskView) -> Value {
    let found = &view.task;
    let mut metadata = json!({ "baton": {
        "project": project,
        "task": found.id.0,
        "status": found.status.as_str(),
        "subject": text::inline(&found.subject).to_string(),
        "from": found.from,
        "to": found.to,
        "reviewer": found.reviewer(),
        "turn": view.turn,
        "archived": view.archived,
        "labels": found.labels.iter().map(|label| text::inline(label).to_string()).collect::<Vec<_>>(),
    }});
    if let Some(place) = found.where_to_work() {
        metadata["baton"]["work_in"] = Value::from(place);
    }
    metadata
}

/// The result of a completed task, as its one artifact.
pub fn result_artifact(version: Version, view: &TaskView) -> Option<Artifact> {
    let found = &view.task;
    if found.status != Status::Completed {
        return None;
    }
    let result = found.result.as_deref().unwrap_or("");
    Some(Artifact::new(
        "result",
        "result",
        vec![Part::text(version, shown_text(result))],
    ))
}

/// The status message an entry leaves: the question, the review note, what to change, why
/// it failed or was canceled, an answer or a verdict. A claim, a release or a result says
/// nothing of its own here (a result is the artifact).
fn status_message(
    version: Version,
    project: &str,
    view: &TaskView,
    index: usize,
    entry: &ThreadEntry,
    status: Status,
) -> Option<Message> {
    let words = match entry.kind {
        ActionKind::Claim | ActionKind::Release | ActionKind::Done => return None,
        // A review asked for without a note still asks the caller for a verdict.
        ActionKind::Review if entry.text.trim().is_empty() => {
            format!("{} asks for a review of {}", entry.by, view.task.id)
        }
        _ if entry.text.trim().is_empty() => return None,
        _ => shown_text(&entry.text),
    };
    let task_id = task_ref(project, view.task.id);
    let message_id = format!("{task_id}#{}", index + 1);
    let role = role_of(view, entry);
    Some(Message::new(
        version,
        Place {
            message_id: &message_id,
            task_id: &task_id,
            context_id: project,
        },
        role,
        vec![Part::text(version, words)],
        Some(entry_metadata(entry, status)),
    ))
}

/// Which side wrote an entry: the agent the task is assigned to, or the caller's side.
fn role_of(view: &TaskView, entry: &ThreadEntry) -> Role {
    if entry.by == view.task.to {
        Role::Agent
    } else {
        Role::User
    }
}

fn entry_metadata(entry: &ThreadEntry, status: Status) -> Value {
    json!({ "baton": {
        "status": status.as_str(),
        "entry": entry.kind.entry(),
        "by": entry.by,
        "at": iso(entry.at),
    }})
}

/// The task's messages: the request it was sent with (its subject and body), then every
/// entry of its thread that said something.
fn history(version: Version, project: &str, view: &TaskView) -> Vec<Message> {
    let found = &view.task;
    let task_id = task_ref(project, found.id);
    let request_id = format!("{task_id}#0");
    let mut parts = vec![Part::text(
        version,
        text::inline(&found.subject).to_string(),
    )];
    if !found.body.is_empty() {
        parts.push(Part::text(version, shown_text(&found.body)));
    }
    let mut messages = vec![Message::new(
        version,
        Place {
            message_id: &request_id,
            task_id: &task_id,
            context_id: project,
        },
        Role::User,
        parts,
        Some(json!({ "baton": { "status": Status::Pending.as_str(), "by": found.from } })),
    )];
    // An entry that moves no status (an edit's) is told with the status it was written in.
    let mut status = Status::Pending;
    for (index, entry) in found.thread.iter().enumerate() {
        status = status_after(entry.kind).unwrap_or(status);
        if let Some(message) = status_message(version, project, view, index, entry, status) {
            messages.push(message);
        }
    }
    messages
}

/// One change of a task as a stream tells it: a status event for each entry of its thread
/// from `from` on (the entries written since the last look), the result's artifact before
/// a completion, and whether the last of them ends the stream (the task stopped: a terminal
/// state, or waiting on its caller).
pub fn changes_since(
    version: Version,
    project: &str,
    view: &TaskView,
    from: usize,
) -> (Vec<super::protocol::StreamEvent>, bool) {
    use super::protocol::{ArtifactUpdate, StreamEvent};
    let found = &view.task;
    let shown = task(version, project, view, Shown::ALL);
    let current = state_of(found.status);
    let new: Vec<(usize, &ThreadEntry)> = found.thread.iter().enumerate().skip(from).collect();
    let mut events = Vec::new();
    for (place, (index, entry)) in new.iter().enumerate() {
        let is_last = place + 1 == new.len();
        // The last entry's status is the task's own (an entry of a kind no action writes,
        // such as an imported one, is told by the status it left).
        let status = match is_last {
            true => found.status,
            false => status_after(entry.kind).unwrap_or(found.status),
        };
        let state = state_of(status);
        if state == State::Completed
            && is_last
            && let Some(artifact) = result_artifact(version, view)
        {
            events.push(StreamEvent::Artifact(ArtifactUpdate::new(
                version, &shown, artifact,
            )));
        }
        let is_final = is_last && current.stops_a_wait();
        let update = StatusUpdate::new(
            version,
            &shown,
            TaskStatus {
                state: version.state(state),
                message: status_message(version, project, view, *index, entry, status),
                timestamp: iso(entry.at),
            },
            is_final,
            json!({ "baton": { "status": status.as_str(), "entry": entry.kind.entry() } }),
        );
        events.push(StreamEvent::Status(update));
    }
    (events, !new.is_empty() && current.stops_a_wait())
}

/// Text from an agent, for A2A's readers (models, and the humans their clients show it
/// to): its lines as written, every other hidden character a visible escape.
fn shown_text(words: &str) -> String {
    text::escape_controls(words).into_owned()
}

/// A time as A2A writes it: ISO 8601 in UTC, to the millisecond.
pub fn iso(at: Timestamp) -> String {
    at.datetime()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::Task as BoardTask;

    #[test]
    fn every_baton_status_maps_to_the_state_spec_17_names() {
        let expected = [
            (Status::Pending, State::Submitted),
            (Status::Working, State::Working),
            (Status::ChangesRequested, State::Working),
            (Status::InputRequired, State::InputRequired),
            (Status::ReviewRequested, State::InputRequired),
            (Status::Completed, State::Completed),
            (Status::Failed, State::Failed),
            (Status::Canceled, State::Canceled),
        ];
        assert_eq!(expected.len(), Status::ALL.len());
        for (status, state) in expected {
            assert_eq!(state_of(status), state, "{status}");
            // Finished on the board is terminal in A2A, and only that.
            assert_eq!(state.is_terminal(), status.is_finished(), "{status}");
        }
    }

    #[test]
    fn each_kind_of_entry_tells_the_status_its_action_leads_to() {
        let expected = [
            (ActionKind::Claim, Status::Working),
            (ActionKind::Release, Status::Pending),
            (ActionKind::Ask, Status::InputRequired),
            (ActionKind::Answer, Status::Pending),
            (ActionKind::Review, Status::ReviewRequested),
            (ActionKind::Approve, Status::Completed),
            (ActionKind::RequestChanges, Status::ChangesRequested),
            (ActionKind::Done, Status::Completed),
            (ActionKind::Fail, Status::Failed),
            (ActionKind::Cancel, Status::Canceled),
            (ActionKind::Reassign, Status::Pending),
        ];
        for (kind, status) in expected {
            assert_eq!(status_after(kind), Some(status), "{kind:?}");
        }
    }

    #[test]
    fn task_ids_name_the_project_and_the_number() {
        assert_eq!(task_ref("api", TaskId(12)), "api/T-12");
        assert_eq!(parse_task_ref("api/T-12"), Ok((Some("api"), TaskId(12))));
        assert_eq!(parse_task_ref("api/12"), Ok((Some("api"), TaskId(12))));
        assert_eq!(parse_task_ref("T-3"), Ok((None, TaskId(3))));
        for refused in ["api/", "api/T-0", "", "x/y/z", "T-1a"] {
            assert!(parse_task_ref(refused).is_err(), "{refused}");
        }
    }

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn entry(kind: ActionKind, by: &str, text: &str) -> ThreadEntry {
        ThreadEntry {
            at: at("2026-11-01T10:00:05Z"),
            by: by.into(),
            kind,
            text: text.into(),
        }
    }

    fn view(status: Status, thread: Vec<ThreadEntry>) -> TaskView {
        TaskView {
            task: BoardTask {
                id: TaskId(4),
                subject: "Fix <b>the</b> parser".into(),
                body: "line one\n\u{1b}[31mred\u{202e}".into(),
                files: vec![],
                from: "lead".into(),
                to: "dev".into(),
                reviewer: None,
                status,
                priority: Default::default(),
                after: vec![],
                skill: None,
                review: false,
                created_at: at("2026-11-01T10:00:00Z"),
                updated_at: at("2026-11-01T10:00:05Z"),
                claimed_at: None,
                lease_expires_at: None,
                result: (status == Status::Completed).then(|| "done \u{1b}]8;;x".to_string()),
                thread,
                delivery: None,
                imported: None,
                touches: Vec::new(),
                worktree: None,
                landed: None,
                labels: Vec::new(),
            },
            turn: None,
            reason: None,
            blocked_by: vec![],
            held_by: None,
            reservations: Vec::new(),
            stalled: false,
            archived: false,
            offers: None,
        }
    }

    #[test]
    fn a_task_with_a_worktree_says_where_its_work_is_done_while_it_is_open() {
        let mut working = view(Status::Working, vec![entry(ActionKind::Claim, "dev", "")]);
        let shown = task(Version::V1, "default", &working, Shown::ALL);
        assert!(shown.metadata["baton"].get("work_in").is_none());
        working.task.worktree = Some(crate::board::task::Worktree {
            path: "/home/dev/.baton/worktrees/default/T-4\u{1b}[2J".into(),
            branch: "baton/T-4".into(),
            base: "main".into(),
            base_commit: "0".repeat(40),
            host: None,
            reviewed: None,
        });
        let shown = task(Version::V1, "default", &working, Shown::ALL);
        assert_eq!(
            shown.metadata["baton"]["work_in"],
            "work in /home/dev/.baton/worktrees/default/T-4\\u{1b}[2J (branch baton/T-4)"
        );
        working.task.status = Status::Completed;
        let shown = task(Version::V1, "default", &working, Shown::ALL);
        assert!(shown.metadata["baton"].get("work_in").is_none());
    }

    #[test]
    fn a_question_is_the_status_message_of_an_input_required_task() {
        let asked = view(
            Status::InputRequired,
            vec![
                entry(ActionKind::Claim, "dev", ""),
                entry(ActionKind::Ask, "dev", "Which \u{1b}[2J file?"),
            ],
        );
        let shown = task(Version::V1, "default", &asked, Shown::ALL);
        assert_eq!(shown.id, "default/T-4");
        assert_eq!(shown.context_id, "default");
        assert_eq!(shown.status.state, "TASK_STATE_INPUT_REQUIRED");
        let message = serde_json::to_value(shown.status.message.unwrap()).unwrap();
        assert_eq!(message["role"], "ROLE_AGENT");
        // Never a raw escape: the visible one, as the CLI shows it.
        assert_eq!(message["parts"][0]["text"], "Which \\u{1b}[2J file?");
        assert_eq!(message["metadata"]["baton"]["status"], "input_required");
        assert_eq!(shown.metadata["baton"]["status"], "input_required");
        assert_eq!(shown.artifacts, Some(vec![]));
    }

    #[test]
    fn a_review_request_asks_the_caller_too_and_says_which() {
        let reviewed = view(
            Status::ReviewRequested,
            vec![entry(ActionKind::Review, "dev", "")],
        );
        let shown = task(Version::V03, "default", &reviewed, Shown::ALL);
        assert_eq!(shown.status.state, "input-required");
        let message = serde_json::to_value(shown.status.message.unwrap()).unwrap();
        assert_eq!(message["parts"][0]["text"], "dev asks for a review of T-4");
        assert_eq!(message["metadata"]["baton"]["status"], "review_requested");
    }

    #[test]
    fn a_completed_task_carries_its_result_as_an_artifact_and_its_thread_as_history() {
        let done = view(
            Status::Completed,
            vec![
                entry(ActionKind::Claim, "dev", ""),
                entry(ActionKind::Ask, "dev", "which?"),
                entry(ActionKind::Answer, "lead", "this one"),
                entry(ActionKind::Done, "dev", "done"),
            ],
        );
        let shown = serde_json::to_value(task(Version::V1, "default", &done, Shown::ALL)).unwrap();
        assert_eq!(shown["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(
            shown["artifacts"][0]["parts"][0]["text"],
            "done \\u{1b}]8;;x"
        );
        let history = shown["history"].as_array().unwrap();
        let texts: Vec<&str> = history
            .iter()
            .map(|message| message["parts"][0]["text"].as_str().unwrap())
            .collect();
        // The subject as sent, markup and all: data, never rendered.
        assert_eq!(texts, ["Fix <b>the</b> parser", "which?", "this one"]);
        assert_eq!(
            history[0]["parts"][1]["text"],
            "line one\n\\u{1b}[31mred\\u{202e}"
        );
        let roles: Vec<&str> = history
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["ROLE_USER", "ROLE_AGENT", "ROLE_USER"]);
        let last_two = task(
            Version::V1,
            "default",
            &done,
            Shown {
                history_length: Some(2),
                artifacts: false,
            },
        );
        assert_eq!(last_two.history.unwrap().len(), 2);
        assert_eq!(last_two.artifacts, None);
        let none = task(
            Version::V1,
            "default",
            &done,
            Shown {
                history_length: Some(0),
                artifacts: true,
            },
        );
        assert_eq!(none.history, None);
    }

    #[test]
    fn a_stream_tells_each_new_entry_once_and_ends_where_the_task_stops() {
        let thread = vec![
            entry(ActionKind::Claim, "dev", ""),
            entry(ActionKind::Ask, "dev", "which?"),
        ];
        let asked = view(Status::InputRequired, thread.clone());
        let (events, ends) = changes_since(Version::V03, "default", &asked, 0);
        let states: Vec<Value> = events
            .iter()
            .map(|event| event.to_json(Version::V03))
            .map(|event| json!([event["status"]["state"], event["final"]]))
            .collect();
        assert_eq!(
            states,
            [json!(["working", false]), json!(["input-required", true])]
        );
        assert!(ends);
        // Nothing new, nothing told.
        assert_eq!(
            changes_since(Version::V03, "default", &asked, 2),
            (vec![], false)
        );
        let mut thread = thread;
        thread.push(entry(ActionKind::Answer, "lead", "that"));
        thread.push(entry(ActionKind::Claim, "dev", ""));
        thread.push(entry(ActionKind::Done, "dev", "done"));
        let done = view(Status::Completed, thread);
        let (events, ends) = changes_since(Version::V1, "default", &done, 2);
        let kinds: Vec<String> = events
            .iter()
            .map(|event| {
                let json = event.to_json(Version::V1);
                match json.get("statusUpdate") {
                    Some(update) => update["status"]["state"].as_str().unwrap().to_string(),
                    None => "artifact".to_string(),
                }
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
                "artifact",
                "TASK_STATE_COMPLETED"
            ]
        );
        assert!(ends);
    }

    #[test]
    fn only_the_sender_and_the_reviewer_see_a_task() {
        let mut shown = view(Status::Working, vec![]);
        assert!(is_callers(&shown, "lead"));
        assert!(!is_callers(&shown, "dev"));
        assert!(!is_callers(&shown, "eve"));
        shown.task.reviewer = Some("eve".into());
        assert!(is_callers(&shown, "eve"));
    }
}
