//! A new task as `send` puts it on the board (SPEC section 3): what the sender asked for,
//! made into a pending [`Task`]. Pure: the id, the assignee and the time are handed in.

use serde::{Deserialize, Serialize};

use super::reservation::ReserveError;
use super::routing::NobodyHasSkill;
use super::scope::{MOST_PATTERNS, Pattern, ScopeError};
use super::task::{Priority, Status, Task, TaskId};
use crate::text::{self, Face, LineField, Refused};
use crate::time::Timestamp;

/// Checks what a participant wrote for a task before it is stored (SPEC section 10): the
/// subject, each file name and the skill one line each, the body within the size limit.
/// For `send` and for a task `import` carries over alike.
pub fn check_words(
    subject: &str,
    body: &str,
    files: &[String],
    skill: Option<&str>,
) -> Result<(), Refused> {
    text::check_line(LineField::Subject, subject)?;
    text::check_long("body", body)?;
    for file in files {
        text::check_line(LineField::FileName, file)?;
    }
    if let Some(skill) = skill {
        text::check_line(LineField::Skill, skill)?;
    }
    Ok(())
}

/// Reads what a task touches (SPEC section 18.1): at most [`MOST_PATTERNS`], each a
/// one-line field (section 10) and a pattern that stays in the workspace. The count is
/// checked first, so ten thousand patterns cost no more than sixty-five.
pub fn check_touches(touches: &[String]) -> Result<Vec<Pattern>, ReserveError> {
    if touches.len() > MOST_PATTERNS {
        return Err(ScopeError::TooMany(touches.len()).into());
    }
    for pattern in touches {
        text::check_line(LineField::Pattern, pattern)?;
    }
    Ok(Pattern::parse_all(touches.iter().map(String::as_str))?)
}

/// Why `send` refused a task: the words are the model's, each argument spelled as the face
/// that tells it spells it ([`Face`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendRefusal {
    /// The subject is empty, or only spaces.
    NoSubject,
    /// A file name in `files` is empty (`--files a,,b`).
    EmptyFileName,
    /// Neither an assignee nor a skill to route by.
    NoAssignee,
    /// A task in `after` ended without completing: the new one could never start.
    AfterEnded { task: TaskId, status: Status },
    /// Routing by skill found nobody but the sender.
    NobodyHasSkill(NobodyHasSkill),
}

impl SendRefusal {
    /// The refusal as `face` tells it.
    pub fn words(&self, face: Face) -> String {
        match self {
            SendRefusal::NoSubject => {
                format!("send needs {} with some words", face.argument("subject"))
            }
            SendRefusal::EmptyFileName => {
                format!("{} holds an empty file name", face.argument("files"))
            }
            SendRefusal::NoAssignee => format!(
                "send needs {} or {}",
                face.argument_with("to", "NAME"),
                face.argument_with("skill", "TAG")
            ),
            SendRefusal::AfterEnded { task, status } => format!(
                "{task} is {status}: a task sent {} it could never start",
                face.argument("after")
            ),
            SendRefusal::NobodyHasSkill(refused) => {
                let offered = if refused.offered.is_empty() {
                    "none yet".to_string()
                } else {
                    refused.offered.join(", ")
                };
                format!(
                    "no agent but you has the skill `{}`; skills on offer: {offered}",
                    refused.skill
                )
            }
        }
    }

    /// How to get past it, as `face` names the arguments and commands.
    pub fn hint(&self, face: Face) -> Option<String> {
        Some(match (self, face) {
            (SendRefusal::NoSubject, _) => return None,
            (SendRefusal::EmptyFileName, Face::Cli) => {
                "separate file names with single commas: --files src/a.rs,src/b.rs".to_string()
            }
            (SendRefusal::EmptyFileName, Face::Tool) => {
                "leave the empty names out of `files`".to_string()
            }
            (SendRefusal::NoAssignee, Face::Cli) => {
                "`baton agents` lists who is here and what they are good at".to_string()
            }
            (SendRefusal::NoAssignee, Face::Tool) => {
                "the `agents` tool lists who is here and what they are good at".to_string()
            }
            (SendRefusal::AfterEnded { task, .. }, face) => format!(
                "send it without {task} in {}, or after a task that can still complete",
                face.argument("after")
            ),
            (SendRefusal::NobodyHasSkill(_), face) => format!(
                "give an agent a skill with `baton agent add NAME --skills a,b`, or send with {}",
                face.argument_with("to", "NAME")
            ),
        })
    }
}

