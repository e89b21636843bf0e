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
        Action::edit(Edits {
            subject: Some("fix the lexer".into()),
            ..Edits::default()
        }),
    ]
}

/// SPEC section 3, row by row: (action name, who may act, from statuses, to status; none
/// where it stays).
const TABLE: &[(&str, &str, &[Status], Option<Status>)] = &[
    (
        "claim",
        "codex",
        &[Pending, ChangesRequested],
        Some(Working),
    ),
    ("release", "codex", &[Working], Some(Pending)),
    (
        "ask",
        "codex",
        &[Pending, Working, ChangesRequested],
        Some(InputRequired),
    ),
    ("answer", "claude", &[InputRequired], Some(Pending)),
    (
        "review",
        "codex",
        &[Pending, Working, ChangesRequested],
        Some(ReviewRequested),
    ),
    ("approve", "claude", &[ReviewRequested], Some(Completed)),
    (
        "request_changes",
        "claude",
        &[ReviewRequested],
        Some(ChangesRequested),
    ),
    (
        "done",
        "codex",
        &[Pending, Working, ChangesRequested],
        Some(Completed),
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
        Some(Failed),
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
        Some(Canceled),
    ),
    (
        "reassign",
        "claude",
        &[Pending, Working, InputRequired, ChangesRequested],
        Some(Pending),
    ),
    (
        "edit",
        "claude",
        &[Pending, InputRequired, ChangesRequested],
        None,
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
                let to = to.unwrap_or(status);
                assert_eq!(next.status, to, "{} from {status}", action.name());
                assert_eq!(event.from_status, status);
                assert_eq!(event.to_status, to);
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

#[test]
fn an_edit_by_the_sender_or_coordinator_keeps_the_status_and_writes_one_entry() {
    let edit = Action::edit(Edits {
        subject: Some("fix the lexer".into()),
        touches: Some(vec!["src/lex/**".into()]),
        ..Edits::default()
    });
    for status in [Pending, InputRequired, ChangesRequested] {
        let mut before = task(status);
        before.thread.push(ThreadEntry {
            at: at(1),
            by: "codex".into(),
            kind: ActionKind::Ask,
            text: "which parser?".into(),
        });
        for actor in ["claude", "lead"] {
            let (next, event) = transition(&before, &edit, actor, rules(Some("lead"))).unwrap();
            assert_eq!(
                (next.status, event.from_status, event.to_status),
                (status, status, status)
            );
            assert_eq!(next.subject, "fix the lexer");
            assert_eq!(next.touches, ["src/lex/**"]);
            // What was there stays; one entry more, with the old values.
            assert_eq!(next.thread.len(), 2);
            assert_eq!(next.thread[0], before.thread[0]);
            let entry = &next.thread[1];
            assert_eq!((entry.kind, entry.by.as_str()), (ActionKind::Edit, actor));
            assert_eq!(
                entry.text,
                "subject was \"fix the parser\"; touches were none"
            );
            assert_eq!(event.text, entry.text);
            assert_eq!(event.action.entry(), "edit");
        }
    }
}

#[test]
fn an_edit_refused_says_so_in_one_line() {
    let edit = Action::edit(Edits {
        priority: Some(crate::board::task::Priority::High),
        ..Edits::default()
    });
    let refusal = |task: &Task, action: &Action, actor: &str| {
        transition(task, action, actor, rules(Some("lead")))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refusal(&task(Working), &edit, "claude"),
        "T-4 is working, assigned to codex: edit needs it pending, input_required or \
         changes_requested"
    );
    assert_eq!(
        refusal(&task(Pending), &edit, "codex"),
        "T-4 is pending, assigned to codex: only claude (the sender) or lead (the \
         coordinator) can edit it"
    );
    assert_eq!(
        refusal(&task(Completed), &edit, "claude"),
        "T-4 is completed, assigned to codex: it is finished, and nothing moves it again"
    );
    let unchanged = Action::edit(Edits {
        subject: Some("fix the parser".into()),
        ..Edits::default()
    });
    assert!(
        refusal(&task(Pending), &unchanged, "claude").ends_with("the edit changes nothing"),
        "{}",
        refusal(&task(Pending), &unchanged, "claude")
    );
    let nothing = Action::edit(Edits::default());
    let error = transition(&task(Pending), &nothing, "claude", rules(None)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "edit needs one of --subject, --body, --files, --touches, --label, --priority, --after \
         or --reviewer to change"
    );
    assert!(
        error
            .words(Face::Tool)
            .starts_with("edit needs one of `subject`, `body`")
    );
    // An edit made as a claim is (without fields) is no edit.
    assert_eq!(
        Action::from(ActionKind::Edit),
        Action::new(ActionKind::Edit, "words".into())
    );
    assert!(
        Action::from(ActionKind::Claim)
            .with_edits(Edits::default())
            .edits()
            .is_none()
    );
}
