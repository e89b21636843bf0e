//! The supervisor: the detached process that runs an agent's wake command while work
//! arrives for it, unless its live session was shown the work.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::work::{Item, Work, arrived, still_unseen, unseen_tasks, waiting};
use super::{
    MAX_RUNS_IN_A_ROW, PUSH_TIMEOUT, log, not_signed_here, prompt, wake_command,
    workspace_not_bound_here,
};
use crate::board::task::TaskId;
use crate::error::Result;
use crate::file::text_log::TextLog;
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
/// `record_woken` is told, before each run, the tasks in each project that the run is for,
/// so that their delivery records can say `woken` (the session writes them; this floor
/// only reads boards).
pub fn supervise(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project: &str,
    by_hand: bool,
    record_woken: &dyn Fn(&str, &[TaskId]),
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
    if !by_hand && waiting(store, agent).is_empty() {
        log.line(&format!(
            "supervisor of {agent} ends: nothing waits any more (an earlier run saw to it)"
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
            record_woken(&project, &ids);
        }
        if !run_once(store, home, agent, &project, runs, &log) {
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
/// before. Only Codex's pushes count: a Claude Code channel push may be dropped by the client
/// unsaid.
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

/// One run of the wake command in `project`'s workspace; false when it could not start.
fn run_once(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project_id: &str,
    run: usize,
    log: &TextLog,
) -> bool {
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
    let prompt = prompt(agent, &project);
    let environment = detached_environment(std::env::vars_os(), home.root(), Some(agent));
    run_command(log, &argv, &prompt, &dir, environment, run, project_id)
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
