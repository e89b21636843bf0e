//! Changing a repository with the machine's `git`: worktrees, branches, commits built
//! without a checkout, a branch moved by compare and swap. Base floor: repositories and
//! commits, nothing of tasks.
//!
//! Every run is argv (never a shell string), with no input, and independent of the user's
//! git settings where they would change what baton does: no hooks (`core.hooksPath` set to
//! an empty place, for `worktree add`'s `post-checkout` and every ref's
//! `reference-transaction`), no signing (`commit.gpgSign`), no editor, no pager, no
//! credential prompt, no file-system monitor, and none of the `GIT_*` variables a hook
//! that runs baton was given (a `GIT_INDEX_FILE` would point every command at a commit's
//! index). git's own locks are respected: a command that meets one fails, and says so.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A git command that failed: what was asked, and the last words git said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitError {
    /// The subcommand: `worktree add`, `update-ref`.
    pub what: String,
    /// git's last line on stderr (or why it could not start), one line.
    pub said: String,
}

impl fmt::Display for GitError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "git {} failed: {}", self.what, self.said)
    }
}

impl std::error::Error for GitError {}

pub type GitResult<T> = Result<T, GitError>;

/// The variables git gives a hook, which would send a command elsewhere than `-C` says.
const INHERITED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
];

/// Where no hook is: git finds none under it.
#[cfg(unix)]
const NO_HOOKS: &str = "core.hooksPath=/dev/null";
#[cfg(windows)]
const NO_HOOKS: &str = "core.hooksPath=NUL";

/// `git -C dir` with baton's settings, ready for its arguments.
pub fn command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    for setting in [
        NO_HOOKS,
        "commit.gpgSign=false",
        "tag.gpgSign=false",
        "core.fsmonitor=false",
        "core.pager=cat",
        "advice.detachedHead=false",
        "gc.auto=0",
    ] {
        command.arg("-c").arg(setting);
    }
    for name in INHERITED {
        command.env_remove(name);
    }
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_SEQUENCE_EDITOR", "true")
        .env("GIT_ASKPASS", "true")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    command
}

/// What a run of git gave: its exit code and both streams.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `git -C dir ARGS` with baton's settings, whatever its exit code.
pub fn run(dir: &Path, args: &[&str]) -> GitResult<Ran> {
    let what = what_of(args);
    let output = command(dir).args(args).output().map_err(|error| GitError {
        what: what.clone(),
        said: format!("could not start git: {error}"),
    })?;
    Ok(Ran {
        code: output.status.code(),
        stdout: output.stdout,
        stderr: output.stderr,
    })
}

/// Runs `git -C dir ARGS`; its output when it exits 0, else what it said.
pub fn output(dir: &Path, args: &[&str]) -> GitResult<Vec<u8>> {
    let ran = run(dir, args)?;
    match ran.code {
        Some(0) => Ok(ran.stdout),
        _ => Err(failed(args, &ran)),
    }
}

/// The failure of `ran`, in git's last words.
pub fn failed(args: &[&str], ran: &Ran) -> GitError {
    let said = String::from_utf8_lossy(&ran.stderr);
    let said = said
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())
        .unwrap_or("no words from git")
        .to_string();
    let said = match ran.code {
        Some(code) => format!("{said} (exit {code})"),
        None => format!("{said} (killed)"),
    };
    GitError {
        what: what_of(args),
        said,
    }
}

/// The subcommand of `args`, for an error: its first word, and a second for the ones that
/// have subcommands of their own.
fn what_of(args: &[&str]) -> String {
    let mut words = args.iter().filter(|arg| !arg.starts_with('-'));
    match words.next() {
        Some(first @ (&"worktree" | &"branch")) => match words.next() {
            Some(second) => format!("{first} {second}"),
            None => first.to_string(),
        },
        Some(first) => first.to_string(),
        None => "(nothing)".to_string(),
    }
}

