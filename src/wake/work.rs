//! What waits for an agent: the tasks whose turn is its and its unread messages, across
//! projects, and what the boards say of their delivery.

use crate::board::delivery::DeliveryState;
use crate::board::inbox::Reason;
use crate::board::task::TaskId;
use crate::mail;
use crate::project;
use crate::registry;
use crate::store::Store;
use crate::time;

/// One piece of work in an agent's inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Work {
    pub(super) project: String,
    pub(super) item: Item,
    /// Who put it there: work an agent hands itself does not wake it again.
    pub(super) by: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Item {
    /// A task at one step of its life: the same task back after another move is new work.
    Task {
        id: TaskId,
        reason: Reason,
        /// How many moves the task has had: every transition adds one thread entry.
        step: usize,
    },
    /// An unread message.
    Message { seq: u64 },
}

impl Work {
    /// The tasks among `items`, grouped by project.
    pub(super) fn tasks_by_project(items: &[Work]) -> Vec<(String, Vec<TaskId>)> {
        let mut grouped: Vec<(String, Vec<TaskId>)> = Vec::new();
        for work in items {
            if let Item::Task { id, .. } = &work.item {
                match grouped
                    .iter_mut()
                    .find(|(project, _)| *project == work.project)
                {
                    Some((_, ids)) => ids.push(*id),
                    None => grouped.push((work.project.clone(), vec![*id])),
                }
            }
        }
        grouped
    }

    pub(super) fn describe(items: &[Work]) -> String {
        items
            .iter()
            .map(|work| match &work.item {
                Item::Task { id, reason, .. } => {
                    format!("{id} ({}, project {})", reason.what_to_do(), work.project)
                }
                Item::Message { seq } => {
                    format!("message {seq} from {} (project {})", work.by, work.project)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Everything in `agent`'s inboxes, across projects: tasks whose turn is the agent's and
/// unread messages. What cannot be read is skipped: the supervisor has nobody to report it
/// to, and the next command will.
pub(super) fn waiting(store: &dyn Store, agent: &str) -> Vec<Work> {
    waiting_in(
        store,
        agent,
        &project::project_ids(store).unwrap_or_default(),
    )
}

/// [`waiting`] in `projects` alone.
pub(super) fn waiting_in(store: &dyn Store, agent: &str, projects: &[String]) -> Vec<Work> {
    let now = time::now();
    let joined = registry::load(store, agent)
        .ok()
        .flatten()
        .map(|record| record.created_at);
    let mut work = Vec::new();
    for project in projects {
        if let Ok(board) = store.board(project) {
            work.extend(board.inbox(agent, now).into_iter().filter_map(|entry| {
                // A task that does not decode is left for the agent's own commands to report.
                // By place: two tasks with one id (a board edited by hand) are both work.
                let task = board.task_at(entry.index).ok()?;
                Some(Work {
                    project: project.clone(),
                    item: Item::Task {
                        id: task.id,
                        reason: entry.reason,
                        step: task.thread.len(),
                    },
                    by: task
                        .thread
                        .last()
                        .map_or_else(|| task.from.clone(), |last| last.by.clone()),
                })
            }));
        }
        if let Some(joined) = joined
            && let Ok(messages) = mail::unread(store, project, agent, joined)
        {
            work.extend(messages.into_iter().map(|message| Work {
                project: project.clone(),
                item: Item::Message { seq: message.seq },
                by: message.from,
            }));
        }
    }
    work
}

/// The tasks of `before` whose delivery to `agent` is still only woken after a run: the run
/// never showed them to the agent (its command may not reach baton at all).
pub(super) fn still_unseen(
    store: &dyn Store,
    agent: &str,
    before: &[Work],
) -> Vec<(String, TaskId)> {
    deliveries(store, agent, before)
        .into_iter()
        .filter(|(_, _, state)| *state == Some(DeliveryState::Woken))
        .map(|(project, id, _)| (project, id))
        .collect()
}

/// `work` without the tasks a wake run has started for already (their delivery says
/// `woken`): another run would run the command a second time for the same work, as a
/// second start racing the first (another hub's look, a command's) does once a command
/// that ends at once has let its duty go. The supervisor looks, whoever started it.
/// Messages, and tasks shown or not yet woken for, stay: a push to a Claude Code session
/// counts as shown but may have been dropped by the client unsaid.
pub(super) fn not_woken_yet(store: &dyn Store, agent: &str, work: Vec<Work>) -> Vec<Work> {
    let states = deliveries(store, agent, &work);
    work.into_iter()
        .filter(|work| {
            let Item::Task { id, .. } = &work.item else {
                return true;
            };
            !states.iter().any(|(project, task, state)| {
                project == &work.project && task == id && *state == Some(DeliveryState::Woken)
            })
        })
        .collect()
}

/// The state of the delivery to `agent` of each task among `work`, each board read once:
/// `None` for a task whose board cannot be read, that is gone, or whose latest hand-over is
/// to someone else.
pub(super) fn deliveries(
    store: &dyn Store,
    agent: &str,
    work: &[Work],
) -> Vec<(String, TaskId, Option<DeliveryState>)> {
    let mut states = Vec::new();
    for (project, ids) in Work::tasks_by_project(work) {
        let board = store.board(&project).ok();
        for id in ids {
            let state = board
                .as_ref()
                .and_then(|board| board.task(id).ok().flatten())
                .and_then(|task| {
                    task.delivery
                        .as_ref()
                        .filter(|delivery| delivery.to == agent)
                        .map(|delivery| delivery.state)
                });
            states.push((project.clone(), id, state));
        }
    }
    states
}

/// The work that is waiting now and was not when `before` was taken, other than the
/// agent's own.
pub(super) fn arrived(store: &dyn Store, agent: &str, before: &[Work]) -> Vec<Work> {
    waiting(store, agent)
        .into_iter()
        .filter(|work| work.by != agent && !before.contains(work))
        .collect()
}

/// Whether `work` is a task handed to `agent` that nothing has woken it for nor shown it yet.
pub(super) fn is_queued(store: &dyn Store, agent: &str, work: &Work) -> bool {
    deliveries(store, agent, std::slice::from_ref(work))
        .first()
        .is_some_and(|(_, _, state)| *state == Some(DeliveryState::Queued))
}

/// The tasks among `work` that nothing says were shown to `agent`.
pub(super) fn unseen_tasks(store: &dyn Store, agent: &str, work: &[Work]) -> Vec<TaskId> {
    deliveries(store, agent, work)
        .into_iter()
        .filter(|(_, _, state)| state.is_none_or(DeliveryState::is_unseen))
        .map(|(_, id, _)| id)
        .collect()
}