impl std::fmt::Display for SendRefusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.words(Face::Cli))
    }
}

impl std::error::Error for SendRefusal {}

/// What `send` needs: `send`'s options, and the body of `POST …/tasks`
/// (the API's `SendBody`), where everything but the subject may be left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewTask {
    #[serde(default)]
    pub to: Option<String>,
    #[serde(default)]
    pub skill: Option<String>,
    pub subject: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub priority: Priority,
    #[serde(default)]
    pub after: Vec<TaskId>,
    #[serde(default)]
    pub review: bool,
    #[serde(default)]
    pub reviewer: Option<String>,
    /// What the task will change (SPEC section 18.1).
    #[serde(default)]
    pub touches: Vec<String>,
    /// Its labels (SPEC section 19), as given: checked and folded by
    /// [`super::search::check_labels`] before it is sent.
    #[serde(default)]
    pub labels: Vec<String>,
}

impl NewTask {
    /// The same task with an empty `to`, `skill` or `reviewer` read as none given: a form
    /// or a tool call sends empty fields where a command line leaves out the flag.
    pub fn without_empty_names(self) -> NewTask {
        let given = |name: Option<String>| name.filter(|name| !name.is_empty());
        NewTask {
            to: given(self.to),
            skill: given(self.skill),
            reviewer: given(self.reviewer),
            ..self
        }
    }

    /// The pending task `sender` sends to `to` as `id` at `now`, tagged with `skill` (the
    /// skill it was routed by, or the one it was sent with). A reviewer implies review, and
    /// the sender naming itself reviewer is the same as naming nobody: it reviews by default.
    pub fn into_task(
        self,
        id: TaskId,
        sender: &str,
        to: &str,
        skill: Option<String>,
        now: Timestamp,
    ) -> Task {
        Task {
            id,
            subject: self.subject.trim().to_string(),
            body: self.body.trim().to_string(),
            files: self.files,
            from: sender.to_string(),
            to: to.to_string(),
            review: self.review || self.reviewer.is_some(),
            reviewer: self.reviewer.filter(|reviewer| reviewer != sender),
            status: Status::Pending,
            priority: self.priority,
            after: self.after,
            skill,
            created_at: now,
            updated_at: now,
            claimed_at: None,
            lease_expires_at: None,
            result: None,
            thread: Vec::new(),
            delivery: None,
            imported: None,
            touches: self.touches,
            worktree: None,
            landed: None,
            labels: self.labels,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_task_is_pending_trimmed_and_reviewed_when_a_reviewer_is_named() {
        let now: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        // (review asked, reviewer named, the task's review flag and reviewer)
        let cases: &[(bool, Option<&str>, bool, Option<&str>)] = &[
            (false, None, false, None),
            (true, None, true, None),
            (false, Some("gemini"), true, Some("gemini")),
            // The sender reviews by default, so naming itself names nobody.
            (false, Some("claude"), true, None),
        ];
        for (review, reviewer, reviewed, kept) in cases {
            let new = NewTask {
                subject: "  fix the parser \n".into(),
                body: "\n it fails on `\\u` \n".into(),
                files: vec!["src/scan.rs".into()],
                priority: Priority::High,
                after: vec![TaskId(2)],
                review: *review,
                reviewer: reviewer.map(str::to_string),
                ..NewTask::default()
            };
            let task = new.into_task(TaskId(7), "claude", "codex", Some("rust".into()), now);
            assert_eq!(
                (task.review, task.reviewer.as_deref()),
                (*reviewed, *kept),
                "review {review}, reviewer {reviewer:?}"
            );
            assert_eq!((task.id, task.status), (TaskId(7), Status::Pending));
            assert_eq!((task.from.as_str(), task.to.as_str()), ("claude", "codex"));
            assert_eq!(task.subject, "fix the parser");
            assert_eq!(task.body, "it fails on `\\u`");
            assert_eq!(task.files, ["src/scan.rs"]);
            assert_eq!(
                (task.priority, task.after.as_slice()),
                (Priority::High, &[TaskId(2)][..])
            );
            assert_eq!(task.skill.as_deref(), Some("rust"));
            assert_eq!((task.created_at, task.updated_at), (now, now));
            assert!(task.claimed_at.is_none() && task.lease_expires_at.is_none());
            assert!(task.result.is_none() && task.thread.is_empty());
        }
    }
}
