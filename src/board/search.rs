//! Labels and the search of a board (SPEC section 19): a task's labels as they are checked
//! on the way in, and [`Search`], what `board --label L --search TEXT` asks, decided once
//! here for every face and both stores. Pure.
//!
//! Case is folded character by character ([`fold`]), so that a piece of a task's words and
//! the same piece inside the JSON text of the task fold alike: what lets a store look for
//! the words in its stored text first ([`Search::may_match_stored`]) and decode only the
//! tasks that may hold them, then ask [`Search::matches`] of each.

use std::collections::HashSet;

use memchr::memmem;

use super::task::Task;
use crate::names::{self, NameKind};
use crate::text::{self, LineField, Refused, RefusedHint};

/// The most labels a task may have.
pub const MOST_LABELS: usize = 16;

/// What to do with labels refused.
const LABELS_HINT: &str = "labels are short names such as `bug` or `ui` (a-z 0-9 . _ -), \
                           comma-separated; an empty list clears them";

/// The labels given for a task, as it keeps them: each trimmed, the empty ones left out and
/// the repeated ones kept once, in the order first given. Refused, before anything is
/// written: a label that is not a name (SPEC section 1), and more than [`MOST_LABELS`].
pub fn check_labels(given: &[String]) -> Result<Vec<String>, Refused> {
    let labels = fold_labels(given);
    if labels.len() > MOST_LABELS {
        return Err(Refused {
            message: format!(
                "a task has at most {MOST_LABELS} labels; {} were given",
                labels.len()
            ),
            hint: RefusedHint::Said(LABELS_HINT),
        });
    }
    for label in &labels {
        check_label(label)?;
    }
    Ok(labels)
}

/// The labels given, each trimmed, the empty ones left out and the repeated ones kept once,
/// in the order first given: what a task keeps of labels [`check_labels`] took.
pub fn fold_labels(given: &[String]) -> Vec<String> {
    let mut seen = HashSet::new();
    given
        .iter()
        .map(|label| label.trim())
        .filter(|label| !label.is_empty() && seen.insert(*label))
        .map(str::to_string)
        .collect()
}

/// Refuses a label that is not a name, quoting (a piece of) it on one line.
fn check_label(label: &str) -> Result<(), Refused> {
    names::check(NameKind::Agent, label).map_err(|_| Refused {
        message: format!(
            "invalid label `{}`: use 1-64 of a-z 0-9 . _ -, starting with a letter or digit",
            text::excerpt(label, 64)
        ),
        hint: RefusedHint::Said(LABELS_HINT),
    })
}

/// `text` with its case folded, character by character: what a search compares.
pub fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut folded = String::with_capacity(text.len());
    for c in text.chars() {
        folded.extend(c.to_lowercase());
    }
    folded
}

/// The characters outside ASCII whose folded form holds an ASCII letter: the Kelvin sign
/// (`k`) and the capital I with a dot (`i` and a combining dot). A stored text holding one
/// of them (as UTF-8) is folded whole before it is looked through for ASCII words.
const FOLDING_INTO_ASCII: [&[u8]; 2] = ["\u{212A}".as_bytes(), "\u{130}".as_bytes()];

/// What `board` looks for (SPEC section 19): tasks with a label, and tasks whose subject,
/// body or any entry of their thread holds a text, case aside. Nothing asked: every task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Search {
    label: Option<String>,
    text: Option<String>,
    /// The text, folded.
    needle: Option<String>,
}

impl Search {
    /// The search for `label` and `text` (each `None` or empty for none), refused when the
    /// label is not a name or the text is not one line of at most 1,000 characters.
    pub fn new(label: Option<&str>, text: Option<&str>) -> Result<Search, Refused> {
        let label = label.map(str::trim).filter(|label| !label.is_empty());
        if let Some(label) = label {
            check_label(label)?;
        }
        let text = text.filter(|text| !text.trim().is_empty());
        if let Some(text) = text {
            text::check_line(LineField::Search, text)?;
        }
        Ok(Search {
            label: label.map(str::to_string),
            text: text.map(str::to_string),
            needle: text.map(fold),
        })
    }

    /// The label asked for.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    /// The text asked for, as given.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The text asked for, folded ([`fold`]): what a store's index of folded words is
    /// asked for.
    pub fn folded_text(&self) -> Option<&str> {
        self.needle.as_deref()
    }

    /// Whether nothing is asked: every task matches.
    pub fn is_empty(&self) -> bool {
        self.label.is_none() && self.needle.is_none()
    }

