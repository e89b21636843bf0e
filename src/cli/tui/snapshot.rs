//! The board as the terminal board last read it, its tasks sorted into their statuses once.

use std::collections::HashMap;

use baton::activity::ActivityRecord;
use baton::board::task::{Status, TaskId};
use baton::session::{AgentMatrix, Mail, TaskView};
use baton::time::Timestamp;

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
    /// The words the board was read for (`/`): only the tasks holding them are in `views`.
    pub search: Option<String>,
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
            search: None,
        }
    }

    pub fn view(&self, id: TaskId) -> Option<&TaskView> {
        self.places.get(&id).map(|&place| &self.views[place])
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
