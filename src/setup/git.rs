//! `setup --git [DIR]`: baton's commit guard, a `pre-commit` hook in a git repository
//! (SPEC section 18.3). The hook is a short shell script that runs `baton hook pre-commit`
//! by its absolute path, then the hook that was there before it, which setup keeps beside
//! it as `pre-commit.baton-chained` (renamed, so its bytes and mode stay as they were).
//! Uninstall renames it back over baton's. The hook goes where git looks for hooks
//! (`core.hooksPath` when it is set), and is recognised on sight by its second line, so
//! setup run again changes nothing and uninstall touches nothing of anyone else's.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, SetupError};
use crate::file::atomic;
use crate::git;
use crate::store::{Documents, StoreError};

use super::command::shell_quote;
use super::manifest::Manifest;

/// The hook git runs before it records a commit.
const HOOK: &str = "pre-commit";
/// Where the hook that was there before baton's is kept.
const CHAINED: &str = "pre-commit.baton-chained";
/// The line that makes a hook baton's.
const MARK: &str = "# baton's commit guard:";

/// What the hook runs: this baton, for the project, with the hub setup was run against
/// (each variable a default the committer's own environment overrides).
#[derive(Debug, Clone)]
pub struct GuardLaunch {
    pub baton: PathBuf,
    pub project: String,
    /// The project's workspace (this machine's directory for a remote hub's project): when
    /// it is a directory inside the repository, the guard runs there, where the project is.
    pub workspace: Option<PathBuf>,
    /// `BATON_HOME`, `BATON_STORE` (without its password), `PGPASSFILE`, `BATON_URL`: those
    /// setup ran with.
    pub settings: Vec<(&'static str, String)>,
}

/// What setup did (or, in a dry run, would do) to one repository's hooks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardChange {
    /// Baton's hook was written where there was none.
    Installed,
    /// Baton's hook was written, and the hook that was there kept to run after it.
    Chained,
    /// Baton's hook was there already and was written again (another baton, project or hub).
    Updated,
    /// Baton's hook was there already as it would be written.
    Unchanged,
    /// Baton's hook was removed, and the hook it kept put back.
    Restored,
    /// Baton's hook was removed; there was none before it.
    Removed,
    /// There was no hook of baton's to remove.
    NothingToRemove,
}

/// The answer of [`install`] and [`uninstall`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct GuardReport {
    /// The repository's working tree.
    pub repository: PathBuf,
    /// Where the hook is (in the directory `core.hooksPath` names, when it is set).
    pub hook: PathBuf,
    pub change: GuardChange,
    pub dry_run: bool,
}

/// The repository `dir` is in, and the directory git runs its hooks from.
fn hooks_of(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let not_one = || SetupError::NotGitRepository {
        dir: dir.to_path_buf(),
    };
    let repository = git::toplevel(dir).ok_or_else(not_one)?;
    // Asked at the root, where git runs hooks from, and a relative `core.hooksPath` starts.
    let hooks = git::hooks_dir(&repository).ok_or_else(not_one)?;
    Ok((repository, hooks))
}

/// Whether `path` holds a hook of baton's.
fn is_batons(path: &Path) -> bool {
    fs::read(path).is_ok_and(|bytes| {
        String::from_utf8_lossy(&bytes)
            .lines()
            .take(3)
            .any(|line| line.starts_with(MARK))
    })
}

/// Refuses what is at `path` unless it is a regular file (or nothing).
fn check_regular(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(StoreError::io(path)(error).into()),
        Ok(meta) if meta.file_type().is_file() => Ok(true),
        Ok(meta) => Err(SetupError::GitHookNotRegular {
            path: path.to_path_buf(),
            what: match meta.file_type() {
                kind if kind.is_symlink() => "a symbolic link",
                kind if kind.is_dir() => "a directory",
                _ => "not a regular file",
            },
        }
        .into()),
    }
}

/// Installs baton's `pre-commit` hook in the repository `dir` is in, keeping the hook that
/// was there to run after it.
pub fn install(
    local: &dyn Documents,
    dir: &Path,
    launch: &GuardLaunch,
    dry_run: bool,
) -> Result<GuardReport> {
    let (repository, hooks) = hooks_of(dir)?;
    let hook = hooks.join(HOOK);
    let chained = hooks.join(CHAINED);
    // Git runs the hook at the repository's root; a workspace below it is where baton
    // finds its project.
    let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let below = launch.workspace.as_deref().filter(|workspace| {
        let (workspace, root) = (canonical(workspace), canonical(&repository));
        workspace != root && workspace.starts_with(&root)
    });
    let script = script(launch, below);
    let had_hook = check_regular(&hook)?;
    let change = match had_hook && is_batons(&hook) {
        true if fs::read(&hook).is_ok_and(|bytes| bytes == script.as_bytes()) => {
            GuardChange::Unchanged
        }
        true => GuardChange::Updated,
        false if had_hook => {
            if check_regular(&chained)? {
                return Err(SetupError::GitChainedInTheWay { path: chained }.into());
            }
            GuardChange::Chained
        }
        false => GuardChange::Installed,
    };
    let report = GuardReport {
        repository,
        hook: hook.clone(),
        change: change.clone(),
        dry_run,
    };
    if dry_run || change == GuardChange::Unchanged {
        return Ok(report);
    }
    Manifest::update(local, |manifest| {
        let mut made = Vec::new();
        let mut missing = hooks.as_path();
        while !missing.exists() {
            made.push(missing.to_path_buf());
            match missing.parent() {
                Some(parent) => missing = parent,
                None => break,
            }
        }
        fs::create_dir_all(&hooks).map_err(StoreError::io(&hooks))?;
        if change == GuardChange::Chained {
            // A rename keeps the hook's bytes and mode, and uninstall's rename back too.
            fs::rename(&hook, &chained).map_err(StoreError::io(&hook))?;
        }
        if let Err(error) = atomic::replace_user_file(&hook, script.as_bytes(), 0o755) {
            // The hook that was there goes back where git runs it.
            if change == GuardChange::Chained {
                let _ = fs::rename(&chained, &hook);
            }
            return Err(error.into());
        }
        manifest.remember(&hook, change == GuardChange::Installed, &[], &made);
        Ok(())
    })?;
    Ok(report)
}

