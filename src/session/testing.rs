//! An in-process harness for the session: a hub on a store in a temporary directory, and
//! sessions opened on it, driven through the same functions the faces call (send, act,
//! inbox) without the binary. The rules here were tested only through the binary before;
//! what a user types and sees stays tested there (`tests/it`).

use std::path::PathBuf;

use super::{AfterEffects, Hub, NewTask, Request, Session};
use crate::board::action::ActionKind;
use crate::board::inbox::Reason;
use crate::board::task::{Status, TaskId};
use crate::board::transition::Action;
use crate::error::Result;
use crate::file::lock::LockPolicy;
use crate::home::Home;
use crate::time::Timestamp;

/// A hub of its own, on the file store in a temporary directory, that wakes and notifies
/// nobody.
pub struct TestHub {
    root: tempfile::TempDir,
    pub hub: Hub,
}

impl TestHub {
    pub fn new() -> TestHub {
        let root = tempfile::tempdir().expect("a temporary directory");
        let home = Home::new(root.path().join("home"));
        std::fs::create_dir_all(root.path().join("work")).expect("a working directory");
        let lock = LockPolicy::silent(std::time::Duration::from_secs(10));
        TestHub {
            hub: Hub::new(home, lock, AfterEffects::none()),
            root,
        }
    }

    /// Where the sessions run: no workspace is bound there, so it is the `default` project.
    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// `agent`'s session, at `now`.
    pub fn at(&self, agent: &str, now: &str) -> Session {
        let mut session = Session::open(
            self.hub.clone(),
            Request {
                agent: Some(agent),
                project: None,
                cwd: Some(&self.work()),
            },
        )
        .expect("a session opens");
        session.now = time(now);
        session
    }

    /// Registers `agents` (each opens a session once, as its first command would).
    pub fn register(&self, agents: &[&str]) {
        for agent in agents {
            self.at(agent, START);
        }
    }

    /// `from` sends `new` to `to` at `now`; the new task's id.
    pub fn send(&self, from: &str, to: &str, now: &str, new: NewTask) -> Result<TaskId> {
        let new = NewTask {
            to: Some(to.to_string()),
            subject: if new.subject.is_empty() {
                "a task".to_string()
            } else {
                new.subject
            },
            ..new
        };
        Ok(self.at(from, now).send(new)?.task.task.id)
    }

    /// `agent` does `action` to task `id` at `now`.
    pub fn act(&self, agent: &str, id: TaskId, action: Action, now: &str) -> Result<Status> {
        Ok(self.at(agent, now).act(id, action)?.task.task.status)
    }

    /// The tasks in `agent`'s inbox at `now`, each with why it is there.
    pub fn inbox(&self, agent: &str, now: &str) -> Vec<(TaskId, Reason)> {
        self.at(agent, now)
            .inbox()
            .expect("the inbox reads")
            .tasks
            .into_iter()
            .map(|entry| (entry.task.id, entry.reason))
            .collect()
    }

    /// Whose inboxes hold task `id` at `now`, of `agents`.
    pub fn holders(&self, id: TaskId, agents: &[&str], now: &str) -> Vec<String> {
        agents
            .iter()
            .filter(|agent| self.inbox(agent, now).iter().any(|(task, _)| *task == id))
            .map(|agent| agent.to_string())
            .collect()
    }
}

/// When the hubs of these tests begin.
pub const START: &str = "2026-11-29T12:00:00Z";

