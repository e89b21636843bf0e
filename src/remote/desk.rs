//! The desk of a hub on another machine (SPEC section 13): every operation of
//! [`Desk`] as a request of the hub's JSON API ([`crate::json_api`]), as the token's agent, in
//! the project `--project` names, else the one this machine's project map gives the
//! directory, else `default`.
//!
//! What the hub answers is shown as this machine shows it: a project's workspace is the
//! directory mapped to it here, never the hub's path (SPEC section 7), and a hook's answer
//! is escaped and bounded whatever the hub sent ([`crate::session::hook_answer::from_hub`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use super::events::Events;
use super::map::ProjectMap;
use super::{HubClient, Observer, listen, worktrees};
use crate::activity::ActivityRecord;
use crate::board::action::ActionKind;
use crate::board::new_task::NewTask;
use crate::board::stats::{Stats, Window};
use crate::board::task::TaskId;
use crate::board::transition::Action;
use crate::client::HookEvent;
use crate::error::{Error, Result};
use crate::home::Home;
use crate::json_api::endpoint::{self, Endpoint};
use crate::json_api::{
    ActBody, AgentQuery, BoardQuery, CoordinatorBody, DiffQuery, Holding, HookBody, InboxQuery,
    LogQuery, MessageBody, MessagesQuery, NoBody, OfferedQuery, PathsBody, ProfileBody,
    Reservation, ReservationsQuery, ReserveAsk, Reserved, StatsQuery, TaskDiff, TaskIds, TextBody,
    UnreserveAsk,
};
use crate::mail::{Marking, MessageType};
use crate::names::{self, NameKind};
use crate::project::Project;
use crate::registry::{AgentRecord, Profile};
use crate::session::hook_answer::Answer;
use crate::session::{
    AgentMatrix, BoardFilter, Changed, Desk, Due, Follow, Inbox, InboxLook, LOOK_AGAIN_EVERY,
    LogFeed, LogLine, Mail, Push, Pushed, Sent, TaskView,
};
use crate::store::presence::Presence;
use crate::time::{self, Timestamp};
use crate::wake::WakeOutcome;

/// How long a hook waits for the hub's answer: with the half second stdin may take, the
/// whole hook stays under the 2 seconds SPEC section 10 gives it.
const HOOK_WITHIN: Duration = Duration::from_millis(1300);
/// The least time a request is given when a deadline is near: a request given none would
/// fail without being tried.
const MOMENT: Duration = Duration::from_millis(100);
/// The most lines `log --follow` asks the hub for at each change.
const FOLLOW_BATCH: usize = 10_000;
/// The first pause before the event stream is opened again, doubled while it stays shut.
const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between attempts to open the event stream again.
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

/// The token's agent at a hub on another machine, in one of its projects.
#[derive(Debug)]
pub struct RemoteDesk {
    hub: HubClient,
    /// This machine's home, where the project map is.
    home: Home,
    /// The project `--project` named.
    named: Option<String>,
    /// The directory whose mapping decides the project; the current one when `None`.
    cwd: Option<PathBuf>,
    project: OnceLock<String>,
    agent: OnceLock<String>,
}

impl RemoteDesk {
    /// The desk of `hub`'s token in the project `named`, else the one this machine's map
    /// (kept in `home`) gives the current directory, else `default`.
    pub fn new(hub: HubClient, home: Home, named: Option<String>) -> RemoteDesk {
        RemoteDesk {
            hub,
            home,
            named,
            cwd: None,
            project: OnceLock::new(),
            agent: OnceLock::new(),
        }
    }

    /// The same desk for a process that looks on the agent's behalf (`watch`): every
    /// request says so, and the hub renews none of the agent's leases for it (SPEC
    /// section 3).
    pub fn observing(self) -> RemoteDesk {
        RemoteDesk {
            hub: self.hub.clone().observing(Observer::Watch),
            ..self
        }
    }

    /// The same desk for a client's hook run in `cwd` (the client's directory, which the
    /// map turns into the project): every request gives up in time for the hook to answer
    /// its client.
    pub fn for_hook(self, cwd: Option<PathBuf>) -> RemoteDesk {
        RemoteDesk {
            hub: self.hub.clone().within(HOOK_WITHIN),
            cwd,
            ..self
        }
    }

