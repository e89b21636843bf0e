//! A task's diff (SPEC section 18.4): its changes against its base, committed on its branch
//! (from where the branch left the base branch to its tip) and, when its worktree is on
//! this machine, the uncommitted ones there (tracked changes and untracked files), marked
//! so. Commits after the one its review asked review of are named as not reviewed.
//!
//! Every byte of it is participant text (SPEC section 10): it is carried as it is, and
//! each face escapes it as it shows it. A large diff is cut, and what was left out counted.

use std::fs;
use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::WorktreeError;
use crate::board::task::{TaskId, Worktree};
use crate::git::plumbing;

/// At most this many files are listed; the rest are counted.
pub const MOST_FILES: usize = 300;
/// At most this many bytes of hunks are kept, all files together; the hunks of the files
/// past it are left out, and counted.
pub const MOST_BYTES: usize = 512 * 1024;
/// At most this many commits are listed; the rest are counted.
pub const MOST_COMMITS: usize = 200;
/// The most of `git diff --numstat` read: a line per file, far past [`MOST_FILES`].
const MOST_STAT_BYTES: usize = 16 * 1024 * 1024;
/// How much of a file git looks at to say it is binary, as git does.
const BINARY_SNIFF: usize = 8000;
/// The most of an untracked file read to count its lines: past it the count is of this much.
const MOST_COUNTED: usize = 64 * 1024 * 1024;

/// A task's changes against its base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskDiff {
    pub task: TaskId,
    /// `baton/T-<n>`, as read: `NAME/baton/T-<n>` for a remote's copy of it.
    pub branch: String,
    pub base: String,
    /// Where the branch left the base branch: the changes are counted from here.
    pub from: String,
    /// The branch's tip.
    pub tip: String,
    /// The head commit the last review asked review of, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<String>,
    /// The branch's commits since `from`, oldest first.
    pub commits: Vec<DiffCommit>,
    /// Whether the uncommitted changes are in `files`.
    pub uncommitted: Uncommitted,
    /// The files changed: the committed ones first, then the uncommitted ones.
    pub files: Vec<FileDiff>,
    pub left_out: LeftOut,
    /// Only the stat was asked: no file carries hunks.
    #[serde(default)]
    pub stat_only: bool,
}

/// One commit of a task's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffCommit {
    pub id: String,
    pub subject: String,
    /// Made after the commit its review asked review of (never, before a review).
    #[serde(default)]
    pub not_reviewed: bool,
}

/// Whether a diff holds the worktree's uncommitted changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Uncommitted {
    /// The worktree is on this machine: its uncommitted changes are in the diff.
    Included,
    /// The worktree is on another machine: only what its branch holds is seen from here.
    NotVisible { host: Option<String> },
}

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    /// The path it had, when it was renamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// Changed in the worktree and not committed.
    #[serde(default)]
    pub uncommitted: bool,
    /// A file git does not track yet (uncommitted too).
    #[serde(default)]
    pub untracked: bool,
    /// Binary: named, its content not shown.
    #[serde(default)]
    pub binary: bool,
    pub added: u64,
    pub removed: u64,
    /// Its hunks (`@@ … @@` and the lines), none when binary, when only the stat was asked,
    /// or when they were left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<String>,
    /// Its hunks were left out: the diff was too large.
    #[serde(default)]
    pub cut: bool,
}

/// What a diff left out, past its bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Files changed but not listed.
    pub files: usize,
    /// Files listed whose hunks were left out.
    pub hunks: usize,
    /// Commits not listed.
    pub commits: usize,
}

impl LeftOut {
    pub fn is_empty(&self) -> bool {
        self.files == 0 && self.hunks == 0 && self.commits == 0
    }
}

/// What a diff is asked of.
pub struct Asked<'a> {
    pub task: TaskId,
    pub worktree: &'a Worktree,
    /// The workspace's repository: where the branch is read when the worktree is elsewhere.
    pub workspace: Option<&'a Path>,
    /// The project's remote (`project set --remote`), signed by this machine: the branch is
    /// fetched from it when the worktree is elsewhere.
    pub remote: Option<&'a str>,
    pub stat_only: bool,
}