pub fn time(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::session::{BoardFilter, TaskView};

    const AGENTS: [&str; 3] = ["lead", "dev", "qa"];

    fn claim() -> Action {
        Action::from(ActionKind::Claim)
    }

    fn done(result: &str) -> Action {
        Action::new(ActionKind::Done, result.into())
    }

    #[test]
    fn a_task_is_in_exactly_one_inbox_at_each_step_of_its_life() {
        let hub = TestHub::new();
        hub.register(&AGENTS);
        let id = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        let one = |owner: &str| {
            assert_eq!(hub.holders(id, &AGENTS, START), [owner], "only {owner}'s");
        };
        one("dev");
        hub.act("dev", id, claim(), START).unwrap();
        assert!(
            hub.holders(id, &AGENTS, START).is_empty(),
            "working on it: nobody waits"
        );
        let question = Action::new(ActionKind::Ask, "which file?".into());
        hub.act("dev", id, question, START).unwrap();
        one("lead");
        assert_eq!(hub.inbox("lead", START), [(id, Reason::Question)]);
        let answer = Action::new(ActionKind::Answer, "src/a.rs".into());
        assert_eq!(hub.act("lead", id, answer, START).unwrap(), Status::Pending);
        // Answered: the assignee's turn again, to take it back up.
        one("dev");
        hub.act("dev", id, claim(), START).unwrap();
        assert_eq!(
            hub.act("dev", id, done("ok"), START).unwrap(),
            Status::Completed
        );
        assert!(
            hub.holders(id, &AGENTS, START).is_empty(),
            "finished: in no inbox"
        );
    }

    #[test]
    fn what_a_caller_is_offered_is_judged_once_on_the_board_with_its_waits_and_coordinator() {
        let hub = TestHub::new();
        hub.register(&AGENTS);
        // The first to send becomes the project's coordinator.
        let first = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        let after_first = NewTask {
            after: vec![first],
            ..NewTask::default()
        };
        let second = hub.send("qa", "dev", START, after_first).unwrap();
        let offered = |agent: &str, id: TaskId| -> Vec<&'static str> {
            let filter = BoardFilter {
                offered: true,
                ..BoardFilter::default()
            };
            let views = hub.at(agent, START).list(&filter).unwrap();
            let view = views.into_iter().find(|view| view.task.id == id);
            let offers = view
                .and_then(|view| view.offers)
                .expect("offers on the view");
            offers.offered.iter().map(|kind| kind.name()).collect()
        };
        assert_eq!(
            offered("dev", first),
            ["claim", "ask", "review", "done", "fail"]
        );
        // Blocked by an unfinished task on the board: not to be claimed or finished yet.
        assert_eq!(offered("dev", second), ["ask", "fail"]);
        // Its sender, and the coordinator, may cancel, reassign and edit it; nobody else
        // anything.
        assert_eq!(offered("qa", second), ["cancel", "reassign", "edit"]);
        assert_eq!(offered("lead", second), ["cancel", "reassign", "edit"]);
        // What is refused says why, as the command line would.
        let view = hub.at("lead", START).show(second).unwrap();
        assert!(view.offers.is_none(), "only where a face asks");
        let view = hub.at("lead", START).with_offers(view).unwrap();
        // A hub elsewhere sends them in the view's JSON, and they are read back whole.
        let sent: TaskView = serde_json::from_slice(&serde_json::to_vec(&view).unwrap()).unwrap();
        assert_eq!(sent.offers, view.offers);
        let offers = view.offers.expect("offers");
        assert_eq!(
            offers.refusal(ActionKind::Claim),
            Some(format!("{second} is pending, assigned to dev: only dev can claim it").as_str())
        );
        // A board read without asking carries none: `--json` is unchanged.
        let views = hub.at("dev", START).list(&BoardFilter::default()).unwrap();
        assert!(views.iter().all(|view| view.offers.is_none()));
        let json = serde_json::to_value(&views[0]).unwrap();
        assert!(json.get("offered").is_none() && json.get("refused").is_none());
        let read: TaskView = serde_json::from_value(json).unwrap();
        assert_eq!(read.offers, None);
    }

    #[test]
    fn a_task_waits_for_its_dependencies_and_an_ended_one_hands_it_back_to_its_sender() {
        let hub = TestHub::new();
        hub.register(&AGENTS);
        let first = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        let after_first = NewTask {
            after: vec![first],
            ..NewTask::default()
        };
        let second = hub.send("lead", "qa", START, after_first.clone()).unwrap();
        assert!(hub.holders(second, &AGENTS, START).is_empty(), "blocked");
        hub.act("dev", first, claim(), START).unwrap();
        hub.act("dev", first, done("ok"), START).unwrap();
        assert_eq!(hub.inbox("qa", START), [(second, Reason::Assigned)]);

        // A dependency that fails can never complete: its sender decides.
        let third = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        let fourth = NewTask {
            after: vec![third],
            ..NewTask::default()
        };
        let fourth = hub.send("lead", "qa", START, fourth).unwrap();
        hub.act("dev", third, claim(), START).unwrap();
        let fail = Action::new(ActionKind::Fail, "cannot".into());
        hub.act("dev", third, fail, START).unwrap();
        assert_eq!(hub.holders(fourth, &AGENTS, START), ["lead"]);
        assert!(hub.inbox("lead", START).contains(&(
            fourth,
            Reason::DependencyEnded {
                task: third,
                status: Status::Failed
            }
        )));
        // And nothing new may wait on it.
        let refused = hub
            .send(
                "lead",
                "qa",
                START,
                NewTask {
                    after: vec![third],
                    ..NewTask::default()
                },
            )
            .unwrap_err();
        assert!(matches!(refused, Error::Send(_)), "{refused}");
        assert!(
            refused.to_string().contains("could never start"),
            "{refused}"
        );
    }

    #[test]
    fn a_claim_whose_lease_runs_out_stalls_into_the_senders_inbox() {
        let hub = TestHub::new();
        hub.register(&AGENTS);
        let id = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        hub.act("dev", id, claim(), START).unwrap();
        // The default lease is 30 minutes; the assignee stays quiet.
        assert!(hub.inbox("lead", "2026-11-29T12:29:00Z").is_empty());
        assert_eq!(
            hub.inbox("lead", "2026-11-29T12:31:00Z"),
            [(id, Reason::Stalled)]
        );
        // The assignee's own command renews its lease: the stall is over.
        hub.inbox("dev", "2026-11-29T12:32:00Z");
        assert!(hub.inbox("lead", "2026-11-29T12:33:00Z").is_empty());
    }

    #[test]
    fn a_task_sent_for_review_is_completed_only_by_its_reviewers_approval() {
        let hub = TestHub::new();
        hub.register(&AGENTS);
        let reviewed = NewTask {
            reviewer: Some("qa".into()),
            ..NewTask::default()
        };
        let id = hub.send("lead", "dev", START, reviewed).unwrap();
        hub.act("dev", id, claim(), START).unwrap();
        let early = hub.act("dev", id, done("ok"), START).unwrap_err();
        assert!(matches!(early, Error::Transition(_)), "{early}");
        let review = Action::new(ActionKind::Review, "please look".into());
        assert_eq!(
            hub.act("dev", id, review.clone(), START).unwrap(),
            Status::ReviewRequested
        );
        assert_eq!(hub.inbox("qa", START), [(id, Reason::ReviewRequested)]);
        let not_the_reviewer = Action::new(ActionKind::Approve, String::new());
        assert!(hub.act("lead", id, not_the_reviewer, START).is_err());
        let rework = Action::new(ActionKind::RequestChanges, "a test".into());
        assert_eq!(
            hub.act("qa", id, rework, START).unwrap(),
            Status::ChangesRequested
        );
        assert_eq!(hub.inbox("dev", START), [(id, Reason::ChangesRequested)]);
        hub.act("dev", id, claim(), START).unwrap();
        hub.act("dev", id, review, START).unwrap();
        let approve = Action::new(ActionKind::Approve, "good".into());
        assert_eq!(
            hub.act("qa", id, approve, START).unwrap(),
            Status::Completed
        );
        assert!(hub.holders(id, &AGENTS, START).is_empty());
    }

    #[test]
    fn an_edit_that_frees_a_task_hands_it_over_and_a_refused_one_changes_nothing() {
        use crate::board::edit::Edits;
        let hub = TestHub::new();
        hub.register(&AGENTS);
        let first = hub.send("lead", "dev", START, NewTask::default()).unwrap();
        let waiting = NewTask {
            after: vec![first],
            ..NewTask::default()
        };
        let second = hub.send("lead", "qa", START, waiting).unwrap();
        assert!(hub.inbox("qa", START).is_empty(), "blocked");
        let edit = |edits: Edits| Action::edit(edits);
        let freed = hub
            .at("lead", START)
            .act(
                second,
                edit(Edits {
                    after: Some(Vec::new()),
                    ..Edits::default()
                }),
            )
            .unwrap();
        let handed: Vec<(&str, TaskId)> = freed
            .handovers
            .iter()
            .map(|handover| (handover.agent.as_str(), handover.task))
            .collect();
        assert_eq!(handed, [("qa", second)]);
        assert_eq!(hub.inbox("qa", START), [(second, Reason::Assigned)]);
        let log = hub.at("lead", START).log(Some(10), None).unwrap();
        let edits: Vec<_> = log
            .iter()
            .filter(|record| record.action == "edit")
            .collect();
        assert_eq!(edits.len(), 1);
        assert_eq!(
            edits[0].text.as_deref(),
            Some(format!("after was {first}").as_str())
        );

        // What it touches held by another's claim: it leaves the inbox, and comes back
        // (handed over) when the edit takes the overlap away.
        let scoped = |touches: &[&str]| NewTask {
            touches: touches.iter().map(|pattern| pattern.to_string()).collect(),
            ..NewTask::default()
        };
        let holding = hub.send("lead", "dev", START, scoped(&["src/**"])).unwrap();
        hub.act("dev", holding, claim(), START).unwrap();
        let held = hub
            .send("lead", "qa", START, scoped(&["src/a.rs"]))
            .unwrap();
        assert!(
            !hub.holders(held, &AGENTS, START)
                .contains(&"qa".to_string())
        );
        let moved = hub
            .at("lead", START)
            .act(
                held,
                edit(Edits {
                    touches: Some(vec!["docs/".into()]),
                    ..Edits::default()
                }),
            )
            .unwrap();
        assert_eq!(moved.handovers.len(), 1);
        assert_eq!(hub.holders(held, &AGENTS, START), ["qa"]);

        // Refused: what it would wait on is unknown, or ended; the reviewer is nobody.
        hub.act(
            "lead",
            first,
            Action::new(ActionKind::Cancel, String::new()),
            START,
        )
        .unwrap();
        let before = hub.at("lead", START).show(second).unwrap().task;
        let refusals = [
            (
                Edits {
                    after: Some(vec![TaskId(99)]),
                    ..Edits::default()
                },
                "no task T-99 in project default".to_string(),
            ),
            (
                Edits {
                    after: Some(vec![first]),
                    ..Edits::default()
                },
                format!(
                    "{second} is pending, assigned to qa: {first} is canceled: waiting on it, \
                     it could never start"
                ),
            ),
            (
                Edits {
                    subject: Some("renamed".into()),
                    reviewer: Some("nobody".into()),
                    ..Edits::default()
                },
                "unknown agent `nobody`".to_string(),
            ),
        ];
        for (edits, words) in refusals {
            let error = hub.at("lead", START).act(second, edit(edits)).unwrap_err();
            assert!(error.to_string().starts_with(&words), "{error}");
        }
        let after = hub.at("lead", START).show(second).unwrap().task;
        assert_eq!(after, before, "nothing changed");
    }
}
