//! A unified line diff of one file's change, for `baton setup --dry-run`, made by the
//! `similar` crate (Myers' algorithm: memory grows with the files, not with their product).

use similar::{ChangeTag, TextDiff};

/// How many unchanged lines are shown around each change, as `diff -u` shows them.
const CONTEXT_LINES: usize = 3;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// A hunk starts: where its lines are in the old and the new text, as `diff -u` writes
    /// it (`@@ -3,4 +3,5 @@`).
    Hunk(String),
    /// An unchanged line shown around a change.
    Context(String),
    Removed(String),
    Added(String),
}

/// The lines removed from `before` and added in `after`, in hunks with a few unchanged
/// lines around them; nothing when the texts are the same.
pub fn diff_lines(before: &str, after: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(before, after);
    let mut lines = Vec::new();
    for hunk in diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .iter_hunks()
    {
        lines.push(DiffLine::Hunk(hunk.header().to_string()));
        for change in hunk.iter_changes() {
            // A line keeps its line break in `similar`; the printed diff adds its own.
            let text = change.value().trim_end_matches(['\n', '\r']).to_string();
            lines.push(match change.tag() {
                ChangeTag::Equal => DiffLine::Context(text),
                ChangeTag::Delete => DiffLine::Removed(text),
                ChangeTag::Insert => DiffLine::Added(text),
            });
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(text: &str) -> DiffLine {
        DiffLine::Context(text.into())
    }

    #[test]
    fn shows_what_changed_with_the_lines_around_it() {
        let before = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n";
        let after = "{\n  \"a\": 1,\n  \"x\": 0,\n  \"b\": 2,\n  \"c\": 4\n}\n";
        assert_eq!(
            diff_lines(before, after),
            vec![
                DiffLine::Hunk("@@ -1,5 +1,6 @@".into()),
                context("{"),
                context("  \"a\": 1,"),
                DiffLine::Added("  \"x\": 0,".into()),
                context("  \"b\": 2,"),
                DiffLine::Removed("  \"c\": 3".into()),
                DiffLine::Added("  \"c\": 4".into()),
                context("}"),
            ]
        );
        assert!(diff_lines(before, before).is_empty());
        assert_eq!(
            diff_lines("", "one\n"),
            vec![
                DiffLine::Hunk("@@ -0,0 +1 @@".into()),
                DiffLine::Added("one".into())
            ]
        );
    }

    #[test]
    fn changes_far_apart_are_separate_hunks_with_their_own_context() {
        let before: String = (1..=20).map(|number| format!("line {number}\n")).collect();
        let after = before
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "line eighteen\n");
        let lines = diff_lines(&before, &after);
        let hunks: Vec<_> = lines
            .iter()
            .filter_map(|line| match line {
                DiffLine::Hunk(header) => Some(header.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(hunks, ["@@ -1,5 +1,5 @@", "@@ -15,6 +15,6 @@"]);
        assert!(lines.contains(&context("line 5")));
        assert!(!lines.contains(&context("line 10")), "far from any change");
    }

    #[test]
    fn large_files_are_diffed_without_a_table_of_every_pair_of_lines() {
        let before: String = (0..20_000).map(|number| format!("{number}\n")).collect();
        let after = before.replace("\n10000\n", "\nten thousand\n");
        let lines = diff_lines(&before, &after);
        assert!(lines.contains(&DiffLine::Removed("10000".into())));
        assert!(lines.contains(&DiffLine::Added("ten thousand".into())));
        assert_eq!(lines.len(), 1 + 3 + 2 + 3);
    }
}