/// The first line of `bytes`, trimmed.
fn line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The commit `rev` names in the repository `dir` is in; `None` when it names none.
pub fn commit_of(dir: &Path, rev: &str) -> GitResult<Option<String>> {
    let spec = format!("{rev}^{{commit}}");
    let ran = run(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )?;
    match ran.code {
        Some(0) => Ok(Some(line(&ran.stdout))),
        Some(1) => Ok(None),
        _ => Err(failed(&["rev-parse"], &ran)),
    }
}

/// The branch checked out in the working tree `dir` is in (`main`), or `None` on a
/// detached head.
pub fn checked_out_branch(dir: &Path) -> GitResult<Option<String>> {
    let ran = run(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])?;
    match ran.code {
        Some(0) => Ok(Some(line(&ran.stdout)).filter(|name| !name.is_empty())),
        Some(1) => Ok(None),
        _ => Err(failed(&["symbolic-ref"], &ran)),
    }
}

/// The directory the repository's worktrees share (`.git` of the main one).
pub fn common_dir(dir: &Path) -> GitResult<PathBuf> {
    let answer = output(
        dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )?;
    Ok(PathBuf::from(line(&answer)))
}

/// The git directory of the working tree `dir` is in: `.git` of a main one, `.git/worktrees/
/// NAME` of a linked worktree (its index and `HEAD`).
pub fn git_dir(dir: &Path) -> GitResult<PathBuf> {
    let answer = output(dir, &["rev-parse", "--absolute-git-dir"])?;
    Ok(PathBuf::from(line(&answer)))
}

/// Whether `name` is a branch name git takes.
pub fn is_branch_name(dir: &Path, name: &str) -> bool {
    run(dir, &["check-ref-format", "--branch", name]).is_ok_and(|ran| ran.code == Some(0))
        && !name.starts_with('-')
}

/// `git worktree add -b BRANCH PATH START`, or, when the branch is there already, a
/// worktree of it.
pub fn add_worktree(repo: &Path, path: &Path, branch: &str, start: &str) -> GitResult<()> {
    let path = path.to_string_lossy();
    let reference = format!("refs/heads/{branch}");
    if commit_of(repo, &reference)?.is_some() {
        output(repo, &["worktree", "add", "--quiet", "--", &path, branch])?;
    } else {
        output(
            repo,
            &[
                "worktree",
                "add",
                "--quiet",
                "--no-track",
                "-b",
                branch,
                "--",
                &path,
                start,
            ],
        )?;
    }
    Ok(())
}

/// `git worktree remove PATH`: refused by git itself when the worktree holds changes.
pub fn remove_worktree(repo: &Path, path: &Path) -> GitResult<()> {
    output(repo, &["worktree", "remove", "--", &path.to_string_lossy()])?;
    Ok(())
}

/// Forgets worktrees whose directories are gone.
pub fn prune_worktrees(repo: &Path) -> GitResult<()> {
    output(repo, &["worktree", "prune"])?;
    Ok(())
}

/// One worktree of a repository, as `git worktree list --porcelain` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeEntry {
    pub path: PathBuf,
    /// Its head commit; none in a repository with no commit yet.
    pub head: Option<String>,
    /// The branch checked out there (`main`), none when detached.
    pub branch: Option<String>,
    pub bare: bool,
    /// Its directory is gone.
    pub prunable: bool,
}

/// Every worktree of the repository `repo` is in, the main one first.
pub fn worktrees(repo: &Path) -> GitResult<Vec<WorktreeEntry>> {
    let answer = output(repo, &["worktree", "list", "--porcelain", "-z"])?;
    let mut entries = Vec::new();
    let mut entry: Option<WorktreeEntry> = None;
    for field in answer.split(|byte| *byte == 0) {
        let field = String::from_utf8_lossy(field);
        if field.is_empty() {
            entries.extend(entry.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((&field, ""));
        if key == "worktree" {
            entries.extend(entry.take());
            entry = Some(WorktreeEntry {
                path: PathBuf::from(value),
                ..WorktreeEntry::default()
            });
            continue;
        }
        let Some(entry) = entry.as_mut() else {
            continue;
        };
        match key {
            "HEAD" => entry.head = Some(value.to_string()),
            "branch" => {
                entry.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).into())
            }
            "bare" => entry.bare = true,
            "prunable" => entry.prunable = true,
            _ => {}
        }
    }
    entries.extend(entry);
    Ok(entries)
}

