//! Tasks, boards and keys for the terminal board's tests: views made as the session makes
//! them, with what the viewer is offered judged as the session judges it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use baton::board::inbox::Reason;
use baton::board::offers::Offers;
use baton::board::task::{Priority, Status, Task, TaskId};
use baton::board::transition::Rules;
use baton::session::TaskView;

use super::state::{App, Effect, Snapshot};

pub fn view(id: u64, status: Status, subject: &str) -> TaskView {
    let now = baton::time::now();
    let task: Task = serde_json::from_value(serde_json::json!({
        "id": id, "subject": subject, "from": "boss", "to": "worker",
        "status": status.as_str(), "priority": "normal",
        "created_at": now.to_string(), "updated_at": now.to_string(),
    }))
    .expect("a task");
    TaskView {
        task,
        turn: None,
        reason: None,
        blocked_by: Vec::new(),
        held_by: None,
        reservations: Vec::new(),
        stalled: false,
        archived: false,
        offers: None,
    }
}

/// A task whose turn is `owner`'s, for `reason`.
pub fn turn_of(mut view: TaskView, owner: &str, reason: Reason) -> TaskView {
    view.turn = Some(owner.to_string());
    view.reason = Some(reason);
    view
}

pub fn with_priority(mut view: TaskView, priority: Priority) -> TaskView {
    view.task.priority = priority;
    view
}

pub fn snapshot(views: Vec<TaskView>) -> Snapshot {
    Snapshot::new(
        "demo".to_string(),
        baton::time::now(),
        views,
        None,
        Vec::new(),
    )
}

/// `snapshot` as `agent` reads it: each task with what `agent` may do with it, judged
/// by the state machine as the session judges it, with no coordinator and each task
/// waiting on those it is blocked by.
pub fn offered_to(agent: &str, mut snapshot: Snapshot) -> Snapshot {
    for view in &mut snapshot.views {
        let waiting_on: Vec<(TaskId, Status)> = view
            .blocked_by
            .iter()
            .map(|id| (*id, Status::Pending))
            .collect();
        let rules = Rules {
            now: snapshot.now,
            lease: chrono::Duration::minutes(30),
            coordinator: None,
            waiting_on: &waiting_on,
            held_by: None,
        };
        view.offers = Some(Offers::judge(&view.task, agent, rules));
    }
    snapshot
}

/// The terminal board of `agent`, showing `snapshot` as `agent` reads it.
pub fn app_for(agent: &str, snapshot: Snapshot) -> App {
    App::new(Some(agent.to_string()), offered_to(agent, snapshot))
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        assert_eq!(app.on_key(key(KeyCode::Char(c))), Effect::Nothing);
    }
}

pub fn app_as(agent: &str, views: Vec<TaskView>) -> App {
    app_for(agent, snapshot(views))
}
