//! Baton's commit guard (SPEC section 18.3): `setup --git [DIR]` installs it in a git
//! repository, and the hook it installs runs `hook pre-commit`, which refuses an agent's
//! commit of a path another agent has reserved. A person's commit (no `BATON_AGENT`) is
//! warned about and goes through; so is every commit when the hub or the store does not
//! answer: baton never stops work by failing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use baton::board::scope::{self, Pattern};
use baton::error::Error;
use baton::git;
use baton::session::reservations::Holding;
use baton::setup::git::{GuardChange, GuardLaunch, GuardReport};
use baton::setup::{self, Environment};
use baton::text::{self, LineField, inline};

use super::{Context, output};

/// The hook event git's `pre-commit` hook runs: `baton hook pre-commit`.
pub const EVENT: &str = "pre-commit";

/// How long the guard waits for the hub or the store before it lets the commit through.
const ANSWER_BY: Duration = Duration::from_secs(5);

/// The most holdings a refusal names one by one; the rest are counted.
const MOST_NAMED: usize = 20;

/// The most bytes of paths asked of the desk at once (a hub reads bodies of up to 2 MB).
const ASK_AT_ONCE: usize = 1024 * 1024;

/// `setup --git [DIR] [--uninstall] [--dry-run]`.
pub fn setup(
    context: &Context,
    dir: Option<&Path>,
    uninstall: bool,
    dry_run: bool,
) -> Result<i32, Error> {
    // A hub setup was pointed at but cannot reach is said, not replaced by this machine's.
    if context.remote.is_none() {
        baton::remote::HubClient::from_environment()?;
    }
    let local = context.hub.local();
    let given = match dir {
        Some(dir) => Some(absolute(dir)?),
        None => None,
    };
    let report = if uninstall {
        let dir = match given {
            Some(dir) => dir,
            None => workspace(context)?.1,
        };
        setup::git::uninstall(&local, &dir, dry_run)?
    } else {
        let (project, workspace) = match workspace(context) {
            Ok((project, workspace)) => (project, Some(workspace)),
            // A repository named, for a project with no workspace here: guarded for the
            // project `--project` names (or the current directory's).
            Err(_) if given.is_some() => (context.observer_desk().project_id()?, None),
            Err(error) => return Err(error),
        };
        // One of them is there: a project without a workspace was refused above.
        let dir = given.or_else(|| workspace.clone()).unwrap_or_default();
        let env = Environment::from_process()
            .ok_or_else(|| Error::invalid("cannot find your home directory; set HOME"))?;
        let launch = GuardLaunch {
            baton: setup::baton_program(&env)?,
            project,
            workspace,
            settings: hub_settings()?,
        };
        setup::git::install(&local, &dir, &launch, dry_run)?
    };
    output::emit(context.global.json, &report, words);
    Ok(0)
}

/// The project's id and its workspace (this machine's directory for a remote hub's).
fn workspace(context: &Context) -> Result<(String, PathBuf), Error> {
    let project = context.observer_desk().project()?;
    match project.workspace {
        Some(workspace) => Ok((project.id, workspace)),
        None => Err(Error::invalid_with_hint(
            format!(
                "project {} has no workspace here to find the repository by",
                inline(&project.id)
            ),
            "name the repository: `baton setup --git DIR`",
        )),
    }
}

fn absolute(dir: &Path) -> Result<PathBuf, Error> {
    match dir.is_absolute() {
        true => Ok(dir.to_path_buf()),
        false => Ok(super::current_dir()?.join(dir)),
    }
}

/// The variables naming the hub setup ran against, for the hook to default to.
fn hub_settings() -> Result<Vec<(&'static str, String)>, Error> {
    let mut settings = Vec::new();
    if let Some(home) = super::setup::hub_home_override()? {
        settings.push(("BATON_HOME", home.display().to_string()));
    }
    if let Some(store) = super::setup::store_to_pass_on()? {
        settings.push(("BATON_STORE", store.url));
        if let Some(file) = store.password_file {
            settings.push(("PGPASSFILE", file.display().to_string()));
        }
    }
    if let Some(url) = std::env::var("BATON_URL")
        .ok()
        .filter(|url| !url.trim().is_empty())
    {
        settings.push(("BATON_URL", url));
    }
    Ok(settings)
}