/// Whether commit `ancestor` is `descendant` or one of its ancestors.
pub fn is_ancestor(repo: &Path, ancestor: &str, descendant: &str) -> GitResult<bool> {
    let ran = run(repo, &["merge-base", "--is-ancestor", ancestor, descendant])?;
    match ran.code {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(failed(&["merge-base"], &ran)),
    }
}

/// The best common ancestor of two commits, if they have one.
pub fn merge_base(repo: &Path, one: &str, other: &str) -> GitResult<Option<String>> {
    let ran = run(repo, &["merge-base", one, other])?;
    match ran.code {
        Some(0) => Ok(Some(line(&ran.stdout))),
        Some(1) => Ok(None),
        _ => Err(failed(&["merge-base"], &ran)),
    }
}

/// The commits of `tip` that `base` lacks, oldest first, without merges' second parents'
/// history being walked twice.
pub fn commits_between(repo: &Path, base: &str, tip: &str) -> GitResult<Vec<String>> {
    let range = format!("{base}..{tip}");
    let answer = output(repo, &["rev-list", "--reverse", "--topo-order", &range])?;
    Ok(String::from_utf8_lossy(&answer)
        .lines()
        .map(str::to_string)
        .collect())
}

/// What merging two trees gave: the tree, and the paths in conflict (none when clean).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub tree: String,
    pub conflicts: Vec<String>,
}

/// Merges `theirs` into `ours` without touching any checkout or index
/// (`git merge-tree --write-tree`, git 2.38 or later), with `base` as the merge base when
/// given (a cherry-pick's is the picked commit's parent).
pub fn merge_trees(repo: &Path, base: Option<&str>, ours: &str, theirs: &str) -> GitResult<Merged> {
    let base_arg = base.map(|base| format!("--merge-base={base}"));
    let mut args = vec![
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "-z",
    ];
    if let Some(base_arg) = &base_arg {
        args.push(base_arg);
    }
    args.extend([ours, theirs]);
    let ran = run(repo, &args)?;
    if !matches!(ran.code, Some(0 | 1)) {
        return Err(failed(&args, &ran));
    }
    let mut fields = ran.stdout.split(|byte| *byte == 0);
    let tree = fields.next().map(line).unwrap_or_default();
    let mut conflicts: Vec<String> = fields
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .filter(|name| !name.is_empty())
        .collect();
    conflicts.dedup();
    if ran.code == Some(1) && conflicts.is_empty() {
        conflicts.push("(a conflict git did not name)".to_string());
    }
    Ok(Merged { tree, conflicts })
}

/// Who a commit is by: name, e-mail and date, as git takes them from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub email: String,
    pub date: String,
}

/// The author of commit `rev`.
pub fn author_of(repo: &Path, rev: &str) -> GitResult<Ident> {
    let answer = output(
        repo,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%an%x00%ae%x00%aI",
            rev,
        ],
    )?;
    let text = String::from_utf8_lossy(&answer);
    let mut parts = text.trim_end_matches('\n').split('\0');
    Ok(Ident {
        name: parts.next().unwrap_or_default().to_string(),
        email: parts.next().unwrap_or_default().to_string(),
        date: parts.next().unwrap_or_default().to_string(),
    })
}

/// The full message of commit `rev`.
pub fn message_of(repo: &Path, rev: &str) -> GitResult<String> {
    let answer = output(
        repo,
        &["log", "-1", "--no-show-signature", "--format=%B", rev],
    )?;
    Ok(String::from_utf8_lossy(&answer).trim_end().to_string())
}

