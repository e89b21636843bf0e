//! Landing a task's reviewed work on its base branch (SPEC section 18.5), without ever
//! losing a line.
//!
//! One landing at a time per repository (a lock in its git directory). The result is built
//! from commits alone (`merge-tree`, `commit-tree`): no checkout, no index, nobody's files
//! touched. The project's `--verify` runs on it in a scratch worktree, bounded. Then the
//! base branch moves by compare and swap, and only after every checkout of the base branch
//! was found able to follow: a checkout with uncommitted changes in a file the landing
//! touches stops it before anything moves. The checkouts are brought forward as a
//! fast-forward would bring them, their uncommitted changes kept.
//!
//! A journal, written before the branch moves and removed once the task is completed,
//! makes a landing cut short (a crash, a SIGKILL) safe to run again: found on the branch,
//! it is finished rather than made twice; not found there, it never happened.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fs4::FileExt;
use serde::{Deserialize, Serialize};

use super::{WorktreeError, base_tip, io, repository};
use crate::board::task::{TaskId, Worktree};
use crate::git::{self, plumbing};
use crate::process::bounded;
use crate::project::worktrees::{LandMode, Worktrees};

/// What is landed, and where.
pub struct Landing<'a> {
    /// The project's workspace (a directory of the repository).
    pub workspace: &'a Path,
    pub settings: &'a Worktrees,
    pub project: &'a str,
    pub task: TaskId,
    pub subject: &'a str,
    pub worktree: &'a Worktree,
    /// Where the scratch worktree `--verify` runs in is made.
    pub scratch: &'a Path,
    /// Where `--verify`'s output is logged.
    pub logs: &'a Path,
}

/// How a landing ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The base branch holds the work at `commit`. `again`: an earlier landing cut short
    /// had moved it already, and this one finished it.
    Landed {
        commit: String,
        again: bool,
        /// Checkouts of the base branch that could not be brought forward.
        warnings: Vec<String>,
    },
    /// The work does not go onto the tip cleanly: these paths conflict.
    Conflict { paths: Vec<String> },
    /// `--verify` failed (or ran past its bound) on the result: the last lines it wrote.
    VerifyFailed { tail: String, timed_out: bool },
    /// A checkout of the base branch has uncommitted changes in files the landing changes:
    /// nothing moved.
    Unsaved {
        checkout: PathBuf,
        paths: Vec<String>,
    },
}

/// What a landing cut short left behind: the base branch's tip it started from, and the
/// commit it was moving it to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub project: String,
    pub task: TaskId,
    pub from: String,
    pub to: String,
}

/// The last lines of a failed `--verify`'s output put in the thread.
pub const VERIFY_TAIL_LINES: usize = 50;

/// The directory in the repository's git directory where landings keep their lock and
/// journals.
pub fn landing_dir(repo: &Path) -> Result<PathBuf, WorktreeError> {
    Ok(plumbing::common_dir(repo)?.join("baton-landing"))
}

fn journal_path(dir: &Path, task: TaskId) -> PathBuf {
    dir.join(format!("{task}.json"))
}

/// The journals of landings that moved (or were about to move) a base branch and whose
/// task was not completed after.
pub fn journals(repo: &Path) -> Result<Vec<Journal>, WorktreeError> {
    let dir = landing_dir(repo)?;
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        if let Ok(text) = fs::read(&path)
            && let Ok(journal) = serde_json::from_slice::<Journal>(&text)
        {
            found.push(journal);
        }
    }
    found.sort_by_key(|journal| journal.task);
    Ok(found)
}

/// Whether a journal's landing reached the base branch: its commit is on it.
pub fn journal_landed(repo: &Path, settings: &Worktrees, journal: &Journal) -> bool {
    let Ok(tip) = base_tip(repo, settings) else {
        return false;
    };
    plumbing::is_ancestor(repo, &journal.to, &tip).unwrap_or(false)
}

/// Forgets the journal of task `task`'s landing: called once the task is completed (or
/// the landing is known never to have moved anything).
pub fn forget(repo: &Path, task: TaskId) {
    if let Ok(dir) = landing_dir(repo) {
        let _ = fs::remove_file(journal_path(&dir, task));
    }
}

/// Lands `landing`'s work: see the module's account.
pub fn land(landing: &Landing<'_>) -> Result<Outcome, WorktreeError> {
    let repo = repository(landing.workspace)?;
    let dir = landing_dir(&repo)?;
    fs::create_dir_all(&dir).map_err(io(format!("make {}", dir.display())))?;
    let lock = hold_lock(&dir)?;
    let outcome = land_locked(landing, &repo, &dir);
    drop(lock);
    outcome
}

