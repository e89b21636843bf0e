//! Skill routing (SPEC section 5): which agent `send --skill` gives a task to. Pure: the
//! candidates and the board are handed in, so the choice can be made under the board lock.

use super::Board;
use crate::time::Timestamp;

/// An agent that `send --skill` may choose, as the registry knows it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub name: &'a str,
    /// Its skill tags as given; matched trimmed and without regard to ASCII case.
    pub skills: &'a [String],
    pub last_seen: Timestamp,
}

/// Nobody but the sender has the skill asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NobodyHasSkill {
    pub skill: String,
    /// Every skill the other candidates have, normalized, sorted, once each.
    pub offered: Vec<String>,
}

/// Among the `candidates` with `skill`, never the sender, the one with the fewest open tasks
/// on `board`, then the most recently seen, then by name (so the choice is stable).
pub fn choose_by_skill(
    candidates: &[Candidate<'_>],
    board: &Board,
    skill: &str,
    sender: &str,
) -> Result<String, NobodyHasSkill> {
    let open_count = |name: &str| board.open_heads().filter(|task| &*task.to == name).count();
    let has_skill = |candidate: &Candidate<'_>| {
        candidate
            .skills
            .iter()
            .any(|tag| tag.trim().eq_ignore_ascii_case(skill))
    };
    let chosen = candidates
        .iter()
        .filter(|candidate| candidate.name != sender && has_skill(candidate))
        .min_by(|left, right| {
            open_count(left.name)
                .cmp(&open_count(right.name))
                .then(right.last_seen.cmp(&left.last_seen))
                .then(left.name.cmp(right.name))
        });
    if let Some(candidate) = chosen {
        return Ok(candidate.name.to_string());
    }
    let mut offered: Vec<String> = candidates
        .iter()
        .filter(|candidate| candidate.name != sender)
        .flat_map(|candidate| candidate.skills.iter())
        .map(|tag| tag.trim().to_lowercase())
        .filter(|tag| !tag.is_empty())
        .collect();
    offered.sort();
    offered.dedup();
    Err(NobodyHasSkill {
        skill: skill.to_string(),
        offered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Status, Task, TaskId};

    fn at(minute: i64) -> Timestamp {
        let start: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        start.plus(chrono::Duration::minutes(minute))
    }

    /// A board on which `to` holds one task per name given, in `status`.
    fn board(assigned: &[(&str, Status)]) -> Board {
        let mut board = Board::new("api");
        for (number, (to, status)) in assigned.iter().enumerate() {
            let mut task = Task::example(*status, at(0));
            task.id = TaskId(number as u64 + 1);
            task.to = to.to_string();
            board.push(task);
        }
        board
    }

    #[test]
    fn the_least_busy_then_the_freshest_then_the_first_by_name_never_the_sender() {
        let rust = vec!["Rust ".to_string()];
        let docs = vec!["docs".to_string()];
        let candidates = [
            Candidate {
                name: "lead",
                skills: &rust,
                last_seen: at(9),
            },
            Candidate {
                name: "codex",
                skills: &rust,
                last_seen: at(1),
            },
            Candidate {
                name: "gemini",
                skills: &rust,
                last_seen: at(5),
            },
            Candidate {
                name: "amp",
                skills: &rust,
                last_seen: at(5),
            },
            Candidate {
                name: "writer",
                skills: &docs,
                last_seen: at(9),
            },
        ];
        use Status::*;
        // (the tasks on the board, the skill asked for, who is chosen)
        type Case = (
            &'static [(&'static str, Status)],
            &'static str,
            &'static str,
        );
        let cases: &[Case] = &[
            // Equal load: the most recently seen; equally fresh: first by name.
            (&[], "rust", "amp"),
            (&[("amp", Pending)], "rust", "gemini"),
            (&[("amp", Pending), ("gemini", Working)], "rust", "codex"),
            // Finished tasks are no load.
            (&[("amp", Completed), ("gemini", Canceled)], "rust", "amp"),
            (&[], "docs", "writer"),
            (&[], "DOCS", "writer"),
        ];
        for (assigned, skill, chosen) in cases {
            let found = choose_by_skill(&candidates, &board(assigned), skill, "lead");
            assert_eq!(found.as_deref(), Ok(*chosen), "{assigned:?} {skill}");
        }
    }

    #[test]
    fn with_nobody_to_choose_the_skills_on_offer_are_named() {
        let rust = vec!["Rust".to_string(), " ".to_string()];
        let mine = vec!["go".to_string()];
        let both = vec!["rust".to_string(), "docs".to_string()];
        // (the candidates, what is offered)
        let cases: &[(&[Candidate<'_>], &[&str])] = &[
            (&[], &[]),
            (
                &[Candidate {
                    name: "lead",
                    skills: &mine,
                    last_seen: at(0),
                }],
                &[],
            ),
            (
                &[
                    Candidate {
                        name: "lead",
                        skills: &mine,
                        last_seen: at(0),
                    },
                    Candidate {
                        name: "codex",
                        skills: &rust,
                        last_seen: at(0),
                    },
                    Candidate {
                        name: "gemini",
                        skills: &both,
                        last_seen: at(0),
                    },
                ],
                &["docs", "rust"],
            ),
        ];
        for (candidates, offered) in cases {
            let refused = choose_by_skill(candidates, &board(&[]), "go", "lead");
            assert_eq!(
                refused,
                Err(NobodyHasSkill {
                    skill: "go".into(),
                    offered: offered.iter().map(|tag| tag.to_string()).collect(),
                }),
                "{candidates:?}"
            );
        }
    }
}
