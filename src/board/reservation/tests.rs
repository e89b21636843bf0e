use super::*;
use crate::board::action::ActionKind;
use crate::board::inbox::Turn;
use crate::board::task::Task;
use crate::board::transition::Action;

fn at(minute: i64) -> Timestamp {
    let start: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
    start.plus(Duration::minutes(minute))
}

fn patterns(texts: &[&str]) -> Vec<Pattern> {
    texts
        .iter()
        .map(|text| Pattern::parse(text).unwrap())
        .collect()
}

fn by_hand(minutes: i64, exclusive: bool) -> Grant {
    Grant {
        task: None,
        lasts: Some(Duration::minutes(minutes)),
        exclusive,
        reason: None,
    }
}

/// A pending task `id` for `to`, touching `touches`.
fn task(id: u64, to: &str, touches: &[&str]) -> Task {
    let mut task = Task::example(Status::Pending, at(0));
    task.id = TaskId(id);
    task.to = to.to_string();
    task.touches = touches.iter().map(|text| text.to_string()).collect();
    task
}

#[test]
fn a_reservation_is_all_or_nothing_and_names_every_holder() {
    let mut board = Board::new("api");
    board
        .reserve(
            "codex",
            &patterns(&["src/date/**"]),
            &by_hand(30, true),
            at(0),
        )
        .unwrap();
    board
        .reserve(
            "gemini",
            &patterns(&["port:3000"]),
            &by_hand(30, false),
            at(0),
        )
        .unwrap();
    let refused = board
        .reserve(
            "claude",
            &patterns(&["docs/", "src/date/parse.rs", "port:3000"]),
            &by_hand(30, true),
            at(1),
        )
        .unwrap_err();
    let holders: Vec<&str> = refused.0.iter().map(|(_, r)| r.agent.as_str()).collect();
    assert_eq!(holders, ["codex", "gemini"]);
    assert_eq!(
        refused.to_string(),
        "src/date/parse.rs is held: src/date/** by codex; port:3000 is held: port:3000 by gemini"
    );
    assert_eq!(board.reservations().len(), 2, "nothing taken: {board:?}");
    // Shared beside shared is allowed; shared beside exclusive is not.
    board
        .reserve(
            "claude",
            &patterns(&["port:3000"]),
            &by_hand(30, false),
            at(1),
        )
        .unwrap();
    assert!(
        board
            .reserve(
                "claude",
                &patterns(&["src/date/"]),
                &by_hand(30, false),
                at(1)
            )
            .is_err()
    );
    // Asking again for one's own pattern renews it, with no second reservation.
    let renewed = board
        .reserve(
            "codex",
            &patterns(&["src/date/**"]),
            &by_hand(60, true),
            at(5),
        )
        .unwrap();
    assert_eq!(renewed[0].expires_at, Some(at(65)));
    assert_eq!(board.reservations().len(), 3);
}

#[test]
fn an_expired_reservation_holds_nothing_and_the_next_change_drops_it() {
    let mut board = Board::new("api");
    board
        .reserve("codex", &patterns(&["src/"]), &by_hand(10, true), at(0))
        .unwrap();
    assert_eq!(
        board
            .holders(&Pattern::parse("src/a.rs").unwrap(), "claude", false, at(9))
            .len(),
        1
    );
    assert!(
        board
            .holders(
                &Pattern::parse("src/a.rs").unwrap(),
                "claude",
                false,
                at(10)
            )
            .is_empty()
    );
    assert_eq!(board.next_stall_after(at(0)), Some(at(10)));
    board
        .reserve(
            "claude",
            &patterns(&["src/a.rs"]),
            &by_hand(10, true),
            at(11),
        )
        .unwrap();
    assert_eq!(board.reservations().len(), 1, "the expired one went");
}

#[test]
fn reservations_by_hand_are_renewed_like_leases_and_never_past_what_was_given() {
    let lease = Duration::minutes(30);
    let mut board = Board::new("api");
    board
        .reserve("codex", &patterns(&["a"]), &by_hand(60, true), at(0))
        .unwrap();
    board
        .reserve("codex", &patterns(&["b"]), &by_hand(10, true), at(0))
        .unwrap();
    assert!(crate::board::lease::has_due_leases(
        &board,
        "codex",
        at(1),
        lease
    ));
    assert!(!crate::board::lease::has_due_leases(
        &board,
        "gemini",
        at(1),
        lease
    ));
    assert!(board.renew_reservations("codex", at(1), lease));
    let until: Vec<_> = board.reservations().iter().map(|r| r.expires_at).collect();
    // `a` has 59 of 30 minutes left: not due; `b` renewed by the ten it was given.
    assert_eq!(until, [Some(at(60)), Some(at(11))]);
}

