//! The after-effects of a change, carried out by the session so that no face can forget
//! them: a desktop note about everything that arrived in an inbox (tasks handed over,
//! messages delivered), and the wake command of each agent that received work. Neither is
//! waited for, and neither can undo the change: what becomes of them is returned for the
//! face to show, one [`WakeOutcome`] per agent woken.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Session;
use crate::alert::{self, queue};
use crate::board::delivery::DeliveryEvent;
use crate::board::handover::Handover;
use crate::board::task::TaskId;
use crate::desktop;
use crate::error::{Result, WakeError};
use crate::mail::Arrival;
use crate::names::{self, NameKind};
use crate::project;
use crate::registry;
use crate::store::Store;
use crate::wake::{self, WakeOutcome};

/// What a process does after each change it makes: the same for every command of one
/// process, so it is set once, with the [`super::Hub`].
#[derive(Debug, Clone)]
pub struct AfterEffects {
    /// Start wake commands (off with `--no-wake`).
    pub wake: bool,
    /// Send desktop notifications (off with `BATON_NOTIFY=0`).
    pub notify: bool,
    /// Whether the wake supervisor and the notifier are run by this very program: they
    /// are the only use of its path, which is looked up the first time one is started
    /// rather than at every command's start.
    runs_detached: bool,
    program: OnceLock<Option<PathBuf>>,
}

impl AfterEffects {
    /// Waking unless `no_wake`; notifying unless `BATON_NOTIFY=0`; this executable.
    pub fn from_environment(no_wake: bool) -> Self {
        AfterEffects {
            wake: !no_wake,
            notify: desktop::is_enabled(),
            runs_detached: true,
            program: OnceLock::new(),
        }
    }

    /// Neither waking nor notifying: for a hub with nobody in it to tell (the demo's).
    pub fn none() -> Self {
        AfterEffects {
            wake: false,
            notify: false,
            runs_detached: false,
            program: OnceLock::new(),
        }
    }

    /// The `baton` binary that runs the wake supervisor and the notifier: this program.
    pub fn program(&self) -> Option<&Path> {
        if !self.runs_detached {
            return None;
        }
        self.program
            .get_or_init(|| std::env::current_exe().ok())
            .as_deref()
    }
}

/// An agent handed work that has neither a wake command nor a live session that takes
/// pushes: it sees `tasks` only at its next prompt (SPEC section 11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    pub agent: String,
    pub tasks: Vec<TaskId>,
}

/// What the after-effects of one change learn of the agents it reached, each read once
/// however many of them ask: an agent's registry record, and whether a listener follows
/// it. What cannot be read counts as nothing there, as each asker took it before.
#[derive(Default)]
struct Receivers {
    records: Vec<(String, Option<registry::AgentRecord>)>,
    listened: Vec<(String, bool)>,
}

impl Receivers {
    fn record(&mut self, store: &dyn Store, agent: &str) -> Option<&registry::AgentRecord> {
        let at = match self.records.iter().position(|(name, _)| name == agent) {
            Some(at) => at,
            None => {
                let record = registry::load(store, agent).ok().flatten();
                self.records.push((agent.to_string(), record));
                self.records.len() - 1
            }
        };
        self.records[at].1.as_ref()
    }

    fn is_listened(&mut self, store: &dyn Store, agent: &str) -> bool {
        if let Some((_, listened)) = self.listened.iter().find(|(name, _)| name == agent) {
            return *listened;
        }
        let listened = store.is_listened(agent);
        self.listened.push((agent.to_string(), listened));
        listened
    }
}

impl Session {
    /// [`Session::after_change`], and the agents among `handovers` that nothing will bring
    /// their work to ([`Unreachable`]), each receiver's record read once for both.
    pub(super) fn after_change_reaching(
        &self,
        handovers: &[Handover],
        arrivals: &[Arrival],
    ) -> (Vec<WakeOutcome>, Vec<Unreachable>) {
        let mut receivers = Receivers::default();
        let woken = self.after_change_with(handovers, arrivals, &mut receivers);
        let unreachable = self.unreachable(handovers, &mut receivers);
        (woken, unreachable)
    }