/// Waits for, and holds, the repository's landing lock (released by the system when the
/// process ends, however it ends).
fn hold_lock(dir: &Path) -> Result<File, WorktreeError> {
    let path = dir.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io(format!("open {}", path.display())))?;
    FileExt::lock(&file).map_err(io(format!("lock {}", path.display())))?;
    Ok(file)
}

fn land_locked(landing: &Landing<'_>, repo: &Path, dir: &Path) -> Result<Outcome, WorktreeError> {
    let journal_file = journal_path(dir, landing.task);
    if let Some(journal) = read_journal(&journal_file) {
        if journal_landed(repo, landing.settings, &journal) {
            let warnings =
                bring_checkouts_forward(repo, landing.settings, &journal.from, &journal.to);
            return Ok(Outcome::Landed {
                commit: journal.to,
                again: true,
                warnings,
            });
        }
        // Cut short before the branch moved: it never happened.
        let _ = fs::remove_file(&journal_file);
    }
    let source = source_commit(repo, landing)?;
    // Once from the tip as it is, and once more if it moves meanwhile.
    for _attempt in 0..2 {
        let tip = base_tip(repo, landing.settings)?;
        let result = match build(repo, landing, &tip, &source)? {
            Ok(result) => result,
            Err(paths) => return Ok(Outcome::Conflict { paths }),
        };
        if let Some(verify) = &landing.settings.verify
            && let Some(failed) = verify_on(landing, repo, verify, &result)?
        {
            return Ok(failed);
        }
        // Where the local base branch is: with a remote, its checkouts follow from there,
        // which may be behind the remote's tip the landing went onto.
        let local = format!("refs/heads/{}", landing.settings.base);
        let local = plumbing::commit_of(repo, &local)?.unwrap_or_else(|| tip.clone());
        let changed = plumbing::paths_between(repo, &local, &result)?;
        if let Some(unsaved) = unsaved_checkout(repo, landing.settings, &changed)? {
            return Ok(unsaved);
        }
        let journal = Journal {
            project: landing.project.to_string(),
            task: landing.task,
            from: tip.clone(),
            to: result.clone(),
        };
        write_journal(&journal_file, &journal)?;
        if move_base(repo, landing.settings, &result, &tip)? {
            let warnings = bring_checkouts_forward(repo, landing.settings, &local, &result);
            return Ok(Outcome::Landed {
                commit: result,
                again: false,
                warnings,
            });
        }
        let _ = fs::remove_file(&journal_file);
    }
    Err(WorktreeError::Io {
        what: format!("land {}", landing.task),
        cause: format!(
            "{} moved twice while it was landing; approve it again",
            landing.settings.base
        ),
    })
}

/// The commit whose work lands: the one reviewed, else the branch's tip (fetched from the
/// remote, with one).
fn source_commit(repo: &Path, landing: &Landing<'_>) -> Result<String, WorktreeError> {
    let branch = &landing.worktree.branch;
    let reference = match &landing.settings.remote {
        Some(remote) => {
            let refspec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
            plumbing::output(
                repo,
                &["fetch", "--quiet", "--no-tags", "--", remote, &refspec],
            )?;
            format!("refs/remotes/{remote}/{branch}")
        }
        None => format!("refs/heads/{branch}"),
    };
    let wanted = landing
        .worktree
        .reviewed
        .clone()
        .unwrap_or(reference.clone());
    plumbing::commit_of(repo, &wanted)?.ok_or_else(|| WorktreeError::NoBase {
        base: wanted,
        dir: repo.to_path_buf(),
    })
}