fn words(report: &GuardReport) -> String {
    let hook = report.hook.display();
    let would = |done: &str, to_do: &str| match report.dry_run {
        true => format!("dry run: nothing was written\nwould {to_do}"),
        false => done.to_string(),
    };
    let text = match report.change {
        GuardChange::Installed => would(
            &format!("installed baton's commit guard: {hook}"),
            &format!("install baton's commit guard: {hook}"),
        ),
        GuardChange::Chained => would(
            &format!(
                "installed baton's commit guard: {hook}\nthe hook that was there runs after it, \
                 kept as {hook}.baton-chained"
            ),
            &format!(
                "install baton's commit guard: {hook}, keeping the hook that is there to run \
                 after it"
            ),
        ),
        GuardChange::Updated => would(
            &format!("updated baton's commit guard: {hook}"),
            &format!("update baton's commit guard: {hook}"),
        ),
        GuardChange::Unchanged => {
            return format!("baton's commit guard is in {hook} already, nothing to change");
        }
        GuardChange::Restored => would(
            &format!("removed baton's commit guard from {hook} and put back the hook it kept"),
            &format!("remove baton's commit guard from {hook} and put back the hook it kept"),
        ),
        GuardChange::Removed => would(
            &format!("removed baton's commit guard: {hook}"),
            &format!("remove baton's commit guard: {hook}"),
        ),
        GuardChange::NothingToRemove => {
            return format!("no commit guard of baton's in {hook}: nothing to remove");
        }
    };
    match report.change {
        GuardChange::Installed | GuardChange::Chained if !report.dry_run => format!(
            "{text}\nan agent's commit (BATON_AGENT set) of a path another agent has reserved \
             is refused; a person's is let through with a warning"
        ),
        _ => text,
    }
}

/// What the guard decided about one commit.
enum Verdict {
    Allow,
    /// Let through, with one line saying why it was not checked or what it changes.
    Warn(String),
    /// Refused, with the lines that say why.
    Refuse(Vec<String>),
}

/// `hook pre-commit`: exits 1 to refuse the commit, 0 otherwise; reads nothing from stdin.
pub fn run(context: &Context) -> i32 {
    match check(context) {
        Verdict::Allow => 0,
        Verdict::Warn(line) => {
            eprintln!("baton: {line}");
            0
        }
        Verdict::Refuse(lines) => {
            for line in lines {
                eprintln!("baton: {line}");
            }
            1
        }
    }
}

/// When baton cannot start at all (a bad `BATON_HOME`, a `BATON_URL` with no token): one
/// line, and the commit goes through.
pub fn refuse(error: &Error) -> i32 {
    eprintln!(
        "baton: {}; the commit was not checked",
        inline(&error.to_string())
    );
    0
}