    /// The project acted on (see the module's comment); an id checked against the name
    /// rule before it becomes part of a path.
    fn id(&self) -> Result<String> {
        if let Some(id) = self.project.get() {
            return Ok(id.clone());
        }
        let cwd = match &self.cwd {
            Some(cwd) => cwd.clone(),
            None => crate::project::current_dir()?,
        };
        // A task's worktree on this machine stands for its project (SPEC section 18.4).
        let in_worktree = crate::worktree::project_of(&self.home.worktrees_root(), &cwd)
            .filter(|id| self.named.as_deref().is_none_or(|named| named == id));
        let id = match in_worktree {
            Some(id) => {
                names::check(NameKind::Project, &id)?;
                id
            }
            None => self.map()?.resolve(self.named.as_deref(), &cwd)?,
        };
        Ok(self.project.get_or_init(|| id).clone())
    }

    fn map(&self) -> Result<ProjectMap> {
        ProjectMap::load(&self.home)
    }

    /// `project` as this machine shows it: its workspace is the directory `baton project
    /// map` gave it here, or none.
    fn mapped(&self, map: &ProjectMap, project: Project) -> Project {
        Project {
            workspace: map.dir_of(&project.id).map(Path::to_path_buf),
            ..project
        }
    }

    /// Asks the hub to record a step of the caller's deliveries of `ids` (`E`: seen, or
    /// woken); the ids it recorded.
    fn record_delivery<E>(&self, ids: &[TaskId]) -> Result<Vec<TaskId>>
    where
        E: Endpoint<Body = TaskIds, Answer = TaskIds>,
    {
        let tasks = ids.to_vec();
        Ok(self
            .hub
            .call::<E>(&[&self.id()?], &TaskIds { tasks })?
            .tasks)
    }

    fn inbox_at(&self, hub: &HubClient, id: &str, query: &InboxQuery) -> Result<Inbox> {
        hub.call::<endpoint::Inbox>(&[id], query)
    }

    /// Calls `look` at once, then after each change in the project on the hub (and every
    /// [`LOOK_AGAIN_EVERY`]), until it says it is done (`Ok(true)`) or `deadline` passes
    /// (`Ok(false)`). A broken stream is said to `on_broken`, opened again and looked
    /// through again once open: nothing that changed meanwhile is missed. The hub
    /// unreachable at the start is an error (exit 6); later, it is tried again until the
    /// deadline.
    fn follow_until(
        &self,
        deadline: Option<Instant>,
        on_broken: &dyn Fn(&Error),
        mut look: impl FnMut(&HubClient) -> Result<bool>,
    ) -> Result<bool> {
        let id = self.id()?;
        // With a deadline, neither the stream's opening nor a look may outlast it, however
        // the hub behaves (one that takes connections and never answers, say).
        let left = || deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let open = || match left() {
            Some(left) => self.hub.events_within(left.max(MOMENT)),
            None => self.hub.events(),
        };
        let mut events = open()?;
        let mut pause = FIRST_PAUSE;
        loop {
            let is_done = match left() {
                Some(left) => look(&self.hub.clone().within(left.max(MOMENT)))?,
                None => look(&self.hub)?,
            };
            if is_done {
                return Ok(true);
            }
            loop {
                let now = Instant::now();
                if deadline.is_some_and(|deadline| now >= deadline) {
                    return Ok(false);
                }
                let within = deadline.map_or(LOOK_AGAIN_EVERY, |deadline| {
                    (deadline - now).min(LOOK_AGAIN_EVERY)
                });
                match events.next(within) {
                    Ok(Some(change)) if change.project.as_deref().is_some_and(|p| p != id) => {}
                    Ok(_) => break,
                    Err(error) => {
                        on_broken(&error);
                        loop {
                            thread::sleep(pause);
                            pause = (pause * 2).min(LONGEST_PAUSE);
                            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                                return Ok(false);
                            }
                            if let Ok(stream) = open() {
                                events = stream;
                                pause = FIRST_PAUSE;
                                break;
                            }
                        }
                        break;
                    }
                }
            }
        }
    }
}

