//! Reservations (SPEC section 18.2) are kept with the board: what a change reserved, and
//! what each task touches, is read back by any store on the same state; a change that gives
//! up leaves them as they were; the board before the last change brings back its own; and
//! of agents reserving overlapping patterns at once, through two stores, exactly one holds
//! each contested path.

use chrono::Duration;

use super::{Hub, now, on_each_store, record};
use crate::board::Board;
use crate::board::action::ActionKind;
use crate::board::reservation::{Conflicts, Grant, Reservation};
use crate::board::scope::Pattern;
use crate::board::task::{Status, Task, TaskId};
use crate::board::transition::Action;
use crate::store::{Store, StoreError, at_once, change_board};
use crate::time::Timestamp;

on_each_store!(
    reservations_and_touches_survive_a_change_and_a_re_read,
    a_change_that_gives_up_leaves_the_reservations_as_they_were,
    the_board_before_brings_back_its_reservations,
    of_twenty_agents_reserving_overlapping_patterns_through_two_stores_one_holds_each_path,
    of_twenty_claims_of_overlapping_scopes_through_two_stores_one_holds_each_path,
);

/// The lease of the projects here.
fn lease() -> Duration {
    Duration::minutes(30)
}

fn patterns(texts: &[&str]) -> Vec<Pattern> {
    texts
        .iter()
        .map(|text| Pattern::parse(text).unwrap())
        .collect()
}

/// A reservation by hand for half an hour, exclusive or shared.
fn by_hand(exclusive: bool, reason: Option<&str>) -> Grant {
    Grant {
        task: None,
        lasts: Some(lease()),
        exclusive,
        reason: reason.map(str::to_string),
    }
}

/// Why a change was not committed.
#[derive(Debug)]
enum Denied {
    /// Another agent holds what was asked.
    Held(Conflicts),
    /// The claim was refused, in the model's words.
    Claim(String),
}

impl From<StoreError> for Denied {
    fn from(error: StoreError) -> Self {
        panic!("the store failed: {error}")
    }
}

/// Puts a pending task for `to` touching `touches` on the board of `p`, logged; its id.
fn send_touching(store: &dyn Store, to: &str, touches: &[&str]) -> TaskId {
    change_board(store, "p", now(), |tx| {
        let id = tx.board.next_free_id(tx.highest_archived_id()?);
        tx.board.next_id = id.0 + 1;
        let mut task = Task::example(Status::Pending, tx.now);
        task.id = id;
        task.to = to.to_string();
        task.subject = format!("work of {to}");
        task.touches = touches.iter().map(|text| text.to_string()).collect();
        tx.board.push(task);
        tx.record(record("alice", "send", id.0));
        Ok::<_, StoreError>(id)
    })
    .unwrap()
}

/// `agent` claims task `id`, as the session does: the claim takes its scope in the same
/// change.
fn claim(store: &dyn Store, agent: &str, id: TaskId) -> Result<(), Denied> {
    act(store, agent, id, Action::from(ActionKind::Claim))
}

/// `agent` takes `action` on task `id`, in a change of its own with its activity record.
fn act(store: &dyn Store, agent: &str, id: TaskId, action: Action) -> Result<(), Denied> {
    change_board(store, "p", now(), |tx| {
        let now = tx.now;
        let applied = tx.board.apply(id, &action, agent, None, lease(), now);
        applied
            .unwrap()
            .expect("the task is on the board")
            .map_err(|refused| Denied::Claim(refused.to_string()))?;
        tx.record(record(agent, action.name(), id.0));
        Ok(())
    })
}

/// `agent` reserves `texts` by hand, all or nothing.
fn reserve(
    store: &dyn Store,
    agent: &str,
    texts: &[&str],
    grant: &Grant,
) -> Result<Vec<Reservation>, Denied> {
    change_board(store, "p", now(), |tx| {
        let now = tx.now;
        let taken = tx
            .board
            .reserve(agent, &patterns(texts), grant, now)
            .map_err(Denied::Held)?;
        tx.record(record(agent, "reserve", 0));
        Ok(taken)
    })
}