/// The diff of `asked.task`: read in its worktree when that is on this machine, else from
/// the workspace's repository (its remote's copy of the branch, with a remote).
pub fn diff(asked: &Asked<'_>) -> Result<TaskDiff, WorktreeError> {
    let tree = asked.worktree;
    let here = super::is_here(tree);
    let (repo, branch_ref, branch) = match here {
        true => (
            Path::new(&tree.path).to_path_buf(),
            format!("refs/heads/{}", tree.branch),
            tree.branch.clone(),
        ),
        false => {
            let workspace = asked.workspace.ok_or_else(|| WorktreeError::Elsewhere {
                task: asked.task,
                host: tree.host.clone().unwrap_or_default(),
            })?;
            let repo = super::repository(workspace)?;
            match asked.remote {
                Some(remote) => {
                    let refspec = format!("+refs/heads/{0}:refs/remotes/{remote}/{0}", tree.branch);
                    plumbing::output(
                        &repo,
                        &["fetch", "--quiet", "--no-tags", "--", remote, &refspec],
                    )?;
                    (
                        repo,
                        format!("refs/remotes/{remote}/{}", tree.branch),
                        format!("{remote}/{}", tree.branch),
                    )
                }
                None => (
                    repo,
                    format!("refs/heads/{}", tree.branch),
                    tree.branch.clone(),
                ),
            }
        }
    };
    let tip = plumbing::commit_of(&repo, &branch_ref)?.ok_or_else(|| WorktreeError::NoBranch {
        task: asked.task,
        branch: branch.clone(),
        dir: repo.clone(),
    })?;
    let from = where_it_left(&repo, tree, asked.remote, &tip)?;
    let (commits, commits_left) = commits(&repo, &from, &tip, tree.reviewed.as_deref())?;
    let mut budget = Budget {
        files: MOST_FILES,
        bytes: MOST_BYTES,
        left_out: LeftOut {
            commits: commits_left,
            ..LeftOut::default()
        },
        stat_only: asked.stat_only,
    };
    let mut files = budget.changes(&repo, &[&from, &tip], false)?;
    let uncommitted = match here {
        true => {
            files.extend(budget.changes(&repo, &["HEAD"], true)?);
            files.extend(budget.untracked(&repo)?);
            Uncommitted::Included
        }
        false => Uncommitted::NotVisible {
            host: tree.host.clone(),
        },
    };
    Ok(TaskDiff {
        task: asked.task,
        branch,
        base: tree.base.clone(),
        from,
        tip,
        reviewed: tree.reviewed.clone(),
        commits,
        uncommitted,
        files,
        left_out: budget.left_out,
        stat_only: asked.stat_only,
    })
}

/// Where the branch at `tip` left its base branch: their merge base, the base being the
/// remote's copy when the project has one and it is here; the commit the worktree was
/// made from when the base branch cannot be read.
fn where_it_left(
    repo: &Path,
    tree: &Worktree,
    remote: Option<&str>,
    tip: &str,
) -> Result<String, WorktreeError> {
    let mut bases = Vec::new();
    if let Some(remote) = remote {
        bases.push(format!("refs/remotes/{remote}/{}", tree.base));
    }
    bases.push(format!("refs/heads/{}", tree.base));
    for base in bases {
        if let Some(base) = plumbing::commit_of(repo, &base)?
            && let Some(from) = plumbing::merge_base(repo, &base, tip)?
        {
            return Ok(from);
        }
    }
    match plumbing::commit_of(repo, &tree.base_commit)? {
        Some(made_from) => Ok(plumbing::merge_base(repo, &made_from, tip)?.unwrap_or(made_from)),
        None => Err(WorktreeError::NoBase {
            base: tree.base.clone(),
            dir: repo.to_path_buf(),
        }),
    }
}

/// The commits from `from` to `tip`, oldest first (at most [`MOST_COMMITS`], and how many
/// more), each marked when it came after `reviewed`.
fn commits(
    repo: &Path,
    from: &str,
    tip: &str,
    reviewed: Option<&str>,
) -> Result<(Vec<DiffCommit>, usize), WorktreeError> {
    let range = format!("{from}..{tip}");
    let answer = plumbing::output(
        repo,
        &[
            "log",
            "--no-show-signature",
            "--no-color",
            "--reverse",
            "--topo-order",
            "--format=%H%x00%s",
            "-z",
            &range,
        ],
    )?;
    let text = String::from_utf8_lossy(&answer);
    let fields: Vec<&str> = text
        .split('\0')
        .map(|field| field.trim_start_matches('\n'))
        .collect();
    let mut all = Vec::new();
    for pair in fields.chunks(2) {
        if let [id, subject] = pair
            && !id.is_empty()
        {
            let not_reviewed = match reviewed {
                Some(reviewed) => !plumbing::is_ancestor(repo, id, reviewed).unwrap_or(false),
                None => false,
            };
            all.push(DiffCommit {
                id: id.to_string(),
                subject: subject.to_string(),
                not_reviewed,
            });
        }
    }
    let more = all.len().saturating_sub(MOST_COMMITS);
    all.truncate(MOST_COMMITS);
    Ok((all, more))
}

/// What is left of a diff's bounds as its files are read.
struct Budget {
    files: usize,
    bytes: usize,
    left_out: LeftOut,
    stat_only: bool,
}

