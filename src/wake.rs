//! Waking agents that are not running (SPEC section 8).
//!
//! When a change puts work into an agent's inbox and the agent has a wake command, the
//! command that made the change starts a supervisor, `baton __wake-supervisor`, detached
//! from it, and returns at once. The supervisor holds `wake/<agent>.lock`, so at most one
//! runs per agent; it runs the wake command with a prompt appended, and runs it again while
//! work that arrived during a run still waits, at most [`MAX_RUNS_IN_A_ROW`] times. What it
//! does and what the agent prints go to `wake/<agent>.log`, kept under [`LOG_LIMIT`].

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::board::Board;
use crate::board::inbox::Reason;
use crate::board::task::TaskId;
use crate::error::{Error, Result};
use crate::mail::{self, Delivery};
use crate::names::{self, NameKind};
use crate::notify;
use crate::project::{self, Project};
use crate::registry;
use crate::session::{Handover, Hub};
use crate::store::atomic::{self, private_open_options};
use crate::store::board_file;
use crate::store::lock::{self, FileLock};
use crate::store::paths::Home;
use crate::store::regular;
use crate::text;
use crate::time;

/// A supervisor stops after this many runs in a row, so two agents handing work back and
/// forth cannot keep each other awake for ever. What still waits stays in the inbox.
pub const MAX_RUNS_IN_A_ROW: usize = 3;
/// The log is cut back to its last [`LOG_KEEP`] bytes before a run once it passes this.
pub const LOG_LIMIT: u64 = 1024 * 1024;
pub const LOG_KEEP: u64 = 256 * 1024;
/// The hidden subcommand that runs the supervisor.
pub const SUPERVISOR_COMMAND: &str = "__wake-supervisor";

/// How a change wakes and notifies the agents it handed work to.
#[derive(Debug, Clone)]
pub struct WakeOptions {
    /// Start wake commands (off with `--no-wake`).
    pub wake: bool,
    /// Send desktop notifications (off with `BATON_NOTIFY=0`).
    pub notify: bool,
    /// The `baton` binary that runs the supervisor and the notifier: this very program.
    pub program: Option<PathBuf>,
}

impl WakeOptions {
    /// Waking unless `no_wake`; notifying unless `BATON_NOTIFY=0`; this executable.
    pub fn from_environment(no_wake: bool) -> Self {
        WakeOptions {
            wake: !no_wake,
            notify: notify::is_enabled(),
            program: std::env::current_exe().ok(),
        }
    }
}

/// What became of waking one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WakeOutcome {
    /// A supervisor was started for it.
    Started {
        agent: String,
        project: String,
        log: PathBuf,
    },
    /// Its supervisor runs already; it looks at the inbox again when its run ends.
    AlreadyAwake {
        agent: String,
        project: String,
        log: PathBuf,
    },
    /// The supervisor could not be started; the work waits in the inbox all the same.
    Failed {
        agent: String,
        project: String,
        error: String,
    },
}

/// After a change: notifies about everything that arrived in an inbox (tasks handed over,
/// messages delivered) and wakes each receiving agent that has a wake command, unless
/// waking is off (by `options` or the project's settings). Never waits for the agents,
/// and never fails: a change stands whatever becomes of its wake. One outcome per agent.
pub fn after_change(
    hub: &Hub,
    handovers: &[Handover],
    deliveries: &[Delivery],
    options: &WakeOptions,
) -> Vec<WakeOutcome> {
    if options.notify
        && let Some(program) = &options.program
    {
        // Best-effort by contract: a desktop without notifications is no error.
        let notes = notify::notes_for(handovers, deliveries);
        let _ = notify::spawn(program, &hub.home, &notes);
    }
    let arrivals = handovers
        .iter()
        .map(|handover| (&handover.agent, &handover.project))
        .chain(
            deliveries
                .iter()
                .map(|delivery| (&delivery.agent, &delivery.project)),
        );
    let mut outcomes = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (agent, project) in arrivals {
        if seen.contains(&agent.as_str()) {
            continue;
        }
        seen.push(agent);
        outcomes.extend(wake_agent(hub, agent, project, options));
    }
    outcomes
}

