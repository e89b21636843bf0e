//! What a review names of the work beyond its task's scope (SPEC section 18.3): the paths
//! changed in the workspace, when it is a git repository, that nothing the task touches
//! covers. Git is asked here; the model only matches the patterns.

use super::Session;
use crate::board::action::ActionKind;
use crate::board::scope::{self, Pattern};
use crate::board::task::TaskId;
use crate::board::transition::Action;
use std::path::Path;

use crate::git::{self, plumbing};
use crate::text::{self, inline};
use crate::worktree;

/// The most paths a review names outside its scope; the rest are counted.
const MOST_NAMED: usize = 50;

impl Session {
    /// `action` as recorded: a review of a task that says what it touches gets a line naming
    /// the changed paths outside that (`outside its scope: src/lib.rs`) after its note. Any
    /// other action, a task with no scope, a workspace that is not a repository, or a `git`
    /// that fails: `action` as it was.
    pub(super) fn noting_outside_scope(&self, id: TaskId, action: Action) -> Action {
        if action.kind() != ActionKind::Review {
            return action;
        }
        let Some((mut line, count)) = self.outside_scope(id) else {
            return action;
        };
        let note = action.text().trim_end();
        // A note near the cap on long text leaves the paths counted rather than named.
        if note.len() + 1 + line.len() > text::LONG_TEXT_LIMIT {
            line = format!("outside its scope: {count} changed paths");
        }
        let text = match note.is_empty() {
            true => line,
            false => format!("{note}\n{line}"),
        };
        Action::new(ActionKind::Review, text)
    }

    /// The line naming what changed outside the scope of task `id`, and how many paths it
    /// names or counts, if anything did.
    fn outside_scope(&self, id: TaskId) -> Option<(String, usize)> {
        let board = self.board().ok()?;
        let touches = &board.head(id)?.touches;
        if touches.is_empty() {
            return None;
        }
        // The scope was checked when it was given; one that no longer reads covers nothing.
        let scope: Vec<Pattern> = touches
            .iter()
            .filter_map(|pattern| Pattern::parse(pattern).ok())
            .collect();
        let task = board.task(id).ok()??;
        let changed = match task.worktree.as_ref() {
            // A task in a worktree of its own: what its branch changed since it left the
            // base (a review is refused while anything is uncommitted there).
            Some(tree) if worktree::is_here(tree) => {
                let path = Path::new(&tree.path);
                let base = format!("refs/heads/{}", tree.base);
                let since = plumbing::merge_base(path, &base, "HEAD")
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| tree.base_commit.clone());
                plumbing::paths_between(path, &since, "HEAD").ok()?
            }
            Some(_) => return None,
            None => {
                let workspace = self.project.workspace.as_deref()?.canonicalize().ok()?;
                let root = git::toplevel(&workspace)?;
                let root = root.canonicalize().unwrap_or(root);
                git::rebase(git::changed(&workspace)?, &root, &workspace)
            }
        };
        let outside = scope::uncovered(&scope, &changed);
        (!outside.is_empty()).then(|| (outside_words(&outside), outside.len()))
    }
}

/// `outside its scope: a, b`, at most [`MOST_NAMED`] named, then how many more.
fn outside_words(outside: &[&str]) -> String {
    let named: Vec<String> = outside
        .iter()
        .take(MOST_NAMED)
        .map(|path| inline(path).to_string())
        .collect();
    let more = match outside.len().saturating_sub(MOST_NAMED) {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    format!("outside its scope: {}{more}", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_fifty_paths_are_named() {
        let paths: Vec<String> = (0..53).map(|n| format!("f{n}")).collect();
        let outside: Vec<&str> = paths.iter().map(String::as_str).collect();
        let words = outside_words(&outside);
        assert!(words.starts_with("outside its scope: f0, f1, "), "{words}");
        assert!(words.ends_with("f49 and 3 more"), "{words}");
        assert_eq!(
            outside_words(&["src/lib.rs"]),
            "outside its scope: src/lib.rs"
        );
    }
}