/// What a board holds of scopes and reservations: each task's touches (from its head and
/// from the task whole) and every reservation.
fn scopes(board: &Board) -> String {
    let mut said = Vec::new();
    for head in board.heads() {
        let task = board.task(head.id).unwrap().unwrap();
        assert_eq!(
            head.touches, task.touches,
            "the head reads what the task holds"
        );
        said.push(format!("{}: {:?}", head.id, head.touches));
    }
    said.push(serde_json::to_string(board.reservations()).unwrap());
    said.join("\n")
}

fn reservations_and_touches_survive_a_change_and_a_re_read(hub: &Hub) {
    let store = hub.store();
    let resident = hub.store().resident();
    let first = send_touching(&*store, "codex", &["src/date/**", "port:3000"]);
    let second = send_touching(
        &*store,
        "gemini",
        &["src/date/parse.rs", "docs/\"quoted\" é"],
    );
    claim(&*store, "codex", first).unwrap();
    let taken = reserve(
        &*resident,
        "gemini",
        &["docs/", "db:migrations"],
        &by_hand(false, Some("a \"quoted\" reason")),
    )
    .unwrap();
    let board = hub.store().board("p").unwrap();
    let reservations = board.reservations();
    assert_eq!(reservations.len(), 4, "{reservations:?}");
    for (reservation, pattern) in reservations.iter().zip(["src/date/**", "port:3000"]) {
        assert_eq!(
            (reservation.pattern.as_str(), reservation.task),
            (pattern, Some(first)),
            "the claim's"
        );
        assert!(reservation.exclusive && reservation.expires_at.is_none());
    }
    assert_eq!(reservations[2..], taken[..], "as taken");
    assert_eq!(
        board.head(second).unwrap().touches,
        ["src/date/parse.rs", "docs/\"quoted\" é"]
    );
    let held = board.held_by(board.head(second).unwrap(), now()).unwrap();
    assert_eq!(held.holding(), format!("src/date/** by codex ({first})"));
    // Alike through every store on the state: a command's, another resident one's, and
    // the resident one that made the last change (which keeps the board it wrote).
    let seen = scopes(&board);
    assert_eq!(scopes(&resident.board("p").unwrap()), seen);
    assert_eq!(scopes(&hub.store().resident().board("p").unwrap()), seen);
    // A later change of something else keeps them, whichever store makes it.
    let third = send_touching(&*resident, "claude", &["README.md"]);
    send_touching(&*store, "claude", &[]);
    let board = hub.store().board("p").unwrap();
    assert_eq!(board.reservations(), reservations);
    assert_eq!(board.head(third).unwrap().touches, ["README.md"]);
    assert_eq!(scopes(&resident.board("p").unwrap()), scopes(&board));
    // The end of the work ends its reservations, and the next reader sees them gone.
    let done = Action::new(ActionKind::Done, "done".into());
    act(&*resident, "codex", first, done).unwrap();
    for board in [hub.store().board("p").unwrap(), store.board("p").unwrap()] {
        assert_eq!(board.reservations(), taken);
        assert!(board.held_by(board.head(second).unwrap(), now()).is_none());
    }
}

fn a_change_that_gives_up_leaves_the_reservations_as_they_were(hub: &Hub) {
    let store = hub.store();
    let resident = hub.store().resident();
    let first = send_touching(&*store, "codex", &["src/**"]);
    let second = send_touching(&*store, "gemini", &["docs/"]);
    claim(&*store, "codex", first).unwrap();
    reserve(&*store, "claude", &["port:3000"], &by_hand(true, None)).unwrap();
    let before = scopes(&store.board("p").unwrap());
    for through in [&store, &resident] {
        let refused: Result<(), Denied> = change_board(&**through, "p", now(), |tx| {
            let now = tx.now;
            tx.board
                .reserve("gemini", &patterns(&["db:x"]), &by_hand(true, None), now)
                .map_err(Denied::Held)?;
            tx.board.unreserve("claude", None);
            let claim = Action::from(ActionKind::Claim);
            tx.board
                .apply(second, &claim, "gemini", None, lease(), now)
                .unwrap()
                .unwrap()
                .unwrap();
            tx.board
                .modify(second, |task| task.touches = vec!["elsewhere/".into()])
                .unwrap();
            tx.record(record("gemini", "claim", second.0));
            Err(Denied::Claim("given up".into()))
        });
        assert!(matches!(refused, Err(Denied::Claim(_))), "{refused:?}");
        assert_eq!(scopes(&hub.store().board("p").unwrap()), before);
        assert_eq!(scopes(&through.board("p").unwrap()), before);
    }
    // A change committed after a refused one in a resident store's batch starts from the
    // board the refused one was undone to.
    let answers = at_once(2, |n| {
        change_board(&*resident, "p", now(), |tx| {
            tx.board.next_id += 1;
            if n == 0 {
                tx.board.unreserve("codex", None);
                return Err(Denied::Claim("given up".into()));
            }
            tx.touch();
            Ok(())
        })
    });
    assert!(matches!(answers[0], Err(Denied::Claim(_))), "{answers:?}");
    assert!(answers[1].is_ok(), "{answers:?}");
    assert_eq!(scopes(&hub.store().board("p").unwrap()), before);
    assert_eq!(scopes(&resident.board("p").unwrap()), before);
}

