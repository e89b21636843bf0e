//! Each task in a git worktree of its own (SPEC section 18.4): made at its claim, on the
//! machine of whoever claims it, from the base branch's tip; what a review records of it;
//! and, in [`land`], how its work reaches the base branch (18.5).
//!
//! A domain: it knows projects' settings, tasks' ids and git, and is called by the session
//! (and, for an agent of a hub on another machine, by the desk that speaks to it), never by
//! the model.

pub mod diff;
pub mod land;
pub mod prune;

pub use crate::error::worktree::WorktreeError;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::board::task::{TaskId, Worktree, worktree_branch};
use crate::git::{self, plumbing};
use crate::process::{self, bounded};
use crate::project::worktrees::{SETUP_SECONDS, Worktrees};
use crate::text::{self, LineField};

/// `a, b and 3 more`, each shown as text (SPEC section 10).
pub use crate::error::worktree::named_paths as named;

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorktreeError {
    let what = what.into();
    move |error| WorktreeError::Io {
        what,
        cause: error.to_string(),
    }
}

/// Where a task's worktree is made on this machine: `DIR/T-<n>`.
pub fn path_in(worktrees_dir: &Path, id: TaskId) -> PathBuf {
    worktrees_dir.join(id.to_string())
}

/// The root of the repository `dir` is in.
pub fn repository(dir: &Path) -> Result<PathBuf, WorktreeError> {
    git::toplevel(dir).ok_or_else(|| WorktreeError::NotRepository {
        dir: dir.to_path_buf(),
    })
}

/// The commit work starts from and lands on: the base branch's tip here, or, with a
/// remote, its tip there (fetched first).
pub fn base_tip(repo: &Path, settings: &Worktrees) -> Result<String, WorktreeError> {
    let reference = match &settings.remote {
        Some(remote) => {
            fetch(repo, remote, &settings.base)?;
            format!("refs/remotes/{remote}/{}", settings.base)
        }
        None => format!("refs/heads/{}", settings.base),
    };
    plumbing::commit_of(repo, &reference)?.ok_or_else(|| WorktreeError::NoBase {
        base: settings.base.clone(),
        dir: repo.to_path_buf(),
    })
}

/// Fetches `base` from `remote` into its remote-tracking branch.
pub fn fetch(repo: &Path, remote: &str, base: &str) -> Result<(), WorktreeError> {
    let refspec = format!("+refs/heads/{base}:refs/remotes/{remote}/{base}");
    plumbing::output(
        repo,
        &["fetch", "--quiet", "--no-tags", "--", remote, &refspec],
    )?;
    Ok(())
}

/// A worktree made (or found) for a claim, and what to tell the claimer of it.
#[derive(Debug, Clone)]
pub struct Made {
    pub worktree: Worktree,
    /// Made now, rather than found: removed again if the claim is refused.
    pub fresh: bool,
    /// What went wrong without stopping the claim: a file not copied, a setup that failed.
    pub warnings: Vec<String>,
}

/// Makes task `id`'s worktree in `worktrees_dir`, from the repository `repo` is in (the
/// workspace, or an agent's mapped clone), on branch `baton/T-<n>` from the base branch's
/// tip; copies the `--copy` files from `repo` into it and runs `--setup` there, its output
/// in `logs`. A worktree of the task's branch already there is taken as it is.
pub fn make(
    repo: &Path,
    worktrees_dir: &Path,
    logs: &Path,
    settings: &Worktrees,
    id: TaskId,
) -> Result<Made, WorktreeError> {
    let root = repository(repo)?;
    let path = path_in(worktrees_dir, id);
    let branch = worktree_branch(id);
    if let Some(found) = existing(&root, &path, &branch, settings)? {
        return Ok(Made {
            worktree: found,
            fresh: false,
            warnings: Vec::new(),
        });
    }
    let base_commit = base_tip(&root, settings)?;
    crate::file::platform::create_private_dirs(worktrees_dir)
        .map_err(io(format!("make {}", worktrees_dir.display())))?;
    plumbing::add_worktree(&root, &path, &branch, &base_commit)?;
    let path = crate::project::canonical(&path);
    let mut warnings = copy_files(&root, &path, &settings.copy);
    if let Some(setup) = &settings.setup {
        let log = logs.join(format!("{id}-setup.log"));
        let bound = Duration::from_secs(SETUP_SECONDS);
        match bounded::run(bounded::shell(setup), &path, &log, bound) {
            Ok(ended) if ended.succeeded() => {}
            Ok(bounded::Ended::TimedOut) => warnings.push(format!(
                "the project's setup ran past {} minutes and was stopped; its log: {}",
                SETUP_SECONDS / 60,
                log.display()
            )),
            Ok(bounded::Ended::Exited(code)) => warnings.push(format!(
                "the project's setup failed (exit {}); its log: {}",
                code.map_or("by a signal".to_string(), |code| code.to_string()),
                log.display()
            )),
            Err(error) => warnings.push(format!("the project's setup did not start: {error}")),
        }
    }
    Ok(Made {
        worktree: Worktree {
            path: path.to_string_lossy().into_owned(),
            branch,
            base: settings.base.clone(),
            base_commit,
            host: process::this_host(),
            reviewed: None,
        },
        fresh: true,
        warnings,
    })
}