fn check(context: &Context) -> Verdict {
    let unchecked = |why: String| Verdict::Warn(format!("{why}; the commit was not checked"));
    let Ok(here) = super::current_dir() else {
        return unchecked("cannot tell which repository this is".to_string());
    };
    let Some(staged) = git::staged(&here) else {
        return unchecked("git did not say what the commit changes".to_string());
    };
    if staged.paths.is_empty() && staged.unreadable == 0 {
        return Verdict::Allow;
    }
    let agent = context.agent();
    let desk = context.observer_desk();
    let (sender, answer) = mpsc::channel();
    // The desk works on a thread of its own, so that the commit waits no longer than
    // ANSWER_BY whatever the hub or the store does; one still waiting then is left to the
    // process's exit.
    thread::spawn(move || {
        let asked = (|| -> Result<(Vec<(String, Holding)>, usize), Error> {
            let workspace = desk.project()?.workspace;
            let mut paths = staged.paths;
            if let (Some(root), Some(workspace)) = (git::toplevel(&here), workspace) {
                let canonical = |path: PathBuf| path.canonicalize().unwrap_or(path);
                paths = git::rebase(paths, &canonical(root), &canonical(workspace));
            }
            let (asks, mut unreadable) = literals(paths);
            unreadable += staged.unreadable;
            let mut held = Vec::new();
            for chunk in chunks(&asks) {
                let literals: Vec<String> = chunk.iter().map(|(l, _)| l.clone()).collect();
                let by_literal: HashMap<&str, &str> = chunk
                    .iter()
                    .map(|(l, path)| (l.as_str(), path.as_str()))
                    .collect();
                for holding in desk.reserved(&literals)? {
                    let path = by_literal.get(holding.path.as_str()).copied();
                    held.push((path.unwrap_or(&holding.path).to_string(), holding));
                }
            }
            Ok((held, unreadable))
        })();
        let _ = sender.send(asked);
    });
    let (held, unreadable) = match answer.recv_timeout(ANSWER_BY) {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => return unchecked(inline(&error.to_string()).to_string()),
        Err(_) => {
            return unchecked(format!(
                "no answer from the hub or the store within {}s",
                ANSWER_BY.as_secs()
            ));
        }
    };
    // The committer's own reservations never stand in its way (over a hub, the token's
    // agent is the one left out, which need not be the committer).
    let held: Vec<String> = held
        .into_iter()
        .filter(|(_, holding)| Some(&holding.reservation.agent) != agent.as_ref())
        .map(|(path, holding)| Holding { path, ..holding }.words())
        .collect();
    if held.is_empty() {
        return match unreadable {
            0 => Verdict::Allow,
            count => Verdict::Warn(format!(
                "{count} of the paths this commit changes have names baton cannot check; they \
                 were let through"
            )),
        };
    }
    let more = |shown: usize| match held.len() - shown {
        0 => String::new(),
        more => format!(" (and {more} more)"),
    };
    match agent {
        None => Verdict::Warn(format!(
            "{}{}; committed anyway: with no BATON_AGENT, baton takes this for a person's commit",
            held[0],
            more(1)
        )),
        Some(agent) => {
            let mut lines: Vec<String> = held.iter().take(MOST_NAMED).cloned().collect();
            lines.push(format!(
                "commit refused{}: {} may not commit paths another agent has reserved; message \
                 the holder, or wait until its task is done",
                more(lines.len()),
                inline(&agent)
            ));
            Verdict::Refuse(lines)
        }
    }
}

/// Each path as the pattern that names it alone, beside the path; with how many a pattern
/// still refuses (none that git names, as `literal` makes them).
fn literals(paths: Vec<String>) -> (Vec<(String, String)>, usize) {
    let mut unreadable = 0;
    let mut asks = Vec::with_capacity(paths.len());
    for path in paths {
        let literal = scope::literal(&path);
        let readable = text::check_line(LineField::Pattern, &literal).is_ok()
            && Pattern::parse(&literal).is_ok();
        match readable {
            true => asks.push((literal, path)),
            false => unreadable += 1,
        }
    }
    (asks, unreadable)
}

/// `asks` in pieces of at most [`ASK_AT_ONCE`] bytes of paths: one piece for any commit of
/// a few thousand files.
fn chunks(asks: &[(String, String)]) -> Vec<&[(String, String)]> {
    let mut pieces = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (index, (literal, _)) in asks.iter().enumerate() {
        if bytes + literal.len() > ASK_AT_ONCE && index > start {
            pieces.push(&asks[start..index]);
            (start, bytes) = (index, 0);
        }
        bytes += literal.len() + 4;
    }
    if start < asks.len() {
        pieces.push(&asks[start..]);
    }
    pieces
}
