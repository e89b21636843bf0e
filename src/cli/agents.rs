//! Agent commands: agents, agent add/rm/show, whoami, coordinator.

use clap::{Args, Subcommand};
use serde::Serialize;

use baton::error::Error;
use baton::registry::{self, AgentRecord, WakeCommandChange};
use baton::secret::machine_key::MachineKey;
use baton::session::{self, AgentMatrix};
use baton::text::inline;
use baton::time::{self, Timestamp};

use super::{Context, output};

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// The capability matrix: strengths, skills, last seen, load, wake
    #[command(after_help = "Example: baton agents --json")]
    Agents,
    /// Register, remove or show an agent
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Who you are acting as, in which project, and which store holds the board
    #[command(after_help = "Example: baton --as codex whoami")]
    Whoami,
    /// Show the project's coordinator, or hand the role on
    Coordinator(CoordinatorArgs),
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Register an agent, or change its record (fields not given are kept)
    Add(AddArgs),
    /// Remove an agent's record
    #[command(after_help = "Example: baton agent rm old-bot")]
    Rm { name: String },
    /// Show an agent's record
    #[command(after_help = "Example: baton agent show codex")]
    Show { name: String },
}

#[derive(Debug, Args)]
#[command(after_help = "\
Example: baton agent add codex --strengths 'careful Rust' --skills rust,parsers \\
           --wake -- codex exec --skip-git-repo-check

Everything after `--` is the wake command, one argument per word, never split again.
The wake command can only be set here, never over MCP.")]
pub struct AddArgs {
    pub name: String,
    /// What it is good at, in a few words
    #[arg(long)]
    pub strengths: Option<String>,
    /// Skill tags for `send --skill`, comma-separated (an empty value clears them)
    #[arg(long, value_delimiter = ',', value_name = "a,b")]
    pub skills: Option<Vec<String>>,
    /// Set the headless command that wakes it: the words after `--`
    #[arg(long, requires = "command")]
    pub wake: bool,
    /// Remove its wake command
    #[arg(long, conflicts_with = "wake")]
    pub no_wake_command: bool,
    /// The wake command and its arguments, after `--` (with --wake)
    #[arg(last = true, value_name = "CMD ARGS", requires = "wake")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
The coordinator is the first agent to send a task in the project. Only the coordinator, or
a human named with --human, can hand the role on or name humans; anyone can while the
project has no coordinator.

Examples:
  baton coordinator
  baton --as alice coordinator --set claude --human alice")]
pub struct CoordinatorArgs {
    /// Hand the coordinator role to this agent
    #[arg(long, value_name = "NAME")]
    pub set: Option<String>,
    /// Name a human of the project, who may change the coordinator too
    #[arg(long, value_name = "NAME", conflicts_with = "not_human")]
    pub human: Option<String>,
    /// Stop naming NAME a human of the project
    #[arg(long, value_name = "NAME")]
    pub not_human: Option<String>,
}

#[derive(Serialize)]
pub(super) struct Whoami<'a> {
    pub agent: Option<String>,
    pub project: &'a str,
    /// On the hub's machine, for a remote caller.
    pub workspace: Option<&'a std::path::Path>,
    pub coordinator: Option<&'a str>,
    /// This machine's home: where the project map and wake logs of a remote caller are.
    pub home: &'a std::path::Path,
    /// The hub a remote caller acts on (`BATON_URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hub: Option<&'a str>,
    /// The store a local caller's board is read from (`baton::store::named`): BATON_STORE
    /// wins over BATON_HOME, so the home alone does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
}

pub fn run(context: &Context, command: AgentsCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    let home = &context.hub.home;
    let desk = context.desk();
    match command {
        AgentsCommand::Agents => {
            let matrix = desk.agents()?;
            if !as_json {
                warn_unreadable(&matrix);
            }
            output::emit(as_json, &matrix, |matrix| matrix_table(matrix, time::now()));
        }
        AgentsCommand::Agent(AgentCommand::Add(args)) => {
            let profile = registry::Profile {
                strengths: args.strengths,
                skills: args.skills,
            };
            let wake = if args.wake {
                let key = MachineKey::load_or_make(&context.hub.home.machine_key_file())?;
                WakeCommandChange::Set(args.command, std::sync::Arc::new(key))
            } else if args.no_wake_command {
                let key = MachineKey::load(&context.hub.home.machine_key_file())?;
                WakeCommandChange::Remove(key.map(std::sync::Arc::new))
            } else {
                WakeCommandChange::Keep
            };
            let record = match wake {
                WakeCommandChange::Keep => desk.describe_agent(&args.name, profile)?,
                // Only on the hub's own machine (a remote hub refuses it before this).
                wake => {
                    registry::add(&*context.hub.store, &args.name, time::now(), &profile, wake)?
                }
            };
            output::emit(as_json, &record, describe);
        }
        AgentsCommand::Agent(AgentCommand::Rm { name }) => {
            // Only on the hub's own machine (a remote hub refuses it before this).
            session::remove_agent(&context.hub, &name)?;
            output::emit(as_json, &serde_json::json!({"removed": name}), |_| {
                format!("removed agent {name}")
            });
        }
        AgentsCommand::Agent(AgentCommand::Show { name }) => {
            let record = desk.agent_record(&name)?;
            output::emit(as_json, &record, describe);
        }
        AgentsCommand::Whoami => {
            let agent = match desk.agent() {
                Ok(agent) => Some(agent),
                Err(Error::NoIdentity) => None,
                Err(error) => return Err(error),
            };
            // Its own mapped directory, on a hub elsewhere: the hub's path means nothing here.
            let project = desk.project()?;
            let me = Whoami {
                agent,
                project: &project.id,
                workspace: project.workspace.as_deref(),
                coordinator: project.coordinator.as_deref(),
                home: home.root(),
                hub: desk.hub_url(),
                store: match desk.hub_url() {
                    Some(_) => None,
                    None => Some(baton::store::named(&*context.hub.store)),
                },
            };
            output::emit(as_json, &me, whoami_text);
        }
        AgentsCommand::Coordinator(args) => {
            let project = desk.coordinate(
                args.set.as_deref(),
                args.human.as_deref(),
                args.not_human.as_deref(),
            )?;
            output::emit(as_json, &coordinator_value(&project), |_| {
                coordinator_text(&project)
            });
        }
    }
    Ok(0)
}