/// The committer every commit baton makes carries.
const COMMITTER: (&str, &str) = ("baton", "baton@localhost");

/// Makes a commit of `tree` with `parents` and `message` (given on standard input's place,
/// a file, so no argument carries it), by `author`, committed by baton. Its id.
pub fn commit_tree(
    repo: &Path,
    tree: &str,
    parents: &[&str],
    message: &str,
    author: &Ident,
) -> GitResult<String> {
    let mut args: Vec<String> = vec!["commit-tree".into(), "--no-gpg-sign".into()];
    for parent in parents {
        args.push("-p".into());
        args.push((*parent).to_string());
    }
    args.push(tree.to_string());
    let mut command = command(repo);
    if !author.date.is_empty() {
        command.env("GIT_AUTHOR_DATE", &author.date);
    }
    let mut child = command
        .args(&args)
        .env("GIT_AUTHOR_NAME", non_empty(&author.name, COMMITTER.0))
        .env("GIT_AUTHOR_EMAIL", non_empty(&author.email, COMMITTER.1))
        .env("GIT_COMMITTER_NAME", COMMITTER.0)
        .env("GIT_COMMITTER_EMAIL", COMMITTER.1)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| GitError {
            what: "commit-tree".into(),
            said: format!("could not start git: {error}"),
        })?;
    if let Some(mut input) = child.stdin.take() {
        use std::io::Write;
        let _ = input.write_all(message.as_bytes());
    }
    let output = child.wait_with_output().map_err(|error| GitError {
        what: "commit-tree".into(),
        said: error.to_string(),
    })?;
    let ran = Ran {
        code: output.status.code(),
        stdout: output.stdout,
        stderr: output.stderr,
    };
    match ran.code {
        Some(0) => Ok(line(&ran.stdout)),
        _ => Err(failed(&["commit-tree"], &ran)),
    }
}

fn non_empty<'a>(value: &'a str, otherwise: &'a str) -> &'a str {
    match value.trim().is_empty() {
        true => otherwise,
        false => value,
    }
}

/// Moves `reference` to `new` only if it is at `old` now (compare and swap, under git's
/// lock of the ref). `Ok(false)` when it was elsewhere.
pub fn move_ref(repo: &Path, reference: &str, new: &str, old: &str) -> GitResult<bool> {
    let args = ["update-ref", "-m", "baton: landed", reference, new, old];
    let ran = run(repo, &args)?;
    if ran.code == Some(0) {
        return Ok(true);
    }
    // Lost the race, or the ref's lock was held: either way it is not where we expected.
    match commit_of(repo, reference)? {
        Some(now) if now != old => Ok(false),
        _ => Err(failed(&args, &ran)),
    }
}

/// Deletes `refs/heads/BRANCH` only if it still points at `tip`.
pub fn delete_branch(repo: &Path, branch: &str, tip: &str) -> GitResult<bool> {
    let reference = format!("refs/heads/{branch}");
    let ran = run(repo, &["update-ref", "-d", &reference, tip])?;
    Ok(ran.code == Some(0))
}

/// Brings the working tree `dir` and its index from `from` to `to` as a fast-forward
/// would: a two-tree `read-tree -m -u`, which keeps every uncommitted change and refuses
/// (changing nothing) where one would be overwritten. Run again after it succeeded, it
/// changes nothing.
pub fn bring_forward(dir: &Path, from: &str, to: &str) -> GitResult<()> {
    output(dir, &["read-tree", "-m", "-u", from, to])?;
    Ok(())
}

/// The paths that differ between two commits.
pub fn paths_between(repo: &Path, from: &str, to: &str) -> GitResult<Vec<String>> {
    let answer = output(
        repo,
        &[
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            from,
            to,
        ],
    )?;
    Ok(answer
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect())
}