/// Removes baton's `pre-commit` hook from the repository `dir` is in, and puts back the
/// hook it kept, byte for byte.
pub fn uninstall(local: &dyn Documents, dir: &Path, dry_run: bool) -> Result<GuardReport> {
    let (repository, hooks) = hooks_of(dir)?;
    let hook = hooks.join(HOOK);
    let chained = hooks.join(CHAINED);
    let change = match check_regular(&hook)? && is_batons(&hook) {
        false => GuardChange::NothingToRemove,
        true if check_regular(&chained)? => GuardChange::Restored,
        true => GuardChange::Removed,
    };
    let report = GuardReport {
        repository,
        hook: hook.clone(),
        change: change.clone(),
        dry_run,
    };
    if dry_run || change == GuardChange::NothingToRemove {
        return Ok(report);
    }
    Manifest::update(local, |manifest| {
        match change {
            GuardChange::Restored => {
                fs::rename(&chained, &hook).map_err(StoreError::io(&chained))?;
            }
            _ => fs::remove_file(&hook).map_err(StoreError::io(&hook))?,
        }
        if let Some(record) = manifest.forget(&hook) {
            // The directories setup made for the hook, deepest first, if nothing else is
            // in them now.
            for made in record.created_dirs {
                let _ = fs::remove_dir(made);
            }
        }
        Ok(())
    })?;
    Ok(report)
}

/// The hook's text: the hub's variables, baton's guard, then the hook it keeps. Only exit
/// status 1 is the guard's refusal; a baton that cannot run at all (moved away, say) lets
/// the commit through, saying so, as the guard itself does when the hub cannot be reached.
fn script(launch: &GuardLaunch, below: Option<&Path>) -> String {
    let mut text = format!(
        "#!/bin/sh\n\
         {MARK} written by `baton setup --git`, removed by `baton setup --git --uninstall`.\n\
         # It refuses an agent's commit (BATON_AGENT) of a path another agent has reserved,\n\
         # then runs the hook that was here before it, kept beside it as {CHAINED}.\n"
    );
    for (name, value) in &launch.settings {
        text.push_str(&format!(
            "{name}=${{{name}:-{}}}; export {name}\n",
            shell_quote(value)
        ));
    }
    let guard = format!(
        "{} --project {} hook pre-commit </dev/null",
        shell_quote(&launch.baton.display().to_string()),
        shell_quote(&launch.project)
    );
    match below {
        // In a subshell, so that the hook it keeps runs where git runs hooks.
        Some(workspace) => text.push_str(&format!(
            "(cd {} 2>/dev/null; exec {guard})\n",
            shell_quote(&workspace.display().to_string())
        )),
        None => text.push_str(&format!("{guard}\n")),
    }
    text.push_str(
        "status=$?\n\
         if [ \"$status\" -eq 1 ]; then exit 1; fi\n\
         if [ \"$status\" -ne 0 ]; then\n\
         \x20 echo \"baton: the commit guard did not run (exit $status); committing anyway\" >&2\n\
         fi\n",
    );
    text.push_str(&format!(
        "chained=\"$(dirname \"$0\")/{CHAINED}\"\n\
         if [ -x \"$chained\" ]; then exec \"$chained\" \"$@\"; fi\n"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_quotes_what_it_is_given_and_is_recognised_as_batons() {
        let launch = GuardLaunch {
            baton: PathBuf::from("/opt/my tools/baton"),
            project: "app".to_string(),
            workspace: None,
            settings: vec![("BATON_HOME", "/home/u/it's".to_string())],
        };
        let text = script(&launch, None);
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(
            text.contains("BATON_HOME=${BATON_HOME:-'/home/u/it'\\''s'}; export BATON_HOME\n"),
            "{text}"
        );
        assert!(
            text.contains("'/opt/my tools/baton' --project app hook pre-commit </dev/null\n"),
            "{text}"
        );
        let below = script(&launch, Some(Path::new("/src/repo/web")));
        assert!(
            below.contains("(cd /src/repo/web 2>/dev/null; exec '/opt/my tools/baton' --project"),
            "{below}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HOOK);
        fs::write(&path, &text).unwrap();
        assert!(is_batons(&path));
        fs::write(&path, "#!/bin/sh\nexec lint\n").unwrap();
        assert!(!is_batons(&path));
    }
}