#[test]
fn a_claim_reserves_the_scope_holds_overlapping_work_and_its_end_hands_it_over() {
    let lease = Duration::minutes(30);
    let mut board = Board::new("api");
    board.push(task(1, "codex", &["src/date/**"]));
    board.push(task(2, "gemini", &["src/date/parse.rs", "docs/"]));
    board.push(task(3, "gemini", &["src/other/"]));
    let turn_of =
        |board: &Board, id: u64, now| match board.turn(board.head(TaskId(id)).unwrap(), now) {
            Turn::Of { agent, .. } => format!("inbox of {agent}"),
            Turn::Held(holder) => format!("held: {}", holder.holding()),
            other => format!("{other:?}"),
        };
    assert_eq!(turn_of(&board, 2, at(1)), "inbox of gemini");
    let claim = Action::from(ActionKind::Claim);
    board
        .apply(TaskId(1), &claim, "codex", None, lease, at(1))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(board.reservations().len(), 1);
    assert_eq!(board.reservations()[0].task, Some(TaskId(1)));
    assert_eq!(
        turn_of(&board, 2, at(2)),
        "held: src/date/** by codex (T-1)"
    );
    assert_eq!(turn_of(&board, 3, at(2)), "inbox of gemini");
    assert!(
        board
            .inbox("gemini", at(2))
            .iter()
            .all(|item| item.task.id != TaskId(2))
    );
    // Its claim is refused, naming the holder and the task.
    let refused = board
        .apply(TaskId(2), &claim, "gemini", None, lease, at(2))
        .unwrap()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "T-2 is pending, assigned to gemini: it is held: src/date/** by codex (T-1); it will be back in the inbox when that ends"
    );
    // Asking keeps the reservation; finishing ends it.
    board
        .apply(
            TaskId(1),
            &Action::new(ActionKind::Ask, "which?".into()),
            "codex",
            None,
            lease,
            at(3),
        )
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        turn_of(&board, 2, at(3)),
        "held: src/date/** by codex (T-1)"
    );
    board
        .apply(
            TaskId(1),
            &Action::new(ActionKind::Answer, "this".into()),
            "claude",
            None,
            lease,
            at(4),
        )
        .unwrap()
        .unwrap()
        .unwrap();
    board
        .apply(
            TaskId(1),
            &Action::new(ActionKind::Done, "ok".into()),
            "codex",
            None,
            lease,
            at(5),
        )
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(board.reservations().is_empty());
    assert_eq!(turn_of(&board, 2, at(5)), "inbox of gemini");
    board
        .apply(TaskId(2), &claim, "gemini", None, lease, at(6))
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(board.reservations().len(), 2);
    // A release ends them too.
    board
        .apply(
            TaskId(2),
            &Action::from(ActionKind::Release),
            "gemini",
            None,
            lease,
            at(7),
        )
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(board.reservations().is_empty());
}

#[test]
fn the_agents_own_reservations_never_hold_its_own_work() {
    let mut board = Board::new("api");
    board.push(task(1, "codex", &["src/"]));
    board
        .reserve(
            "codex",
            &patterns(&["src/lib.rs"]),
            &by_hand(30, true),
            at(0),
        )
        .unwrap();
    assert!(
        board
            .held_by(board.head(TaskId(1)).unwrap(), at(1))
            .is_none()
    );
    assert_eq!(board.inbox("codex", at(1)).len(), 1);
}

#[test]
fn unreserve_ends_the_named_patterns_or_all() {
    let mut board = Board::new("api");
    board
        .reserve(
            "codex",
            &patterns(&["a", "b", "c"]),
            &by_hand(30, true),
            at(0),
        )
        .unwrap();
    let ended = board.unreserve("codex", Some(&["b".to_string()]));
    assert_eq!(ended.len(), 1);
    assert!(board.unreserve("gemini", None).is_empty());
    assert_eq!(board.unreserve("codex", None).len(), 2);
    assert!(board.reservations().is_empty());
}

#[test]
fn a_pattern_edited_in_by_hand_that_does_not_read_holds_the_whole_workspace() {
    let mut board = Board::new("api");
    board.set_reservations(vec![Reservation {
        id: 1,
        pattern: "../etc".into(),
        agent: "codex".into(),
        task: None,
        exclusive: true,
        reason: None,
        created_at: at(0),
        expires_at: None,
    }]);
    board.push(task(2, "gemini", &["README.md"]));
    assert!(
        board
            .held_by(board.head(TaskId(2)).unwrap(), at(1))
            .is_some()
    );
}

#[test]
fn a_reservation_by_hand_lasts_the_lease_by_default_and_at_most_a_week() {
    let lease = Duration::minutes(30);
    assert_eq!(length(None, lease), Ok(lease));
    assert_eq!(
        length(Some(Duration::days(7)), lease),
        Ok(Duration::days(7))
    );
    assert_eq!(
        length(Some(Duration::days(8)), lease),
        Err(ReserveError::TooLong)
    );
    assert_eq!(
        length(Some(Duration::zero()), lease),
        Err(ReserveError::NoTime)
    );
}