/// Wakes `agent` for work that arrived for it in `project`, if it has a wake command and
/// neither `options` nor the project's settings turn waking off; `None` when it sleeps on.
pub fn wake_agent(
    hub: &Hub,
    agent: &str,
    project: &str,
    options: &WakeOptions,
) -> Option<WakeOutcome> {
    if !options.wake {
        return None;
    }
    let has_wake_command = registry::load(&hub.home, agent)
        .ok()
        .flatten()
        .is_some_and(|record| wake_command(&record).is_some());
    let is_on = project::load(&hub.home, project)
        .ok()
        .flatten()
        .is_none_or(|project| project.settings.wake);
    (has_wake_command && is_on).then(|| start(hub, agent, project, options, false))
}

/// `baton wake NAME`: starts the agent's supervisor now, whatever its inbox holds.
pub fn wake_by_hand(
    hub: &Hub,
    agent: &str,
    project: &str,
    options: &WakeOptions,
) -> Result<WakeOutcome> {
    let record = registry::require(&hub.home, agent)?;
    if wake_command(&record).is_none() {
        return Err(Error::invalid_with_hint(
            format!("{agent} has no wake command"),
            format!("give it one with `baton agent add {agent} --wake -- CMD ARGS…`"),
        ));
    }
    match start(hub, agent, project, options, true) {
        WakeOutcome::Failed { error, .. } => {
            Err(Error::invalid(format!("cannot wake {agent}: {error}")))
        }
        outcome => Ok(outcome),
    }
}

/// Checks a wake command given to `agent add --wake`. Its program must be a name looked up
/// on `PATH` or an absolute path: a relative path would be looked up from wherever the
/// command that wakes the agent happens to run.
pub fn check_wake_command(argv: &[String]) -> Result<()> {
    let Some(program) = argv.first() else {
        return Ok(());
    };
    let path = Path::new(program);
    if program.contains('/') && !path.is_absolute() {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        return Err(Error::invalid_with_hint(
            format!(
                "the wake program `{}` is a relative path, which would be looked up from \
                 wherever the agent is woken from",
                text::inline(program)
            ),
            format!(
                "give its absolute path (`--wake -- {}`), or a program name on PATH",
                text::inline(&absolute.to_string_lossy())
            ),
        ));
    }
    Ok(())
}

/// The agent's wake command, when it has a usable one.
fn wake_command(record: &registry::AgentRecord) -> Option<&[String]> {
    record.wake.as_deref().filter(|argv| {
        argv.first()
            .is_some_and(|program| !program.trim().is_empty())
    })
}

/// Starts the supervisor of `agent` unless one runs already.
fn start(
    hub: &Hub,
    agent: &str,
    project: &str,
    options: &WakeOptions,
    by_hand: bool,
) -> WakeOutcome {
    let log = hub.home.wake_log(agent);
    // A peek, not a promise: if a supervisor finishes right after it, that supervisor's
    // look at the inbox after releasing its lock still sees this change's work.
    if lock::is_locked(&hub.home.wake_lock(agent)) {
        return WakeOutcome::AlreadyAwake {
            agent: agent.to_string(),
            project: project.to_string(),
            log,
        };
    }
    let failed = |error: String| WakeOutcome::Failed {
        agent: agent.to_string(),
        project: project.to_string(),
        error,
    };
    let Some(program) = &options.program else {
        return failed("cannot find the baton executable to run the supervisor".into());
    };
    let mut args = vec![SUPERVISOR_COMMAND, agent, project];
    if by_hand {
        args.push("--by-hand");
    }
    match spawn_detached(program, &args, &hub.home) {
        Ok(()) => WakeOutcome::Started {
            agent: agent.to_string(),
            project: project.to_string(),
            log,
        },
        Err(error) => failed(format!("cannot start {}: {error}", program.display())),
    }
}

