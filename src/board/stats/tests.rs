//! The figures of `stats` worked out by hand on small histories.

use super::*;
use crate::board::delivery::{Delivery, DeliveryEvent};

/// Minute `minute` of the day the histories happen on (negative: the day before).
fn at(minute: i64) -> Timestamp {
    "2026-11-29T12:00:00Z"
        .parse::<Timestamp>()
        .unwrap()
        .plus(Duration::minutes(minute))
}

/// A history of tasks as the log holds it, written one change at a time.
#[derive(Default)]
struct Log {
    records: Vec<ActivityRecord>,
    tasks: Vec<Task>,
}

impl Log {
    /// Task `id`, sent by `from` to `to` at `minute`.
    fn send(&mut self, id: u64, from: &str, to: &str, minute: i64) -> &mut Self {
        let mut task = Task::example(Status::Pending, at(minute));
        task.id = TaskId(id);
        task.from = from.into();
        task.to = to.into();
        self.tasks.push(task);
        self.push(id, from, LogAction::Send, None, Status::Pending, minute)
    }

    /// `kind` by `actor` on task `id` at `minute`: the status moves as the table says.
    fn act(&mut self, id: u64, actor: &str, kind: ActionKind, minute: i64) -> &mut Self {
        let task = self.task(id);
        let from = task.status;
        let to = kind.row().to.unwrap_or(from);
        task.status = to;
        task.updated_at = at(minute);
        self.push(id, actor, LogAction::Act(kind), Some(from), to, minute)
    }

    fn push(
        &mut self,
        id: u64,
        actor: &str,
        action: LogAction,
        from: Option<Status>,
        to: Status,
        minute: i64,
    ) -> &mut Self {
        self.records.push(ActivityRecord {
            at: at(minute),
            project: "p".into(),
            actor: actor.into(),
            action,
            task: Some(TaskId(id)),
            from_status: from,
            to_status: Some(to),
            text: None,
        });
        self
    }

    fn task(&mut self, id: u64) -> &mut Task {
        self.tasks
            .iter_mut()
            .find(|task| task.id == TaskId(id))
            .expect("sent first")
    }

    /// Task `id` sent at 0, claimed at `claimed`, done at `done`, by `agent`.
    fn finished(&mut self, id: u64, agent: &str, claimed: i64, done: i64) -> &mut Self {
        self.send(id, "lead", agent, 0)
            .act(id, agent, ActionKind::Claim, claimed)
            .act(id, agent, ActionKind::Done, done)
    }

    fn stats(&self, humans: &[&str], window: Window, now: i64) -> Stats {
        let humans: Vec<String> = humans.iter().map(|name| name.to_string()).collect();
        compute("p", &self.records, &self.tasks, &humans, window, at(now))
    }
}

fn agent<'a>(stats: &'a Stats, name: &str) -> &'a Figures {
    &stats
        .agents
        .iter()
        .find(|agent| agent.agent == name)
        .unwrap_or_else(|| panic!("{name} in {stats:#?}"))
        .figures
}

const MINUTE: u64 = 60;

#[test]
fn the_median_is_the_middle_one_or_the_mean_of_the_middle_two() {
    let mut log = Log::default();
    // ada: 10, 40 and 20 minutes from claim to done → 20; bob: 10, 20, 30, 50 → 25.
    log.finished(1, "ada", 0, 10)
        .finished(2, "ada", 5, 45)
        .finished(3, "ada", 10, 30);
    log.finished(4, "bob", 0, 10)
        .finished(5, "bob", 0, 20)
        .finished(6, "bob", 0, 50)
        .finished(7, "bob", 10, 40);
    let stats = log.stats(&[], Window::All, 60);
    assert_eq!(agent(&stats, "ada").finished, 3);
    assert_eq!(
        agent(&stats, "ada").claim_to_finish_median_seconds,
        Some(20 * MINUTE)
    );
    assert_eq!(agent(&stats, "bob").finished, 4);
    assert_eq!(
        agent(&stats, "bob").claim_to_finish_median_seconds,
        Some(25 * MINUTE)
    );
    // The team: 10, 20, 40 | 10, 20, 50, 30 → 10 10 20 20 30 40 50 → 20.
    assert_eq!(stats.team.finished, 7);
    assert_eq!(stats.team.claim_to_finish_median_seconds, Some(20 * MINUTE));
    // The sender acted (it sent), finished nothing: it is listed, with no median.
    let lead = agent(&stats, "lead");
    assert_eq!(
        (lead.finished, lead.claim_to_finish_median_seconds),
        (0, None)
    );
    assert_eq!(lead.rework_per_task, None);
    let names: Vec<&str> = stats.agents.iter().map(|a| a.agent.as_str()).collect();
    assert_eq!(names, ["ada", "bob", "lead"], "by name");
    assert_eq!(median(&[1, 2]), Some(1), "whole milliseconds, rounded down");
    assert_eq!(median(&[]), None);
}