/// Says on stderr which agents `agents` left out, their records unreadable.
pub(super) fn warn_unreadable(matrix: &AgentMatrix) {
    for problem in &matrix.problems {
        eprintln!(
            "warning: agent {} left out: {}",
            inline(&problem.agent),
            inline(&problem.error)
        );
    }
    if !matrix.problems.is_empty() {
        eprintln!("hint: `baton doctor` checks every record");
    }
}

/// `whoami` in words.
pub(super) fn whoami_text(me: &Whoami) -> String {
    let mut text = format!(
        "{} in project {}{}{}",
        me.agent
            .as_deref()
            .unwrap_or("(no identity: pass --as NAME or set BATON_AGENT)"),
        me.project,
        me.workspace
            .map(|dir| format!(" ({})", dir.display()))
            .unwrap_or_default(),
        me.hub
            .map(|url| format!(" on the hub at {url}"))
            .unwrap_or_default()
    );
    if let Some(store) = &me.store {
        text.push_str(&format!("\nstore: {store}"));
    }
    text
}

/// What `coordinator --json` prints.
pub(super) fn coordinator_value(project: &baton::project::Project) -> serde_json::Value {
    serde_json::json!({
        "project": project.id,
        "coordinator": project.coordinator,
        "humans": project.settings.humans,
    })
}

/// `coordinator` in words: who coordinates, and the humans who may change it.
pub(super) fn coordinator_text(project: &baton::project::Project) -> String {
    let mut text = match &project.coordinator {
        Some(name) => format!("{name} coordinates project {}", project.id),
        None => format!(
            "project {} has no coordinator yet: the first agent to send a task \
             becomes it",
            project.id
        ),
    };
    if !project.settings.humans.is_empty() {
        text.push_str(&format!(
            "\nhumans who may change it: {}",
            project.settings.humans.join(", ")
        ));
    }
    text
}

pub(super) fn matrix_table(matrix: &AgentMatrix, now: Timestamp) -> String {
    if matrix.agents.is_empty() {
        return "no agents yet: they appear when they first run baton, or by \
                `baton agent add NAME`"
            .to_string();
    }
    let skills: Vec<String> = matrix
        .agents
        .iter()
        .map(|row| {
            if row.skills.is_empty() {
                "-".to_string()
            } else {
                inline(&row.skills.join(",")).to_string()
            }
        })
        .collect();
    let name_width = matrix
        .agents
        .iter()
        .map(|row| row.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let skills_width = skills
        .iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut text = format!("project {}\n", matrix.project);
    text.push_str(&format!(
        "{:<name_width$} {:>4} {:>4} {:>5} {:>6} {:>9} {:<4} {:<skills_width$} STRENGTHS\n",
        "AGENT", "OPEN", "WORK", "INBOX", "UNSEEN", "SEEN", "WAKE", "SKILLS"
    ));
    for (row, skills) in matrix.agents.iter().zip(&skills) {
        text.push_str(&format!(
            "{:<name_width$} {:>4} {:>4} {:>5} {:>6} {:>9} {:<4} {:<skills_width$} {}\n",
            row.name,
            row.open,
            row.working,
            row.inbox,
            row.unseen,
            format!("{} ago", time::age(row.last_seen, now)),
            if row.wake { "yes" } else { "-" },
            skills,
            if row.strengths.is_empty() {
                "-".to_string()
            } else {
                inline(&row.strengths).to_string()
            }
        ));
    }
    text
}

pub(super) fn describe(record: &AgentRecord) -> String {
    let wake = match &record.wake {
        // Debug quotes each word and escapes control characters; `inline` escapes what it
        // leaves (bidirectional overrides).
        Some(argv) if !argv.is_empty() => match &record.host {
            Some(host) => format!(
                "{} (runs on {})",
                inline(&format!("{argv:?}")),
                inline(host)
            ),
            None => inline(&format!("{argv:?}")).to_string(),
        },
        // A hub shows a wake command only to the agent and its project's coordinator.
        _ if record.other.get("wake_hidden") == Some(&serde_json::Value::Bool(true)) => {
            "set (shown only to the agent itself and the project's coordinator)".to_string()
        }
        _ => "none".to_string(),
    };
    format!(
        "{}\n  strengths: {}\n  skills:    {}\n  wake:      {}\n  clients:   {}\n  created:   {}\n  last seen: {}",
        record.name,
        if record.strengths.is_empty() {
            "-".to_string()
        } else {
            inline(&record.strengths).to_string()
        },
        if record.skills.is_empty() {
            "-".to_string()
        } else {
            inline(&record.skills.join(", ")).to_string()
        },
        wake,
        if record.clients.is_empty() {
            "-".to_string()
        } else {
            inline(&record.clients.join(", ")).to_string()
        },
        record.created_at,
        record.last_seen
    )
}