impl Budget {
    /// The files `git diff REVS` changes in `repo` (two commits, or `HEAD` against the
    /// working tree and index), with their hunks while the bytes last.
    fn changes(
        &mut self,
        repo: &Path,
        revs: &[&str],
        uncommitted: bool,
    ) -> Result<Vec<FileDiff>, WorktreeError> {
        let mut args = vec!["--numstat", "-z"];
        args.extend(revs);
        args.push("--");
        let (stat, _) = plumbing::diff(repo, &args, MOST_STAT_BYTES)?;
        let mut files = numstat(&stat, uncommitted);
        let listed = files.len();
        if files.len() > self.files {
            self.left_out.files += files.len() - self.files;
            files.truncate(self.files);
        }
        self.files -= files.len();
        if self.stat_only || files.is_empty() {
            return Ok(files);
        }
        let mut args = vec!["--patch"];
        args.extend(revs);
        args.push("--");
        let (patch, cut) = plumbing::diff(repo, &args, self.bytes.saturating_add(64 * 1024))?;
        let mut patches = split_patch(&patch);
        if cut {
            // The last piece read may be part of a file's hunks only.
            patches.pop();
        } else if patches.len() != listed {
            // Pieces that do not match the files one for one (a path in conflict, which
            // git writes without a header of its own) are not given to the wrong file.
            patches.clear();
        }
        for (file, patch) in files.iter_mut().zip(
            patches
                .into_iter()
                .map(Some)
                .chain(std::iter::repeat_with(|| None)),
        ) {
            let hunks = patch.and_then(hunks_of);
            self.take(file, hunks);
        }
        Ok(files)
    }

    /// Gives `file` its `hunks` if the bytes left hold them; else marks them left out.
    fn take(&mut self, file: &mut FileDiff, hunks: Option<String>) {
        if file.binary {
            return;
        }
        match hunks {
            Some(hunks) if hunks.len() <= self.bytes => {
                self.bytes -= hunks.len();
                file.hunks = Some(hunks);
            }
            Some(_) => {
                self.bytes = 0;
                file.cut = true;
                self.left_out.hunks += 1;
            }
            None if file.added + file.removed > 0 => {
                file.cut = true;
                self.left_out.hunks += 1;
            }
            None => {}
        }
    }

    /// The files of the worktree `repo` git does not track (and does not ignore), each
    /// read as a file added.
    fn untracked(&mut self, repo: &Path) -> Result<Vec<FileDiff>, WorktreeError> {
        let listed = plumbing::output(
            repo,
            &[
                "ls-files",
                "--others",
                "--exclude-standard",
                "-z",
                "--full-name",
            ],
        )?;
        let root = super::repository(repo)?;
        let names: Vec<String> = listed
            .split(|byte| *byte == 0)
            .filter(|name| !name.is_empty())
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect();
        let mut files = Vec::new();
        for name in names {
            if self.files == 0 {
                self.left_out.files += 1;
                continue;
            }
            self.files -= 1;
            let (content, binary, lines) = read_new(&root.join(&name), self.bytes);
            let mut file = FileDiff {
                path: name,
                renamed_from: None,
                uncommitted: true,
                untracked: true,
                binary,
                added: lines,
                removed: 0,
                hunks: None,
                cut: false,
            };
            if !self.stat_only {
                let hunks = content.map(|content| added_hunk(&content, lines));
                self.take(&mut file, hunks);
            }
            files.push(file);
        }
        Ok(files)
    }
}

/// A new file's first bytes (at most `limit`, none when it holds more or is not a regular
/// file), whether it is binary, and its lines (of its first [`MOST_COUNTED`] bytes).
fn read_new(path: &Path, limit: usize) -> (Option<Vec<u8>>, bool, u64) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return (None, false, 0);
    };
    if meta.file_type().is_symlink() {
        let target = fs::read_link(path)
            .map(|target| target.to_string_lossy().into_owned().into_bytes())
            .unwrap_or_default();
        return (Some(target), false, 1);
    }
    let Some(mut file) = fs::File::open(path).ok().filter(|_| meta.is_file()) else {
        return (None, false, 0);
    };
    let mut kept = Vec::new();
    let mut lines = 0u64;
    let mut last = b'\n';
    let mut buffer = vec![0u8; 64 * 1024];
    let mut seen = 0usize;
    let mut binary = false;
    while seen < MOST_COUNTED {
        let read = match file.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let chunk = &buffer[..read];
        if seen < BINARY_SNIFF {
            let sniff = &chunk[..chunk.len().min(BINARY_SNIFF - seen)];
            binary |= sniff.contains(&0);
        }
        seen += read;
        lines += chunk.iter().filter(|byte| **byte == b'\n').count() as u64;
        last = chunk[read - 1];
        if kept.len() <= limit {
            kept.extend_from_slice(&chunk[..read.min(limit + 1 - kept.len())]);
        }
    }
    if seen > 0 && last != b'\n' {
        lines += 1;
    }
    if binary {
        return (None, true, 0);
    }
    match kept.len() > limit {
        true => (None, false, lines),
        false => (Some(kept), false, lines),
    }
}