#[test]
fn a_task_done_without_a_claim_is_finished_with_no_length() {
    let mut log = Log::default();
    log.send(1, "lead", "ada", 0)
        .act(1, "ada", ActionKind::Done, 30);
    let stats = log.stats(&[], Window::All, 60);
    assert_eq!(agent(&stats, "ada").finished, 1);
    assert_eq!(agent(&stats, "ada").claim_to_finish_median_seconds, None);
}

#[test]
fn a_task_sent_back_with_changes_requested_counts_from_its_first_claim_and_as_rework() {
    let mut log = Log::default();
    // T-1: claimed at 0, review at 10, changes requested at 15, claimed again at 20,
    // review at 30, approved at 40: 40 minutes from the first claim, one rework.
    log.send(1, "lead", "ada", 0)
        .act(1, "ada", ActionKind::Claim, 0)
        .act(1, "ada", ActionKind::Review, 10)
        .act(1, "lead", ActionKind::RequestChanges, 15)
        .act(1, "ada", ActionKind::Claim, 20)
        .act(1, "ada", ActionKind::Review, 30)
        .act(1, "lead", ActionKind::Approve, 40);
    // T-2: right the first time, 20 minutes.
    log.finished(2, "ada", 50, 70);
    // T-3: sent back twice and not finished yet: its rework is not counted until it is.
    log.send(3, "lead", "ada", 0)
        .act(3, "ada", ActionKind::Review, 5)
        .act(3, "lead", ActionKind::RequestChanges, 6)
        .act(3, "ada", ActionKind::Review, 7)
        .act(3, "lead", ActionKind::RequestChanges, 8);
    let stats = log.stats(&[], Window::All, 90);
    let ada = agent(&stats, "ada");
    assert_eq!(ada.finished, 2);
    assert_eq!(ada.changes_requested, 1);
    assert_eq!(ada.rework_per_task, Some(0.5));
    // Approved by lead, but ada's work: lead finished nothing.
    assert_eq!(agent(&stats, "lead").finished, 0);
    // 40 and 20 → 30.
    assert_eq!(ada.claim_to_finish_median_seconds, Some(30 * MINUTE));
}

#[test]
fn a_task_handed_on_counts_for_who_finished_it_from_their_own_claim() {
    let mut log = Log::default();
    log.send(1, "lead", "ada", 0)
        .act(1, "ada", ActionKind::Claim, 0)
        .act(1, "ada", ActionKind::Release, 5);
    log.act(1, "lead", ActionKind::Reassign, 6);
    log.task(1).to = "bob".into();
    log.act(1, "bob", ActionKind::Claim, 10)
        .act(1, "bob", ActionKind::Done, 25);
    let stats = log.stats(&[], Window::All, 30);
    assert_eq!(agent(&stats, "ada").finished, 0);
    let bob = agent(&stats, "bob");
    assert_eq!(bob.finished, 1);
    assert_eq!(bob.claim_to_finish_median_seconds, Some(15 * MINUTE));
}

