//! What `edit` changes on a task (SPEC section 18.1): the fields its sender or the
//! coordinator may change while nobody works on it, each given or left as it is, and the
//! one thread entry that keeps what each changed field said before, so that nothing a
//! participant wrote is lost. Pure.

use serde::{Deserialize, Serialize};

use super::action::Argument;
use super::task::{Priority, Task, TaskId};
use super::transition::Why;

/// The kind of value a field of an edit takes: how a face reads it and offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValue {
    /// Words: one line (the subject) or an agent's name.
    Words,
    /// Many lines (the body): `-` on the command line reads them from stdin.
    Text,
    /// A list, comma-separated on the command line (`a.rs,b.rs`); empty, it is none.
    List,
    /// Task ids, comma-separated on the command line (`3,T-4`); empty, none.
    Ids,
    /// One of the priorities.
    Priority,
}

/// One field an edit may change: its argument on each face, and the kind of its value.
#[derive(Debug)]
pub struct Field {
    pub argument: Argument,
    pub value: FieldValue,
    /// The command line's flag, where it is not the argument's name (which a tool call, the
    /// HTTP body and the task's JSON share): `--label` for `labels`, as `send` has it.
    pub flag: Option<&'static str>,
}

/// A field, as the table of actions lists it.
const fn field(
    name: &'static str,
    short: Option<char>,
    value_name: &'static str,
    help: &'static str,
    value: FieldValue,
) -> Field {
    Field {
        argument: Argument {
            name,
            short,
            value_name,
            help,
            tool_help: None,
        },
        value,
        flag: None,
    }
}

impl Field {
    /// The flag the command line takes it by: `--body`, `--label`.
    pub const fn flag(&self) -> &'static str {
        match self.flag {
            Some(flag) => flag,
            None => self.argument.name,
        }
    }
}

/// Every field an edit may change, in the order its thread entry names them.
pub const FIELDS: &[Field] = &[
    field(
        "subject",
        Some('s'),
        "SUBJECT",
        "The new subject (one line)",
        FieldValue::Words,
    ),
    field(
        "body",
        Some('b'),
        "BODY",
        "The new details (`-` reads them from stdin)",
        FieldValue::Text,
    ),
    field(
        "files",
        None,
        "a,b",
        "The files concerned, comma-separated (empty: none)",
        FieldValue::List,
    ),
    field(
        "touches",
        None,
        "PATTERNS",
        "What it will change, comma-separated (empty: nothing named)",
        FieldValue::List,
    ),
    Field {
        flag: Some("label"),
        ..field(
            "labels",
            None,
            "a,b",
            "Its labels, comma-separated, replacing its own (empty: none)",
            FieldValue::List,
        )
    },
    field(
        "priority",
        Some('p'),
        "PRIORITY",
        "urgent, high, normal or low",
        FieldValue::Priority,
    ),
    field(
        "after",
        None,
        "IDS",
        "The tasks it waits for, e.g. 3,4 (empty: none)",
        FieldValue::Ids,
    ),
    field(
        "reviewer",
        None,
        "NAME",
        "Who reviews it (so it must be reviewed)",
        FieldValue::Words,
    ),
];

/// What an edit changes: each field given, or `None` to leave it as it is. A list given
/// replaces the task's. The body of `POST …/tasks/{id}/edit` (as `edits`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub touches: Option<Vec<String>>,
    /// Its labels (SPEC section 19): `--label` on the command line, as on `send`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<TaskId>>,
    /// An empty name is none given, as a form sends a field left empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
}

impl Edits {
    /// Whether no field is given.
    pub fn is_empty(&self) -> bool {
        *self == Edits::default()
    }

    /// The reviewer given, an empty name read as none.
    pub fn reviewer(&self) -> Option<&str> {
        self.reviewer.as_deref().filter(|name| !name.is_empty())
    }