/// How a name in the environment is matched.
#[derive(Debug, Clone, Copy)]
enum Name {
    Exactly(&'static str),
    StartingWith(&'static str),
}

impl Name {
    fn matches(self, name: &str) -> bool {
        match self {
            Name::Exactly(exact) => name == exact,
            Name::StartingWith(prefix) => name.starts_with(prefix),
        }
    }
}

/// What a coding client sets in the environment of the programs its session starts (its
/// shell tool, hooks, MCP servers), to say that they run inside that session. A woken agent
/// must not see the waker's: with `CLAUDECODE` set and no terminal, Claude Code takes itself
/// for a child session of the waker (CLIENTS.md, "Session markers in the environment").
/// [`CLIENT_CONFIGURATION`] keeps what the user set that these patterns would also catch.
const SESSION_MARKERS: &[Name] = &[
    // Claude Code: CLAUDECODE=1, CLAUDE_CODE_ENTRYPOINT, CLAUDE_CODE_SSE_PORT, …; and the
    // paths it hands its hooks and plugins, which name the waker's project, not the agent's.
    Name::Exactly("CLAUDECODE"),
    Name::StartingWith("CLAUDE_CODE_"),
    Name::Exactly("CLAUDE_PROJECT_DIR"),
    Name::Exactly("CLAUDE_ENV_FILE"),
    Name::Exactly("CLAUDE_PLUGIN_ROOT"),
    // Codex: CODEX_THREAD_ID, CODEX_SANDBOX, CODEX_SANDBOX_NETWORK_DISABLED, and what its
    // launcher and IDE integrations set for the process they start (CODEX_MANAGED_BY_NPM,
    // CODEX_INTERNAL_ORIGINATOR_OVERRIDE, …).
    Name::StartingWith("CODEX_"),
    // Gemini CLI: GEMINI_CLI=1 in its shell tool, GEMINI_CLI_NO_RELAUNCH after it restarts
    // itself, GEMINI_CLI_IDE_* from the IDE companion; the paths it hands its hooks.
    Name::Exactly("GEMINI_CLI"),
    Name::StartingWith("GEMINI_CLI_"),
    Name::Exactly("GEMINI_PROJECT_DIR"),
    Name::Exactly("GEMINI_SESSION_ID"),
    // opencode: OPENCODE=1 in its tools, OPENCODE_PID, OPENCODE_SERVER, OPENCODE_CLIENT, …
    Name::StartingWith("OPENCODE"),
    // Other agents that Claude Code looks for in the same way (CLIENTS.md). REPL_ID and
    // JUNIE_DATA are left: they describe the machine or the user's data, not one session.
    Name::Exactly("COPILOT_CLI"),
    Name::Exactly("CURSOR_AGENT"),
];

/// The user's configuration of a client, set in the user's own environment and as right for
/// the woken agent as for the waker, that a pattern of [`SESSION_MARKERS`] would catch:
/// where a client keeps its files, which provider and account it uses, what it may do.
const CLIENT_CONFIGURATION: &[Name] = &[
    Name::Exactly("CODEX_HOME"),
    Name::Exactly("CODEX_API_KEY"),
    Name::StartingWith("CLAUDE_CODE_USE_"),
    Name::StartingWith("CLAUDE_CODE_SKIP_"),
    Name::StartingWith("CLAUDE_CODE_DISABLE_"),
    Name::Exactly("CLAUDE_CODE_OAUTH_TOKEN"),
    Name::Exactly("CLAUDE_CODE_API_KEY_HELPER_TTL_MS"),
    Name::Exactly("CLAUDE_CODE_MAX_OUTPUT_TOKENS"),
    Name::Exactly("CLAUDE_CODE_SUBAGENT_MODEL"),
    Name::StartingWith("CLAUDE_CODE_CLIENT_"),
    Name::Exactly("CLAUDE_CODE_SHELL_PREFIX"),
    Name::Exactly("GEMINI_CLI_HOME"),
    Name::Exactly("GEMINI_CLI_TRUST_WORKSPACE"),
    Name::StartingWith("GEMINI_CLI_SYSTEM_"),
    Name::StartingWith("OPENCODE_CONFIG"),
    Name::Exactly("OPENCODE_PERMISSION"),
    Name::StartingWith("OPENCODE_DISABLE_"),
    Name::StartingWith("OPENCODE_ENABLE_"),
    Name::StartingWith("OPENCODE_EXPERIMENTAL"),
];

/// Whether `name` is a marker of the session of the client that ran the waker.
pub fn is_session_marker(name: &str) -> bool {
    SESSION_MARKERS.iter().any(|marker| marker.matches(name))
        && !CLIENT_CONFIGURATION.iter().any(|kept| kept.matches(name))
}

/// The environment of a process baton starts detached (the supervisor, the wake run, the
/// notifier), from the waker's `inherited` one (SPEC section 8): without the client session
/// markers and without the waker's `BATON_*` (its identity, project, hub URL and token are
/// its own), with `BATON_HOME` set to `home` made absolute and, for a wake run, `BATON_AGENT`
/// set to the agent woken. Everything else, API keys included, is passed on.
pub fn detached_environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Path,
    agent: Option<&str>,
) -> Vec<(OsString, OsString)> {
    let mut environment: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| {
            // A name that is not UTF-8 is nobody's marker.
            name.to_str()
                .is_none_or(|name| !name.starts_with("BATON_") && !is_session_marker(name))
        })
        .collect();
    // A relative home would name another hub in the run's own directory.
    let home = std::path::absolute(home).unwrap_or_else(|_| home.to_path_buf());
    environment.push(("BATON_HOME".into(), home.into_os_string()));
    if let Some(agent) = agent {
        environment.push(("BATON_AGENT".into(), agent.into()));
    }
    environment
}