#[test]
fn questions_wait_on_a_human_only_when_the_sender_is_one() {
    let mut log = Log::default();
    // Asked of ann (a human) at 10, answered at 35: 25 minutes; asked again at 40, still
    // open at 60: 20 more.
    log.send(1, "ann", "ada", 0)
        .act(1, "ada", ActionKind::Claim, 5)
        .act(1, "ada", ActionKind::Ask, 10)
        .act(1, "ann", ActionKind::Answer, 35)
        .act(1, "ada", ActionKind::Ask, 40);
    // Asked of lead (an agent): no human was waited on.
    log.send(2, "lead", "ada", 0)
        .act(2, "ada", ActionKind::Ask, 10)
        .act(2, "lead", ActionKind::Answer, 50);
    // bob asked ann, who never answered: the task was cancelled at 30, 10 minutes in.
    log.send(3, "ann", "bob", 0)
        .act(3, "bob", ActionKind::Ask, 20)
        .act(3, "ann", ActionKind::Cancel, 30);
    let stats = log.stats(&["ann"], Window::All, 60);
    assert_eq!(
        agent(&stats, "ada").waited_on_human_seconds,
        Some(45 * MINUTE)
    );
    assert_eq!(
        agent(&stats, "bob").waited_on_human_seconds,
        Some(10 * MINUTE)
    );
    assert_eq!(agent(&stats, "ann").waited_on_human_seconds, Some(0));
    assert_eq!(stats.team.waited_on_human_seconds, Some(55 * MINUTE));
    let ann = stats.agents.iter().find(|a| a.agent == "ann").unwrap();
    assert!(ann.human);
    assert!(
        !stats
            .agents
            .iter()
            .find(|a| a.agent == "ada")
            .unwrap()
            .human
    );

    // A project that names no human cannot tell: none, rather than a zero that says no
    // human was waited on.
    let unknown = log.stats(&[], Window::All, 60);
    assert_eq!(agent(&unknown, "ada").waited_on_human_seconds, None);
    assert_eq!(unknown.team.waited_on_human_seconds, None);
}

#[test]
fn the_window_takes_what_happened_from_its_start_to_now() {
    let mut log = Log::default();
    // The window is the last 60 minutes of minute 120: from minute 60 on.
    log.finished(1, "ada", 0, 59); // done a minute before: out
    log.finished(2, "ada", 30, 60); // done at its very start: in, claimed before it
    log.finished(3, "ada", 70, 90);
    // A question to a human from 40 to 80: 20 minutes of it in the window.
    log.send(4, "ann", "bob", 0)
        .act(4, "bob", ActionKind::Ask, 40)
        .act(4, "ann", ActionKind::Answer, 80);
    // A task finished at 59 with changes requested in it: its rework is out too.
    log.send(5, "lead", "cy", 0)
        .act(5, "cy", ActionKind::Review, 10)
        .act(5, "lead", ActionKind::RequestChanges, 20)
        .act(5, "cy", ActionKind::Done, 59);
    let window: Window = "60m".parse().unwrap();
    let stats = log.stats(&["ann"], window, 120);
    assert_eq!(stats.since, Some(at(60)));
    assert_eq!(stats.until, at(120));
    let ada = agent(&stats, "ada");
    assert_eq!(ada.finished, 2);
    // 30 (claimed at 30, before the window) and 20 → 25.
    assert_eq!(ada.claim_to_finish_median_seconds, Some(25 * MINUTE));
    assert_eq!(
        agent(&stats, "bob").waited_on_human_seconds,
        Some(20 * MINUTE)
    );
    assert!(
        stats.agents.iter().all(|a| a.agent != "cy"),
        "cy did nothing in the window: {stats:#?}"
    );
    assert_eq!(stats.team.changes_requested, 0);

    // A minute later T-2's completion has left the window.
    let later = log.stats(&["ann"], window, 121);
    assert_eq!(agent(&later, "ada").finished, 1);
    assert_eq!(
        agent(&later, "bob").waited_on_human_seconds,
        Some(19 * MINUTE)
    );
    // All of it: every task, the whole wait.
    let all = log.stats(&["ann"], Window::All, 121);
    assert_eq!(all.since, None);
    assert_eq!(agent(&all, "ada").finished, 3);
    assert_eq!(agent(&all, "cy").changes_requested, 1);
    assert_eq!(
        agent(&all, "bob").waited_on_human_seconds,
        Some(40 * MINUTE)
    );
}

#[test]
fn hand_overs_count_when_their_agent_saw_them_past_five_minutes() {
    let mut log = Log::default();
    let handed = |log: &mut Log, id: u64, to: &str, since: i64, seen: Option<i64>| {
        log.send(id, "lead", to, since);
        let mut delivery = Delivery::queued(to, at(since));
        if let Some(seen) = seen {
            delivery.record(DeliveryEvent::Shown, to, at(seen));
        }
        log.task(id).delivery = Some(delivery);
    };
    handed(&mut log, 1, "ada", 0, Some(6)); // seen after six minutes: counted
    handed(&mut log, 2, "ada", 0, Some(5)); // after five: in time
    handed(&mut log, 3, "ada", 10, None); // never seen, open, 50 minutes now: counted
    handed(&mut log, 4, "bob", 57, None); // never seen, but only 3 minutes yet
    handed(&mut log, 5, "bob", 0, None); // cancelled 2 minutes in, never seen: in time
    log.act(5, "lead", ActionKind::Cancel, 2);
    handed(&mut log, 6, "cy", -200, Some(-100)); // long before the window
    let stats = log.stats(&[], "1h".parse().unwrap(), 60);
    assert_eq!(agent(&stats, "ada").unseen_handovers, 2);
    assert_eq!(agent(&stats, "bob").unseen_handovers, 0);
    assert!(stats.agents.iter().all(|a| a.agent != "cy"));
    assert_eq!(stats.team.unseen_handovers, 2);
    let all = log.stats(&[], Window::All, 60);
    assert_eq!(agent(&all, "cy").unseen_handovers, 1);
}

