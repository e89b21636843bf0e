//! Waking agents that are not running (SPEC section 8).
//!
//! When a change puts work into an agent's inbox and the agent has a wake command, the
//! command that made the change starts a supervisor, `baton __wake-supervisor`, detached
//! from it, and returns at once. The supervisor holds the agent's wake duty ([`Duty::Wake`]:
//! on the files, `wake/<agent>.lock`), so at most one runs per agent among every process
//! sharing the store; it runs the wake command with a prompt appended, and runs it again
//! while work that arrived during a run still waits, at most [`MAX_RUNS_IN_A_ROW`] times.
//! What it does and what the agent prints go to `wake/<agent>.log` of this machine
//! ([`log`]).
//!
//! The supervisor acts for the agent while it is away, so it renews no lease (SPEC section
//! 3): it reads the boards as files and writes only delivery marks ([`supervise`]'s
//! `record_woken`), never through a session of the agent's. What the woken agent does itself
//! renews its leases.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::board::delivery::DeliveryState;
use crate::board::inbox::Reason;
use crate::board::task::TaskId;
use crate::error::{Result, WakeError};
use crate::file::text_log::TextLog;
use crate::home::Home;
use crate::mail;
use crate::names::{self, NameKind};
use crate::process::{detached_environment, program_to_run, spawn_detached, why_not_started};
use crate::project::{self, Project};
use crate::registry;
use crate::secret::machine_key::MachineKey;
use crate::store::feed::What;
use crate::store::{Duty, Store};
use crate::time;

/// A supervisor stops after this many runs in a row, so two agents handing work back and
/// forth cannot keep each other awake for ever. What still waits stays in the inbox.
pub const MAX_RUNS_IN_A_ROW: usize = 3;
/// The hidden subcommand that runs the supervisor.
pub const SUPERVISOR_COMMAND: &str = "__wake-supervisor";

/// What became of waking one agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WakeOutcome {
    /// A supervisor was started for it.
    Started {
        agent: String,
        project: String,
        /// The tasks handed over that the run is for (none for a wake by hand or a message).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<TaskId>,
        log: PathBuf,
    },
    /// Its supervisor runs already; it looks at the inbox again when its run ends.
    AlreadyAwake {
        agent: String,
        project: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<TaskId>,
        log: PathBuf,
    },
    /// Nothing runs here, but a listener of the agent (`baton listen` on its own machine)
    /// follows this hub: it runs that machine's wake command for the work.
    Listening {
        agent: String,
        project: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<TaskId>,
    },
    /// The agent's wake command runs on another machine, its host (SPEC section 16): the
    /// hub there starts it, following the store this one shares with it.
    OnItsHost {
        agent: String,
        project: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tasks: Vec<TaskId>,
        host: String,
    },
    /// The supervisor could not be started; the work waits in the inbox all the same.
    Failed {
        agent: String,
        project: String,
        error: String,
    },
}

/// Wakes `agent` for work that arrived for it in `project`, if it has a wake command and
/// the project's settings do not turn waking off; `None` when it sleeps on. `program` is
/// the `baton` binary that runs the supervisor: this very program.
pub fn wake_agent(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project: &str,
    tasks: &[TaskId],
    program: Option<&Path>,
) -> Option<WakeOutcome> {
    let record = registry::load(store, agent).ok().flatten()?;
    wake_command(&record)?;
    let is_on = project::load(store, project)
        .ok()
        .flatten()
        .is_none_or(|project| project.settings.wake);
    if !is_on {
        return None;
    }
    if let Some(host) = host_elsewhere(store, &record) {
        return Some(WakeOutcome::OnItsHost {
            agent: agent.to_string(),
            project: project.to_string(),
            tasks: tasks.to_vec(),
            host: host.to_string(),
        });
    }
    if let Some(why) = not_signed_here(store, home, &record) {
        // Where the user looks when an agent is not woken.
        log(home, agent).line(&why);
        return Some(WakeOutcome::Failed {
            agent: agent.to_string(),
            project: project.to_string(),
            error: why,
        });
    }
    Some(start(store, home, agent, project, tasks, program, false))
}

