//! Who is here and who leads: the capability matrix, the coordinator, shared context, and
//! removing an agent without leaving its work with nobody.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Hub, Session};
use crate::board::inbox::{Reason, Turn};
use crate::board::task::Status;
use crate::error::{Error, ProjectError, RegistryError, Result};
use crate::names::{self, NameKind};
use crate::project::{self, Project};
use crate::registry;
use crate::secret::machine_key::MachineKey;
use crate::text;
use crate::time::{self, Timestamp};

/// One row of the capability matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentRow {
    pub name: String,
    pub strengths: String,
    pub skills: Vec<String>,
    pub clients: Vec<String>,
    pub last_seen: Timestamp,
    /// Open tasks assigned to the agent in this project.
    pub open: usize,
    /// Of those, the ones it is working on now.
    pub working: usize,
    /// Tasks whose turn is the agent's.
    pub inbox: usize,
    /// Open tasks handed to the agent, queued or woken but not seen for more than five
    /// minutes (SPEC section 11).
    pub unseen: usize,
    /// Whether a wake command is set.
    pub wake: bool,
    /// Seconds from `last_seen` to now, so a reader need not know the time.
    pub seen_seconds_ago: i64,
}

/// `agents`: the rows a coordinator reads to decide who gets what.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentMatrix {
    pub project: String,
    pub agents: Vec<AgentRow>,
    /// Registry records that could not be read; their agents are missing from `agents`.
    pub problems: Vec<UnreadableRecord>,
}

/// A registry record that did not parse (or has a newer schema), named.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnreadableRecord {
    pub agent: String,
    pub error: String,
}

impl Session {
    /// `agents`: who is here and what they are good at, with their load in this project.
    /// A record that does not parse is listed in `problems`, not allowed to hide the rest.
    pub fn agents(&self) -> Result<AgentMatrix> {
        let (records, problems) = registry::list(&*self.hub.store)?;
        let board = self.board()?;
        let mut unseen: HashMap<String, usize> = HashMap::new();
        for head in board.open_heads() {
            if let Some(task) = board.task(head.id).map_err(self.refused())?
                && let Some(delivery) = &task.delivery
                && delivery.unseen_for(self.now).is_some()
            {
                *unseen.entry(delivery.to.clone()).or_default() += 1;
            }
        }
        let agents = records
            .into_iter()
            .map(|record| {
                let open = board.open_heads().filter(|task| *task.to == *record.name);
                let (open, working) = open.fold((0, 0), |(open, working), task| {
                    (
                        open + 1,
                        working + usize::from(task.status == Status::Working),
                    )
                });
                AgentRow {
                    unseen: unseen.get(&record.name).copied().unwrap_or(0),
                    inbox: board.inbox(&record.name, self.now).len(),
                    name: record.name,
                    strengths: record.strengths,
                    skills: record.skills,
                    clients: record.clients,
                    last_seen: record.last_seen,
                    open,
                    working,
                    wake: record.wake.is_some_and(|argv| !argv.is_empty()),
                    seen_seconds_ago: record.last_seen.until(self.now).num_seconds(),
                }
            })
            .collect();
        Ok(AgentMatrix {
            project: self.project.id.clone(),
            agents,
            problems: problems
                .into_iter()
                .map(|problem| UnreadableRecord {
                    agent: problem.name,
                    error: problem.error.to_string(),
                })
                .collect(),
        })
    }

    /// A locked read-change-write of this session's project record, which must still exist.
    pub(super) fn update_project(
        &self,
        change: impl FnOnce(&mut Project) -> Result<Project>,
    ) -> Result<Project> {
        project::update(&*self.hub.store, &self.project.id, |slot| match slot {
            Some(project) => change(project),
            None => Err(Error::UnknownProject {
                project: self.project.id.clone(),
                known: Vec::new(),
            }),
        })
    }

    /// `coordinator [--human NAME] [--not-human NAME] [--set NAME]`, in that order (a human
    /// named first may then hand the role on); the project as it is after them all.
    pub fn coordinate(
        &self,
        set: Option<&str>,
        human: Option<&str>,
        not_human: Option<&str>,
    ) -> Result<Project> {
        let mut project = self.project.clone();
        if let Some(name) = human {
            project = self.set_human(name, true)?;
        }
        if let Some(name) = not_human {
            project = self.set_human(name, false)?;
        }
        if let Some(name) = set {
            project = self.set_coordinator(name)?;
        }
        Ok(project)
    }

