//! Asking the machine's `git` about a repository: where its root and its hooks are, what a
//! commit is about to change, what has changed since the last commit. The base floor: it
//! knows repositories and paths, nothing of tasks or agents. Every question is one run of
//! `git` with no input; a `git` that is missing or fails is an answer of `None`, which each
//! caller takes as "nothing to say" (baton never stops work because git did not answer).

pub mod plumbing;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `git -C dir ARGS` with no input; its output when it exits 0.
fn run(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output.status.success().then_some(output.stdout)
}

/// One line of git's answer, as a path relative to `dir` when it is not absolute.
fn path_answer(dir: &Path, args: &[&str]) -> Option<PathBuf> {
    let output = run(dir, args)?;
    let line = String::from_utf8(output).ok()?;
    let line = line.trim_end_matches(['\n', '\r']);
    if line.is_empty() {
        return None;
    }
    Some(dir.join(line))
}

/// The root of the working tree `dir` is in; `None` when it is in none (or git is missing).
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    path_answer(dir, &["rev-parse", "--show-toplevel"])
}

/// The directory git runs the hooks of the repository `dir` is in from: `core.hooksPath`
/// when it is set, else the repository's own `hooks` (shared by its worktrees).
pub fn hooks_dir(dir: &Path) -> Option<PathBuf> {
    path_answer(dir, &["rev-parse", "--git-path", "hooks"])
}

/// The paths a commit in the repository `dir` is in would change, from the index (the one
/// `GIT_INDEX_FILE` names during a commit): both names of a rename, relative to the root.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Staged {
    pub paths: Vec<String>,
    /// Names that are not UTF-8, which no pattern can name: left out of `paths`.
    pub unreadable: usize,
}

/// What the index holds that `HEAD` does not (everything, before the first commit).
pub fn staged(dir: &Path) -> Option<Staged> {
    let output = run(
        dir,
        &[
            "diff",
            "--cached",
            "--name-status",
            "--no-relative",
            "-M",
            "-z",
            "--no-color",
            "--no-ext-diff",
            "--ignore-submodules=none",
        ],
    )?;
    Some(parse_name_status(&output))
}

/// Reads `git diff --name-status -z`: a status, then one path, or two for a rename or a
/// copy (a copy leaves its source as it was, so only its new name counts).
fn parse_name_status(output: &[u8]) -> Staged {
    let mut staged = Staged::default();
    let mut seen = HashSet::new();
    let mut fields = output.split(|byte| *byte == 0);
    while let Some(status) = fields.next() {
        let names = match status.first() {
            None => continue,
            Some(b'R') => [fields.next(), fields.next()],
            Some(b'C') => {
                fields.next();
                [fields.next(), None]
            }
            Some(_) => [fields.next(), None],
        };
        for name in names.into_iter().flatten() {
            match std::str::from_utf8(name) {
                Ok(name) if seen.insert(name) => staged.paths.push(name.to_string()),
                Ok(_) => {}
                Err(_) => staged.unreadable += 1,
            }
        }
    }
    staged
}

/// The paths changed in the working tree `dir` is in since its last commit: changed in the
/// index or the working tree, and untracked ones (not ignored), relative to the root.
/// Names that are not UTF-8 are left out.
pub fn changed(dir: &Path) -> Option<Vec<String>> {
    let output = run(
        dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    )?;
    Some(parse_status(&output))
}

/// Reads `git status --porcelain=v1 -z --no-renames`: `XY path` entries, one per path.
fn parse_status(output: &[u8]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for entry in output.split(|byte| *byte == 0) {
        let Some(name) = entry.get(3..).filter(|name| !name.is_empty()) else {
            continue;
        };
        if let Ok(name) = std::str::from_utf8(name)
            && seen.insert(name)
        {
            paths.push(name.to_string());
        }
    }
    paths
}

/// `paths`, relative to `root` (a working tree's), made relative to `dir`: a path outside
/// `dir` is left out when `dir` is inside the tree, and `root`'s place is put before each
/// when the tree is inside `dir`. A tree elsewhere (a clone, a worktree) stands for the same
/// files, and its paths are kept as they are. Both directories as the file system names
/// them (symbolic links resolved), which is how git names its root.
pub fn rebase(paths: Vec<String>, root: &Path, dir: &Path) -> Vec<String> {
    let components = |path: &Path| -> Option<String> {
        let parts: Vec<&str> = path
            .components()
            .map(|part| match part {
                std::path::Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(parts.join("/"))
    };
    if let Ok(inside) = dir.strip_prefix(root) {
        let Some(inside) = components(inside) else {
            return Vec::new();
        };
        if inside.is_empty() {
            return paths;
        }
        let prefix = format!("{inside}/");
        return paths
            .into_iter()
            .filter_map(|path| path.strip_prefix(&prefix).map(str::to_string))
            .collect();
    }
    if let Ok(above) = root.strip_prefix(dir)
        && let Some(above) = components(above)
    {
        return paths
            .into_iter()
            .map(|path| format!("{above}/{path}"))
            .collect();
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_gives_both_names_and_a_copy_its_new_one() {
        let output = b"M\0src/a.rs\0R087\0src/old.rs\0lib/new.rs\0C100\0src/b.rs\0src/c.rs\0A\0x\0";
        let staged = parse_name_status(output);
        assert_eq!(
            staged.paths,
            ["src/a.rs", "src/old.rs", "lib/new.rs", "src/c.rs", "x"]
        );
        assert_eq!(staged.unreadable, 0);
    }

    #[test]
    fn a_name_that_is_not_utf8_is_counted_not_named() {
        let staged = parse_name_status(b"A\0ok\0A\0bad\xff\0D\0gone\0");
        assert_eq!(staged.paths, ["ok", "gone"]);
        assert_eq!(staged.unreadable, 1);
    }

    #[test]
    fn paths_are_rebased_onto_the_directory_they_are_asked_of() {
        let paths = || vec!["web/app.js".to_string(), "src/lib.rs".to_string()];
        let root = Path::new("/src/repo");
        assert_eq!(rebase(paths(), root, root), paths());
        assert_eq!(
            rebase(paths(), root, Path::new("/src/repo/web")),
            ["app.js"]
        );
        assert_eq!(
            rebase(paths(), root, Path::new("/src")),
            ["repo/web/app.js", "repo/src/lib.rs"]
        );
        assert_eq!(
            rebase(paths(), root, Path::new("/elsewhere/clone")),
            paths()
        );
    }

    #[test]
    fn status_entries_give_each_path_once() {
        let output = b" M src/lib.rs\0?? notes/new file.md\0MM src/lib.rs\0D  gone.rs\0";
        assert_eq!(
            parse_status(output),
            ["src/lib.rs", "notes/new file.md", "gone.rs"]
        );
    }
}