/// The worktree at `path`, when it is one of `root`'s with `branch` checked out; an
/// error when something else is there.
fn existing(
    root: &Path,
    path: &Path,
    branch: &str,
    settings: &Worktrees,
) -> Result<Option<Worktree>, WorktreeError> {
    if fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    let id_of = |path: &Path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.parse::<TaskId>().ok())
            .unwrap_or(TaskId(0))
    };
    let taken = || WorktreeError::PathTaken {
        task: id_of(path),
        path: path.to_path_buf(),
    };
    let canonical = crate::project::canonical(path);
    let ours = plumbing::worktrees(root)?
        .into_iter()
        .find(|entry| crate::project::canonical(&entry.path) == canonical)
        .filter(|entry| entry.branch.as_deref() == Some(branch))
        .ok_or_else(taken)?;
    let reference = format!("refs/heads/{}", settings.base);
    let base = plumbing::commit_of(root, &reference)?.unwrap_or_default();
    let head = ours.head.unwrap_or_default();
    let base_commit = plumbing::merge_base(root, &base, &head)?.unwrap_or(base);
    Ok(Some(Worktree {
        path: canonical.to_string_lossy().into_owned(),
        branch: branch.to_string(),
        base: settings.base.clone(),
        base_commit,
        host: process::this_host(),
        reviewed: None,
    }))
}

/// Copies the untracked files of `from` that `patterns` name (gitignore-style, as git
/// matches them) into the same places under `to`: regular files only.
fn copy_files(from: &Path, to: &Path, patterns: &[String]) -> Vec<String> {
    if patterns.is_empty() {
        return Vec::new();
    }
    let mut args = vec!["ls-files", "--others", "--ignored", "-z"];
    let excludes: Vec<String> = patterns
        .iter()
        .map(|pattern| format!("--exclude={pattern}"))
        .collect();
    args.extend(excludes.iter().map(String::as_str));
    let listed = match plumbing::output(from, &args) {
        Ok(listed) => listed,
        Err(error) => return vec![format!("no file was copied into the worktree: {error}")],
    };
    let mut warnings = Vec::new();
    for name in listed
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
    {
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let source = from.join(name);
        let is_file = fs::symlink_metadata(&source).is_ok_and(|meta| meta.is_file());
        if !is_file {
            continue;
        }
        let target = to.join(name);
        let copied = target
            .parent()
            .map_or(Ok(()), fs::create_dir_all)
            .and_then(|()| fs::copy(&source, &target).map(|_| ()));
        if let Err(error) = copied {
            warnings.push(format!("{} was not copied: {error}", text::inline(name)));
        }
    }
    warnings
}

/// Whether `worktree` is on this machine (its host is this one's, and its directory is
/// here).
pub fn is_here(worktree: &Worktree) -> bool {
    let host_here = match (&worktree.host, process::this_host()) {
        (Some(theirs), Some(ours)) => *theirs == ours,
        _ => true,
    };
    host_here && Path::new(&worktree.path).is_dir()
}

/// What a review of task `id` records of its worktree: the head commit, refused while the
/// worktree holds uncommitted changes (named).
pub fn reviewed_head(id: TaskId, worktree: &Worktree) -> Result<String, WorktreeError> {
    let path = Path::new(&worktree.path);
    if !path.is_dir() {
        return Err(WorktreeError::Gone {
            task: id,
            path: path.to_path_buf(),
        });
    }
    let unsaved = git::changed(path).ok_or_else(|| WorktreeError::NotRepository {
        dir: path.to_path_buf(),
    })?;
    if !unsaved.is_empty() {
        return Err(WorktreeError::Unsaved {
            task: id,
            paths: unsaved,
        });
    }
    plumbing::commit_of(path, "HEAD")?.ok_or_else(|| WorktreeError::NoBase {
        base: worktree.branch.clone(),
        dir: path.to_path_buf(),
    })
}

/// Removes a worktree made for a claim that was then refused: it holds nothing yet.
pub fn discard_fresh(repo: &Path, made: &Made) {
    let path = Path::new(&made.worktree.path);
    if made.fresh
        && git::changed(path).is_some_and(|changed| changed.is_empty())
        && let Ok(root) = repository(repo)
    {
        let _ = plumbing::remove_worktree(&root, path);
        let _ = plumbing::delete_branch(&root, &made.worktree.branch, &made.worktree.base_commit);
    }
}