/// The commit that puts `source`'s work on `tip`, as the project lands; the conflicting
/// paths when it does not go on cleanly.
fn build(
    repo: &Path,
    landing: &Landing<'_>,
    tip: &str,
    source: &str,
) -> Result<Result<String, Vec<String>>, WorktreeError> {
    let base = plumbing::merge_base(repo, tip, source)?;
    let trailer = format!("Baton-Task: {}/{}", landing.project, landing.task);
    let subject = one_line(landing.subject);
    let author = plumbing::author_of(repo, source)?;
    match landing.settings.land {
        LandMode::Squash => {
            let merged = plumbing::merge_trees(repo, base.as_deref(), tip, source)?;
            if !merged.conflicts.is_empty() {
                return Ok(Err(merged.conflicts));
            }
            let message = format!("{subject} ({})\n\n{trailer}\n", landing.task);
            let commit = plumbing::commit_tree(repo, &merged.tree, &[tip], &message, &author)?;
            Ok(Ok(commit))
        }
        LandMode::Merge => {
            let merged = plumbing::merge_trees(repo, base.as_deref(), tip, source)?;
            if !merged.conflicts.is_empty() {
                return Ok(Err(merged.conflicts));
            }
            let message = format!(
                "Merge {} ({subject})\n\n{trailer}\n",
                landing.worktree.branch
            );
            let commit =
                plumbing::commit_tree(repo, &merged.tree, &[tip, source], &message, &author)?;
            Ok(Ok(commit))
        }
        LandMode::Rebase => {
            let from = base.unwrap_or_else(|| tip.to_string());
            let mut current = tip.to_string();
            for commit in plumbing::commits_between(repo, &from, source)? {
                let parent = format!("{commit}^");
                let parent = plumbing::commit_of(repo, &parent)?;
                let merged = plumbing::merge_trees(repo, parent.as_deref(), &current, &commit)?;
                if !merged.conflicts.is_empty() {
                    return Ok(Err(merged.conflicts));
                }
                let message = plumbing::message_of(repo, &commit)?;
                let message = format!("{message}\n\n{trailer}\n");
                let author = plumbing::author_of(repo, &commit)?;
                current =
                    plumbing::commit_tree(repo, &merged.tree, &[&current], &message, &author)?;
            }
            Ok(Ok(current))
        }
    }
}

/// A task's subject as a commit's first line: one line, no control characters.
fn one_line(subject: &str) -> String {
    let line: String = subject
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.is_empty() {
        true => "(no subject)".to_string(),
        false => line,
    }
}

/// Runs `--verify` on `result` in a scratch worktree; how it failed, if it did.
fn verify_on(
    landing: &Landing<'_>,
    repo: &Path,
    verify: &str,
    result: &str,
) -> Result<Option<Outcome>, WorktreeError> {
    let scratch = landing.scratch.join(format!(".verify-{}", landing.task));
    remove_scratch(repo, &scratch);
    crate::file::platform::create_private_dirs(landing.scratch)
        .map_err(io(format!("make {}", landing.scratch.display())))?;
    let path = scratch.to_string_lossy().into_owned();
    plumbing::output(
        repo,
        &[
            "worktree", "add", "--quiet", "--detach", "--", &path, result,
        ],
    )?;
    let log = landing.logs.join(format!("{}-verify.log", landing.task));
    let bound = Duration::from_secs(landing.settings.verify_timeout_seconds.max(1));
    let ended = bounded::run(bounded::shell(verify), &scratch, &log, bound);
    remove_scratch(repo, &scratch);
    let ended = ended.map_err(io("run the project's verify"))?;
    if ended.succeeded() {
        return Ok(None);
    }
    let mut tail = bounded::tail(&log, VERIFY_TAIL_LINES);
    let timed_out = ended == bounded::Ended::TimedOut;
    if timed_out {
        tail.push_str(&format!(
            "\n(stopped after {} seconds)",
            landing.settings.verify_timeout_seconds
        ));
    }
    Ok(Some(Outcome::VerifyFailed { tail, timed_out }))
}

/// Removes the scratch worktree `--verify` ran in, whatever it left there: it is baton's,
/// detached, and holds nothing of anyone's.
fn remove_scratch(repo: &Path, scratch: &Path) {
    if fs::symlink_metadata(scratch).is_ok() {
        let path = scratch.to_string_lossy().into_owned();
        let _ = plumbing::output(
            repo,
            &["worktree", "remove", "--force", "--force", "--", &path],
        );
        let _ = fs::remove_dir_all(scratch);
    }
    let _ = plumbing::prune_worktrees(repo);
}

/// The checkouts of the base branch (on this machine) that would have to follow a landing.
fn base_checkouts(repo: &Path, settings: &Worktrees) -> Result<Vec<PathBuf>, WorktreeError> {
    Ok(plumbing::worktrees(repo)?
        .into_iter()
        .filter(|entry| !entry.bare && !entry.prunable)
        .filter(|entry| entry.branch.as_deref() == Some(settings.base.as_str()))
        .map(|entry| entry.path)
        .collect())
}

