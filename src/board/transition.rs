//! The state machine of SPEC section 3, as pure functions: no I/O, the clock passed in.
//!
//! [`transition`] takes a task, an action, who acts and the few facts about the rest of the
//! board it needs, and returns the changed task and the activity event, or says in one line
//! why not and who may act.

use chrono::Duration;

use super::action::{ActionKind, Role, Words};
use super::edit::Edits;
use super::inbox::{ended_dependency, waits_on_ended};
use super::reservation::Reservation;
use super::task::{Landed, Status, Task, TaskId, ThreadEntry, Worktree};
use crate::text::Face;
use crate::time::Timestamp;

/// Something an agent does to an existing task: the action of the table, with the words
/// the agent gave and, for a reassignment, the new assignee; for an edit, what it changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    kind: ActionKind,
    text: String,
    to: Option<String>,
    edits: Option<Box<Edits>>,
    place: Option<Box<Place>>,
}

/// What the machine a task's work is done on tells its action (SPEC sections 18.4 and
/// 18.5): git is asked there, and the model only records the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A claim: the worktree made for the task, kept if it has none yet.
    Worktree(Worktree),
    /// A review: the head commit its worktree holds, the one asked review of.
    Reviewed(String),
    /// An approval, or a `done`: where its work landed on the base branch.
    Landed(Landed),
}

impl Action {
    /// The action `kind` with the words `text` (dropped where it takes none) and no new
    /// assignee: a reassignment made so is refused.
    pub fn new(kind: ActionKind, text: String) -> Action {
        let text = match kind.row().words {
            Words::None => String::new(),
            Words::Optional | Words::Required => text,
        };
        Action {
            kind,
            text,
            to: None,
            edits: None,
            place: None,
        }
    }

    /// The same action with what the machine of the work says of it: kept for the action
    /// the place belongs to (a worktree for a claim, a commit for a review, a landing for
    /// an approval or a `done`), dropped for any other.
    pub fn with_place(self, place: Place) -> Action {
        let fits = matches!(
            (&place, self.kind),
            (Place::Worktree(_), ActionKind::Claim)
                | (Place::Reviewed(_), ActionKind::Review)
                | (Place::Landed(_), ActionKind::Approve | ActionKind::Done)
        );
        Action {
            place: fits.then(|| Box::new(place)),
            ..self
        }
    }

    /// What the machine of the work said of this action, if anything.
    pub fn place(&self) -> Option<&Place> {
        self.place.as_deref()
    }

    /// An edit making `edits`.
    pub fn edit(edits: Edits) -> Action {
        Action::new(ActionKind::Edit, String::new()).with_edits(edits)
    }

    /// The same action with `edits`, kept where the action changes fields (an edit) and
    /// dropped elsewhere, as words are where an action takes none.
    pub fn with_edits(self, edits: Edits) -> Action {
        Action {
            edits: (!self.kind.row().fields.is_empty()).then(|| Box::new(edits)),
            ..self
        }
    }

    /// A reassignment to `to`, with a note for them.
    pub fn reassign(to: String, note: String) -> Action {
        Action {
            to: Some(to),
            ..Action::new(ActionKind::Reassign, note)
        }
    }

    /// The action `kind` with the words given, and for an action that names a new assignee
    /// that assignee; `None` when it names nobody. Words are dropped where the action takes
    /// none, and an assignee where it names none.
    pub fn of(kind: ActionKind, words: String, to: Option<String>) -> Option<Action> {
        let action = Action::new(kind, words);
        match kind.row().takes_to() {
            true => Some(Action {
                to: Some(to.filter(|to| !to.is_empty())?),
                ..action
            }),
            false => Some(action),
        }
    }

