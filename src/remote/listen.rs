//! `baton listen`: wakes an agent on its own machine when work for it arrives at a hub on
//! another (SPEC section 13), under the rules of SPEC section 8.
//!
//! It keeps the hub's event stream open. On each burst of changes (events a moment apart
//! are taken together) it looks at the agent's inboxes on the hub for hand-overs still
//! `queued` and for unread messages, and runs the wake command for what it has not run it
//! for yet: one run at a time (it holds `wake/<agent>.lock` of this machine), recorded on
//! the hub as `woken` before it starts, run again while work that arrived during a run
//! waits, at most [`MAX_RUNS_IN_A_ROW`] times; what still waits after that is run for at
//! the next look. A broken stream is opened again with backoff, and the first look after
//! it covers everything that arrived meanwhile: a hand-over is `queued` on the hub until
//! someone runs for it, so none is lost to a gap or a restart of either side.
//!
//! Every request says it comes from the listener ([`Observer::Listen`]): its looks renew
//! none of the agent's leases (a crashed agent's claims stall on time while its listener
//! runs), and its open event stream announces the listener on the hub, so that a sender
//! there is told the work reaches the agent.
//!
//! What the hub answers is checked before it touches this machine: the agent's name and
//! every project id against the name rule (they become file names, an environment
//! variable and words of the wake command's argv).

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use super::{HubClient, Observer};
use crate::board::delivery::DeliveryState;
use crate::board::task::TaskId;
use crate::error::{Error, Result, WakeError};
use crate::file::lock::FileLock;
use crate::file::text_log::TextLog;
use crate::home::Home;
use crate::json_api::{InboxQuery, NoBody, TaskIds, endpoint};
use crate::names::{self, NameKind};
use crate::process::detached_environment;
use crate::remote::map::ProjectMap;
use crate::session::{Inbox, InboxLook};
use crate::time::Timestamp;
use crate::wake::{self, MAX_RUNS_IN_A_ROW};

/// Changes this close together are one burst: a sender's few commands wake once.
const QUIET_FOR: Duration = Duration::from_millis(300);
/// A burst is looked at after this long however busy the hub is.
const BURST_AT_MOST: Duration = Duration::from_secs(2);
/// Between looks when nothing happens: a lease that runs out moves work without a change.
const IDLE_LOOK: Duration = Duration::from_secs(30);
/// The longest pause between attempts to reach a hub that is down.
const BACKOFF_AT_MOST: Duration = Duration::from_secs(30);

/// One piece of work in the agent's inboxes, as the hub shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Work {
    /// A hand-over of a task: the same task handed over again (a later `since`) is new.
    Task {
        project: String,
        id: u64,
        since: Timestamp,
    },
    Message {
        project: String,
        seq: u64,
    },
}

impl Work {
    fn project(&self) -> &str {
        match self {
            Work::Task { project, .. } | Work::Message { project, .. } => project,
        }
    }