/// What a process baton started detached (the supervisor, the notifier) does first: it
/// takes a session of its own, unless setsid(1) gave it one already, and closes every
/// descriptor above 2 that it inherited, so that it holds nothing of its caller's open (a
/// caller reading the waker's output through a pipe on descriptor 7 would otherwise wait
/// for the whole agent run). Call it before this process opens anything of its own, which
/// it would close too.
pub fn detach_from_caller() {
    // Fails only where the process leads its group or session already: setsid(1) ran it.
    let _ = nix::unistd::setsid();
    close_inherited_descriptors();
}

fn close_inherited_descriptors() {
    let open: Vec<i32> = match fs::read_dir("/proc/self/fd") {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
        // Without /proc, every number a descriptor is likely to have.
        Err(_) => (3..1024).collect(),
    };
    for descriptor in open.into_iter().filter(|descriptor| *descriptor > 2) {
        // The listing's own descriptor is among them, closed already: that close fails
        // harmlessly, as does one of a number nothing has open.
        let _ = nix::unistd::close(descriptor);
    }
}

/// Where setsid(1) may be.
const SETSID: [&str; 2] = ["/usr/bin/setsid", "/bin/setsid"];

/// Starts `program args…` detached from the caller: no terminal, no standard streams, not
/// waited for, in the environment of [`detached_environment`], so that the child uses the
/// caller's hub. The child closes the other descriptors it inherits itself, at its start
/// ([`detach_from_caller`]).
pub(crate) fn spawn_detached(program: &Path, args: &[&str], home: &Home) -> io::Result<()> {
    // A session of its own takes the child away from the terminal for good: no SIGHUP when
    // the terminal closes, and an agent CLI run inside cannot open /dev/tty and wait for
    // keys nobody will press. Calling setsid() between fork and exec would need `unsafe`
    // (pre_exec), so use setsid(1), which execs in place (the child is not a group leader,
    // so it does not fork). Without it, the child calls setsid() itself as it starts
    // ([`detach_from_caller`]); it must not lead a process group of its own for that.
    let mut command = match SETSID.iter().find(|path| Path::new(path).is_file()) {
        Some(setsid) => {
            let mut command = Command::new(setsid);
            command.arg(program);
            command
        }
        None => Command::new(program),
    };
    command
        .args(args)
        .env_clear()
        .envs(detached_environment(std::env::vars_os(), home.root(), None))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn()?;
    // Reap it when it ends, so that a long-lived caller (the MCP server) gathers no
    // zombies; a CLI command exits long before and leaves it to init.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

/// The words appended to the wake command. They lead with baton's MCP tools, the one way
/// that works in every client's headless run: Claude Code's wake allows only those, and
/// Gemini CLI's offers no shell; Codex and opencode can also run `baton` in theirs.
pub fn prompt(agent: &str, project: &Project) -> String {
    let mut text = format!(
        "You are {agent}, and baton woke you because work waits for you in project {id}. \
         Act through baton's MCP tools (`inbox`, `claim`, `ask`, `done`, `review`, …), or \
         the `baton` command if you have a shell. Look at your inbox (the `inbox` tool, or \
         `baton inbox`) and act on every task in it: claim a task before you start on it, \
         ask its sender when something is unclear (`ask` with your question), and finish \
         with `done` and a one-line result of what you did, or `review` where a review is \
         required. Answer the questions and give the reviews that wait for you too. Your \
         teammates hear from you only through baton, so put every question, answer and \
         result there. Stop when your inbox shows nothing more for you.",
        id = project.id
    );
    if project.workspace.is_none() {
        text.push_str(&format!(
            " Pass `project: {id}` to every baton tool, or `--project {id}` to every baton \
             command.",
            id = project.id
        ));
    }
    text
}

/// One piece of work in an agent's inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Work {
    project: String,
    item: Item,
    /// Who put it there: work an agent hands itself does not wake it again.
    by: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// A task at one step of its life: the same task back after another move is new work.
    Task {
        id: TaskId,
        reason: Reason,
        /// How many moves the task has had: every transition adds one thread entry.
        step: usize,
    },
    /// An unread message.
    Message { seq: u64 },
}