    /// The agents among `handovers` that nothing will bring their work to: no wake command
    /// in their registry record, no listener (`baton listen` on their machine) following
    /// the hub, and no live session of theirs in the project. An agent
    /// whose record cannot be read is not one (nothing is claimed that was not checked).
    /// One entry per agent, its tasks in hand-over order.
    fn unreachable(&self, handovers: &[Handover], receivers: &mut Receivers) -> Vec<Unreachable> {
        let store = &*self.hub.store;
        let mut unreachable: Vec<Unreachable> = Vec::new();
        for handover in handovers {
            if let Some(known) = unreachable
                .iter_mut()
                .find(|entry| entry.agent == handover.agent)
            {
                known.tasks.push(handover.task);
                continue;
            }
            // A human of the project sees it in their own `baton inbox`: no prompt to wait for.
            if self.project.settings.humans.contains(&handover.agent) {
                continue;
            }
            let Some(record) = receivers.record(store, &handover.agent) else {
                continue;
            };
            if wake::wake_command(record).is_some()
                || receivers.is_listened(store, &handover.agent)
                || !store
                    .live_clients(&handover.project, &handover.agent)
                    .is_empty()
            {
                continue;
            }
            unreachable.push(Unreachable {
                agent: handover.agent.clone(),
                tasks: vec![handover.task],
            });
        }
        unreachable
    }

    /// After a change: notifies about everything that arrived in an inbox and wakes each
    /// receiving agent that has a wake command, unless waking is off (by the hub's
    /// [`AfterEffects`] or the project's settings). Never waits for the agents, and never
    /// fails: a change stands whatever becomes of its wake. One outcome per agent.
    pub(super) fn after_change(
        &self,
        handovers: &[Handover],
        arrivals: &[Arrival],
    ) -> Vec<WakeOutcome> {
        self.after_change_with(handovers, arrivals, &mut Receivers::default())
    }

    fn after_change_with(
        &self,
        handovers: &[Handover],
        arrivals: &[Arrival],
        receivers: &mut Receivers,
    ) -> Vec<WakeOutcome> {
        let effects = &self.hub.after_effects;
        if handovers.is_empty() && arrivals.is_empty() {
            return Vec::new();
        }
        // Whatever waking and notifying do: an alert reaches a human away from here.
        self.queue_alerts(handovers, arrivals);
        let outcomes = if effects.wake {
            self.wake_receivers(handovers, arrivals, receivers)
        } else {
            Vec::new()
        };
        if effects.notify
            && desktop::is_service_reachable()
            && let Some(program) = effects.program()
        {
            // Best-effort by contract: a desktop without notifications is no error.
            let notes = desktop::notes_for(handovers, arrivals, |agent, project| {
                self.route(agent, project, &outcomes)
            });
            let _ = desktop::spawn(program, &self.hub.home, &notes);
        }
        outcomes
    }

    /// Queues an alert for each hand-over and message an alert wants (SPEC section 14) and
    /// starts the sender. Local and cheap: a look for `alerts.json`, and a file per alert;
    /// the network is the sender's. Best-effort like the rest: the change stands.
    fn queue_alerts(&self, handovers: &[Handover], arrivals: &[Arrival]) {
        let store = &*self.hub.store;
        let alerts = match alert::load(store) {
            Ok(alerts) if !alerts.is_empty() => alerts,
            _ => return,
        };
        let actor = self.agent.as_deref().unwrap_or("");
        let mut events = alert::events_of(handovers, arrivals, actor);
        if alerts
            .iter()
            .any(|alert| alert.on.contains(&alert::Kind::Stalled))
            && let Ok(board) = self.hub.board(&self.project.id)
        {
            events.extend(alert::stalls(store, &board, self.now));
        }
        let humans = |project: &str| {
            if project == self.project.id {
                self.project.settings.humans.clone()
            } else {
                project::load(store, project)
                    .ok()
                    .flatten()
                    .map(|project| project.settings.humans)
                    .unwrap_or_default()
            }
        };
        // A full queue's drops are logged by the sender, so it is started for them too.
        if let Ok(queued) = queue::enqueue(store, &alerts, &events, humans, self.now)
            && (queued > 0 || queue::has_dropped(store))
            && let Some(program) = self.hub.after_effects.program()
        {
            let _ = queue::start_sender(
                store,
                &self.hub.home,
                program,
                queue::retry_ms_from_environment(),
            );
        }
    }

    /// How work handed to `agent` in `project` reaches it, in the words a notification
    /// ends with: the wake run started for it, its live session, or its next prompt.
    fn route(&self, agent: &str, project: &str, outcomes: &[WakeOutcome]) -> String {
        let woken = outcomes.iter().find_map(|outcome| match outcome {
            WakeOutcome::Started { agent: woken, .. } if woken == agent => Some("waking"),
            WakeOutcome::AlreadyAwake { agent: woken, .. } if woken == agent => {
                Some("already awake")
            }
            WakeOutcome::Listening { agent: woken, .. } if woken == agent => {
                Some("woken by its listener")
            }
            WakeOutcome::OnItsHost { agent: woken, .. } if woken == agent => {
                Some("woken on its host")
            }
            _ => None,
        });
        if let Some(woken) = woken {
            return format!("delivery: {agent} {woken}");
        }
        let live = self.hub.store.live_clients(project, agent);
        if live.is_empty() {
            format!("delivery: at {agent}'s next prompt")
        } else {
            // Client names come from file names in the home: shown as SPEC section 10 says.
            format!(
                "delivery: {agent}'s live session ({})",
                crate::text::inline(&live.join(", "))
            )
        }
    }