impl Desk for RemoteDesk {
    fn agent(&self) -> Result<String> {
        if let Some(agent) = self.agent.get() {
            return Ok(agent.clone());
        }
        let agent = listen::agent_of(&self.hub)?;
        Ok(self.agent.get_or_init(|| agent).clone())
    }

    fn project_id(&self) -> Result<String> {
        self.id()
    }

    fn project(&self) -> Result<Project> {
        let id = self.id()?;
        let project = self.hub.call::<endpoint::ProjectShow>(&[&id], &NoBody {})?;
        // The id asked for, checked, whatever id the answer carries.
        Ok(self.mapped(&self.map()?, Project { id, ..project }))
    }

    fn hub_url(&self) -> Option<&str> {
        Some(self.hub.url())
    }

    fn send(&self, new: NewTask) -> Result<Changed> {
        self.hub.call::<endpoint::SendTask>(&[&self.id()?], &new)
    }

    /// A claim makes the task's worktree on this machine and a review reads its head
    /// commit here (SPEC section 18.4), each told to the hub with the action
    /// ([`worktrees`]).
    fn act(&self, id: TaskId, action: Action) -> Result<Changed> {
        let (text, to) = action.words();
        let mut body = ActBody {
            text: text.to_string(),
            to: to.map(str::to_string),
            edits: action.edits().cloned(),
            worktree: None,
            reviewed: None,
        };
        let mut prepared = None;
        match action.kind() {
            ActionKind::Claim => {
                prepared = worktrees::prepare(&self.hub, &self.home, &self.project()?, id)?;
                body.worktree = prepared
                    .as_ref()
                    .and_then(|prepared| prepared.made.as_ref())
                    .map(|(_, made)| made.worktree.clone());
            }
            ActionKind::Review => {
                let tree = self.show(id)?.task.worktree;
                body.reviewed = worktrees::reviewed(&self.project()?, tree.as_ref(), id)?;
            }
            // The hub lands what the remote has: the branch goes there first.
            ActionKind::Done => {
                if let Some(tree) = self.show(id)?.task.worktree {
                    worktrees::reviewed(&self.project()?, Some(&tree), id)?;
                }
            }
            _ => {}
        }
        let task = id.0.to_string();
        let changed = self
            .hub
            .call::<endpoint::Act>(&[&self.id()?, &task, action.kind().command()], &body);
        let Some(prepared) = prepared else {
            return changed;
        };
        let kept = changed.as_ref().ok();
        worktrees::after_claim(&prepared, kept.and_then(|c| c.task.task.worktree.as_ref()));
        let mut changed = changed?;
        changed.warnings.extend(prepared.warnings);
        Ok(changed)
    }

    fn show(&self, id: TaskId) -> Result<TaskView> {
        let task = id.0.to_string();
        self.hub
            .call::<endpoint::Show>(&[&self.id()?, &task], &OfferedQuery::default())
    }

    fn show_with_offers(&self, id: TaskId) -> Result<TaskView> {
        let task = id.0.to_string();
        let query = OfferedQuery { offered: true };
        self.hub
            .call::<endpoint::Show>(&[&self.id()?, &task], &query)
    }

    fn board(&self, filter: &BoardFilter) -> Result<Vec<TaskView>> {
        let query = BoardQuery::of(filter);
        self.hub.call::<endpoint::Board>(&[&self.id()?], &query)
    }

    fn inbox(&self, look: InboxLook) -> Result<Inbox> {
        self.inbox_at(&self.hub, &self.id()?, &InboxQuery::from(look))
    }

    /// The event stream is opened first, then the inbox looked at, then looked at again on
    /// each change in the project (and every few seconds, for leases running out), so no
    /// hand-over can slip between a look and the wait that follows it.
    fn wait(&self, timeout: Option<Duration>, on_broken: &dyn Fn(&Error)) -> Result<Inbox> {
        let id = self.id()?;
        let started = Instant::now();
        let deadline = timeout.map(|limit| started + limit);
        let peek = InboxQuery {
            peek: true,
            ..InboxQuery::default()
        };
        let mut found: Option<Inbox> = None;
        let is_found = self.follow_until(deadline, on_broken, |hub| {
            let inbox = self.inbox_at(hub, &id, &peek)?;
            let is_done = !inbox.is_empty();
            found = Some(inbox);
            Ok(is_done)
        })?;
        match found {
            Some(inbox) if is_found => Ok(inbox),
            _ => Err(Error::WaitTimedOut {
                seconds: timeout.map_or(0, |timeout| timeout.as_secs()),
            }),
        }
    }