fn the_board_before_brings_back_its_reservations(hub: &Hub) {
    let store = hub.store();
    let resident = hub.store().resident();
    let first = send_touching(&*store, "codex", &["src/a/**"]);
    claim(&*store, "codex", first).unwrap();
    reserve(&*store, "gemini", &["docs/"], &by_hand(false, None)).unwrap();
    let both = store.board("p").unwrap().reservations().to_vec();
    assert_eq!(both.len(), 2);
    // The claim's reservation ends with its release.
    act(&*store, "codex", first, Action::from(ActionKind::Release)).unwrap();
    assert_eq!(resident.board("p").unwrap().reservations(), &both[1..]);
    let previous = store.previous_board("p").unwrap().unwrap();
    assert_eq!(
        previous.reservations(),
        both,
        "the board before the release"
    );
    assert_eq!(previous.head(first).unwrap().touches, ["src/a/**"]);
    resident
        .restore_board("p", false, &mut |restoring| {
            let previous = restoring.previous.unwrap().unwrap();
            assert_eq!(previous.reservations(), both);
            Ok((previous, vec![record("doctor", "restore", 0)]))
        })
        .unwrap();
    for board in [
        resident.board("p").unwrap(),
        hub.store().board("p").unwrap(),
        store
            .snapshot("p")
            .unwrap()
            .unwrap()
            .board
            .unwrap()
            .unwrap(),
    ] {
        assert_eq!(board.reservations(), both, "brought back");
        assert_eq!(board.head(first).unwrap().status, Status::Working);
    }
    // The board replaced is the one before now, with its own.
    let previous = store.previous_board("p").unwrap().unwrap();
    assert_eq!(previous.reservations(), &both[1..]);
}

/// Checks the reservations on `board`: no two live exclusive ones of different agents
/// overlap, and each of `paths` is held by exactly one agent; that agent, for each.
fn one_holder_each(board: &Board, paths: &[String], now: Timestamp) -> Vec<String> {
    let live: Vec<&Reservation> = board.live_reservations(now).collect();
    for (n, one) in live.iter().enumerate() {
        for other in &live[n + 1..] {
            assert!(
                one.agent == other.agent
                    || !(one.exclusive && other.exclusive)
                    || !one.parsed().overlaps(&other.parsed()),
                "{} and {} overlap",
                one.holding(),
                other.holding()
            );
        }
    }
    paths
        .iter()
        .map(|path| {
            let path = Pattern::parse(path).unwrap();
            let mut holders: Vec<&str> = live
                .iter()
                .filter(|reservation| reservation.parsed().overlaps(&path))
                .map(|reservation| reservation.agent.as_str())
                .collect();
            holders.sort();
            holders.dedup();
            assert_eq!(holders.len(), 1, "{}: {holders:?}", path.as_str());
            holders[0].to_string()
        })
        .collect()
}

