//! The supervisor: the detached process that runs an agent's wake command while work
//! arrives for it, unless its live session was shown the work.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::work::{Item, Work, arrived, not_woken_yet, still_unseen, unseen_tasks, waiting};
use super::{
    MAX_RUNS_IN_A_ROW, PUSH_TIMEOUT, RunSetup, log, not_signed_here, prompt, wake_command,
    workspace_not_bound_here, worktree_prompt,
};
use crate::board::inbox::Reason;
use crate::board::task::{TaskId, Worktree};
use crate::client::Client;
use crate::error::Result;
use crate::file::text_log::TextLog;
use crate::git::plumbing;
use crate::home::Home;
use crate::names::{self, NameKind};
use crate::process::{detached_environment, program_to_run, why_not_started};
use crate::project;
use crate::registry;
use crate::store::{Duty, Store};

/// `baton __wake-supervisor AGENT PROJECT`: the detached process that runs the agent's wake
/// command while work arrives for it. Returns at once when another supervisor of the agent
/// holds the lock. Everything it has to say goes to the wake log.
///
/// `setup` is told, before each run, the tasks in each project that the run is for, so
/// that their delivery records can say `woken`, and is asked for the worktree of the task
/// the run starts on (the session writes them; this floor only reads boards).
pub fn supervise(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project: &str,
    by_hand: bool,
    setup: &dyn RunSetup,
) -> Result<()> {
    names::check(NameKind::Agent, agent)?;
    names::check(NameKind::Project, project)?;
    let duty = Duty::Wake(agent.to_string());
    let Some(mut held) = store.try_hold(&duty)? else {
        // One runs already, and looks at the inbox again when its run ends.
        return Ok(());
    };
    let log = log(home, agent);
    log.line(&format!(
        "supervisor of {agent} started (pid {})",
        std::process::id()
    ));
    // Started for work that a run has been woken for since (a second start, racing the
    // first, that took the duty once the first let it go): nothing for this one to do.
    if !by_hand && not_woken_yet(store, agent, waiting(store, agent)).is_empty() {
        log.line(&format!(
            "supervisor of {agent} ends: nothing waits any more that no run was woken for \
             (an earlier run saw to it)"
        ));
        return Ok(());
    }
    if !by_hand && shown_in_live_session(store, agent, project) {
        log.line(&format!(
            "supervisor of {agent} ends: its live session was shown the work (a push), so \
             the wake command does not run"
        ));
        return Ok(());
    }
    let mut project = project.to_string();
    let mut runs = 0;
    loop {
        runs += 1;
        let before = waiting(store, agent);
        for (project, ids) in Work::tasks_by_project(&before) {
            setup.record_woken(&project, &ids);
        }
        let run = Run {
            number: runs,
            project: &project,
            work: &before,
        };
        if !run_once(store, home, agent, &run, setup, &log) {
            log.line(&format!(
                "supervisor of {agent} ends: the wake command did not run; \
                 what waits stays in the inbox"
            ));
            return Ok(());
        }
        // Release first, then look: a command that handed work over while the lock was
        // held started no supervisor and counts on this one, so the look must come after
        // the release. Work handed over after the look finds the lock free and starts a
        // supervisor of its own.
        drop(held);
        let unseen = still_unseen(store, agent, &before);
        if !unseen.is_empty() {
            log.line(&format!(
                "run {runs} ended with its work still unseen: {} (woken, never shown to \
                 {agent}: is the wake command right?)",
                unseen
                    .iter()
                    .map(|(project, id)| format!("{id} (project {project})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let fresh = arrived(store, agent, &before);
        if fresh.is_empty() {
            log.line(&format!("supervisor of {agent} ends: nothing new waits"));
            return Ok(());
        }
        if runs >= MAX_RUNS_IN_A_ROW {
            log.line(&format!(
                "supervisor of {agent} ends after {runs} runs in a row; still waiting: {}; \
                 `baton wake {agent}` runs it again",
                Work::describe(&fresh)
            ));
            return Ok(());
        }
        held = match store.try_hold(&duty)? {
            Some(held) => held,
            None => {
                // Whoever took it in between runs for this work, or starts a supervisor
                // that does.
                log.line(&format!(
                    "supervisor of {agent} ends: another one took over"
                ));
                return Ok(());
            }
        };
        log.line(&format!(
            "{} arrived during run {runs} and still waits: running again",
            Work::describe(&fresh)
        ));
        project = fresh[0].project.clone();
    }
}

/// How long a supervisor gives an agent's live session to be shown the work that woke it (a
/// push) before it runs the wake command: as long as a push may take ([`PUSH_TIMEOUT`]),
/// and as long again for the session to see the change and record what it pushed. A
/// session whose push fails gives up and leaves, which ends the wait at once.
const PUSH_GRACE: Duration = PUSH_TIMEOUT.saturating_mul(2);

/// Whether everything waiting for `agent` is tasks that its live Codex session in `project`
/// was shown within [`PUSH_GRACE`]: Codex's app-server acknowledges a push before baton
/// records it as seen, so a wake run would be a second agent on the same work. A session that
/// cannot take the push leaves the work unseen, or leaves, and the wake command runs as
/// before. Only Codex's pushes count: a Claude Code channel push, over stdio or on an HTTP
/// stream alike, may be dropped by the client unsaid (print mode, no channels flag, no
/// first-party login), and an open stream says nothing of that.
fn shown_in_live_session(store: &dyn Store, agent: &str, project: &str) -> bool {
    let codex = crate::client::Client::Codex.name();
    let is_live = || {
        store
            .live_clients(project, agent)
            .iter()
            .any(|client| client == codex)
    };
    let deadline = Instant::now() + PUSH_GRACE;
    loop {
        if !is_live() {
            return false;
        }
        let work = waiting(store, agent);
        if work
            .iter()
            .any(|work| matches!(work.item, Item::Message { .. }))
        {
            return false;
        }
        if unseen_tasks(store, agent, &work).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// One run of the supervisor: its number, its project, and the work waiting when it began.
struct Run<'a> {
    number: usize,
    project: &'a str,
    work: &'a [Work],
}

/// One run of the wake command in `project`'s workspace, or in the worktree of the task it
/// starts on; false when it could not start.
fn run_once(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    run: &Run,
    setup: &dyn RunSetup,
    log: &TextLog,
) -> bool {
    let project_id = run.project;
    // Read and checked again here, just before it runs: the record may have changed since
    // the supervisor was started for it.
    let argv = match registry::load(store, agent) {
        Ok(Some(record)) => match (wake_command(&record), not_signed_here(store, home, &record)) {
            (Some(argv), None) => argv.to_vec(),
            (Some(_), Some(why)) => {
                log.line(&why);
                return false;
            }
            (None, _) => {
                log.line(&format!("{agent} has no wake command any more"));
                return false;
            }
        },
        Ok(None) => {
            log.line(&format!("{agent} is not registered any more"));
            return false;
        }
        Err(error) => {
            log.line(&format!("cannot read {agent}'s record: {error}"));
            return false;
        }
    };
    let project = match project::load(store, project_id) {
        Ok(Some(project)) => project,
        Ok(None) => {
            log.line(&format!("project {project_id} does not exist any more"));
            return false;
        }
        Err(error) => {
            log.line(&format!("cannot read project {project_id}: {error}"));
            return false;
        }
    };
    if let Some(why) = workspace_not_bound_here(store, home, &project) {
        log.line(&why);
        return false;
    }
    // A project bound to a workspace runs there; an unbound one (`default`) runs where the
    // command that woke the agent ran, which is where its sender was working.
    let dir = match &project.workspace {
        Some(workspace) => workspace.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| home.root().to_path_buf()),
    };
    let mut launch = Launch {
        argv,
        prompt: prompt(agent, &project),
        dir,
    };
    if let Some(id) = first_to_do(run.work, project_id) {
        match setup.worktree(project_id, id) {
            Ok(Some(place)) => {
                for warning in &place.warnings {
                    log.line(&format!("{id}'s worktree: {warning}"));
                }
                if let Err(why) = launch.in_worktree(id, &place.worktree) {
                    log.line(&format!("{why}; the run starts in the workspace"));
                }
            }
            Ok(None) => {}
            Err(why) => log.line(&format!(
                "{id}'s worktree could not be made: {why}; the run starts in the workspace"
            )),
        }
    }
    let environment = detached_environment(std::env::vars_os(), home.root(), Some(agent));
    let Launch { argv, prompt, dir } = launch;
    run_command(
        log,
        &argv,
        &prompt,
        &dir,
        environment,
        run.number,
        project_id,
    )
}

/// The first task among `work` in `project` that is the agent's to do (new, or sent back to
/// it): the run starts on it, in its worktree when it has one.
fn first_to_do(work: &[Work], project: &str) -> Option<TaskId> {
    work.iter()
        .filter(|work| work.project == project)
        .find_map(|work| match work.item {
            Item::Task {
                id,
                reason: Reason::Assigned | Reason::ChangesRequested,
                ..
            } => Some(id),
            _ => None,
        })
}

/// What a wake run starts: the command, the prompt appended to it, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub argv: Vec<String>,
    pub prompt: String,
    pub dir: PathBuf,
}

impl Launch {
    /// Starts the run in task `id`'s worktree (SPEC section 18.4): there, told where to
    /// work, and, for a client whose sandbox would keep the repository's git directories
    /// read-only, allowed to write them so that it can commit. Unchanged, and why, when the
    /// worktree is not a git working tree on this machine.
    pub fn in_worktree(
        &mut self,
        id: TaskId,
        worktree: &Worktree,
    ) -> std::result::Result<(), String> {
        let path = PathBuf::from(&worktree.path);
        let not_here = |why: String| format!("{id}'s worktree {} {why}", path.display());
        if !crate::worktree::is_here(worktree) {
            return Err(not_here("is not on this machine".to_string()));
        }
        let git_dirs = plumbing::common_dir(&path)
            .and_then(|common| Ok(vec![common, plumbing::git_dir(&path)?]))
            .map_err(|error| not_here(format!("is not a git working tree: {error}")))?;
        if let Some(client) = Client::of_command(&self.argv) {
            self.argv = client.wake_writing(&self.argv, &git_dirs);
        }
        self.prompt = format!("{} {}", self.prompt, worktree_prompt(id, worktree));
        self.dir = path;
        Ok(())
    }
}

/// Runs `argv` with `prompt` appended, in `dir`, with exactly `environment` (and `PWD`),
/// stdin from /dev/null and its output appended to `log`; waits for it. False when it
/// could not start. The supervisor runs each wake this way, and so does `baton listen` on
/// an agent's machine.
pub fn run_command(
    log: &TextLog,
    argv: &[String],
    prompt: &str,
    dir: &Path,
    environment: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    run: usize,
    project_id: &str,
) -> bool {
    log.trim();
    log.line(&format!(
        "run {run} of at most {MAX_RUNS_IN_A_ROW} in project {project_id} ({}): {} PROMPT",
        dir.display(),
        argv.join(" ")
    ));
    // The run's PATH is this process's (detached_environment passes it on).
    let program = program_to_run(&argv[0], std::env::var_os("PATH").as_deref());
    let started = Instant::now();
    let result = log.open().and_then(|out| {
        let err = out.try_clone()?;
        Command::new(&program)
            .args(&argv[1..])
            .arg(prompt)
            .env_clear()
            .envs(environment)
            // The waker's PWD would name the waker's directory: opencode takes its working
            // directory (and its MCP servers' one, hence baton's project) from PWD.
            .env("PWD", dir)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .status()
    });
    match result {
        Ok(status) => {
            log.line(&format!(
                "run {run} ended after {:.1}s: {status}",
                started.elapsed().as_secs_f64()
            ));
            true
        }
        Err(error) => {
            let args: Vec<&str> = argv[1..]
                .iter()
                .map(String::as_str)
                .chain([prompt])
                .collect();
            let found = if program.as_os_str() == argv[0].as_str() {
                String::new()
            } else {
                format!(" ({})", program.display())
            };
            log.line(&format!(
                "cannot start `{}`{found} in {}: {}",
                argv[0],
                dir.display(),
                why_not_started(&program, &args, &error)
            ));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository in `dir/repo` with one commit, and its worktree `dir/T-3` on
    /// `baton/T-3`, as baton makes it.
    #[cfg(unix)]
    fn repository_and_worktree(dir: &Path) -> (PathBuf, Worktree) {
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| plumbing::output(&repo, args).unwrap();
        git(&["init", "--quiet"]);
        git(&[
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.com",
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "start",
        ]);
        let head = plumbing::commit_of(&repo, "HEAD").unwrap().unwrap();
        let path = dir.join("T-3");
        plumbing::add_worktree(&repo, &path, "baton/T-3", &head).unwrap();
        let worktree = Worktree {
            path: crate::project::canonical(&path).display().to_string(),
            branch: "baton/T-3".into(),
            base: "main".into(),
            base_commit: head,
            host: crate::process::this_host(),
            reviewed: None,
        };
        (repo, worktree)
    }

    // The machine's git (none under wine, where the Windows build's tests run).
    #[cfg(unix)]
    #[test]
    fn a_run_for_a_task_with_a_worktree_starts_there_and_codex_may_commit_there() {
        let dir = tempfile::tempdir().unwrap();
        let (repo, worktree) = repository_and_worktree(dir.path());
        let workspace = Launch {
            argv: Client::Codex.wake_command(None),
            prompt: "Look at your inbox.".into(),
            dir: repo.clone(),
        };
        let mut launch = workspace.clone();
        launch.in_worktree(TaskId(3), &worktree).unwrap();
        assert_eq!(launch.dir, PathBuf::from(&worktree.path));
        assert!(
            launch
                .prompt
                .starts_with("Look at your inbox. This run starts in T-3's own")
                && launch.prompt.contains(&worktree.where_to_work()),
            "{}",
            launch.prompt
        );
        let common = crate::project::canonical(&repo.join(".git"));
        let own = common.join("worktrees/T-3");
        let writable: Vec<PathBuf> = launch
            .argv
            .windows(2)
            .filter(|pair| pair[0] == "--add-dir")
            .map(|pair| crate::project::canonical(Path::new(&pair[1])))
            .collect();
        assert_eq!(writable, [common, own], "{:?}", launch.argv);
        assert_eq!(launch.argv.last().map(String::as_str), Some("--"));

        // Another client's command is left as it was.
        let mut claude = Launch {
            argv: Client::Claude.wake_command(None),
            ..workspace.clone()
        };
        claude.in_worktree(TaskId(3), &worktree).unwrap();
        assert_eq!(claude.argv, Client::Claude.wake_command(None));

        // A worktree that is gone, or on another machine: the workspace, as before.
        for gone in [
            Worktree {
                path: dir.path().join("T-9").display().to_string(),
                ..worktree.clone()
            },
            Worktree {
                host: Some("another-machine".into()),
                ..worktree.clone()
            },
        ] {
            let mut launch = workspace.clone();
            let why = launch.in_worktree(TaskId(3), &gone).unwrap_err();
            assert!(why.starts_with("T-3's worktree "), "{why}");
            assert_eq!(launch, workspace);
        }
    }

    #[test]
    fn a_run_starts_on_the_first_task_of_its_project_that_is_the_agent_s_to_do() {
        let task = |project: &str, id, reason| Work {
            project: project.into(),
            item: Item::Task {
                id: TaskId(id),
                reason,
                step: 1,
            },
            by: "lead".into(),
        };
        let work = [
            Work {
                project: "app".into(),
                item: Item::Message { seq: 1 },
                by: "lead".into(),
            },
            task("app", 1, Reason::ReviewRequested),
            task("web", 2, Reason::Assigned),
            task("app", 3, Reason::ChangesRequested),
            task("app", 4, Reason::Assigned),
        ];
        assert_eq!(first_to_do(&work, "app"), Some(TaskId(3)));
        assert_eq!(first_to_do(&work, "web"), Some(TaskId(2)));
        assert_eq!(first_to_do(&work[..3], "app"), None);
    }
}