/// The machine `record`'s wake command runs on, when that is not this one and the store is
/// shared by several machines (SPEC section 16). A home of files is one machine's, so there
/// the command runs wherever the work is handed over, as it did before hosts were recorded
/// (and after a machine is renamed).
pub fn host_elsewhere<'a>(store: &dyn Store, record: &'a registry::AgentRecord) -> Option<&'a str> {
    let host = record.host.as_deref()?;
    if !store.is_shared_by_machines() {
        return None;
    }
    (crate::process::this_host().as_deref() != Some(host)).then_some(host)
}

/// Why `record`'s wake command must not run on this machine, though its host is this one or
/// none: on a store several machines share, anyone holding the store's credentials can write
/// an agent's record, so only a wake command signed with this machine's key (registered
/// here, `secret::machine_key`) runs here. On a home of files, one machine's, whoever can
/// write the record can write the key too, and every command runs as before.
pub fn not_signed_here(
    store: &dyn Store,
    home: &Home,
    record: &registry::AgentRecord,
) -> Option<String> {
    let agent = &record.name;
    refused_unless_signed(store, home, |key| record.is_wake_signed_by(key)).map(|why| {
        why.unwrap_or_else(|| {
            format!(
                "{agent}'s wake command was not registered on this machine (no signature of \
                 this machine's key: it was written from elsewhere, or before baton signed wake \
                 commands), so it does not run here; `baton agent add {agent} --wake -- CMD…` \
                 on this machine registers it"
            )
        })
    })
}

/// Why a wake command must not run in `project`'s workspace on this machine: on a store
/// several machines share, anyone holding its credentials can bind a project to any
/// directory (one where they left an agent client's settings, say), so a wake runs in a
/// workspace only on the machine that bound it (`project init` signs the binding with the
/// machine's key). On a home of files, one machine's, nothing is checked, as for the
/// command itself ([`not_signed_here`]).
fn workspace_not_bound_here(store: &dyn Store, home: &Home, project: &Project) -> Option<String> {
    let workspace = project.workspace.as_deref()?.display();
    let id = &project.id;
    refused_unless_signed(store, home, |key| project.is_workspace_signed_by(key)).map(|why| {
        why.unwrap_or_else(|| {
            format!(
                "project {id}'s workspace {workspace} was not bound on this machine (no \
                 signature of this machine's key: bound from elsewhere, or before baton signed \
                 workspaces), so no wake command runs there; `baton project init --name {id} \
                 --workspace {workspace}` on this machine binds it"
            )
        })
    })
}

/// On a store several machines share, a refusal unless `is_signed` holds with this
/// machine's key: `Some(None)` when it does not (or there is no key yet), `Some(Some(why))`
/// when the key cannot be read; `None`, nothing refused, on a home of files.
fn refused_unless_signed(
    store: &dyn Store,
    home: &Home,
    is_signed: impl Fn(&MachineKey) -> bool,
) -> Option<Option<String>> {
    if !store.is_shared_by_machines() {
        return None;
    }
    match MachineKey::load(&home.machine_key_file()) {
        Ok(Some(key)) if is_signed(&key) => None,
        Ok(_) => Some(None),
        Err(error) => Some(Some(format!("no wake command runs here: {error}"))),
    }
}