    /// Whether `task` is one asked for.
    pub fn matches(&self, task: &Task) -> bool {
        let labelled = self
            .label
            .as_ref()
            .is_none_or(|label| task.labels.contains(label));
        labelled
            && self
                .needle
                .as_deref()
                .is_none_or(|needle| searched_words(task).any(|words| fold(words).contains(needle)))
    }

    /// Whether the task stored as the JSON text `stored` (as a store wrote it: one task,
    /// any layout) may be one asked for: false only when it cannot be, so that a store
    /// decodes and asks [`Search::matches`] of the rest. Cheap: no JSON is parsed.
    /// `scratch` is room to fold the text in, kept between calls.
    pub fn may_match_stored(&self, stored: &[u8], scratch: &mut Vec<u8>) -> bool {
        if let Some(label) = &self.label {
            // A label is a name: nothing in it is escaped, so it stands quoted in the text.
            let quoted = format!("\"{label}\"");
            if memmem::find(stored, quoted.as_bytes()).is_none() {
                return false;
            }
        }
        let Some(needle) = &self.needle else {
            return true;
        };
        // JSON escapes `"`, `\` and control characters (a search holds none of the last),
        // and may escape any character as `\u…` or `/` as `\/`: words written so are only
        // found decoded.
        if needle.contains(['"', '\\'])
            || memmem::find(stored, b"\\u").is_some()
            || memmem::find(stored, b"\\/").is_some()
        {
            return true;
        }
        let is_ascii_fold = needle.is_ascii()
            && !FOLDING_INTO_ASCII
                .iter()
                .any(|special| memmem::find(stored, special).is_some());
        scratch.clear();
        if is_ascii_fold {
            // Only ASCII letters fold into an ASCII needle: fold them alone, in place.
            scratch.extend_from_slice(stored);
            scratch.make_ascii_lowercase();
        } else {
            scratch.extend_from_slice(fold(&String::from_utf8_lossy(stored)).as_bytes());
        }
        memmem::find(scratch, needle.as_bytes()).is_some()
    }
}

/// The words of `task` a search looks through, folded, one part to a line: what a store
/// keeps beside the task for an index to find words in. A search's text is one line, so it
/// is in this text exactly where some part of the task holds it.
pub fn folded_words(task: &Task) -> String {
    let words: Vec<&str> = searched_words(task).collect();
    fold(&words.join("\n"))
}

