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

mod hosted;
mod supervisor;
mod work;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::board::task::{TaskId, Worktree};
use crate::error::{Result, WakeError};
use crate::file::text_log::TextLog;
use crate::home::Home;
use crate::process::spawn_detached;
use crate::project::{self, Project};
use crate::registry;
use crate::secret::machine_key::MachineKey;
use crate::store::{Duty, Store};

pub use hosted::wake_hosted_agents;
pub use supervisor::{Launch, run_command, supervise};

/// What a supervisor asks of the floor that changes boards (the session) before a run: it
/// reads boards and writes none itself.
pub trait RunSetup {
    /// Records `woken` on the delivery to the agent of `ids` in `project`: a run is starting
    /// for them.
    fn record_woken(&self, project: &str, ids: &[TaskId]);

    /// The worktree a run for task `id` of `project` starts in (SPEC section 18.4): the
    /// task's own, made on this machine and recorded on the task first when the project has
    /// worktrees on and the task has none yet. `Ok(None)` when the run works in the
    /// workspace (worktrees off, or the task is no longer the agent's to do); `Err` says
    /// why the worktree could not be made.
    fn worktree(&self, project: &str, id: TaskId)
    -> std::result::Result<Option<Workplace>, String>;
}

/// A task's worktree as a wake run finds it, and what went wrong making it without
/// stopping the run (a file not copied, a setup that failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workplace {
    pub worktree: Worktree,
    pub warnings: Vec<String>,
}

/// The longest a push of work into an agent's live session may take before its pusher gives
/// up on it (a Codex session's, `mcp/codex.rs`); the supervisor waits at least this long for
/// a push before it runs the wake command beside the session.
pub const PUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

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

impl WakeOutcome {
    /// Every outcome, as its `outcome` field spells it: the labels of the wakes counted
    /// ([`crate::metrics::WAKE_RUNS`]).
    pub const NAMES: &[&str] = &[
        "started",
        "already_awake",
        "listening",
        "on_its_host",
        "failed",
    ];

    /// As its `outcome` field spells it.
    pub fn name(&self) -> &'static str {
        match self {
            WakeOutcome::Started { .. } => "started",
            WakeOutcome::AlreadyAwake { .. } => "already_awake",
            WakeOutcome::Listening { .. } => "listening",
            WakeOutcome::OnItsHost { .. } => "on_its_host",
            WakeOutcome::Failed { .. } => "failed",
        }
    }

    /// The outcome, counted among the wakes of this process.
    pub fn counted(self) -> WakeOutcome {
        crate::metrics::WAKE_RUNS.add(self.name());
        self
    }
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
    wake_agent_of(store, home, agent, &record, project, tasks, program)
}

/// [`wake_agent`], with `agent`'s registry record read already.
pub fn wake_agent_of(
    store: &dyn Store,
    home: &Home,
    agent: &str,
    record: &registry::AgentRecord,
    project: &str,
    tasks: &[TaskId],
    program: Option<&Path>,
) -> Option<WakeOutcome> {
    wake_command(record)?;
    let is_on = project::load(store, project)
        .ok()
        .flatten()
        .is_none_or(|project| project.settings.wake);
    if !is_on {
        return None;
    }
    let outcome = if let Some(host) = host_elsewhere(store, record) {
        WakeOutcome::OnItsHost {
            agent: agent.to_string(),
            project: project.to_string(),
            tasks: tasks.to_vec(),
            host: host.to_string(),
        }
    } else if let Some(why) = not_signed_here(store, home, record) {
        // Where the user looks when an agent is not woken.
        log(home, agent).line(&why);
        WakeOutcome::Failed {
            agent: agent.to_string(),
            project: project.to_string(),
            error: why,
        }
    } else {
        start(store, home, agent, project, tasks, program, false)
    };
    Some(outcome.counted())
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
    match start(store, home, agent, project, &[], program, true).counted() {
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

/// What a run that starts in task `id`'s worktree is told of it, after [`prompt`]: where to
/// work ([`Worktree::where_to_work`]), and that the work is committed there.
pub fn worktree_prompt(id: TaskId, worktree: &Worktree) -> String {
    format!(
        "This run starts in {id}'s own git worktree: {}. Make {id}'s changes there, not in \
         the project's workspace, and commit them on that branch before you finish it or ask \
         for review. A task with a worktree of its own is worked in it: the inbox says where.",
        worktree.where_to_work()
    )
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

/// `wake/<agent>.log`: the supervisor's lines and the agent's output, kept bounded between
/// runs, when nobody else writes to it.
pub fn log(home: &Home, agent: &str) -> TextLog {
    TextLog::new(home.wake_log(agent), "baton wake")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time;

    #[test]
    fn every_outcome_is_named_as_its_json_spells_it() {
        let (agent, project, tasks) = (String::new(), String::new(), Vec::new());
        let outcomes = [
            WakeOutcome::Started {
                agent: agent.clone(),
                project: project.clone(),
                tasks: tasks.clone(),
                log: PathBuf::new(),
            },
            WakeOutcome::AlreadyAwake {
                agent: agent.clone(),
                project: project.clone(),
                tasks: tasks.clone(),
                log: PathBuf::new(),
            },
            WakeOutcome::Listening {
                agent: agent.clone(),
                project: project.clone(),
                tasks: tasks.clone(),
            },
            WakeOutcome::OnItsHost {
                agent: agent.clone(),
                project: project.clone(),
                tasks,
                host: String::new(),
            },
            WakeOutcome::Failed {
                agent,
                project,
                error: String::new(),
            },
        ];
        let names: Vec<&str> = outcomes.iter().map(WakeOutcome::name).collect();
        assert_eq!(names, WakeOutcome::NAMES);
        for outcome in &outcomes {
            let json = serde_json::to_value(outcome).unwrap();
            assert_eq!(json["outcome"], outcome.name());
        }
    }

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