    /// Sets the field `name` from `value` as a command line gives it: a list or ids
    /// comma-separated, an empty one none. The refusal names the field or the value.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let list = || match value {
            "" => Vec::new(),
            value => value.split(',').map(str::to_string).collect(),
        };
        match name {
            "subject" => self.subject = Some(value.to_string()),
            "body" => self.body = Some(value.to_string()),
            "files" => self.files = Some(list()),
            "touches" => self.touches = Some(list()),
            "labels" | "label" => self.labels = Some(list()),
            "priority" => self.priority = Some(value.parse()?),
            "after" => {
                let ids: Result<Vec<TaskId>, String> =
                    list().iter().map(|id| id.trim().parse()).collect();
                self.after = Some(ids?);
            }
            "reviewer" => self.reviewer = Some(value.to_string()),
            _ => {
                let names: Vec<&str> = FIELDS.iter().map(|field| field.argument.name).collect();
                return Err(format!(
                    "edit has no field `{}`; its fields: {}",
                    crate::text::inline(name),
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Makes the changes on `task` and says what each changed field was before, for the
    /// thread: `subject was "Fix the parser"; touches were src/a.rs`. A field given as it
    /// already is changes nothing; an edit that changes nothing is refused, as are an empty
    /// subject or file name and a task that would wait on itself.
    pub fn apply(&self, task: &mut Task) -> Result<String, Why> {
        let mut was: Vec<String> = Vec::new();
        if let Some(subject) = &self.subject {
            let subject = subject.trim();
            if subject.is_empty() {
                return Err(Why::EmptySubject);
            }
            if subject != task.subject {
                was.push(format!("subject was \"{}\"", task.subject));
                task.subject = subject.to_string();
            }
        }
        if let Some(body) = &self.body {
            let body = body.trim();
            if body != task.body {
                was.push(match task.body.as_str() {
                    "" => "body was empty".to_string(),
                    old => format!("body was \"{old}\""),
                });
                task.body = body.to_string();
            }
        }
        if let Some(files) = &self.files {
            if files.iter().any(|file| file.trim().is_empty()) {
                return Err(Why::EmptyFileName);
            }
            if *files != task.files {
                was.push(format!("files were {}", listed(&task.files)));
                task.files = files.clone();
            }
        }
        if let Some(touches) = self
            .touches
            .as_ref()
            .filter(|touches| **touches != task.touches)
        {
            was.push(format!("touches were {}", listed(&task.touches)));
            task.touches = touches.clone();
        }
        if let Some(labels) = &self.labels {
            // As the session checked them: each once, the empty ones left out.
            let labels = super::search::fold_labels(labels);
            if labels != task.labels {
                was.push(format!("labels were {}", listed(&task.labels)));
                task.labels = labels;
            }
        }
        if let Some(priority) = self.priority.filter(|priority| *priority != task.priority) {
            was.push(format!("priority was {}", task.priority));
            task.priority = priority;
        }
        if let Some(after) = &self.after {
            if after.contains(&task.id) {
                return Err(Why::WaitsOnItself);
            }
            let mut after = after.clone();
            // Each task once, in the order first given.
            let mut seen = std::collections::HashSet::new();
            after.retain(|id| seen.insert(*id));
            if after != task.after {
                let ids: Vec<String> = task.after.iter().map(TaskId::to_string).collect();
                was.push(format!("after was {}", listed(&ids)));
                task.after = after;
            }
        }
        if let Some(name) = self.reviewer() {
            // As `send` reads it: the sender named is the default reviewer.
            let reviewer = (name != task.from).then(|| name.to_string());
            if !task.review || task.reviewer != reviewer {
                was.push(match task.review {
                    true => format!("reviewer was {}", task.reviewer()),
                    false => "reviewer was none (no review)".to_string(),
                });
                task.review = true;
                task.reviewer = reviewer;
            }
        }
        if was.is_empty() {
            return Err(Why::Unchanged);
        }
        Ok(was.join("; "))
    }
}

/// The items of a list, or `none`.
fn listed(items: &[String]) -> String {
    match items {
        [] => "none".to_string(),
        items => items.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::Status;

    fn task() -> Task {
        let mut task = Task::example(Status::Pending, "2026-11-29T12:00:00Z".parse().unwrap());
        task.subject = "Fix the parser".into();
        task.touches = vec!["src/a.rs".into()];
        task
    }

    #[test]
    fn each_changed_field_is_told_with_its_old_value_and_nothing_else() {
        let mut edited = task();
        let edits = Edits {
            subject: Some(" Fix the lexer ".into()),
            touches: Some(vec!["src/lex/**".into()]),
            // As it is: no change, not told.
            priority: Some(Priority::Normal),
            ..Edits::default()
        };
        let text = edits.apply(&mut edited).unwrap();
        assert_eq!(
            text,
            "subject was \"Fix the parser\"; touches were src/a.rs"
        );
        assert_eq!(edited.subject, "Fix the lexer");
        assert_eq!(edited.touches, ["src/lex/**"]);
        let mut every = task();
        every.body = "line one\nline two".into();
        every.after = vec![TaskId(2)];
        every.labels = vec!["bug".into()];
        let edits = Edits {
            body: Some(String::new()),
            files: Some(vec!["a.rs".into()]),
            touches: Some(Vec::new()),
            labels: Some(vec![
                "ui".into(),
                " docs".into(),
                "ui".into(),
                String::new(),
            ]),
            priority: Some(Priority::Urgent),
            after: Some(vec![TaskId(3), TaskId(3), TaskId(2)]),
            reviewer: Some("gemini".into()),
            ..Edits::default()
        };
        let text = edits.apply(&mut every).unwrap();
        assert_eq!(
            text,
            "body was \"line one\nline two\"; files were none; touches were src/a.rs; \
             labels were bug; priority was normal; after was T-2; reviewer was none (no review)"
        );
        assert_eq!(
            every.labels,
            ["ui", "docs"],
            "each once, trimmed, in order given"
        );
        let cleared = Edits {
            labels: Some(Vec::new()),
            ..Edits::default()
        };
        assert_eq!(cleared.apply(&mut every).unwrap(), "labels were ui, docs");
        assert!(every.labels.is_empty());
        assert_eq!(every.after, [TaskId(3), TaskId(2)]);
        assert!(every.review && every.reviewer.as_deref() == Some("gemini"));
    }

    #[test]
    fn what_cannot_be_is_refused() {
        let cases: &[(Edits, Why)] = &[
            (Edits::default(), Why::Unchanged),
            (
                Edits {
                    subject: Some("Fix the parser".into()),
                    reviewer: Some(String::new()),
                    ..Edits::default()
                },
                Why::Unchanged,
            ),
            (
                Edits {
                    subject: Some("  ".into()),
                    ..Edits::default()
                },
                Why::EmptySubject,
            ),
            (
                Edits {
                    files: Some(vec!["a.rs".into(), String::new()]),
                    ..Edits::default()
                },
                Why::EmptyFileName,
            ),
            (
                Edits {
                    after: Some(vec![TaskId(2), TaskId(4)]),
                    ..Edits::default()
                },
                Why::WaitsOnItself,
            ),
        ];
        for (edits, why) in cases {
            assert_eq!(edits.apply(&mut task()).unwrap_err(), *why, "{edits:?}");
        }
    }

    #[test]
    fn a_command_line_sets_each_field_by_name() {
        let mut edits = Edits::default();
        for (name, value) in [
            ("subject", "s"),
            ("files", "a.rs,b.rs"),
            ("touches", ""),
            ("label", "bug,ui"),
            ("priority", "high"),
            ("after", "3, T-4"),
            ("reviewer", "gemini"),
        ] {
            edits.set(name, value).unwrap();
        }
        assert_eq!(
            edits,
            Edits {
                subject: Some("s".into()),
                body: None,
                files: Some(vec!["a.rs".into(), "b.rs".into()]),
                touches: Some(Vec::new()),
                labels: Some(vec!["bug".into(), "ui".into()]),
                priority: Some(Priority::High),
                after: Some(vec![TaskId(3), TaskId(4)]),
                reviewer: Some("gemini".into()),
            }
        );
        assert!(edits.set("after", "x").is_err());
        assert!(edits.set("priority", "soon").is_err());
        let error = edits.set("status", "done").unwrap_err();
        assert!(error.contains("its fields: subject, body"), "{error}");
        // Every field of the table is one `set` knows.
        for field in FIELDS {
            let value = match field.value {
                FieldValue::Priority => "low",
                FieldValue::Ids => "2",
                _ => "x",
            };
            assert!(Edits::default().set(field.argument.name, value).is_ok());
        }
    }

    #[test]
    fn a_wait_that_would_close_a_circle_is_refused_and_the_board_stays_as_it_was() {
        use crate::board::Board;
        use chrono::Duration;
        let now = "2026-11-29T12:00:00Z".parse().unwrap();
        let mut board = Board::new("api");
        for (id, after) in [(1, vec![]), (2, vec![TaskId(1)]), (3, vec![TaskId(2)])] {
            let mut task = Task::example(Status::Pending, now);
            task.id = TaskId(id);
            task.after = after;
            board.push(task);
        }
        let before = board.clone();
        let edit = |after: Vec<TaskId>| {
            crate::board::transition::Action::edit(Edits {
                after: Some(after),
                ..Edits::default()
            })
        };
        let lease = Duration::minutes(30);
        let refused = board
            .apply(
                TaskId(1),
                &edit(vec![TaskId(3)]),
                "claude",
                None,
                lease,
                now,
            )
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "T-1 is pending, assigned to codex: its waits would close a circle \
             (T-1 → T-3 → T-2 → T-1): none of them could ever start"
        );
        assert!(board == before, "a refused edit changes nothing");
        let event = board
            .apply(
                TaskId(3),
                &edit(vec![TaskId(1)]),
                "claude",
                None,
                lease,
                now,
            )
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(event.text, "after was T-2");
        assert_eq!(board.head(TaskId(3)).unwrap().after, [TaskId(1)]);
    }
}