/// The words of `task` a search looks through: its subject, its body and each entry of its
/// thread.
fn searched_words(task: &Task) -> impl Iterator<Item = &str> {
    [task.subject.as_str(), task.body.as_str()]
        .into_iter()
        .chain(task.thread.iter().map(|entry| entry.text.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::action::ActionKind;
    use crate::board::task::{Status, ThreadEntry};
    use crate::time::Timestamp;

    fn task() -> Task {
        let at: Timestamp = "2026-11-29T12:00:00Z".parse().unwrap();
        let mut task = Task::example(Status::Completed, at);
        task.subject = "Fix the Parser".into();
        task.body = "It fails on \"quoted\" text\nand on C:\\path".into();
        task.labels = vec!["bug".into(), "ui".into()];
        task.thread.push(ThreadEntry {
            at,
            by: "codex".into(),
            kind: ActionKind::Ask,
            text: "Which ÉDITION of the spec? Straße".into(),
        });
        task
    }

    fn search(label: Option<&str>, text: Option<&str>) -> Search {
        Search::new(label, text).unwrap()
    }

    /// Each case: the label and text asked, and whether the task above matches. Its stored
    /// text may match wherever the task does (never the other way round).
    #[test]
    fn a_search_matches_labels_and_words_case_aside_and_the_stored_text_never_misses() {
        let cases: &[(Option<&str>, Option<&str>, bool)] = &[
            (None, None, true),
            (Some("bug"), None, true),
            (Some("ui"), None, true),
            (Some("bu"), None, false),
            (Some("docs"), None, false),
            (None, Some("parser"), true),
            (None, Some("FIX THE"), true),
            (None, Some("\"quoted\""), true),
            (None, Some("c:\\PATH"), true),
            (None, Some("édition"), true),
            (None, Some("straße"), true),
            (None, Some("which édition"), true),
            (None, Some("lexer"), false),
            // Field names and other fields of the stored task are not its words.
            (None, Some("subject"), false),
            (None, Some("codex"), false),
            (Some("bug"), Some("spec"), true),
            (Some("docs"), Some("spec"), false),
            (Some("bug"), Some("lexer"), false),
            // Empty is nothing asked.
            (Some(" "), Some(""), true),
        ];
        let task = task();
        let compact = serde_json::to_vec(&task).unwrap();
        let pretty = serde_json::to_vec_pretty(&task).unwrap();
        let mut scratch = Vec::new();
        for (label, text, expected) in cases {
            let asked = search(*label, *text);
            assert_eq!(asked.matches(&task), *expected, "{label:?} {text:?}");
            for stored in [&compact, &pretty] {
                if *expected {
                    assert!(
                        asked.may_match_stored(stored, &mut scratch),
                        "{label:?} {text:?}: the stored text must not rule out a match"
                    );
                }
            }
        }
        // What cannot match is ruled out without decoding.
        assert!(!search(None, Some("lexer")).may_match_stored(&compact, &mut scratch));
        assert!(!search(Some("docs"), None).may_match_stored(&compact, &mut scratch));
    }

    #[test]
    fn words_escaped_in_the_stored_text_are_not_ruled_out() {
        let mut task = task();
        task.body = "an \u{1b} escape, then hidden words".into();
        let stored = serde_json::to_vec(&task).unwrap();
        assert!(String::from_utf8_lossy(&stored).contains("\\u001b"));
        let mut scratch = Vec::new();
        let hidden = search(None, Some("HIDDEN words"));
        assert!(hidden.matches(&task) && hidden.may_match_stored(&stored, &mut scratch));
        // Written by hand with `\u` escapes for plain letters: decoded, it matches.
        let by_hand = br#"{"id":4,"subject":"\u0046ix it","labels":[]}"#;
        assert!(search(None, Some("fix")).may_match_stored(by_hand, &mut scratch));
        // The Kelvin sign folds into `k`.
        let kelvin = "{\"subject\":\"5 \u{212A}\"}";
        assert!(search(None, Some("5 k")).may_match_stored(kelvin.as_bytes(), &mut scratch));
    }

    /// The stored text is folded for ASCII words as ASCII alone, but for these: checked
    /// against every character there is.
    #[test]
    fn only_the_listed_characters_fold_into_ascii() {
        let folding: Vec<char> = (0x80..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| c.to_lowercase().any(|lower| lower.is_ascii()))
            .collect();
        let listed: Vec<char> = FOLDING_INTO_ASCII
            .iter()
            .map(|bytes| std::str::from_utf8(bytes).unwrap().chars().next().unwrap())
            .collect();
        assert_eq!(folding, listed.into_iter().rev().collect::<Vec<_>>());
    }

    #[test]
    fn labels_are_trimmed_folded_and_bounded() {
        let given = |labels: &[&str]| -> Vec<String> {
            labels.iter().map(|label| label.to_string()).collect()
        };
        assert_eq!(
            check_labels(&given(&["bug", " ui", "bug", "", "v1.2"])).unwrap(),
            ["bug", "ui", "v1.2"]
        );
        assert!(check_labels(&[]).unwrap().is_empty());
        let sixteen: Vec<String> = (0..16).map(|n| format!("l{n}")).collect();
        assert_eq!(check_labels(&sixteen).unwrap().len(), 16);
        let many: Vec<String> = (0..10_000).map(|n| format!("l{n}")).collect();
        let refused = check_labels(&many).unwrap_err();
        assert_eq!(
            refused.message,
            "a task has at most 16 labels; 10000 were given"
        );
        for bad in ["Bug", "a b", "-x", "bug\u{1b}[2J", "é", &"x".repeat(65)] {
            let refused = check_labels(&given(&["ok", bad])).unwrap_err();
            assert!(
                refused.message.starts_with("invalid label `"),
                "{bad:?}: {}",
                refused.message
            );
            assert!(!refused.message.contains('\u{1b}'), "{}", refused.message);
            assert!(refused.message.len() < 200, "{}", refused.message);
        }
    }

    #[test]
    fn a_search_refuses_what_cannot_be_asked() {
        assert!(Search::new(Some("Bug"), None).is_err());
        let long = "a".repeat(1_000_000);
        let refused = Search::new(None, Some(&long)).unwrap_err();
        assert!(refused.message.contains("1,000"), "{}", refused.message);
        assert!(refused.message.len() < 200);
        assert!(Search::new(None, Some("two\nlines")).is_err());
        assert!(Search::new(None, Some(&"é".repeat(1000))).is_ok());
        assert!(Search::default().is_empty());
    }
}