#[test]
fn a_task_the_log_holds_but_the_tasks_do_not_is_counted_from_the_log() {
    let mut log = Log::default();
    log.finished(1, "ada", 0, 10);
    log.tasks.clear();
    let stats = log.stats(&[], Window::All, 60);
    // A `done` is its assignee's own.
    assert_eq!(agent(&stats, "ada").finished, 1);
    assert_eq!(
        agent(&stats, "ada").claim_to_finish_median_seconds,
        Some(10 * MINUTE)
    );
}

#[test]
fn a_task_imported_finished_or_asking_was_not_finished_or_asked_here() {
    let mut log = Log::default();
    log.send(1, "lead", "ada", 0);
    log.records.clear();
    log.push(1, "lead", LogAction::Import, None, Status::Completed, 10);
    log.send(2, "ann", "bob", 0);
    log.records.pop();
    log.push(
        2,
        "lead",
        LogAction::Import,
        None,
        Status::InputRequired,
        10,
    );
    log.task(2).status = Status::InputRequired;
    let stats = log.stats(&["ann"], Window::All, 60);
    assert_eq!(stats.team.finished, 0, "{stats:#?}");
    assert_eq!(stats.team.waited_on_human_seconds, Some(0));
    // Answered here: the wait before the import is not known, and not counted.
    log.act(2, "ann", ActionKind::Answer, 30);
    let stats = log.stats(&["ann"], Window::All, 60);
    assert_eq!(stats.team.waited_on_human_seconds, Some(0));
}

#[test]
fn the_window_reads_as_the_command_line_writes_it() {
    assert_eq!("7d".parse::<Window>(), Ok(Window::Last(Duration::days(7))));
    assert_eq!(
        " 90m ".parse::<Window>(),
        Ok(Window::Last(Duration::minutes(90)))
    );
    assert_eq!("all".parse::<Window>(), Ok(Window::All));
    assert_eq!(Window::default().to_string(), "7d");
    for refused in ["0m", "7", "week", "-1d", "36501d", "\u{1b}[31m"] {
        let refusal = refused.parse::<Window>().unwrap_err();
        assert!(!refusal.contains('\u{1b}'), "{refusal}");
        assert!(refusal.contains("all"), "{refusal}");
    }
    for window in [Window::All, Window::Last(Duration::hours(24))] {
        let json = serde_json::to_string(&window).unwrap();
        assert_eq!(serde_json::from_str::<Window>(&json).unwrap(), window);
    }
    assert_eq!(serde_json::to_string(&Window::default()).unwrap(), "\"7d\"");
}

#[test]
fn the_json_names_each_figure_once_and_reads_back() {
    let mut log = Log::default();
    log.finished(1, "ada", 0, 10);
    let stats = log.stats(&["lead"], Window::All, 60);
    let json = serde_json::to_value(&stats).unwrap();
    let ada = &json["agents"][0];
    assert_eq!(ada["agent"], "ada");
    assert_eq!(ada["human"], false);
    assert_eq!(ada["finished"], 1);
    assert_eq!(ada["claim_to_finish_median_seconds"], 600);
    assert_eq!(ada["waited_on_human_seconds"], 0);
    assert_eq!(ada["changes_requested"], 0);
    assert_eq!(ada["rework_per_task"], 0.0);
    assert_eq!(ada["unseen_handovers"], 0);
    assert_eq!(json["window"], "all");
    assert_eq!(json["since"], serde_json::Value::Null);
    assert_eq!(json["until"], "2026-11-29T13:00:00.000Z");
    assert_eq!(json["team"]["finished"], 1);
    let back: Stats = serde_json::from_value(json).unwrap();
    assert_eq!(back, stats);
}