    /// The action `kind` on `task` as a face judges whether to offer it, before the actor
    /// gives the words: sample words stand in for them, a new assignee is someone who is
    /// not its assignee (a picker offers the others), and an edit changes its subject.
    pub fn sample(kind: ActionKind, task: &Task) -> Action {
        let words = match kind.row().takes_to() {
            true => String::new(),
            false => "offered".to_string(),
        };
        let edits = Edits {
            subject: Some(format!("{} (edited)", task.subject)),
            ..Edits::default()
        };
        // An approval offered is one the session lands first.
        let landed = Place::Landed(Landed {
            commit: "offered".to_string(),
            at: task.updated_at,
        });
        Action {
            to: kind.row().takes_to().then(|| format!("{}-", task.to)),
            ..Action::new(kind, words)
        }
        .with_edits(edits)
        .with_place(landed)
    }

    /// Which action this is, without its words.
    pub fn kind(&self) -> ActionKind {
        self.kind
    }

    /// The command name, as it appears in `activity.jsonl` and in messages.
    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The words the action carries (empty for a claim or a release), and the new
    /// assignee of a reassignment.
    pub fn words(&self) -> (&str, Option<&str>) {
        (&self.text, self.to.as_deref())
    }

    /// The new assignee, for an action that names one.
    pub fn to(&self) -> Option<&str> {
        self.to.as_deref()
    }

    /// What an edit changes; none for another action, or an edit given nothing.
    pub fn edits(&self) -> Option<&Edits> {
        self.edits.as_deref()
    }

    /// The statuses the action starts from (SPEC section 3, column "from").
    pub fn allowed_from(&self) -> &'static [Status] {
        self.kind.row().from
    }

    /// The words recorded in the thread and the activity log.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What the words of [`Action::text`] are called in an error about them.
    pub fn text_name(&self) -> &'static str {
        self.kind.row().word
    }
}

/// An action that takes no words: a claim, a release.
impl From<ActionKind> for Action {
    fn from(kind: ActionKind) -> Action {
        Action::new(kind, String::new())
    }
}

/// The facts about the world outside the task that a transition depends on.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub now: Timestamp,
    /// How long a claim holds before the task counts as stalled.
    pub lease: Duration,
    /// The project's coordinator, who may cancel and reassign any task.
    pub coordinator: Option<&'a str>,
    /// Tasks in `after` that are not completed yet, with their status: a task waiting on
    /// them cannot be claimed or finished, and one that waits on a failed or canceled task
    /// is the sender's to cancel or reassign.
    pub waiting_on: &'a [(TaskId, Status)],
    /// Another agent's reservation that what the task touches overlaps: it cannot be
    /// claimed until that ends (SPEC section 18.2).
    pub held_by: Option<&'a Reservation>,
}

/// A change the state machine made: recorded as one line in the activity log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub action: ActionKind,
    pub task: TaskId,
    pub from_status: Status,
    pub to_status: Status,
    pub text: String,
}

/// Why a transition was refused: one line naming the task, its status and who may act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransitionError {
    Refused {
        task: TaskId,
        status: Status,
        assignee: String,
        why: Why,
    },
    /// The action needs words (SPEC section 3) and was given none.
    MissingWords { action: ActionKind },
    /// The action names a new assignee and was given none.
    MissingAssignee { action: ActionKind },
    /// An edit given no field to change.
    MissingEdits,
}