/// `baton wake NAME`: starts the agent's supervisor now, whatever its inbox holds.
pub fn wake_by_hand(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project: &str,
    program: Option<&Path>,
) -> Result<WakeOutcome> {
    let record = registry::require(store, agent)?;
    if wake_command(&record).is_none() {
        return Err(WakeError::NoWakeCommand {
            agent: agent.to_string(),
        }
        .into());
    }
    if let Some(host) = host_elsewhere(store, &record) {
        return Err(WakeError::HostElsewhere {
            agent: agent.to_string(),
            host: host.to_string(),
        }
        .into());
    }
    if let Some(why) = not_signed_here(store, home, &record) {
        return Err(WakeError::NotSignedHere { why }.into());
    }
    match start(store, home, agent, project, &[], program, true) {
        WakeOutcome::Failed { error, .. } => Err(WakeError::Failed {
            agent: agent.to_string(),
            cause: error.to_string(),
        }
        .into()),
        outcome => Ok(outcome),
    }
}

/// The agent's wake command, when it has a usable one.
pub fn wake_command(record: &registry::AgentRecord) -> Option<&[String]> {
    record.wake.as_deref().filter(|argv| {
        argv.first()
            .is_some_and(|program| !program.trim().is_empty())
    })
}

/// Starts the supervisor of `agent` unless one runs already.
fn start(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    project: &str,
    tasks: &[TaskId],
    program: Option<&Path>,
    by_hand: bool,
) -> WakeOutcome {
    let log = home.wake_log(agent);
    // A peek, not a promise: if a supervisor finishes right after it, that supervisor's
    // look at the inbox after releasing its lock still sees this change's work.
    if store.is_held(&Duty::Wake(agent.to_string())) {
        return WakeOutcome::AlreadyAwake {
            agent: agent.to_string(),
            project: project.to_string(),
            tasks: tasks.to_vec(),
            log,
        };
    }
    let failed = |error: String| WakeOutcome::Failed {
        agent: agent.to_string(),
        project: project.to_string(),
        error,
    };
    let Some(program) = program else {
        return failed("cannot find the baton executable to run the supervisor".into());
    };
    let mut args = vec![SUPERVISOR_COMMAND, agent, project];
    if by_hand {
        args.push("--by-hand");
    }
    match spawn_detached(program, &args, home.root()) {
        Ok(()) => WakeOutcome::Started {
            agent: agent.to_string(),
            project: project.to_string(),
            tasks: tasks.to_vec(),
            log,
        },
        Err(error) => failed(format!("cannot start {}: {error}", program.display())),
    }
}

/// The words appended to the wake command. They lead with baton's MCP tools, the one way
/// that works in every client's headless run: Claude Code's wake allows only those, and
/// Gemini CLI's offers no shell; Codex and opencode can also run `baton` in theirs.
///
/// The names in it are checked names, and shown escaped all the same (SPEC section 10): a
/// prompt is read by a model, and one built from what a hub answered must not carry a
/// line or a control character it slipped in.
pub fn prompt(agent: &str, project: &Project) -> String {
    let agent = crate::text::inline(agent);
    let id = crate::text::inline(&project.id);
    let mut text = format!(
        "You are {agent}, and baton woke you because work waits for you in project {id}. \
         Act through baton's MCP tools (`inbox`, `claim`, `ask`, `done`, `review`, …), or \
         the `baton` command if you have a shell. Look at your inbox (the `inbox` tool, or \
         `baton inbox`) and act on every task in it: claim a task before you start on it, \
         ask its sender when something is unclear (`ask` with your question), and finish \
         with `done` and a one-line result of what you did, or `review` where a review is \
         required. Answer the questions and give the reviews that wait for you too. Your \
         teammates hear from you only through baton, so put every question, answer and \
         result there. Stop when your inbox shows nothing more for you."
    );
    if project.workspace.is_none() {
        text.push_str(&format!(
            " Pass `project: {id}` to every baton tool, or `--project {id}` to every baton \
             command."
        ));
    }
    text
}