/// A checkout of the base branch with uncommitted changes in any of `changed`.
fn unsaved_checkout(
    repo: &Path,
    settings: &Worktrees,
    changed: &[String],
) -> Result<Option<Outcome>, WorktreeError> {
    if settings.remote.is_some() && !local_base_follows(repo, settings) {
        return Ok(None);
    }
    for checkout in base_checkouts(repo, settings)? {
        let unsaved = git::changed(&checkout).unwrap_or_default();
        let paths: Vec<String> = unsaved
            .into_iter()
            .filter(|path| changed.iter().any(|changed| changed == path))
            .collect();
        if !paths.is_empty() {
            return Ok(Some(Outcome::Unsaved { checkout, paths }));
        }
    }
    Ok(None)
}

/// With a remote: whether the local base branch is one the landing brings forward (it
/// has nothing the remote's lacks).
fn local_base_follows(repo: &Path, settings: &Worktrees) -> bool {
    let local = format!("refs/heads/{}", settings.base);
    let Ok(Some(local)) = plumbing::commit_of(repo, &local) else {
        return false;
    };
    let remote = format!(
        "refs/remotes/{}/{}",
        settings.remote.as_deref().unwrap_or_default(),
        settings.base
    );
    plumbing::is_ancestor(repo, &local, &remote).unwrap_or(false)
}

/// Moves the base branch from `tip` to `result`: here by compare and swap, or on the
/// remote by a push with a lease on `tip`. `false` when it had moved.
fn move_base(
    repo: &Path,
    settings: &Worktrees,
    result: &str,
    tip: &str,
) -> Result<bool, WorktreeError> {
    let base = format!("refs/heads/{}", settings.base);
    let Some(remote) = &settings.remote else {
        return Ok(plumbing::move_ref(repo, &base, result, tip)?);
    };
    let lease = format!("--force-with-lease={base}:{tip}");
    let refspec = format!("{result}:{base}");
    let args = [
        "push",
        "--quiet",
        "--no-verify",
        &lease,
        "--",
        remote,
        &refspec,
    ];
    let ran = plumbing::run(repo, &args)?;
    if ran.code != Some(0) {
        // A lease lost is the remote's branch moved: once more from its new tip.
        let said = String::from_utf8_lossy(&ran.stderr);
        if said.contains("stale info") || said.contains("rejected") {
            return Ok(false);
        }
        return Err(plumbing::failed(&args, &ran).into());
    }
    let tracking = format!("refs/remotes/{remote}/{}", settings.base);
    let _ = plumbing::output(repo, &["update-ref", &tracking, result]);
    // The local base branch follows when it was where the remote's was.
    if let Ok(Some(local)) = plumbing::commit_of(repo, &base)
        && plumbing::is_ancestor(repo, &local, result).unwrap_or(false)
        && local != result
    {
        let _ = plumbing::move_ref(repo, &base, result, &local);
    }
    Ok(true)
}

/// Brings each checkout of the base branch from `from` to `to`: words for those that
/// could not follow.
fn bring_checkouts_forward(repo: &Path, settings: &Worktrees, from: &str, to: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let Ok(checkouts) = base_checkouts(repo, settings) else {
        return warnings;
    };
    for checkout in checkouts {
        // Only a checkout whose branch is where the landing put it follows it.
        let head = plumbing::commit_of(&checkout, "HEAD").ok().flatten();
        if head.as_deref() != Some(to) {
            continue;
        }
        if let Err(error) = plumbing::bring_forward(&checkout, from, to) {
            warnings.push(format!(
                "{} was not brought forward to the landed commit ({error}): its files are as \
                 they were; `git status` there shows the landing's changes as undone",
                checkout.display()
            ));
        }
    }
    warnings
}

fn read_journal(path: &Path) -> Option<Journal> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Writes the journal and makes it durable before the branch moves.
fn write_journal(path: &Path, journal: &Journal) -> Result<(), WorktreeError> {
    let staged = path.with_extension("json.new");
    let text = serde_json::to_vec(journal).unwrap_or_default();
    let written = (|| {
        let mut file = File::create(&staged)?;
        file.write_all(&text)?;
        file.sync_all()?;
        fs::rename(&staged, path)?;
        if let Some(parent) = path.parent()
            && let Ok(dir) = File::open(parent)
        {
            let _ = dir.sync_all();
        }
        Ok::<(), std::io::Error>(())
    })();
    written.map_err(io(format!("write {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subject_becomes_one_line_of_a_commit_message() {
        assert_eq!(
            one_line("Fix\nthe\u{1b}[31m parser\r"),
            "Fix the [31m parser"
        );
        assert_eq!(one_line("  \n\t "), "(no subject)");
        assert_eq!(one_line("Parse ISO dates"), "Parse ISO dates");
    }
}