    /// Starts the wake command of each agent work arrived for, with the tasks it is for.
    fn wake_receivers(
        &self,
        handovers: &[Handover],
        arrivals: &[Arrival],
        known: &mut Receivers,
    ) -> Vec<WakeOutcome> {
        let effects = &self.hub.after_effects;
        let store = &*self.hub.store;
        let receivers = handovers
            .iter()
            .map(|handover| (&handover.agent, &handover.project))
            .chain(
                arrivals
                    .iter()
                    .map(|arrival| (&arrival.agent, &arrival.project)),
            );
        let mut outcomes = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for (agent, project) in receivers {
            if seen.contains(&agent.as_str()) {
                continue;
            }
            seen.push(agent);
            let tasks: Vec<TaskId> = handovers
                .iter()
                .filter(|handover| &handover.agent == agent)
                .map(|handover| handover.task)
                .collect();
            let home = &self.hub.home;
            let woken = known.record(store, agent).and_then(|record| {
                wake::wake_agent_of(
                    store,
                    home,
                    agent,
                    record,
                    project,
                    &tasks,
                    effects.program(),
                )
            });
            // Nothing to run here; an agent on another machine is woken by its listener.
            let outcome = woken.or_else(|| {
                known.is_listened(store, agent).then(|| {
                    WakeOutcome::Listening {
                        agent: agent.clone(),
                        project: project.clone(),
                        tasks,
                    }
                    .counted()
                })
            });
            outcomes.extend(outcome);
        }
        outcomes
    }

    /// `wake NAME` from another machine (over HTTP): starts the agent's wake supervisor in
    /// this project, as a hand-over would, but only while work waits for it here (a task
    /// whose turn is its own, an unread message). A token on another machine is anyone's
    /// with that token: it may bring an agent to work that waits, not run its wake command
    /// for nothing, again and again. An agent with no wake command on the hub but a
    /// listener is said to be woken by it.
    pub fn wake_for_waiting_work(&self, agent: &str) -> Result<WakeOutcome> {
        names::check(NameKind::Agent, agent)?;
        let record = registry::require(&*self.hub.store, agent)?;
        let board = self.hub.board(&self.project.id)?;
        let has_work = !board.inbox(agent, self.now).is_empty()
            || !crate::mail::unread(&*self.hub.store, &self.project.id, agent, record.created_at)?
                .is_empty();
        if !has_work {
            return Err(WakeError::NothingWaits {
                agent: agent.to_string(),
                project: self.project.id.clone(),
            }
            .into());
        }
        if wake::wake_command(&record).is_none() {
            if self.hub.store.is_listened(agent) {
                return Ok(WakeOutcome::Listening {
                    agent: agent.to_string(),
                    project: self.project.id.clone(),
                    tasks: Vec::new(),
                }
                .counted());
            }
            return Err(WakeError::NoWakeNorListener {
                agent: agent.to_string(),
            }
            .into());
        }
        wake::wake_agent_of(
            &*self.hub.store,
            &self.hub.home,
            agent,
            &record,
            &self.project.id,
            &[],
            self.hub.after_effects.program(),
        )
        .ok_or_else(|| {
            WakeError::WakingOff {
                project: self.project.id.clone(),
            }
            .into()
        })
    }

    /// `wake NAME`: starts the agent's wake supervisor in this project now, whatever its
    /// inbox holds. Asked for by name, it runs even under `--no-wake`.
    pub fn wake_by_hand(&self, agent: &str) -> Result<WakeOutcome> {
        wake::wake_by_hand(
            &*self.hub.store,
            &self.hub.home,
            agent,
            &self.project.id,
            self.hub.after_effects.program(),
        )
    }
}

/// Records `woken` on the delivery of `ids` to `agent` in `project`: a wake run is starting
/// for them. Bookkeeping only: a record that cannot be written is left as it was (the run
/// goes ahead), and a task already seen or acted on stays so.
pub fn record_woken(hub: &super::Hub, project: &str, agent: &str, ids: &[TaskId]) {
    let now = crate::time::now();
    let _ = hub.update(project, now, |tx| {
        let mut changed = false;
        for id in ids {
            tx.board
                .modify(*id, |task| {
                    if let Some(delivery) = &mut task.delivery {
                        changed |= delivery.record(DeliveryEvent::WakeStarted, agent, now);
                    }
                })
                .map_err(hub.refused(project))?;
        }
        if changed {
            tx.touch();
        }
        Ok(())
    });
}
