//! The board as the terminal board last read it, its tasks sorted into their statuses once.

use std::collections::HashMap;

use baton::activity::ActivityRecord;
use baton::board::action::ActionKind;
use baton::board::inbox::Reason;
use baton::board::task::{Status, TaskId};
use baton::board::transition::{self, Action, Rules};
use baton::error::Error;
use baton::session::{AgentMatrix, Mail, TaskView};
use baton::time::Timestamp;

use super::one_line;

/// The board as read at one moment, with its tasks sorted into their statuses once, so
/// that a keypress or a redraw never sorts or re-reads 10,000 tasks.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub project: String,
    pub now: Timestamp,
    pub views: Vec<TaskView>,
    /// For each status of [`Status::ALL`], the places in `views` of its tasks, most urgent
    /// first and then by id, as the web board sorts them.
    pub groups: [Vec<usize>; 8],
    /// Where each task is in `views`.
    pub(super) places: HashMap<TaskId, usize>,
    pub agents: Option<AgentMatrix>,
    pub activity: Vec<ActivityRecord>,
    /// The viewer's messages, received and sent, oldest first: none without an identity or
    /// when they could not be read.
    pub mail: Option<Mail>,
    /// The project's coordinator as read with the board, who may cancel and reassign any
    /// task: what the keys offered are judged with.
    pub coordinator: Option<String>,
}

impl Snapshot {
    pub fn new(
        project: String,
        now: Timestamp,
        views: Vec<TaskView>,
        agents: Option<AgentMatrix>,
        activity: Vec<ActivityRecord>,
    ) -> Snapshot {
        let mut groups: [Vec<usize>; 8] = Default::default();
        let mut places = HashMap::with_capacity(views.len());
        for (place, view) in views.iter().enumerate() {
            groups[group_of(view.task.status)].push(place);
            places.insert(view.task.id, place);
        }
        for group in &mut groups {
            group.sort_by_key(|&place| (views[place].task.priority, views[place].task.id));
        }
        Snapshot {
            project,
            now,
            views,
            groups,
            places,
            agents,
            activity,
            mail: None,
            coordinator: None,
        }
    }

    pub fn view(&self, id: TaskId) -> Option<&TaskView> {
        self.places.get(&id).map(|&place| &self.views[place])
    }

    /// The tasks in `view`'s `after` that are not completed, with their status, as the
    /// state machine is told them. A task this read does not hold (a filter left it out, or
    /// it was archived) is judged by what the read says of `view`: still blocking it, ended
    /// without completing, or else completed.
    fn waiting_on(&self, view: &TaskView) -> Vec<(TaskId, Status)> {
        view.task
            .after
            .iter()
            .filter_map(|&id| {
                if let Some(dependency) = self.view(id) {
                    let status = dependency.task.status;
                    return (status != Status::Completed).then_some((id, status));
                }
                if let Some(Reason::DependencyEnded { task, status }) = view.reason
                    && task == id
                {
                    return Some((id, status));
                }
                view.blocked_by
                    .contains(&id)
                    .then_some((id, Status::Pending))
            })
            .collect()
    }

    /// Runs `judge` with the facts the state machine needs about the rest of the board.
    fn judged<T>(&self, view: &TaskView, judge: impl FnOnce(Rules<'_>) -> T) -> T {
        let waiting_on = self.waiting_on(view);
        judge(Rules {
            now: self.now,
            // A lease's length changes no answer, only when a claim would run out.
            lease: chrono::Duration::minutes(30),
            coordinator: self.coordinator.as_deref(),
            waiting_on: &waiting_on,
        })
    }

    /// The actions `actor` may take on `view` now.
    pub fn offered(&self, view: &TaskView, actor: &str) -> Vec<ActionKind> {
        self.judged(view, |rules| transition::offered(&view.task, actor, rules))
    }

    /// Why `actor` may not take the action `kind` on `view` now, as the CLI would say it;
    /// none if they may.
    pub fn refusal(&self, view: &TaskView, actor: &str, kind: ActionKind) -> Option<String> {
        let action = Action::sample(kind, &view.task.to);
        self.judged(view, |rules| {
            transition::transition(&view.task, &action, actor, rules)
                .err()
                .map(|refused| one_line(&Error::from(refused)))
        })
    }

    /// The agents' names, as the matrix lists them.
    pub(super) fn agent_names(&self) -> Vec<String> {
        self.agents
            .iter()
            .flat_map(|matrix| &matrix.agents)
            .map(|agent| agent.name.clone())
            .collect()
    }
}

/// The group of a status: its place in [`Status::ALL`].
pub fn group_of(status: Status) -> usize {
    Status::ALL
        .iter()
        .position(|each| *each == status)
        // Status::ALL lists every status.
        .unwrap_or(0)
}