/// What stands in the way of a transition, after "T-4 is working, assigned to codex:".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The task is finished, and nothing moves it again.
    Finished,
    /// Only `who` may take the action: the names, with their roles where it helps.
    OnlyBy { action: ActionKind, who: String },
    /// The action starts from other statuses.
    Status { action: ActionKind },
    /// `done` on a task sent for review, which `reviewer` must approve.
    SentForReview { task: TaskId, reviewer: String },
    /// The task waits on one that failed or was canceled: its sender decides.
    DependencyEnded {
        dependency: TaskId,
        status: Status,
        sender: String,
    },
    /// The task waits on unfinished ones.
    Blocked { waiting_on: Vec<TaskId> },
    /// A reassignment to the assignee it has.
    AlreadyAssigned { to: String },
    /// What it touches is held by another agent: `src/date/** by gemini (T-3)`.
    Held { holding: String },
    /// It has a worktree, and its work was not landed on the base branch (SPEC 18.5).
    NotLanded { base: String },
    /// An edit whose every field given is as the task has it already.
    Unchanged,
    /// An edit that would leave the task without a subject.
    EmptySubject,
    /// An edit naming an empty file name.
    EmptyFileName,
    /// An edit making the task wait on itself.
    WaitsOnItself,
    /// An edit making the task wait on one that ended without completing.
    WaitsOnEnded { dependency: TaskId, status: Status },
    /// An edit whose waits would close a circle, the ids around it from the task: none of
    /// them could ever start.
    Circle { circle: Vec<TaskId> },
}

impl TransitionError {
    /// The refusal as `face` tells it: the model's words, with the face's spelling of the
    /// arguments it names.
    pub fn words(&self, face: Face) -> String {
        match self {
            TransitionError::Refused {
                task,
                status,
                assignee,
                why,
            } => format!(
                "{task} is {status}, assigned to {assignee}: {}",
                why.words()
            ),
            TransitionError::MissingWords { action } => format!(
                "{action} needs {} with some words",
                face.argument(action.row().argument_name())
            ),
            TransitionError::MissingAssignee { action } => format!(
                "{action} needs {}: the new assignee",
                face.argument(action.row().assignee.as_ref().map_or("to", |to| to.name))
            ),
            TransitionError::MissingEdits => {
                let fields: Vec<String> = ActionKind::Edit
                    .row()
                    .fields
                    .iter()
                    .map(|field| match face {
                        Face::Cli => face.argument(field.flag()),
                        Face::Tool => face.argument(field.argument.name),
                    })
                    .collect();
                let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
                format!("edit needs one of {} to change", or_list(&fields))
            }
        }
    }
}

impl Why {
    fn words(&self) -> String {
        match self {
            Why::Finished => "it is finished, and nothing moves it again".to_string(),
            Why::OnlyBy { action, who } => format!("only {who} can {}", action.row().phrase),
            Why::Status { action } => {
                let from: Vec<_> = action.row().from.iter().map(|s| s.as_str()).collect();
                let verb = action.name().replace('_', " ");
                format!("{verb} needs it {}", or_list(&from))
            }
            // The same words on every face: a tool caller is told the command too (the
            // MCP tests hold its refusal to the CLI's line).
            Why::SentForReview { task, reviewer } => format!(
                "it was sent with --review: run `baton review {}`, then {reviewer} approves",
                task.0
            ),
            Why::DependencyEnded {
                dependency,
                status,
                sender,
            } => format!(
                "it {}, so it cannot go ahead: {sender} (the sender) can cancel it, or \
                 reassign it to go ahead without",
                waits_on_ended(*dependency, *status),
            ),
            Why::Blocked { waiting_on } => {
                let ids: Vec<_> = waiting_on.iter().map(TaskId::to_string).collect();
                format!("it is blocked until {} completed", and_list(&ids))
            }
            Why::AlreadyAssigned { to } => format!("it is already assigned to {to}"),
            Why::Held { holding } => {
                format!("it is held: {holding}; it will be back in the inbox when that ends")
            }
            Why::NotLanded { base } => format!(
                "its work is on a branch of its own, and completes only once landed on {base}: \
                 approve it where its project's workspace is"
            ),
            Why::Unchanged => "the edit changes nothing".to_string(),
            Why::EmptySubject => "an edit cannot leave it without a subject".to_string(),
            Why::EmptyFileName => "a file name given is empty".to_string(),
            Why::WaitsOnItself => "it cannot wait on itself".to_string(),
            Why::WaitsOnEnded { dependency, status } => {
                format!("{dependency} is {status}: waiting on it, it could never start")
            }
            Why::Circle { circle } => {
                let around: Vec<String> = circle
                    .iter()
                    .chain(circle.first())
                    .map(TaskId::to_string)
                    .collect();
                format!(
                    "its waits would close a circle ({}): none of them could ever start",
                    around.join(" → ")
                )
            }
        }
    }
}

