//! What a caller may do with a task now: each action of the table judged by the state
//! machine itself, once, for a face to show (the web board's buttons, the terminal board's
//! keys), so that nothing is offered that [`transition`] would refuse and what is refused
//! says why in the words the command line would use.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::action::ActionKind;
use super::task::Task;
use super::transition::{Action, Rules, transition};

/// The actions `actor` may take on a task now, in the order of SPEC section 3's table, and
/// for each other one why not. Words are not judged: an offered `ask` still needs its
/// question.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offers {
    /// By their names in the activity log.
    pub offered: Vec<ActionKind>,
    /// Why each action not offered is refused, as the command line says it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub refused: BTreeMap<ActionKind, String>,
}

impl Offers {
    /// Every action of the table on `task` by `actor`, judged with `rules`: for who acts,
    /// the status, a `--review` and the task's waits.
    pub fn judge(task: &Task, actor: &str, rules: Rules<'_>) -> Offers {
        let mut offers = Offers::default();
        for kind in ActionKind::all() {
            match transition(task, &Action::sample(kind, task), actor, rules) {
                Ok(_) => offers.offered.push(kind),
                Err(refused) => {
                    offers.refused.insert(kind, refused.to_string());
                }
            }
        }
        offers
    }

    /// Whether `kind` is offered.
    pub fn allows(&self, kind: ActionKind) -> bool {
        self.offered.contains(&kind)
    }

    /// Why `kind` is not offered; none if it is.
    pub fn refusal(&self, kind: ActionKind) -> Option<&str> {
        self.refused.get(&kind).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::super::task::Status::{self, *};
    use super::super::transition::tests::{every_action, rules, task};
    use super::*;

    fn offered(task: &Task, actor: &str, rules: Rules<'_>) -> Vec<ActionKind> {
        Offers::judge(task, actor, rules).offered
    }

    #[test]
    fn offered_is_what_the_state_machine_allows_and_nothing_else() {
        let mut sent_for_review = task(Working);
        sent_for_review.review = true;
        let cases: Vec<(Task, &str, Vec<&str>)> = vec![
            (
                task(Pending),
                "codex",
                vec!["claim", "ask", "review", "done", "fail"],
            ),
            (task(Pending), "claude", vec!["cancel", "reassign", "edit"]),
            (task(Pending), "gemini", vec![]),
            (
                task(Working),
                "codex",
                vec!["release", "ask", "review", "done", "fail"],
            ),
            (
                task(InputRequired),
                "claude",
                vec!["answer", "cancel", "reassign", "edit"],
            ),
            (
                task(ReviewRequested),
                "claude",
                vec!["approve", "request_changes", "cancel"],
            ),
            (task(ReviewRequested), "codex", vec!["fail"]),
            (task(Completed), "claude", vec![]),
            (
                sent_for_review,
                "codex",
                vec!["release", "ask", "review", "fail"],
            ),
        ];
        for (task, actor, expected) in cases {
            assert_eq!(
                offered(&task, actor, rules(None)),
                expected,
                "{actor} on a {} task",
                task.status
            );
        }
        assert_eq!(
            offered(&task(Pending), "gemini", rules(Some("gemini"))),
            vec!["cancel", "reassign", "edit"],
            "the coordinator may cancel, reassign and edit"
        );
    }

    #[test]
    fn offered_agrees_with_transition_for_every_action() {
        for status in Status::ALL {
            for actor in ["codex", "claude", "gemini"] {
                let task = task(status);
                let offered = offered(&task, actor, rules(Some("gemini")));
                for action in every_action() {
                    let allowed = transition(&task, &action, actor, rules(Some("gemini"))).is_ok();
                    assert_eq!(
                        offered.contains(&action.kind()),
                        allowed,
                        "{} by {actor} on a {status} task",
                        action.name()
                    );
                }
            }
        }
    }

    #[test]
    fn what_is_refused_says_why_in_the_command_lines_words() {
        let offers = Offers::judge(&task(Pending), "claude", rules(None));
        assert_eq!(
            offers.refusal(ActionKind::Claim),
            Some("T-4 is pending, assigned to codex: only codex can claim it")
        );
        assert_eq!(offers.refusal(ActionKind::Cancel), None);
        assert!(offers.allows(ActionKind::Cancel));
        // Every action is either offered or refused, never both.
        assert_eq!(
            offers.offered.len() + offers.refused.len(),
            ActionKind::all().count()
        );
        let json = serde_json::to_value(&offers).unwrap();
        assert_eq!(
            json["offered"],
            serde_json::json!(["cancel", "reassign", "edit"])
        );
        assert_eq!(
            serde_json::from_value::<Offers>(json).unwrap(),
            offers,
            "read back as written"
        );
    }
}