impl Work {
    fn describe(items: &[Work]) -> String {
        items
            .iter()
            .map(|work| match &work.item {
                Item::Task { id, reason, .. } => {
                    format!("{id} ({}, project {})", reason.what_to_do(), work.project)
                }
                Item::Message { seq } => {
                    format!("message {seq} from {} (project {})", work.by, work.project)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Everything in `agent`'s inboxes, across projects: tasks whose turn is the agent's and
/// unread messages. What cannot be read is skipped: the supervisor has nobody to report it
/// to, and the next command will.
fn waiting(home: &Home, agent: &str) -> Vec<Work> {
    let now = time::now();
    let joined = registry::load(home, agent)
        .ok()
        .flatten()
        .map(|record| record.created_at);
    let mut work = Vec::new();
    for project in project::project_ids(home).unwrap_or_default() {
        if let Ok(board) = board_file::read::<Board>(home, &project) {
            work.extend(board.inbox(agent, now).into_iter().filter_map(|entry| {
                // A task that does not decode is left for the agent's own commands to report.
                // By place: two tasks with one id (a board edited by hand) are both work.
                let task = board.task_at(entry.index).ok()?;
                Some(Work {
                    project: project.clone(),
                    item: Item::Task {
                        id: task.id,
                        reason: entry.reason,
                        step: task.thread.len(),
                    },
                    by: task
                        .thread
                        .last()
                        .map_or_else(|| task.from.clone(), |last| last.by.clone()),
                })
            }));
        }
        if let Some(joined) = joined
            && let Ok(messages) = mail::unread(home, &project, agent, joined)
        {
            work.extend(messages.into_iter().map(|message| Work {
                project: project.clone(),
                item: Item::Message { seq: message.seq },
                by: message.from,
            }));
        }
    }
    work
}

/// The work that is waiting now and was not when `before` was taken, other than the
/// agent's own.
fn arrived(home: &Home, agent: &str, before: &[Work]) -> Vec<Work> {
    waiting(home, agent)
        .into_iter()
        .filter(|work| work.by != agent && !before.contains(work))
        .collect()
}

/// `baton __wake-supervisor AGENT PROJECT`: the detached process that runs the agent's wake
/// command while work arrives for it. Returns at once when another supervisor of the agent
/// holds the lock. Everything it has to say goes to the wake log.
pub fn supervise(hub: &Hub, agent: &str, project: &str, by_hand: bool) -> Result<()> {
    names::check(NameKind::Agent, agent)?;
    names::check(NameKind::Project, project)?;
    let home = &hub.home;
    let Some(mut lock) = FileLock::try_acquire(&home.wake_lock(agent))? else {
        // One runs already, and looks at the inbox again when its run ends.
        return Ok(());
    };
    let log = WakeLog::new(home, agent);
    log.line(&format!(
        "supervisor of {agent} started (pid {})",
        std::process::id()
    ));
    if !by_hand && waiting(home, agent).is_empty() {
        log.line(&format!(
            "supervisor of {agent} ends: nothing waits any more (an earlier run saw to it)"
        ));
        return Ok(());
    }
    let mut project = project.to_string();
    let mut runs = 0;
    loop {
        runs += 1;
        let before = waiting(home, agent);
        if !run_once(hub, agent, &project, runs, &log) {
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
        drop(lock);
        let fresh = arrived(home, agent, &before);
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
        lock = match FileLock::try_acquire(&home.wake_lock(agent))? {
            Some(lock) => lock,
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

/// One run of the wake command in `project`'s workspace; false when it could not start.
fn run_once(hub: &Hub, agent: &str, project_id: &str, run: usize, log: &WakeLog) -> bool {
    let home = &hub.home;
    let argv = match registry::load(home, agent) {
        Ok(Some(record)) => match wake_command(&record) {
            Some(argv) => argv.to_vec(),
            None => {
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
    let project = match project::load(home, project_id) {
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
    // A project bound to a workspace runs there; an unbound one (`default`) runs where the
    // command that woke the agent ran, which is where its sender was working.
    let dir = match &project.workspace {
        Some(workspace) => workspace.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| home.root().to_path_buf()),
    };
    log.trim();
    log.line(&format!(
        "run {run} of at most {MAX_RUNS_IN_A_ROW} in project {project_id} ({}): {} PROMPT",
        dir.display(),
        argv.join(" ")
    ));
    let started = Instant::now();
    let result = log.open().and_then(|out| {
        let err = out.try_clone()?;
        Command::new(&argv[0])
            .args(&argv[1..])
            .arg(prompt(agent, &project))
            .env_clear()
            .envs(detached_environment(
                std::env::vars_os(),
                home.root(),
                Some(agent),
            ))
            // The waker's PWD would name the waker's directory: opencode takes its working
            // directory (and its MCP servers' one, hence baton's project) from PWD.
            .env("PWD", &dir)
            .current_dir(&dir)
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
            log.line(&format!(
                "cannot start `{}` in {}: {error}",
                argv[0],
                dir.display()
            ));
            false
        }
    }
}

/// `wake/<agent>.log`: the supervisor's lines and the agent's output.
struct WakeLog {
    path: PathBuf,
}

impl WakeLog {
    fn new(home: &Home, agent: &str) -> Self {
        WakeLog {
            path: home.wake_log(agent),
        }
    }

    fn open(&self) -> io::Result<File> {
        regular::open_with(&self.path, private_open_options().create(true).append(true))
    }

    /// Appends one line of the supervisor's own; best-effort, as there is nobody to tell.
    fn line(&self, text: &str) {
        if let Ok(mut file) = self.open() {
            let _ = writeln!(file, "[{}] baton wake: {text}", time::now());
        }
    }

    /// Keeps the log bounded; called between runs, when nobody else writes to it.
    fn trim(&self) {
        if let Ok(true) = trim_log(&self.path, LOG_LIMIT, LOG_KEEP) {
            self.line(&format!(
                "(older lines dropped to keep this log under {} KB)",
                LOG_LIMIT / 1024
            ));
        }
    }
}

/// Cuts `path` back to about its last `keep` bytes, from a line start, once it is longer
/// than `limit`. Returns whether it cut.
pub fn trim_log(path: &Path, limit: u64, keep: u64) -> io::Result<bool> {
    let length = match fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    };
    if length <= limit {
        return Ok(false);
    }
    let mut file = regular::open(path)?;
    file.seek(SeekFrom::Start(length.saturating_sub(keep)))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let start = tail
        .iter()
        .position(|byte| *byte == b'\n')
        .map_or(0, |newline| newline + 1);
    atomic::replace(path, &tail[start..], None).map_err(io::Error::other)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_log_keeps_its_last_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("codex.log");
        let text: String = (0..100).map(|n| format!("line {n:03}\n")).collect();
        fs::write(&path, &text).unwrap();
        assert!(!trim_log(&path, 10_000, 100).unwrap(), "under the limit");
        assert!(trim_log(&path, 500, 100).unwrap());
        let kept = fs::read_to_string(&path).unwrap();
        assert!(kept.len() <= 100, "{kept}");
        assert!(kept.starts_with("line "), "cut at a line start: {kept}");
        assert!(kept.ends_with("line 099\n"), "{kept}");
        assert!(!trim_log(&dir.path().join("none.log"), 1, 1).unwrap());
    }

    #[test]
    fn a_detached_process_gets_the_environment_without_session_markers_or_batons() {
        let inherited = [
            ("PATH", "/usr/bin"),
            ("ANTHROPIC_API_KEY", "key"),
            ("CLAUDECODE", "1"),
            ("CLAUDE_CODE_ENTRYPOINT", "cli"),
            ("CLAUDE_CODE_USE_BEDROCK", "1"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_THREAD_ID", "t"),
            ("CODEX_SANDBOX", "seatbelt"),
            ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
            ("CODEX_HOME", "/x"),
            ("GEMINI_CLI", "1"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
            ("GEMINI_CLI_HOME", "/g"),
            ("GEMINI_API_KEY", "key"),
            ("OPENCODE", "1"),
            ("OPENCODE_CONFIG", "/o.json"),
            ("BATON_AGENT", "lead"),
            ("BATON_PROJECT", "api"),
            ("BATON_TOKEN", "secret"),
            ("BATON_HOME", "relative"),
        ];
        let environment = detached_environment(
            inherited
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
            Path::new("/hub"),
            Some("codex"),
        );
        let names: Vec<String> = environment
            .iter()
            .map(|(name, value)| format!("{}={}", name.display(), value.display()))
            .collect();
        assert_eq!(
            names,
            [
                "PATH=/usr/bin",
                "ANTHROPIC_API_KEY=key",
                "CLAUDE_CODE_USE_BEDROCK=1",
                "CLAUDE_CONFIG_DIR=/c",
                "CODEX_HOME=/x",
                "GEMINI_CLI_HOME=/g",
                "GEMINI_API_KEY=key",
                "OPENCODE_CONFIG=/o.json",
                "BATON_HOME=/hub",
                "BATON_AGENT=codex",
            ]
        );
        let home = detached_environment([], Path::new("hub"), None);
        assert_eq!(home.len(), 1, "no agent for the supervisor: {home:?}");
        assert!(Path::new(&home[0].1).is_absolute(), "{home:?}");
    }

    #[test]
    fn the_prompt_names_the_agent_and_the_inbox() {
        let mut project: Project = serde_json::from_value(serde_json::json!({
            "id": "api",
            "workspace": "/src/api",
            "created_at": "2026-11-29T12:00:00.000Z",
        }))
        .unwrap();
        let text = prompt("codex", &project);
        assert!(text.starts_with("You are codex"), "{text}");
        assert!(text.contains("`baton inbox`") && text.contains("project api"));
        assert!(
            text.contains("baton's MCP tools (`inbox`, `claim`, `ask`, `done`, `review`"),
            "the way every client's headless run can act: {text}"
        );
        assert!(
            !text.contains("--project"),
            "a bound workspace resolves itself"
        );
        project.workspace = None;
        assert!(prompt("codex", &project).contains("`--project api`"));
    }
}