/// The command line's words.
impl std::fmt::Display for TransitionError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.words(Face::Cli))
    }
}

impl std::error::Error for TransitionError {}

/// Applies `action` by `actor` to `task`. Pure: the same inputs give the same answer.
pub fn transition(
    task: &Task,
    action: &Action,
    actor: &str,
    rules: Rules<'_>,
) -> Result<(Task, Event), TransitionError> {
    let refuse = |why: Why| TransitionError::Refused {
        task: task.id,
        status: task.status,
        assignee: task.to.clone(),
        why,
    };
    if task.status.is_finished() {
        return Err(refuse(Why::Finished));
    }
    let kind = action.kind();
    let row = kind.row();
    if row.words == Words::Required && action.text().trim().is_empty() {
        return Err(TransitionError::MissingWords { action: kind });
    }
    if row.takes_to() && action.to().is_none_or(str::is_empty) {
        return Err(TransitionError::MissingAssignee { action: kind });
    }
    if !row.fields.is_empty() && action.edits().is_none_or(Edits::is_empty) {
        return Err(TransitionError::MissingEdits);
    }
    let only_by = |who: String| refuse(Why::OnlyBy { action: kind, who });
    match row.role {
        Role::Assignee if actor != task.to => {
            return Err(only_by(task.to.clone()));
        }
        Role::Sender if actor != task.from => {
            return Err(only_by(format!("{} (the sender)", task.from)));
        }
        Role::Reviewer if actor != task.reviewer() => {
            return Err(only_by(format!("{} (the reviewer)", task.reviewer())));
        }
        Role::SenderOrCoordinator if actor != task.from && rules.coordinator != Some(actor) => {
            let who = match rules.coordinator {
                Some(coordinator) if coordinator != task.from => {
                    format!(
                        "{} (the sender) or {coordinator} (the coordinator)",
                        task.from
                    )
                }
                _ => format!("{} (the sender)", task.from),
            };
            return Err(only_by(who));
        }
        _ => {}
    }
    if !row.from.contains(&task.status) {
        return Err(refuse(Why::Status { action: kind }));
    }
    // The rules beyond the row: one per action that needs one.
    match kind {
        ActionKind::Done if task.review => {
            return Err(refuse(Why::SentForReview {
                task: task.id,
                reviewer: task.reviewer().to_string(),
            }));
        }
        ActionKind::Claim | ActionKind::Done | ActionKind::Review
            if !rules.waiting_on.is_empty() =>
        {
            return Err(refuse(match ended_dependency(rules.waiting_on) {
                Some((dependency, status)) => Why::DependencyEnded {
                    dependency,
                    status,
                    sender: task.from.clone(),
                },
                None => Why::Blocked {
                    waiting_on: rules.waiting_on.iter().map(|(id, _)| *id).collect(),
                },
            }));
        }
        ActionKind::Approve | ActionKind::Done
            if task.worktree.is_some() && !matches!(action.place(), Some(Place::Landed(_))) =>
        {
            let base = task
                .worktree
                .as_ref()
                .map(|w| w.base.clone())
                .unwrap_or_default();
            return Err(refuse(Why::NotLanded { base }));
        }
        ActionKind::Claim if rules.held_by.is_some() => {
            let holding = rules.held_by.map(Reservation::holding).unwrap_or_default();
            return Err(refuse(Why::Held { holding }));
        }
        // Reassigning a task whose dependency ended sends it on without that dependency,
        // to the same assignee too: that is how its sender says "go ahead without".
        ActionKind::Reassign
            if action.to() == Some(task.to.as_str())
                && ended_dependency(rules.waiting_on).is_none() =>
        {
            return Err(refuse(Why::AlreadyAssigned {
                to: task.to.clone(),
            }));
        }
        _ => {}
    }

    let mut next = task.clone();
    let from_status = task.status;
    next.status = row.to.unwrap_or(task.status);
    next.updated_at = rules.now;
    let mut text = action.text().trim().to_string();
    match kind {
        // Checked above: an edit is given something to change.
        ActionKind::Edit => {
            if let Some(edits) = action.edits() {
                text = edits.apply(&mut next).map_err(refuse)?;
            }
        }
        ActionKind::Claim => {
            next.claimed_at = Some(rules.now);
            next.lease_expires_at = Some(rules.now.plus(rules.lease));
            if let (None, Some(Place::Worktree(worktree))) = (&next.worktree, action.place()) {
                next.worktree = Some(worktree.clone());
            }
        }
        ActionKind::Review => {
            if let (Some(worktree), Some(Place::Reviewed(commit))) =
                (&mut next.worktree, action.place())
            {
                worktree.reviewed = Some(commit.clone());
            }
        }
        ActionKind::Done => {
            next.result = Some(text.clone());
            next.landed = landed_by(action);
        }
        ActionKind::Approve => {
            next.landed = landed_by(action);
            // The approved work is described by the assignee's last review request; the
            // approval note, if any, is the reviewer's word on it.
            let summary = task
                .thread
                .iter()
                .rev()
                .find(|entry| entry.kind == ActionKind::Review)
                .map(|entry| entry.text.clone())
                .filter(|summary| !summary.is_empty());
            next.result = summary.or_else(|| Some(text.clone()));
        }
        ActionKind::Reassign => {
            // Checked above: a reassignment names somebody.
            let to = action.to().unwrap_or_default();
            next.to = to.to_string();
            text = if text.is_empty() {
                format!("reassigned from {} to {to}", task.to)
            } else {
                format!("reassigned from {} to {to}: {text}", task.to)
            };
            let ended: Vec<(TaskId, Status)> = rules
                .waiting_on
                .iter()
                .copied()
                .filter(|(_, status)| status.is_finished())
                .collect();
            if !ended.is_empty() {
                next.after
                    .retain(|id| ended.iter().all(|(gone, _)| gone != id));
                let words: Vec<String> = ended
                    .iter()
                    .map(|(id, status)| format!("{id} ({status})"))
                    .collect();
                text.push_str(&format!("; no longer waits on {}", words.join(", ")));
            }
        }
        _ => {}
    }
    if next.status != Status::Working {
        next.lease_expires_at = None;
    }
    next.thread.push(ThreadEntry {
        at: rules.now,
        by: actor.to_string(),
        kind,
        text: text.clone(),
    });
    let event = Event {
        action: kind,
        task: task.id,
        from_status,
        to_status: next.status,
        text,
    };
    Ok((next, event))
}

/// Where an approval or a `done` says the work landed.
fn landed_by(action: &Action) -> Option<Landed> {
    match action.place() {
        Some(Place::Landed(landed)) => Some(landed.clone()),
        _ => None,
    }
}

/// Extends the lease of a working task whose assignee just showed signs of life.
pub fn renew_lease(task: &mut Task, now: Timestamp, lease: Duration) {
    if task.status == Status::Working {
        task.lease_expires_at = Some(now.plus(lease));
    }
}

fn or_list(items: &[&str]) -> String {
    join_with(items, "or")
}

fn and_list(items: &[String]) -> String {
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let joined = join_with(&refs, "and");
    if items.len() == 1 {
        format!("{joined} is")
    } else {
        format!("{joined} are")
    }
}

fn join_with(items: &[&str], word: &str) -> String {
    match items {
        [] => String::new(),
        [only] => only.to_string(),
        [rest @ .., last] => format!("{} {word} {last}", rest.join(", ")),
    }
}

#[cfg(test)]
pub(super) mod tests;