    /// `project set --lease`: how long a claim holds in this project from now on (SPEC 3).
    /// Claims already made keep the lease they were given until their next renewal. Whoever
    /// may change the coordinator may change this.
    pub fn set_lease(&self, minutes: u32) -> Result<Project> {
        let actor = self.agent()?.to_string();
        self.update_project(|project| {
            check_may_change_settings(project, &actor, "the lease")?;
            project.settings.lease_minutes = minutes;
            Ok(project.clone())
        })
    }

    /// `coordinator --set NAME`: only the coordinator (or a human named in the project's
    /// settings, or anyone while there is none) may hand the role on.
    pub fn set_coordinator(&self, name: &str) -> Result<Project> {
        let actor = self.agent()?.to_string();
        registry::require(&*self.hub.store, name)?;
        self.update_project(|project| {
            check_may_change_coordinator(project, &actor)?;
            project.coordinator = Some(name.to_string());
            Ok(project.clone())
        })
    }

    /// `coordinator --human NAME` / `--not-human NAME`: names (or stops naming) a human who
    /// may change the coordinator. Whoever may change the coordinator may do this.
    pub fn set_human(&self, name: &str, is_human: bool) -> Result<Project> {
        let actor = self.agent()?.to_string();
        names::check(NameKind::Agent, name)?;
        self.update_project(|project| {
            check_may_change_coordinator(project, &actor)?;
            let humans = &mut project.settings.humans;
            humans.retain(|human| human != name);
            if is_human {
                humans.push(name.to_string());
            }
            Ok(project.clone())
        })
    }

    /// `context --add`: a shared project note, kept with who wrote it and when.
    pub fn add_context(&self, text: &str) -> Result<Project> {
        let actor = self.agent()?.to_string();
        if text.trim().is_empty() {
            return Err(ProjectError::NoContextWords.into());
        }
        text::check_long("note", text)?;
        self.update_project(|project| {
            project.context.push(project::ContextNote {
                at: self.now,
                by: actor.clone(),
                text: text.trim().to_string(),
            });
            Ok(project.clone())
        })
    }
}

fn check_may_change_coordinator(project: &Project, actor: &str) -> Result<()> {
    check_may_change_settings(project, actor, "the coordinator")
}

/// Refuses `actor` a change of `what` (a setting of the project's) unless it may change
/// the coordinator.
pub(super) fn check_may_change_settings(project: &Project, actor: &str, what: &str) -> Result<()> {
    if project.may_change_coordinator(actor) {
        return Ok(());
    }
    Err(ProjectError::NotCoordinator {
        project: project.id.clone(),
        coordinator: project.coordinator.clone(),
        humans: project.settings.humans.clone(),
        what: what.to_string(),
    }
    .into())
}

/// `agent rm NAME`: removes an agent's record, unless work would be left with nobody to do
/// it: a task open in any project that it is assigned to, or that waits on it now (its
/// question to answer, its review to give, its stalled or unstartable task to decide on).
/// Those are named, with the way to hand them on first.
pub fn remove_agent(hub: &Hub, name: &str) -> Result<()> {
    names::check(NameKind::Agent, name)?;
    let now = time::now();
    let mut held = Vec::new();
    for project in project::project_ids(&*hub.store)? {
        // A board that cannot be read stops the removal: its tasks cannot be checked.
        let board = hub.board(&project)?;
        for task in board.open_heads() {
            let role = if *task.to == *name {
                "assigned to it"
            } else if let Turn::Of { agent, reason } = board.turn(task, now)
                && agent == name
            {
                match reason {
                    Reason::Question => "its question to answer",
                    Reason::ReviewRequested => "its review to give",
                    _ => "its decision to make",
                }
            } else {
                continue;
            };
            held.push(format!("{} in {project} ({role})", task.id));
        }
    }
    if !held.is_empty() {
        return Err(RegistryError::OpenTasks {
            agent: name.to_string(),
            held,
        }
        .into());
    }
    registry::remove(&*hub.store, name)?;
    // The wake command this machine signed for it goes too: a copy of the old record
    // written back into a shared store does not bring it back.
    if let Some(key) = MachineKey::load(&hub.home.machine_key_file())? {
        registry::forget_wake_signature(&key, name)?;
    }
    Ok(())
}
