//! `diff ID [--stat]` (SPEC section 18.4): a task's changes against its base, committed on
//! its branch and, where its worktree is on the hub's machine, uncommitted there. Every
//! byte of a diff is participant text (SPEC section 10): paths, subjects and hunks are
//! written through `baton::text`, never raw.

use std::fmt::Write as _;

use clap::Args;

use super::{Context, output};
use baton::board::task::TaskId;
use baton::error::Error;
use baton::text::{self, inline};
use baton::worktree::diff::{FileDiff, TaskDiff, Uncommitted};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  baton diff 3\n  baton diff T-3 --stat\n  baton diff 3 --json")]
pub struct DiffArgs {
    /// The task: 3 or T-3
    #[arg(value_parser = |text: &str| text.parse::<TaskId>())]
    pub id: TaskId,
    /// Only the files changed and their added and removed lines, no hunks
    #[arg(long)]
    pub stat: bool,
}

pub fn run(context: &Context, args: DiffArgs) -> Result<i32, Error> {
    let diff = context.desk().diff(args.id, args.stat)?;
    output::emit(context.global.json, &diff, words);
    Ok(0)
}

/// A commit's id as people read it: its first 12 characters.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The marks after a file's name: `[uncommitted]`, `[untracked]`, `(renamed from …)`.
pub fn marks(file: &FileDiff) -> String {
    let mut marks = String::new();
    if let Some(from) = &file.renamed_from {
        let _ = write!(marks, " (renamed from {})", inline(from));
    }
    if file.untracked {
        marks.push_str(" [untracked]");
    } else if file.uncommitted {
        marks.push_str(" [uncommitted]");
    }
    marks
}

/// What a file's change counts: `+3 -1`, or `binary`.
pub fn counts(file: &FileDiff) -> String {
    match file.binary {
        true => "binary".to_string(),
        false => format!("+{} -{}", file.added, file.removed),
    }
}

/// The lines above the stat: the branch, its commits (those after the review marked),
/// and whether uncommitted changes are in it.
pub fn heading(diff: &TaskDiff) -> Vec<String> {
    let mut lines = vec![format!(
        "{} on {} against {} (from {} to {})",
        diff.task,
        inline(&diff.branch),
        inline(&diff.base),
        short(&diff.from),
        short(&diff.tip)
    )];
    for commit in &diff.commits {
        let mark = match commit.not_reviewed {
            true => "  [not reviewed]",
            false => "",
        };
        lines.push(format!(
            "  {} {}{mark}",
            short(&commit.id),
            inline(&commit.subject)
        ));
    }
    if diff.left_out.commits > 0 {
        lines.push(format!("  … and {} more commits", diff.left_out.commits));
    }
    let not_reviewed: Vec<&str> = diff
        .commits
        .iter()
        .filter(|commit| commit.not_reviewed)
        .map(|commit| short(&commit.id))
        .collect();
    if let (Some(reviewed), false) = (&diff.reviewed, not_reviewed.is_empty()) {
        lines.push(format!(
            "not reviewed: {} (made after the review of {})",
            not_reviewed.join(", "),
            short(reviewed)
        ));
    }
    match &diff.uncommitted {
        Uncommitted::Included => {}
        Uncommitted::NotVisible { host } => lines.push(format!(
            "its worktree is on {}: its uncommitted changes are not visible from here",
            host.as_deref()
                .map_or("another machine".to_string(), |host| inline(host)
                    .to_string())
        )),
    }
    lines
}

/// The stat's last line, with what was left out.
pub fn summary(diff: &TaskDiff) -> Vec<String> {
    let (added, removed) = diff.files.iter().fold((0, 0), |(added, removed), file| {
        (added + file.added, removed + file.removed)
    });
    let mut lines = vec![format!(
        "{} changed, {added} added, {removed} removed",
        baton::plural::count(diff.files.len(), "file")
    )];
    if diff.left_out.files > 0 {
        lines.push(format!(
            "the diff is large: {} more file{} not listed",
            diff.left_out.files,
            baton::plural::s(diff.left_out.files)
        ));
    }
    if diff.left_out.hunks > 0 {
        lines.push(format!(
            "the diff is large: the hunks of {} left out",
            baton::plural::count(diff.left_out.hunks, "file")
        ));
    }
    lines
}

/// `diff`'s human form: heading, stat, then each file's hunks (the terminal board's task
/// view shows it too).
pub(super) fn words(diff: &TaskDiff) -> String {
    let mut out = String::new();
    for line in heading(diff) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    if diff.files.is_empty() {
        out.push_str("no changes\n");
        return out;
    }
    for file in &diff.files {
        let _ = writeln!(
            out,
            " {}{} | {}",
            inline(&file.path),
            marks(file),
            counts(file)
        );
    }
    for line in summary(diff) {
        let _ = writeln!(out, "{line}");
    }
    if diff.stat_only {
        return out;
    }
    for file in &diff.files {
        let _ = writeln!(out, "\n=== {}{}", inline(&file.path), marks(file));
        if file.binary {
            out.push_str("binary file: content not shown\n");
        } else if file.cut {
            out.push_str("hunks left out: the diff is large\n");
        } else if let Some(hunks) = &file.hunks {
            let _ = write!(out, "{}", text::framed(hunks, ""));
        }
    }
    out
}
