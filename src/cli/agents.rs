//! Agent commands: agents, agent add/rm/show, whoami, coordinator.

use clap::{Args, Subcommand};
use serde::Serialize;

use baton::error::Error;
use baton::registry::{self, AgentRecord};
use baton::time;

use super::{Context, output};

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// The capability matrix: strengths, skills, last seen, load, wake
    Agents,
    /// Register, remove or show an agent
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Who you are acting as, and in which project
    Whoami,
    /// Show the project's coordinator, or hand the role on
    Coordinator(CoordinatorArgs),
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Register an agent, or change its record (fields not given are kept)
    Add(AddArgs),
    /// Remove an agent's record
    Rm { name: String },
    /// Show an agent's record
    Show { name: String },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    pub name: String,
    /// What it is good at, in a few words
    #[arg(long)]
    pub strengths: Option<String>,
    /// Skill tags for `send --skill`, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "a,b")]
    pub skills: Option<Vec<String>>,
    /// The headless command that wakes it, after `--`: `--wake -- claude -p`
    #[arg(long, num_args = 1.., allow_hyphen_values = true, value_name = "CMD")]
    pub wake: Option<Vec<String>>,
    /// Remove its wake command
    #[arg(long, conflicts_with = "wake")]
    pub no_wake_command: bool,
}

#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Hand the coordinator role to this agent
    #[arg(long, value_name = "NAME")]
    pub set: Option<String>,
}

#[derive(Serialize)]
struct Whoami<'a> {
    agent: Option<String>,
    project: &'a str,
    workspace: Option<&'a std::path::Path>,
    coordinator: Option<&'a str>,
    home: &'a std::path::Path,
}

pub fn run(context: &Context, command: AgentsCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    let home = &context.hub.home;
    match command {
        AgentsCommand::Agents => {
            let session = context.session()?;
            let rows = session.agents()?;
            output::emit(as_json, &rows, |rows| {
                if rows.is_empty() {
                    return "no agents yet: they appear when they first run baton, or by \
                            `baton agent add NAME`"
                        .to_string();
                }
                let mut text = format!(
                    "{:<16} {:>4} {:>4} {:>5} {:>9} {:<4} {:<20} STRENGTHS\n",
                    "AGENT", "OPEN", "WORK", "INBOX", "SEEN", "WAKE", "SKILLS"
                );
                for row in rows {
                    text.push_str(&format!(
                        "{:<16} {:>4} {:>4} {:>5} {:>9} {:<4} {:<20} {}\n",
                        row.name,
                        row.open,
                        row.working,
                        row.inbox,
                        format!("{} ago", time::age(row.last_seen, session.now)),
                        if row.wake { "yes" } else { "-" },
                        if row.skills.is_empty() {
                            "-".to_string()
                        } else {
                            row.skills.join(",")
                        },
                        row.strengths
                    ));
                }
                text
            });
        }
        AgentsCommand::Agent(AgentCommand::Add(args)) => {
            let now = time::now();
            if let Some(wake) = &args.wake
                && wake.first().is_none_or(|program| program.trim().is_empty())
            {
                return Err(Error::invalid(
                    "--wake needs a command: --wake -- claude -p",
                ));
            }
            let record = registry::update(home, &args.name, context.hub.lock, now, |record, _| {
                if let Some(strengths) = args.strengths {
                    record.strengths = strengths.trim().to_string();
                }
                if let Some(skills) = args.skills {
                    record.skills = skills
                        .into_iter()
                        .map(|skill| skill.trim().to_string())
                        .filter(|skill| !skill.is_empty())
                        .collect();
                }
                if let Some(wake) = args.wake {
                    record.wake = Some(wake);
                }
                if args.no_wake_command {
                    record.wake = None;
                }
                Ok(record.clone())
            })?;
            output::emit(as_json, &record, describe);
        }
        AgentsCommand::Agent(AgentCommand::Rm { name }) => {
            registry::remove(home, &name, context.hub.lock)?;
            output::emit(as_json, &serde_json::json!({"removed": name}), |_| {
                format!("removed agent {name}")
            });
        }
        AgentsCommand::Agent(AgentCommand::Show { name }) => {
            let record = registry::require(home, &name)?;
            output::emit(as_json, &record, describe);
        }
        AgentsCommand::Whoami => {
            let session = context.session()?;
            let me = Whoami {
                agent: context.agent(),
                project: &session.project.id,
                workspace: session.project.workspace.as_deref(),
                coordinator: session.project.coordinator.as_deref(),
                home: home.root(),
            };
            output::emit(as_json, &me, |me| {
                format!(
                    "{} in project {}{}",
                    me.agent
                        .as_deref()
                        .unwrap_or("(no identity: pass --as NAME or set BATON_AGENT)"),
                    me.project,
                    me.workspace
                        .map(|dir| format!(" ({})", dir.display()))
                        .unwrap_or_default()
                )
            });
        }
        AgentsCommand::Coordinator(args) => {
            let session = context.session()?;
            let project = match args.set {
                Some(name) => session.set_coordinator(&name)?,
                None => session.project.clone(),
            };
            let value = serde_json::json!({
                "project": project.id,
                "coordinator": project.coordinator,
            });
            output::emit(as_json, &value, |_| match &project.coordinator {
                Some(name) => format!("{name} coordinates project {}", project.id),
                None => format!(
                    "project {} has no coordinator yet: the first agent to send a task becomes it",
                    project.id
                ),
            });
        }
    }
    Ok(0)
}

fn describe(record: &AgentRecord) -> String {
    let wake = match &record.wake {
        Some(argv) if !argv.is_empty() => format!("{argv:?}"),
        _ => "none".to_string(),
    };
    format!(
        "{}\n  strengths: {}\n  skills:    {}\n  wake:      {}\n  clients:   {}\n  created:   {}\n  last seen: {}",
        record.name,
        if record.strengths.is_empty() {
            "-"
        } else {
            &record.strengths
        },
        if record.skills.is_empty() {
            "-".to_string()
        } else {
            record.skills.join(", ")
        },
        wake,
        if record.clients.is_empty() {
            "-".to_string()
        } else {
            record.clients.join(", ")
        },
        record.created_at,
        record.last_seen
    )
}