    fn log(&self, last: usize, since: Option<Timestamp>) -> Result<Vec<ActivityRecord>> {
        let query = LogQuery { n: last, since };
        self.hub.call::<endpoint::Log>(&[&self.id()?], &query)
    }

    fn follow_log(&self, last: usize, since: Option<Timestamp>) -> Result<Box<dyn LogFeed>> {
        Ok(Box::new(RemoteLogFeed {
            hub: self.hub.clone(),
            project: self.id()?,
            first: Some(LogQuery { n: last, since }),
            events: None,
            seen: None,
        }))
    }

    fn stats(&self, window: Window) -> Result<Stats> {
        let query = StatsQuery { since: window };
        self.hub.call::<endpoint::Stats>(&[&self.id()?], &query)
    }

    fn note(&self, text: &str) -> Result<ActivityRecord> {
        let body = TextBody {
            text: text.to_string(),
        };
        self.hub.call::<endpoint::Note>(&[&self.id()?], &body)
    }

    fn message(
        &self,
        to: &str,
        text: &str,
        kind: MessageType,
        summary: Option<&str>,
    ) -> Result<Sent> {
        let body = MessageBody {
            to: to.to_string(),
            text: text.to_string(),
            kind: Some(kind.as_str().to_string()),
            summary: summary.map(str::to_string),
        };
        self.hub.call::<endpoint::Message>(&[&self.id()?], &body)
    }

    fn messages(&self, all: bool, marking: Marking) -> Result<Mail> {
        let query = MessagesQuery {
            all,
            peek: marking == Marking::Leave,
            through: match marking {
                Marking::Through(seq) => Some(seq),
                Marking::Leave | Marking::All => None,
            },
        };
        self.hub.call::<endpoint::Messages>(&[&self.id()?], &query)
    }

    fn agents(&self) -> Result<AgentMatrix> {
        self.hub
            .call::<endpoint::Agents>(&[&self.id()?], &NoBody {})
    }

    fn agent_record(&self, name: &str) -> Result<AgentRecord> {
        // Checked before it becomes part of a URL path, as every name is.
        names::check(NameKind::Agent, name)?;
        // The project says whose coordinator the caller may be: a wake command is shown to
        // the agent itself and to its project's coordinator alone.
        let query = AgentQuery {
            project: self.id().ok(),
        };
        self.hub.call::<endpoint::AgentShow>(&[name], &query)
    }

    fn describe_agent(&self, name: &str, profile: Profile) -> Result<AgentRecord> {
        names::check(NameKind::Agent, name)?;
        let body = ProfileBody {
            strengths: profile.strengths,
            skills: profile.skills,
        };
        self.hub.call::<endpoint::AgentProfile>(&[name], &body)
    }

    fn coordinate(
        &self,
        set: Option<&str>,
        human: Option<&str>,
        not_human: Option<&str>,
    ) -> Result<Project> {
        let body = CoordinatorBody {
            set: set.map(str::to_string),
            human: human.map(str::to_string),
            not_human: not_human.map(str::to_string),
        };
        self.hub
            .call::<endpoint::Coordinator>(&[&self.id()?], &body)
    }

    fn add_context(&self, text: &str) -> Result<Project> {
        let id = self.id()?;
        let body = TextBody {
            text: text.to_string(),
        };
        let project = self.hub.call::<endpoint::Context>(&[&id], &body)?;
        Ok(self.mapped(&self.map()?, Project { id, ..project }))
    }

    fn projects(&self) -> Result<Vec<Project>> {
        let map = self.map()?;
        let projects = self.hub.call::<endpoint::Projects>(&[], &NoBody {})?;
        Ok(projects
            .into_iter()
            .map(|project| self.mapped(&map, project))
            .collect())
    }