/// Twenty agents in four groups (`n % 4`): each asks, at once, for its group's directory
/// and a file of its own.
fn of_twenty_agents_reserving_overlapping_patterns_through_two_stores_one_holds_each_path(
    hub: &Hub,
) {
    let stores = [hub.store(), hub.store().resident()];
    let answers = at_once(20, |n| {
        let own = format!("notes/agent{n}.md");
        let group = format!("src/part{}/**", n % 4);
        let texts = [group.as_str(), own.as_str()];
        reserve(
            &*stores[n % 2],
            &format!("agent{n}"),
            &texts,
            &by_hand(true, None),
        )
    });
    let board = hub.store().board("p").unwrap();
    let paths: Vec<String> = (0..4)
        .map(|group| format!("src/part{group}/lib.rs"))
        .collect();
    let holders = one_holder_each(&board, &paths, now());
    for (n, answer) in answers.iter().enumerate() {
        let agent = format!("agent{n}");
        let holder = &holders[n % 4];
        let held: Vec<&Reservation> = board
            .reservations()
            .iter()
            .filter(|reservation| reservation.agent == agent)
            .collect();
        match answer {
            Ok(taken) if *holder == agent => {
                assert_eq!(taken.len(), 2);
                assert_eq!(held.len(), 2, "all it asked for: {held:?}");
            }
            Err(Denied::Held(conflicts)) if *holder != agent => {
                assert!(held.is_empty(), "nothing of what it asked: {held:?}");
                let named: Vec<&str> = conflicts.0.iter().map(|(_, r)| r.agent.as_str()).collect();
                assert_eq!(named, [holder.as_str()], "{conflicts}");
                assert!(conflicts.to_string().contains(&format!("by {holder}")));
            }
            other => panic!("{agent} (the holder is {holder}): {other:?}"),
        }
    }
    let winners: Vec<&Result<Vec<Reservation>, Denied>> =
        answers.iter().filter(|answer| answer.is_ok()).collect();
    assert_eq!(winners.len(), 4, "one a group: {answers:?}");
    assert_eq!(board.reservations().len(), 8);
    let logged = hub.store().log("p", None, None).unwrap();
    assert_eq!(logged.len(), 4, "one record a reservation granted");
}

/// Twenty tasks in four groups of overlapping scopes, each claimed at once by its own
/// assignee.
fn of_twenty_claims_of_overlapping_scopes_through_two_stores_one_holds_each_path(hub: &Hub) {
    let stores = [hub.store(), hub.store().resident()];
    let ids: Vec<TaskId> = (0..20)
        .map(|n| {
            let group = match n % 4 {
                0 => "src/part0/".to_string(),
                group => format!("src/part{group}/*.rs"),
            };
            let own = format!("port:{}", 3000 + n);
            send_touching(&*stores[0], &format!("agent{n}"), &[&group, &own])
        })
        .collect();
    let answers = at_once(20, |n| claim(&*stores[n % 2], &format!("agent{n}"), ids[n]));
    let board = stores[1].board("p").unwrap();
    let paths: Vec<String> = (0..4)
        .map(|group| format!("src/part{group}/lib.rs"))
        .collect();
    let holders = one_holder_each(&board, &paths, now());
    for (n, answer) in answers.iter().enumerate() {
        let agent = format!("agent{n}");
        let holder = &holders[n % 4];
        let head = board.head(ids[n]).unwrap();
        let held: Vec<&Reservation> = board
            .reservations()
            .iter()
            .filter(|reservation| reservation.task == Some(ids[n]))
            .collect();
        match answer {
            Ok(()) if *holder == agent => {
                assert_eq!(head.status, Status::Working);
                assert!(held.iter().all(|reservation| reservation.agent == agent));
                assert_eq!(held.len(), 2, "its whole scope: {held:?}");
            }
            Err(Denied::Claim(refused)) if *holder != agent => {
                assert_eq!(head.status, Status::Pending);
                assert!(held.is_empty(), "nothing reserved: {held:?}");
                let holding = board.held_by(head, now()).expect("held");
                assert_eq!(&holding.agent, holder);
                let task = holding.task.unwrap();
                assert!(
                    refused.contains(&format!("by {holder} ({task})")),
                    "{refused}"
                );
            }
            other => panic!("{agent} (the holder is {holder}): {other:?}"),
        }
    }
    assert_eq!(answers.iter().filter(|answer| answer.is_ok()).count(), 4);
    let claims = hub
        .store()
        .log("p", None, None)
        .unwrap()
        .iter()
        .filter(|record| record.action == "claim")
        .count();
    assert_eq!(claims, 4, "one claim logged a group");
}