/// The project whose task worktree `cwd` is in, on this machine: `cwd` under
/// `ROOT/<project>/T-<n>`. A command run there belongs to that project as one run in its
/// workspace does (SPEC section 18.4).
pub fn project_of(worktrees_root: &Path, cwd: &Path) -> Option<String> {
    let root = crate::project::canonical(worktrees_root);
    let cwd = crate::project::canonical(cwd);
    let mut parts = cwd.strip_prefix(&root).ok()?.components();
    let project = parts.next()?.as_os_str().to_str()?.to_string();
    let task = parts.next()?.as_os_str().to_str()?;
    (task.parse::<TaskId>().is_ok() && !project.starts_with('.')).then_some(project)
}

/// The root of the task worktree `cwd` is in, on this machine: `ROOT/<project>/T-<n>`,
/// which stands for the project's workspace (SPEC section 18.2: paths in it are relative
/// to it).
pub fn root_of(worktrees_root: &Path, cwd: &Path) -> Option<PathBuf> {
    project_of(worktrees_root, cwd)?;
    let root = crate::project::canonical(worktrees_root);
    let cwd = crate::project::canonical(cwd);
    let mut parts = cwd.strip_prefix(&root).ok()?.components();
    let (project, task) = (parts.next()?, parts.next()?);
    Some(root.join(project).join(task))
}

/// Pushes task `worktree`'s branch from its worktree to `remote` (SPEC section 18.5's
/// `--remote`): a review's, so the machine that lands it can fetch it. The branch is the
/// task's alone, so the push replaces whatever it was there.
pub fn push_branch(worktree: &Worktree, remote: &str) -> Result<(), WorktreeError> {
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", worktree.branch);
    plumbing::output(
        Path::new(&worktree.path),
        &[
            "push",
            "--quiet",
            "--force",
            "--no-verify",
            "--",
            remote,
            &refspec,
        ],
    )?;
    Ok(())
}

/// Whether `text` names a commit as git writes it: 40 (SHA-1) or 64 (SHA-256) lowercase
/// hex digits.
pub fn is_commit_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64)
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The most of a value sent from another machine a refusal shows.
const SHOWN: usize = 80;

/// Refuses a worktree another machine says it made for task `id`'s claim (SPEC section
/// 18.4: a remote agent's, from its own clone) unless it could be one: its text one-line
/// and bounded, its path absolute and named `T-<n>` (as [`make`] names it), its branch the
/// task's own (`baton/T-<n>`), its base the project's, its commit a commit's id, no review
/// recorded yet. The words say which.
pub fn check_sent(id: TaskId, sent: &Worktree, base: &str) -> Result<(), String> {
    let line = |field: LineField, value: &str| {
        text::check_line(field, value)
            .map_err(|refused| format!("in the worktree sent: {}", refused.message))
    };
    line(LineField::FileName, &sent.path)?;
    line(LineField::Setting, &sent.branch)?;
    line(LineField::Setting, &sent.base)?;
    line(LineField::Setting, &sent.base_commit)?;
    if let Some(host) = &sent.host {
        line(LineField::SourceId, host)?;
    }
    let path = Path::new(&sent.path);
    if !path.is_absolute()
        || path
            .components()
            .any(|part| matches!(part, std::path::Component::ParentDir))
    {
        return Err(format!(
            "the worktree's path must be absolute, without `..`, not {}",
            text::excerpt(&sent.path, SHOWN)
        ));
    }
    if path.file_name().and_then(|name| name.to_str()) != Some(id.to_string().as_str()) {
        return Err(format!(
            "{id}'s worktree is a directory named {id}, not {}",
            text::excerpt(&sent.path, SHOWN)
        ));
    }
    let branch = worktree_branch(id);
    if sent.branch != branch {
        return Err(format!(
            "{id}'s worktree is on branch {branch}, not {}",
            text::excerpt(&sent.branch, SHOWN)
        ));
    }
    if sent.base != base {
        return Err(format!(
            "the project's work lands on {}, not {}",
            text::inline(base),
            text::excerpt(&sent.base, SHOWN)
        ));
    }
    if !is_commit_id(&sent.base_commit) {
        return Err(format!(
            "the worktree's base commit {} is no commit's id",
            text::excerpt(&sent.base_commit, SHOWN)
        ));
    }
    if sent.reviewed.is_some() {
        return Err("a claim's worktree has no review yet".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_under_a_projects_worktrees_belongs_to_that_project() {
        let root = Path::new("/home/u/.local/share/baton/worktrees");
        assert_eq!(
            project_of(root, &root.join("app/T-4/src/date")).as_deref(),
            Some("app")
        );
        assert_eq!(
            project_of(root, &root.join("app/T-4")).as_deref(),
            Some("app")
        );
        assert_eq!(project_of(root, &root.join("app")), None, "not a task's");
        assert_eq!(project_of(root, &root.join("app/notes")), None);
        assert_eq!(project_of(root, &root.join(".logs/app")), None);
        assert_eq!(project_of(root, Path::new("/home/u/src/app")), None);
    }
}