    fn describe(items: &[Work]) -> String {
        items
            .iter()
            .map(|work| match work {
                Work::Task { project, id, .. } => format!("T-{id} (project {project})"),
                Work::Message { project, seq } => format!("message {seq} (project {project})"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Passes over the changes already waiting on `events` (for a moment at most, however
/// many a busy hub has queued).
fn skip_waiting(events: &mut super::events::Events) -> Result<()> {
    let started = Instant::now();
    while started.elapsed() < QUIET_FOR && events.next(Duration::ZERO)?.is_some() {}
    Ok(())
}

/// What runs when work arrives: a wake command, or nothing but a line saying so.
pub struct Listener<'a> {
    /// The hub, every request made as the listener.
    hub: HubClient,
    home: &'a Home,
    agent: String,
    wake: Option<Vec<String>>,
    /// The work a run was started for (or given up on after the runs in a row): never run
    /// for again.
    handled: HashSet<Work>,
    log: TextLog,
    say: &'a dyn Fn(&str),
}

/// Who the token acts as, checked against the name rule: the name becomes file names on
/// this machine (`wake/<agent>.lock`), `BATON_AGENT` and words of a wake prompt, and a hub
/// that answers something else is not believed.
pub fn agent_of(hub: &HubClient) -> Result<String> {
    let agent = hub.call::<endpoint::Whoami>(&[], &NoBody {})?.agent;
    names::check(NameKind::Agent, &agent).map_err(|_| Error::Hub {
        message: format!(
            "the hub at {} says the token acts as `{}`, which is no agent's name: this \
             baton uses nothing it says",
            hub.url(),
            crate::text::inline(&agent)
        ),
        hint: Some("is BATON_URL the address `baton serve` printed?".into()),
        code: 1,
    })?;
    Ok(agent)
}

impl<'a> Listener<'a> {
    /// A listener for the token's agent. `wake` is the command to run; without one, the
    /// agent's record in this machine's own hub (`local`) may hold one, and without that,
    /// arrivals are only said.
    pub fn new(
        hub: &HubClient,
        local: &dyn crate::store::Store,
        home: &'a Home,
        wake: Option<Vec<String>>,
        say: &'a dyn Fn(&str),
    ) -> Result<Listener<'a>> {
        let hub = hub.clone().observing(Observer::Listen);
        let agent = agent_of(&hub)?;
        // The local record's command only when this machine signed it (on a store others
        // share, anyone with its credentials may have written it).
        let wake = wake.filter(|argv| !argv.is_empty()).or_else(|| {
            crate::registry::load(local, &agent)
                .ok()
                .flatten()
                .filter(|record| wake::not_signed_here(local, home, record).is_none())
                .and_then(|record| wake::wake_command(&record).map(<[String]>::to_vec))
        });
        Ok(Listener {
            log: wake::log(home, &agent),
            hub,
            home,
            agent,
            wake,
            handled: HashSet::new(),
            say,
        })
    }

    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// Listens until the process ends. Fails only when another listener (or wake
    /// supervisor) of the same agent runs on this machine.
    pub fn run(mut self) -> Result<()> {
        crate::file::atomic::create_private_dir_all(&self.home.wake_dir())?;
        let Some(_lock) = FileLock::try_acquire(&self.home.wake_lock(&self.agent))? else {
            return Err(WakeError::WokenAlready {
                agent: self.agent.clone(),
                lock: self.home.wake_lock(&self.agent),
            }
            .into());
        };
        let mut backoff = Duration::from_secs(1);
        loop {
            // Whatever went wrong (the stream would not open, a look failed, the stream
            // broke), it is said, and tried again after a pause that grows while it keeps
            // going wrong: a hub that is down, or answers nothing, is not hammered.
            let problem = match self.hub.events() {
                Err(error) => error,
                Ok(mut events) => {
                    (self.say)(&format!(
                        "listening to the hub at {} for {}",
                        events.url(),
                        self.agent
                    ));
                    // What arrived while nobody listened is looked at first.
                    match self.look(None) {
                        Err(error) => error,
                        Ok(_) => {
                            backoff = Duration::from_secs(1);
                            match self.follow(&mut events) {
                                Err(error) => error,
                                Ok(never) => match never {},
                            }
                        }
                    }
                }
            };
            (self.say)(&format!(
                "{problem}; connecting again in {}s",
                backoff.as_secs()
            ));
            thread::sleep(backoff);
            backoff = (backoff * 2).min(BACKOFF_AT_MOST);
        }
    }

    /// Reads the stream, looking at the inboxes after each burst, until it breaks.
    fn follow(&mut self, events: &mut super::events::Events) -> Result<std::convert::Infallible> {
        loop {
            let Some(first) = events.next(IDLE_LOOK)? else {
                if self.look(None)? {
                    skip_waiting(events)?;
                }
                continue;
            };
            // Everything in the burst: a project named, or every project for a resync.
            let mut projects: Option<Vec<String>> = Some(Vec::new());
            let mut add = |change: super::events::Change| match (&mut projects, change.project) {
                (Some(list), Some(project)) if !list.contains(&project) => list.push(project),
                (_, None) => projects = None,
                (_, Some(_)) => {}
            };
            add(first);
            let started = Instant::now();
            while started.elapsed() < BURST_AT_MOST {
                match events.next(QUIET_FOR)? {
                    Some(change) => add(change),
                    None => break,
                }
            }
            if self.look(projects.as_deref())? {
                // The changes the runs in a row made (each hand-over back during them) are
                // not the next change: the rest lasts until a new one, or the idle look.
                skip_waiting(events)?;
            }
        }
    }

    /// Looks at the inboxes in `projects` (every project when `None`) and runs for the
    /// work there not yet run for, again while more arrives, at most the runs in a row.
    /// True when it stopped after those with work still waiting, which the next look runs
    /// for.
    fn look(&mut self, projects: Option<&[String]>) -> Result<bool> {
        let mut fresh = self.fresh(projects)?;
        let mut runs = 0;
        while !fresh.is_empty() {
            runs += 1;
            self.handled.extend(fresh.iter().cloned());
            if !self.run_for(&fresh, runs)? {
                return Ok(false);
            }
            // Work that came during the run, wherever it came.
            fresh = self.fresh(None)?;
            if !fresh.is_empty() && runs >= MAX_RUNS_IN_A_ROW {
                // A pause, not a verdict: two agents handing work back and forth do not keep
                // each other awake without a break, and the work is still run for. Left out
                // of `handled`, it is fresh at the next look.
                let line = format!(
                    "{} ran {runs} times in a row; still waiting: {}; run for at the next \
                     change on the hub, or within {}s",
                    self.agent,
                    Work::describe(&fresh),
                    IDLE_LOOK.as_secs()
                );
                self.log.line(&line);
                (self.say)(&line);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The work waiting in `projects` that nothing has run for yet.
    fn fresh(&self, projects: Option<&[String]>) -> Result<Vec<Work>> {
        let all;
        let projects = match projects {
            Some(projects) => projects,
            None => {
                all = self
                    .hub
                    .call::<endpoint::Projects>(&[], &NoBody {})?
                    .into_iter()
                    .map(|project| project.id)
                    .collect::<Vec<_>>();
                &all
            }
        };
        let mut fresh = Vec::new();
        for project in projects {
            // A project id becomes part of a URL path here, and of the wake prompt.
            if names::check(NameKind::Project, project).is_err() {
                continue;
            }
            // Looked at on the agent's behalf, not shown to it: nothing is recorded seen.
            let unrecorded = InboxQuery::from(InboxLook::OnBehalf);
            let inbox: Inbox = self.hub.call::<endpoint::Inbox>(&[project], &unrecorded)?;
            for entry in &inbox.tasks {
                let task = &entry.task;
                let by = task.thread.last().map_or(&task.from, |last| &last.by);
                if let Some(delivery) = &task.delivery
                    && delivery.to == self.agent
                    && delivery.state == DeliveryState::Queued
                    && *by != self.agent
                {
                    fresh.push(Work::Task {
                        project: project.clone(),
                        id: task.id.0,
                        since: delivery.since,
                    });
                }
            }
            for message in inbox.messages.iter().filter(|m| m.from != self.agent) {
                fresh.push(Work::Message {
                    project: project.clone(),
                    seq: message.seq,
                });
            }
        }
        fresh.retain(|work| !self.handled.contains(work));
        Ok(fresh)
    }

    /// One run for `work`; false when there is no command to run, or it could not start.
    fn run_for(&self, work: &[Work], run: usize) -> Result<bool> {
        let Some(argv) = &self.wake else {
            (self.say)(&format!(
                "work arrived for {}: {} (no wake command: `baton listen --wake -- CMD ARGS…` \
                 runs one)",
                self.agent,
                Work::describe(work)
            ));
            return Ok(false);
        };
        let mut tasks: BTreeMap<&str, Vec<TaskId>> = BTreeMap::new();
        for item in work {
            if let Work::Task { project, id, .. } = item {
                tasks.entry(project).or_default().push(TaskId(*id));
            }
        }
        for (project, ids) in tasks {
            self.hub
                .call::<endpoint::Woken>(&[project], &TaskIds { tasks: ids })?;
        }
        let project_id = work[0].project();
        let map = ProjectMap::load(self.home)?;
        let mut project = self
            .hub
            .call::<endpoint::ProjectShow>(&[project_id], &NoBody {})?;
        // The id asked for, checked, whatever id the answer carries: it goes into the
        // prompt.
        project.id = project_id.to_string();
        // The hub's workspace is a path of the hub's machine: here the run works in the
        // directory mapped to the project, else where `listen` was started.
        project.workspace = map.dir_of(project_id).map(PathBuf::from);
        let dir = match &project.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| self.home.root().to_path_buf()),
        };
        let mut launch = wake::Launch {
            argv: argv.clone(),
            prompt: wake::remote_prompt(&self.agent, &project),
            dir,
        };
        // A run for a task starts in its worktree, made here first if it has none (SPEC
        // section 18.4), as the supervisor's runs do; one that cannot be made is said, and
        // the run starts in the clone.
        let first_task = work.iter().find_map(|item| match item {
            Work::Task { project, id, .. } if project == project_id => Some(TaskId(*id)),
            _ => None,
        });
        if let Some(id) = first_task {
            let placed = super::worktrees::prepare(&self.hub, self.home, &project, id)
                .map_err(|error| error.to_string())
                .and_then(|prepared| {
                    let Some(prepared) = prepared else {
                        return Ok(());
                    };
                    for warning in &prepared.warnings {
                        self.log.line(warning);
                        (self.say)(warning);
                    }
                    launch.in_worktree(id, &prepared.worktree)
                });
            if let Err(error) = placed {
                let line = format!("{id}'s worktree was not made here: {error}");
                self.log.line(&line);
                (self.say)(&line);
            }
        }
        let mut environment =
            detached_environment(std::env::vars_os(), self.home.root(), Some(&self.agent));
        // The woken agent acts on the same hubs, with the same token, starting with the
        // one that answers now.
        environment.push(("BATON_URL".into(), self.hub.urls_for_environment().into()));
        environment.push(("BATON_TOKEN".into(), self.hub.token().into()));
        (self.say)(&format!(
            "waking {} for {} (run {run}; log: {})",
            self.agent,
            Work::describe(work),
            self.home.wake_log(&self.agent).display()
        ));
        // A session of its own, as the supervisor's runs have (SPEC section 8): setsid(1)
        // where the PATH has one (it waits for the command and passes its status on), since
        // calling setsid() between fork and exec would need `unsafe`.
        let argv: Vec<String> =
            match crate::process::find_program("setsid", std::env::var_os("PATH").as_deref()) {
                crate::process::ProgramLookup::Found(setsid) if cfg!(target_os = "linux") => {
                    [setsid.to_string_lossy().into_owned(), "--wait".to_string()]
                        .into_iter()
                        .chain(launch.argv.iter().cloned())
                        .collect()
                }
                _ => launch.argv.clone(),
            };
        Ok(wake::run_command(
            &self.log,
            &argv,
            &launch.prompt,
            &launch.dir,
            environment,
            run,
            project_id,
        ))
    }
}