/// The prompt of a run that `baton listen` starts on an agent's machine: [`prompt`], and,
/// for a project mapped to a directory there, that baton's tools need the project named.
/// The directory gives the project to the `baton` command and to the hooks, but a client
/// wired by `setup --url` reaches the hub's MCP tools over HTTP, where a call that names no
/// project acts on `default` (SPEC section 13).
pub fn remote_prompt(agent: &str, project: &Project) -> String {
    let mut text = prompt(agent, project);
    if project.workspace.is_some()
        && let Some(note) = project::tools_over_http_note(&project.id)
    {
        text.push(' ');
        text.push_str(&note);
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
    /// The tasks among `items`, grouped by project.
    fn tasks_by_project(items: &[Work]) -> Vec<(String, Vec<TaskId>)> {
        let mut grouped: Vec<(String, Vec<TaskId>)> = Vec::new();
        for work in items {
            if let Item::Task { id, .. } = &work.item {
                match grouped
                    .iter_mut()
                    .find(|(project, _)| *project == work.project)
                {
                    Some((_, ids)) => ids.push(*id),
                    None => grouped.push((work.project.clone(), vec![*id])),
                }
            }
        }
        grouped
    }

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
fn waiting(store: &dyn Store, agent: &str) -> Vec<Work> {
    waiting_in(
        store,
        agent,
        &project::project_ids(store).unwrap_or_default(),
    )
}

/// [`waiting`] in `projects` alone.
fn waiting_in(store: &dyn Store, agent: &str, projects: &[String]) -> Vec<Work> {
    let now = time::now();
    let joined = registry::load(store, agent)
        .ok()
        .flatten()
        .map(|record| record.created_at);
    let mut work = Vec::new();
    for project in projects {
        if let Ok(board) = store.board(project) {
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
            && let Ok(messages) = mail::unread(store, project, agent, joined)
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

/// The tasks of `before` whose delivery to `agent` is still only woken after a run: the run
/// never showed them to the agent (its command may not reach baton at all).
fn still_unseen(store: &dyn Store, agent: &str, before: &[Work]) -> Vec<(String, TaskId)> {
    deliveries(store, agent, before)
        .into_iter()
        .filter(|(_, _, state)| *state == Some(DeliveryState::Woken))
        .map(|(project, id, _)| (project, id))
        .collect()
}

/// The state of the delivery to `agent` of each task among `work`, each board read once:
/// `None` for a task whose board cannot be read, that is gone, or whose latest hand-over is
/// to someone else.
fn deliveries(
    store: &dyn Store,
    agent: &str,
    work: &[Work],
) -> Vec<(String, TaskId, Option<DeliveryState>)> {
    let mut states = Vec::new();
    for (project, ids) in Work::tasks_by_project(work) {
        let board = store.board(&project).ok();
        for id in ids {
            let state = board
                .as_ref()
                .and_then(|board| board.task(id).ok().flatten())
                .and_then(|task| {
                    task.delivery
                        .as_ref()
                        .filter(|delivery| delivery.to == agent)
                        .map(|delivery| delivery.state)
                });
            states.push((project.clone(), id, state));
        }
    }
    states
}

/// The work that is waiting now and was not when `before` was taken, other than the
/// agent's own.
fn arrived(store: &dyn Store, agent: &str, before: &[Work]) -> Vec<Work> {
    waiting(store, agent)
        .into_iter()
        .filter(|work| work.by != agent && !before.contains(work))
        .collect()
}

/// On a store several machines share, wakes the agents whose wake command is registered on
/// this machine for work handed over anywhere: through another hub, or a command on another
/// machine, which start no wake command of this one's (SPEC section 16). `baton serve` runs
/// it on a thread of its own for as long as it serves. Nothing to do on a home of files, one
/// machine's, where whoever hands work over wakes the agent, nor on a machine with no name.
pub fn wake_hosted_agents(
    store: std::sync::Arc<dyn Store>,
    home: Home,
    program: Option<PathBuf>,
) -> Option<std::thread::JoinHandle<()>> {
    if !store.is_shared_by_machines() {
        return None;
    }
    let host = crate::process::this_host()?;
    std::thread::Builder::new()
        .name("hosted wakes".into())
        .spawn(move || follow_for_hosted(&*store, &home, &host, program.as_deref()))
        .ok()
}

/// How often the agents of this machine are looked up again: one registered meanwhile is
/// woken at most this late for work that arrived for it.
const HOSTED_LOOKUP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// [`wake_hosted_agents`]' loop: after each batch of changes, each agent of `host` for which
/// work arrived since the last look (other than its own) is woken, as a hand-over here would
/// wake it. A supervisor already running for it, started here by the change itself or by a
/// command, holds the agent's wake duty, and then this start does nothing.
fn follow_for_hosted(store: &dyn Store, home: &Home, host: &str, program: Option<&Path>) {
    let feed = loop {
        match store.changes(&crate::store::feed::Scope::Hub) {
            Ok(feed) => break feed,
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    };
    let mut feed = feed;
    let mut agents = hosted_agents(store, host);
    let mut looked_up = Instant::now();
    // What waits already, handed over before the feed was made (while this hub was down or
    // starting), and never woken for nor shown: woken for now, as a listener does after a gap.
    let mut seen: std::collections::HashMap<String, Vec<Work>> = std::collections::HashMap::new();
    for agent in &agents {
        let now = waiting(store, agent);
        let queued: Vec<Work> = now
            .iter()
            .filter(|work| work.by != *agent && is_queued(store, agent, work))
            .cloned()
            .collect();
        wake_for(store, home, agent, &queued, program);
        seen.insert(agent.clone(), now);
    }
    loop {
        let changes = match feed.next(std::time::Duration::from_secs(30)) {
            Ok(changes) => changes,
            // The feed says it broke, and tells everything once it is back.
            Err(_) => {
                std::thread::sleep(std::time::Duration::from_millis(500));
                continue;
            }
        };
        // Only the projects that changed are looked at again, unless the feed may have
        // missed changes; the tokens' changes put no work anywhere.
        let projects: Vec<String> = if changes.iter().any(|change| change.what == What::Everything)
        {
            project::project_ids(store).unwrap_or_default()
        } else {
            let mut projects: Vec<String> = changes
                .into_iter()
                .filter_map(|change| change.project)
                .collect();
            projects.sort();
            projects.dedup();
            projects
        };
        if projects.is_empty() {
            continue;
        }
        if looked_up.elapsed() >= HOSTED_LOOKUP_EVERY {
            agents = hosted_agents(store, host);
            looked_up = Instant::now();
            seen.retain(|agent, _| agents.contains(agent));
        }
        for agent in &agents {
            let now = waiting_in(store, agent, &projects);
            let mut kept = seen.remove(agent).unwrap_or_default();
            let fresh: Vec<Work> = now
                .iter()
                .filter(|work| work.by != *agent && !kept.contains(work))
                .cloned()
                .collect();
            wake_for(store, home, agent, &fresh, program);
            kept.retain(|work| !projects.contains(&work.project));
            kept.extend(now);
            seen.insert(agent.clone(), kept);
        }
    }
}

/// Wakes `agent` for `fresh` work, in the project of the first of it; nothing when there is
/// none.
fn wake_for(store: &dyn Store, home: &Home, agent: &str, fresh: &[Work], program: Option<&Path>) {
    let Some(first) = fresh.first() else {
        return;
    };
    let tasks: Vec<TaskId> = Work::tasks_by_project(fresh)
        .into_iter()
        .find(|(project, _)| *project == first.project)
        .map(|(_, ids)| ids)
        .unwrap_or_default();
    let _ = wake_agent(store, home, agent, &first.project, &tasks, program);
}

/// Whether `work` is a task handed to `agent` that nothing has woken it for nor shown it yet.
fn is_queued(store: &dyn Store, agent: &str, work: &Work) -> bool {
    deliveries(store, agent, std::slice::from_ref(work))
        .first()
        .is_some_and(|(_, _, state)| *state == Some(DeliveryState::Queued))
}

/// The agents whose wake command is registered on `host`.
fn hosted_agents(store: &dyn Store, host: &str) -> Vec<String> {
    registry::names(store)
        .unwrap_or_default()
        .into_iter()
        .filter(|agent| {
            registry::load(store, agent)
                .ok()
                .flatten()
                .is_some_and(|record| {
                    wake_command(&record).is_some() && record.host.as_deref() == Some(host)
                })
        })
        .collect()
}

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
/// push) before it runs the wake command.
const PUSH_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether everything waiting for `agent` is tasks that its live Codex session in `project`
/// was shown within [`PUSH_GRACE`]: Codex's app-server acknowledges a push before baton
/// records it as seen, so a wake run would be a second agent on the same work. A session that
/// cannot take the push leaves the work unseen, and the wake command runs as before. Only
/// Codex's pushes count: a Claude Code channel push may be dropped by the client unsaid.
fn shown_in_live_session(store: &dyn Store, agent: &str, project: &str) -> bool {
    let codex = crate::client::Client::Codex.name();
    if !store
        .live_clients(project, agent)
        .iter()
        .any(|client| client == codex)
    {
        return false;
    }
    let deadline = Instant::now() + PUSH_GRACE;
    loop {
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
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// The tasks among `work` that nothing says were shown to `agent`.
fn unseen_tasks(store: &dyn Store, agent: &str, work: &[Work]) -> Vec<TaskId> {
    deliveries(store, agent, work)
        .into_iter()
        .filter(|(_, _, state)| state.is_none_or(DeliveryState::is_unseen))
        .map(|(_, id, _)| id)
        .collect()
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

/// `wake/<agent>.log`: the supervisor's lines and the agent's output, kept bounded between
/// runs, when nobody else writes to it.
pub fn log(home: &Home, agent: &str) -> TextLog {
    TextLog::new(home.wake_log(agent), "baton wake")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_a_home_of_files_a_wake_command_runs_here_whatever_host_its_record_names() {
        let root = tempfile::tempdir().unwrap();
        let store = crate::store::files::FileStore::new(
            Home::new(root.path().to_path_buf()),
            crate::file::lock::LockPolicy::silent(std::time::Duration::from_secs(5)),
        );
        let mut record = registry::AgentRecord::new("codex", time::now());
        record.wake = Some(vec!["codex".into()]);
        record.host = Some("a-renamed-machine".into());
        assert_eq!(host_elsewhere(&store, &record), None);
        assert!(
            wake_hosted_agents(
                std::sync::Arc::new(store),
                Home::new(root.path().into()),
                None
            )
            .is_none(),
            "no thread follows a home of files for hosted agents"
        );
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
        // Names are checked before they get here; shown escaped all the same.
        project.id = "api\n\u{1b}[2J".to_string();
        let text = prompt("co\u{202e}dex", &project);
        assert!(!text.contains(['\n', '\u{1b}', '\u{202e}']), "{text}");
        assert!(text.contains("project api\\u{a}\\u{1b}[2J"), "{text}");
    }

    #[test]
    fn a_run_listen_starts_in_a_mapped_project_is_told_to_name_it_to_the_tools() {
        let mut project: Project = serde_json::from_value(serde_json::json!({
            "id": "api",
            "workspace": "/home/ann/src/api",
            "created_at": "2026-11-29T12:00:00.000Z",
        }))
        .unwrap();
        let text = remote_prompt("codex", &project);
        assert!(text.starts_with(&prompt("codex", &project)), "{text}");
        assert!(
            text.ends_with(
                "Pass `project: api` to every baton tool: they reach the hub, which does not \
                 know this directory."
            ),
            "{text}"
        );
        // Unmapped, the prompt says it for tools and commands alike, once.
        project.workspace = None;
        assert_eq!(remote_prompt("codex", &project), prompt("codex", &project));
        // `default` is what a call naming no project acts on.
        project.workspace = Some("/home/ann/src".into());
        project.id = "default".to_string();
        assert_eq!(remote_prompt("codex", &project), prompt("codex", &project));
    }
}