    fn wake(&self, agent: &str) -> Result<WakeOutcome> {
        names::check(NameKind::Agent, agent)?;
        self.hub
            .call::<endpoint::Wake>(&[&self.id()?, agent], &NoBody {})
    }

    /// The hub wakes an agent asked from another machine only while work waits for it.
    fn wake_for_waiting_work(&self, agent: &str) -> Result<WakeOutcome> {
        self.wake(agent)
    }

    /// The hub works out the answer for the token's agent, naming the directory this
    /// machine works on the project in instead of the hub's path.
    fn hook(&self, event: HookEvent, stop_hook_active: bool) -> Result<Answer> {
        if event == HookEvent::Stop && stop_hook_active {
            return Ok(Answer::Nothing);
        }
        let id = self.id()?;
        let body = HookBody {
            stop_hook_active,
            workspace: self.map()?.dir_of(&id).map(Path::to_path_buf),
        };
        let answer = self
            .hub
            .call::<endpoint::Hook>(&[&id, event.name()], &body)?;
        // Passed on only as this machine's own answer would be: escaped and within the
        // hook's size (SPEC section 10), whatever the hub sent.
        Ok(crate::session::hook_answer::from_hub(answer))
    }

    fn follow(&self) -> Result<Box<dyn Follow>> {
        Ok(Box::new(RemoteFollow {
            hub: self.hub.clone(),
            project: self.id()?,
            events: Some(self.hub.events()?),
        }))
    }

    /// Looked at on the agent's behalf: the inbox is read without recording anything seen,
    /// which the push does once it reached the session.
    fn handovers_to_push(&self, pushed: &mut Pushed) -> Result<Vec<Due>> {
        let _ = self.record_pushed(pushed, &[]);
        let unrecorded = InboxQuery::from(InboxLook::OnBehalf);
        let inbox = self.inbox_at(&self.hub, &self.id()?, &unrecorded)?;
        let agent = inbox.agent;
        Ok(inbox
            .tasks
            .into_iter()
            .filter_map(|entry| {
                let delivery = entry.task.delivery.as_ref()?;
                let is_due = delivery.to == agent
                    && delivery.state.is_unseen()
                    && !pushed.contains(entry.task.id, delivery.since);
                let push = Push {
                    id: entry.task.id,
                    since: delivery.since,
                    subject: entry.task.subject.clone(),
                    from: entry.task.from.clone(),
                };
                is_due.then_some(Due { push, entry })
            })
            .collect())
    }

    fn record_pushed(&self, pushed: &mut Pushed, sent: &[Push]) -> Result<()> {
        pushed.hold(sent);
        let tasks = pushed.unrecorded();
        if tasks.is_empty() {
            return Ok(());
        }
        self.record_seen(&tasks)?;
        pushed.recorded();
        Ok(())
    }

    fn record_seen(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        self.record_delivery::<endpoint::Seen>(ids)
    }

    fn record_woken(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        self.record_delivery::<endpoint::Woken>(ids)
    }

    /// The hub's machine keeps the presence of live sessions; none is announced from here.
    fn announce(&self, _client: &str) -> Result<Option<Presence>> {
        Ok(None)
    }

    fn reserve(&self, ask: ReserveAsk) -> Result<Reserved> {
        self.hub.call::<endpoint::Reserve>(&[&self.id()?], &ask)
    }

    fn unreserve(&self, ask: UnreserveAsk) -> Result<Reserved> {
        self.hub.call::<endpoint::Unreserve>(&[&self.id()?], &ask)
    }

    fn reservations(&self, mine: bool) -> Result<Vec<Reservation>> {
        let query = ReservationsQuery { mine };
        self.hub
            .call::<endpoint::Reservations>(&[&self.id()?], &query)
    }

    fn reserved(&self, paths: &[String]) -> Result<Vec<Holding>> {
        let body = PathsBody {
            paths: paths.to_vec(),
        };
        self.hub.call::<endpoint::Reserved>(&[&self.id()?], &body)
    }