/// The hunk of a new file's `content` of `lines` lines, as git writes it.
fn added_hunk(content: &[u8], lines: u64) -> String {
    if content.is_empty() {
        return String::new();
    }
    let text = String::from_utf8_lossy(content);
    let mut hunk = match lines {
        1 => "@@ -0,0 +1 @@\n".to_string(),
        _ => format!("@@ -0,0 +1,{lines} @@\n"),
    };
    for line in text.split_inclusive('\n') {
        hunk.push('+');
        hunk.push_str(line);
    }
    if !text.ends_with('\n') {
        hunk.push_str("\n\\ No newline at end of file\n");
    }
    hunk
}

/// Reads `git diff --numstat -z`: `ADDED\tREMOVED\tPATH\0`, or for a rename
/// `ADDED\tREMOVED\t\0FROM\0TO\0`; `-` for both counts of a binary file.
fn numstat(output: &[u8], uncommitted: bool) -> Vec<FileDiff> {
    let mut fields = output.split(|byte| *byte == 0);
    let mut files = Vec::new();
    while let Some(field) = fields.next() {
        let field = String::from_utf8_lossy(field);
        let mut parts = field.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (path, renamed_from) = match path.is_empty() {
            true => {
                let from = fields
                    .next()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                let to = fields
                    .next()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                (to.into_owned(), Some(from.into_owned()))
            }
            false => (path.to_string(), None),
        };
        let binary = added == "-" && removed == "-";
        files.push(FileDiff {
            path,
            renamed_from,
            uncommitted,
            untracked: false,
            binary,
            added: added.parse().unwrap_or(0),
            removed: removed.parse().unwrap_or(0),
            hunks: None,
            cut: false,
        });
    }
    files
}

/// `git diff --patch`'s output, one piece per file (each from its `diff --git` line), in
/// the order `--numstat` lists them.
fn split_patch(patch: &[u8]) -> Vec<&[u8]> {
    const HEADER: &[u8] = b"diff --git ";
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in patch.split_inclusive(|byte| *byte == b'\n') {
        if line.starts_with(HEADER) {
            starts.push(at);
        }
        at += line.len();
    }
    starts
        .iter()
        .enumerate()
        .map(|(index, start)| {
            let end = starts.get(index + 1).copied().unwrap_or(patch.len());
            &patch[*start..end]
        })
        .collect()
}

/// The hunks of one file's piece of a patch: from its first `@@` line on. None when it has
/// none (a file's mode changed, an empty file added).
fn hunks_of(piece: &[u8]) -> Option<String> {
    let mut at = 0;
    for line in piece.split_inclusive(|byte| *byte == b'\n') {
        if line.starts_with(b"@@ ") {
            return Some(String::from_utf8_lossy(&piece[at..]).into_owned());
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_reads_plain_renamed_and_binary_files() {
        let output = b"3\t1\tsrc/a.rs\x00-\t-\tlogo.png\x000\t0\t\x00old name\x00new\tname\x00";
        let files = numstat(output, false);
        let names: Vec<_> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(names, ["src/a.rs", "logo.png", "new\tname"]);
        assert_eq!((files[0].added, files[0].removed), (3, 1));
        assert!(files[1].binary && !files[0].binary);
        assert_eq!(files[2].renamed_from.as_deref(), Some("old name"));
    }

    #[test]
    fn a_patch_splits_per_file_and_keeps_the_hunks() {
        let patch = b"diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+diff --git b\ndiff --git a/y b/y\nold mode 100644\nnew mode 100755\n";
        let pieces = split_patch(patch);
        assert_eq!(
            pieces.len(),
            2,
            "a hunk line starts with +, never with diff"
        );
        assert_eq!(
            hunks_of(pieces[0]).as_deref(),
            Some("@@ -1 +1 @@\n-a\n+diff --git b\n")
        );
        assert_eq!(hunks_of(pieces[1]), None);
    }

    #[test]
    fn a_new_file_is_one_hunk_of_added_lines() {
        assert_eq!(added_hunk(b"a\nb\n", 2), "@@ -0,0 +1,2 @@\n+a\n+b\n");
        assert_eq!(
            added_hunk(b"a", 1),
            "@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn hunks_past_the_bound_are_left_out_and_counted() {
        let mut budget = Budget {
            files: 10,
            bytes: 5,
            left_out: LeftOut::default(),
            stat_only: false,
        };
        let mut file = numstat(b"1\t0\ta\x00", false).remove(0);
        budget.take(&mut file, Some("@@ -0,0 +1 @@\n+a\n".into()));
        assert!(file.cut && file.hunks.is_none());
        assert_eq!(budget.left_out.hunks, 1);
    }
}
