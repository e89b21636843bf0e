//! A line diff of one file's change, for `baton setup --dry-run`.

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    /// The first changed line of a hunk is at this line number (1-based) of the new text.
    Hunk(usize),
    Removed(String),
    Added(String),
}

/// Above this many lines between the common start and end, the middle is shown as removed
/// and added whole rather than matched line by line.
const MAX_MATCHED_LINES: usize = 2_000;

/// The lines removed from `before` and added in `after`, in hunks.
pub fn diff_lines(before: &str, after: &str) -> Vec<DiffLine> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let prefix = old
        .iter()
        .zip(&new)
        .take_while(|(left, right)| left == right)
        .count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(left, right)| left == right)
        .count();
    let old_middle = &old[prefix..old.len() - suffix];
    let new_middle = &new[prefix..new.len() - suffix];
    let steps = if old_middle.len() <= MAX_MATCHED_LINES && new_middle.len() <= MAX_MATCHED_LINES {
        matched_steps(old_middle, new_middle)
    } else {
        let mut steps = vec![Step::Remove; old_middle.len()];
        steps.extend(vec![Step::Add; new_middle.len()]);
        steps
    };

    let mut lines = Vec::new();
    let (mut old_index, mut new_index) = (0, 0);
    let mut in_hunk = false;
    for step in steps {
        match step {
            Step::Keep => {
                old_index += 1;
                new_index += 1;
                in_hunk = false;
            }
            Step::Remove | Step::Add => {
                if !in_hunk {
                    lines.push(DiffLine::Hunk(prefix + new_index + 1));
                    in_hunk = true;
                }
                if step == Step::Remove {
                    lines.push(DiffLine::Removed(old_middle[old_index].to_string()));
                    old_index += 1;
                } else {
                    lines.push(DiffLine::Added(new_middle[new_index].to_string()));
                    new_index += 1;
                }
            }
        }
    }
    lines
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Keep,
    Remove,
    Add,
}

/// The steps of a longest-common-subsequence alignment of two short line lists.
fn matched_steps(old: &[&str], new: &[&str]) -> Vec<Step> {
    // common[i][j] = length of the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut steps = Vec::with_capacity(old.len() + new.len());
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            steps.push(Step::Keep);
            i += 1;
            j += 1;
        } else if j < new.len() && (i == old.len() || common[i][j + 1] > common[i + 1][j]) {
            steps.push(Step::Add);
            j += 1;
        } else {
            steps.push(Step::Remove);
            i += 1;
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_only_what_changed_in_separate_hunks() {
        let before = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n";
        let after = "{\n  \"a\": 1,\n  \"x\": 0,\n  \"b\": 2,\n  \"c\": 4\n}\n";
        assert_eq!(
            diff_lines(before, after),
            vec![
                DiffLine::Hunk(3),
                DiffLine::Added("  \"x\": 0,".into()),
                DiffLine::Hunk(5),
                DiffLine::Removed("  \"c\": 3".into()),
                DiffLine::Added("  \"c\": 4".into()),
            ]
        );
        assert!(diff_lines(before, before).is_empty());
        assert_eq!(
            diff_lines("", "one\n"),
            vec![DiffLine::Hunk(1), DiffLine::Added("one".into())]
        );
    }
}