    fn diff(&self, id: TaskId, stat_only: bool) -> Result<TaskDiff> {
        let task = id.0.to_string();
        let query = DiffQuery { stat: stat_only };
        self.hub
            .call::<endpoint::Diff>(&[&self.id()?, &task], &query)
    }
}

/// The hub's event stream, for the changes of one project.
struct RemoteFollow {
    hub: HubClient,
    project: String,
    /// None once it broke, until the next wait opens it again.
    events: Option<Events>,
}

impl Follow for RemoteFollow {
    fn wait(&mut self, within: Duration) -> Result<bool> {
        let Some(events) = &mut self.events else {
            self.events = Some(self.hub.events_within(within.max(MOMENT))?);
            // Anything may have changed while it was shut.
            return Ok(true);
        };
        let started = Instant::now();
        loop {
            let left = within.saturating_sub(started.elapsed());
            match events.next(left) {
                Ok(Some(change))
                    if change.project.as_deref().is_some_and(|p| p != self.project) =>
                {
                    if left.is_zero() {
                        return Ok(false);
                    }
                }
                Ok(Some(_)) => return Ok(true),
                Ok(None) => return Ok(false),
                Err(error) => {
                    self.events = None;
                    return Err(error);
                }
            }
        }
    }

    fn source(&self) -> Option<String> {
        self.events.as_ref().map(source_of)
    }
}

/// The hub a stream is open on, in words for a person: "the hub at URL", password hidden.
fn source_of(events: &Events) -> String {
    format!(
        "the hub at {}",
        crate::secret::url_without_password(events.url())
    )
}

/// `log --follow` on a hub elsewhere: the stream is opened before the first look, so no
/// line slips between them, and a hub that never answers is said at once. `seen` is the
/// last instant printed and its lines: a later look from that instant on gives them again,
/// and they are not printed twice.
struct RemoteLogFeed {
    hub: HubClient,
    project: String,
    first: Option<LogQuery>,
    events: Option<Events>,
    seen: Option<(Timestamp, Vec<ActivityRecord>)>,
}

impl RemoteLogFeed {
    fn look(&mut self, query: &LogQuery, is_first: bool) -> Result<Vec<LogLine>> {
        let fresh = self.hub.call::<endpoint::Log>(&[&self.project], query)?;
        let printed = self
            .seen
            .as_ref()
            .map(|(_, lines)| lines.as_slice())
            .unwrap_or(&[]);
        let lines = fresh
            .iter()
            .filter(|record| !printed.contains(record))
            .cloned()
            .map(LogLine::of)
            .collect();
        match fresh.last() {
            Some(newest) => {
                let at = newest.at;
                let lines = fresh.iter().filter(|record| record.at == at).cloned();
                self.seen = Some((at, lines.collect()));
            }
            None if is_first => self.seen = Some((time::now(), Vec::new())),
            None => {}
        }
        Ok(lines)
    }

    /// Everything from the last instant printed on, however much came since.
    fn look_again(&mut self) -> Result<Vec<LogLine>> {
        let query = LogQuery {
            n: FOLLOW_BATCH,
            since: self.seen.as_ref().map(|(at, _)| *at),
        };
        self.look(&query, false)
    }
}

impl LogFeed for RemoteLogFeed {
    fn next(&mut self, within: Duration) -> Result<Vec<LogLine>> {
        if let Some(first) = self.first.take() {
            self.events = Some(self.hub.events()?);
            return self.look(&first, true);
        }
        let Some(events) = &mut self.events else {
            self.events = Some(self.hub.events_within(within.max(MOMENT))?);
            // What was logged while the stream was shut.
            return self.look_again();
        };
        let started = Instant::now();
        loop {
            let left = within
                .min(LOOK_AGAIN_EVERY)
                .saturating_sub(started.elapsed());
            match events.next(left) {
                Ok(Some(change))
                    if change.project.as_deref().is_some_and(|p| p != self.project) =>
                {
                    if left.is_zero() {
                        return Ok(Vec::new());
                    }
                }
                Ok(_) => return self.look_again(),
                Err(error) => {
                    self.events = None;
                    return Err(error);
                }
            }
        }
    }

    fn source(&self) -> Option<String> {
        self.events.as_ref().map(source_of)
    }
}
