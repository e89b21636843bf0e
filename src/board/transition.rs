//! The state machine of SPEC section 3, as pure functions: no I/O, the clock passed in.
//!
//! [`transition`] takes a task, an action, who acts and the few facts about the rest of the
//! board it needs, and returns the changed task and the activity event, or says in one line
//! why not and who may act.

use chrono::Duration;

use super::action::{ActionKind, Role, Words};
use super::inbox::{ended_dependency, waits_on_ended};
use super::reservation::Reservation;
use super::task::{Status, Task, TaskId, ThreadEntry};
use crate::text::Face;
use crate::time::Timestamp;

/// Something an agent does to an existing task: the action of the table, with the words
/// the agent gave and, for a reassignment, the new assignee.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    kind: ActionKind,
    text: String,
    to: Option<String>,
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

    /// The action `kind` as a face judges whether to offer it, before the actor gives the
    /// words: sample words stand in for them, and a new assignee is someone who is not
    /// `assignee` (a picker offers the others).
    pub fn sample(kind: ActionKind, assignee: &str) -> Action {
        let words = match kind.row().takes_to() {
            true => String::new(),
            false => "offered".to_string(),
        };
        Action {
            to: kind.row().takes_to().then(|| format!("{assignee}-")),
            ..Action::new(kind, words)
        }
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
    next.status = row.to;
    next.updated_at = rules.now;
    let mut text = action.text().trim().to_string();
    match kind {
        ActionKind::Claim => {
            next.claimed_at = Some(rules.now);
            next.lease_expires_at = Some(rules.now.plus(rules.lease));
        }
        ActionKind::Done => next.result = Some(text.clone()),
        ActionKind::Approve => {
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
pub(super) mod tests {
    use super::*;
    use Status::*;

    fn at(minute: i64) -> Timestamp {
        let start: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        start.plus(Duration::minutes(minute))
    }

    pub(in crate::board) fn task(status: Status) -> Task {
        Task::example(status, at(0))
    }

    pub(in crate::board) fn rules(coordinator: Option<&str>) -> Rules<'_> {
        Rules {
            now: at(10),
            lease: Duration::minutes(30),
            coordinator,
            waiting_on: &[],
            held_by: None,
        }
    }

    pub(in crate::board) fn every_action() -> Vec<Action> {
        vec![
            Action::from(ActionKind::Claim),
            Action::from(ActionKind::Release),
            Action::new(ActionKind::Ask, "which file?".into()),
            Action::new(ActionKind::Answer, "lexer.rs".into()),
            Action::new(ActionKind::Review, "ready".into()),
            Action::new(ActionKind::Approve, "good".into()),
            Action::new(ActionKind::RequestChanges, "add a test".into()),
            Action::new(ActionKind::Done, "fixed".into()),
            Action::new(ActionKind::Fail, "cannot".into()),
            Action::new(ActionKind::Cancel, "not needed".into()),
            Action::reassign("gemini".into(), String::new()),
        ]
    }

    /// SPEC section 3, row by row: (action name, who may act, from statuses, to status).
    const TABLE: &[(&str, &str, &[Status], Status)] = &[
        ("claim", "codex", &[Pending, ChangesRequested], Working),
        ("release", "codex", &[Working], Pending),
        (
            "ask",
            "codex",
            &[Pending, Working, ChangesRequested],
            InputRequired,
        ),
        ("answer", "claude", &[InputRequired], Pending),
        (
            "review",
            "codex",
            &[Pending, Working, ChangesRequested],
            ReviewRequested,
        ),
        ("approve", "claude", &[ReviewRequested], Completed),
        (
            "request_changes",
            "claude",
            &[ReviewRequested],
            ChangesRequested,
        ),
        (
            "done",
            "codex",
            &[Pending, Working, ChangesRequested],
            Completed,
        ),
        (
            "fail",
            "codex",
            &[
                Pending,
                Working,
                InputRequired,
                ReviewRequested,
                ChangesRequested,
            ],
            Failed,
        ),
        (
            "cancel",
            "claude",
            &[
                Pending,
                Working,
                InputRequired,
                ReviewRequested,
                ChangesRequested,
            ],
            Canceled,
        ),
        (
            "reassign",
            "claude",
            &[Pending, Working, InputRequired, ChangesRequested],
            Pending,
        ),
    ];

    #[test]
    fn every_row_of_the_table_allows_exactly_its_from_statuses_for_its_role() {
        for action in every_action() {
            let (_, actor, from, to) = TABLE
                .iter()
                .find(|row| row.0 == action.name())
                .expect("every action has a row");
            for status in Status::ALL {
                let outcome = transition(&task(status), &action, actor, rules(None));
                if from.contains(&status) {
                    let (next, event) = outcome.unwrap_or_else(|error| {
                        panic!("{} from {status} refused: {error}", action.name())
                    });
                    assert_eq!(next.status, *to, "{} from {status}", action.name());
                    assert_eq!(event.from_status, status);
                    assert_eq!(event.to_status, *to);
                    assert_eq!(next.thread.len(), 1);
                    assert_eq!(next.thread[0].by, *actor);
                } else {
                    let error = outcome.expect_err("status not in the row must be refused");
                    let message = error.to_string();
                    assert!(
                        message.starts_with(&format!("T-4 is {status}")),
                        "{message}"
                    );
                }
            }
        }
    }

    #[test]
    fn nobody_else_may_act_and_the_refusal_names_who_may() {
        for action in every_action() {
            let (_, actor, from, _) = TABLE.iter().find(|row| row.0 == action.name()).unwrap();
            let stranger = "gemini";
            let error = transition(&task(from[0]), &action, stranger, rules(None)).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(&format!("only {actor}")), "{message}");
            assert!(message.contains("assigned to codex"), "{message}");
        }
    }

    #[test]
    fn missing_words_are_named_as_each_face_names_the_argument() {
        let error = transition(
            &task(Working),
            &Action::new(ActionKind::Done, " ".into()),
            "codex",
            rules(None),
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "done needs --result with some words");
        assert_eq!(
            error.words(Face::Tool),
            "done needs `result` with some words"
        );
        let mut reviewed = task(Working);
        reviewed.review = true;
        let done = Action::new(ActionKind::Done, "fixed".into());
        let error = transition(&reviewed, &done, "codex", rules(None)).unwrap_err();
        assert!(
            error.to_string().contains("run `baton review 4`"),
            "{error}"
        );
    }

    #[test]
    fn the_spec_example_reads_as_written() {
        let error = transition(
            &task(Working),
            &Action::new(ActionKind::Ask, "?".into()),
            "claude",
            rules(None),
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "T-4 is working, assigned to codex: only codex can ask on it"
        );
    }

    #[test]
    fn the_coordinator_may_cancel_and_reassign_but_not_more() {
        let coordinator = Some("lead");
        let (next, _) = transition(
            &task(Working),
            &Action::new(ActionKind::Cancel, "dup".into()),
            "lead",
            rules(coordinator),
        )
        .unwrap();
        assert_eq!(next.status, Canceled);
        let (next, _) = transition(
            &task(InputRequired),
            &Action::reassign("gemini".into(), "faster".into()),
            "lead",
            rules(coordinator),
        )
        .unwrap();
        assert_eq!((next.status, next.to.as_str()), (Pending, "gemini"));
        assert_eq!(
            next.thread[0].text,
            "reassigned from codex to gemini: faster"
        );
        let error = transition(
            &task(InputRequired),
            &Action::new(ActionKind::Answer, "x".into()),
            "lead",
            rules(coordinator),
        )
        .unwrap_err();
        assert!(error.to_string().contains("only claude (the sender)"));
        let error = transition(
            &task(Pending),
            &Action::new(ActionKind::Cancel, String::new()),
            "gemini",
            rules(coordinator),
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("only claude (the sender) or lead (the coordinator)"),
            "{error}"
        );
    }

    #[test]
    fn a_review_task_cannot_be_done_only_approved() {
        let mut reviewed = task(Working);
        reviewed.review = true;
        let error = transition(
            &reviewed,
            &Action::new(ActionKind::Done, "fixed".into()),
            "codex",
            rules(None),
        )
        .unwrap_err();
        assert!(error.to_string().contains("sent with --review"), "{error}");
        let (in_review, _) = transition(
            &reviewed,
            &Action::new(ActionKind::Review, "parser fixed, tests added".into()),
            "codex",
            rules(None),
        )
        .unwrap();
        let (approved, _) = transition(
            &in_review,
            &Action::new(ActionKind::Approve, String::new()),
            "claude",
            rules(None),
        )
        .unwrap();
        assert_eq!(approved.status, Completed);
        assert_eq!(
            approved.result.as_deref(),
            Some("parser fixed, tests added")
        );
    }

    #[test]
    fn a_named_reviewer_replaces_the_sender_for_verdicts() {
        let mut in_review = task(ReviewRequested);
        in_review.reviewer = Some("gemini".into());
        assert!(
            transition(
                &in_review,
                &Action::new(ActionKind::Approve, String::new()),
                "claude",
                rules(None)
            )
            .is_err()
        );
        let (next, _) = transition(
            &in_review,
            &Action::new(ActionKind::RequestChanges, "more tests".into()),
            "gemini",
            rules(None),
        )
        .unwrap();
        assert_eq!(next.status, ChangesRequested);
    }

    #[test]
    fn claims_set_a_lease_and_leaving_work_clears_it() {
        let (claimed, _) = transition(
            &task(Pending),
            &Action::from(ActionKind::Claim),
            "codex",
            rules(None),
        )
        .unwrap();
        assert_eq!(claimed.claimed_at, Some(at(10)));
        assert_eq!(claimed.lease_expires_at, Some(at(40)));
        assert!(!claimed.is_stalled(at(39)));
        assert!(claimed.is_stalled(at(40)));
        let (asked, _) = transition(
            &claimed,
            &Action::new(ActionKind::Ask, "which?".into()),
            "codex",
            rules(None),
        )
        .unwrap();
        assert_eq!(asked.lease_expires_at, None);
    }

    #[test]
    fn blocked_tasks_cannot_be_claimed() {
        let waiting = [(TaskId(2), Pending), (TaskId(3), Working)];
        let error = transition(
            &task(Pending),
            &Action::from(ActionKind::Claim),
            "codex",
            Rules {
                waiting_on: &waiting,
                held_by: None,
                ..rules(None)
            },
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("blocked until T-2 and T-3 are completed"),
            "{error}"
        );
    }

    #[test]
    fn a_task_waiting_on_others_cannot_be_started_or_finished_by_any_road() {
        // (what it waits on, the words of the refusal)
        let cases: &[(&[(TaskId, Status)], &str)] = &[
            (&[(TaskId(2), Pending)], "blocked until T-2 is completed"),
            (
                &[(TaskId(2), Working), (TaskId(3), InputRequired)],
                "blocked until T-2 and T-3 are completed",
            ),
            (
                &[(TaskId(2), Canceled)],
                "waits on T-2, which was canceled, so it cannot go ahead: claude (the sender) \
                 can cancel it, or reassign it to go ahead without",
            ),
            (
                &[(TaskId(2), Pending), (TaskId(3), Failed)],
                "waits on T-3, which failed",
            ),
        ];
        let finishing = [
            Action::from(ActionKind::Claim),
            Action::new(ActionKind::Done, "fixed".into()),
            Action::new(ActionKind::Review, "ready".into()),
        ];
        for (waiting, words) in cases {
            for action in &finishing {
                for status in [Pending, ChangesRequested] {
                    let error = transition(
                        &task(status),
                        action,
                        "codex",
                        Rules {
                            waiting_on: waiting,
                            ..rules(None)
                        },
                    )
                    .unwrap_err();
                    assert!(
                        error.to_string().contains(words),
                        "{} from {status}: {error}",
                        action.name()
                    );
                }
            }
        }
        // Once what it waits on is completed (so no longer listed), it goes ahead.
        for action in &finishing {
            assert!(transition(&task(Pending), action, "codex", rules(None)).is_ok());
        }
    }

    #[test]
    fn reassigning_a_task_whose_dependency_ended_sends_it_on_without_it() {
        let mut waiting = task(Pending);
        waiting.after = vec![TaskId(2), TaskId(3), TaskId(5)];
        let ended = [(TaskId(2), Canceled), (TaskId(3), Pending)];
        let with = |waiting_on| Rules {
            waiting_on,
            ..rules(None)
        };
        for to in ["codex", "gemini"] {
            let (next, event) = transition(
                &waiting,
                &Action::reassign(to.into(), String::new()),
                "claude",
                with(&ended),
            )
            .unwrap();
            assert_eq!(next.to, to);
            assert_eq!(
                next.after,
                vec![TaskId(3), TaskId(5)],
                "only the ended one goes"
            );
            assert_eq!(
                event.text,
                format!("reassigned from codex to {to}; no longer waits on T-2 (canceled)")
            );
        }
        // Without an ended dependency, reassigning to the assignee is refused as before,
        // and reassigning elsewhere keeps what it waits on.
        let blocked = [(TaskId(3), Pending)];
        let error = transition(
            &waiting,
            &Action::reassign("codex".into(), String::new()),
            "claude",
            with(&blocked),
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("already assigned to codex"),
            "{error}"
        );
        let (next, _) = transition(
            &waiting,
            &Action::reassign("gemini".into(), String::new()),
            "claude",
            with(&blocked),
        )
        .unwrap();
        assert_eq!(next.after, waiting.after);
    }

    #[test]
    fn words_are_required_where_the_spec_says_so() {
        for action in [
            Action::new(ActionKind::Ask, " ".into()),
            Action::new(ActionKind::Answer, String::new()),
            Action::new(ActionKind::RequestChanges, String::new()),
            Action::new(ActionKind::Done, String::new()),
            Action::new(ActionKind::Fail, String::new()),
        ] {
            let status = action.allowed_from()[0];
            let (_, actor, ..) = TABLE.iter().find(|row| row.0 == action.name()).unwrap();
            let error = transition(&task(status), &action, actor, rules(None)).unwrap_err();
            assert!(
                matches!(error, TransitionError::MissingWords { .. }),
                "{error}"
            );
        }
    }
}
