//! The desk: everything an identity can do in a project, as one trait, so that a face (a
//! command, a tool, a hook, a key of the terminal board) is written once, whether the hub is
//! this machine's ([`LocalDesk`], the session over the files) or another's (the client of a
//! remote hub, in the `remote` module). No face asks which one it holds.
//!
//! What differs between the two stays behind the trait: how a change is noticed (the
//! store's feed of changes here, the hub's event stream there), how a look on the agent's
//! behalf renews no lease ([`Standing::Observer`] here, an observer header there), and what
//! a remote caller is shown of the hub's machine (its own mapped directory, never the hub's
//! path).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use super::hook_answer::{Answer, hub_for_hook};
use super::reservations::{Holding, ReserveAsk, Reserved, UnreserveAsk};
use super::{
    AgentMatrix, BoardFilter, Changed, Due, Hub, Inbox, Mail, Push, Pushed, Request, Sent, Session,
    Standing, TaskView,
};
use crate::activity::ActivityRecord;
use crate::board::new_task::NewTask;
use crate::board::reservation::Reservation;
use crate::board::stats::{Stats, Window};
use crate::board::task::TaskId;
use crate::board::transition::Action;
use crate::client::HookEvent;
use crate::error::{Error, Result, SessionError};
use crate::mail::{Marking, MessageType};
use crate::project::{self, Project};
use crate::registry::{self, AgentRecord, Profile, WakeCommandChange};
use crate::store::presence::Presence;
use crate::store::{ChangeFeed, LogTail};
use crate::worktree::diff::TaskDiff;

use crate::time::{self, Timestamp};
use crate::wake::WakeOutcome;

/// How often `wait` and a follower look at the inbox even when nothing was written: a lease
/// running out puts a task into its sender's inbox without any write.
pub const LOOK_AGAIN_EVERY: Duration = Duration::from_secs(5);
/// How often a follower whose end no change tells (`hook follow`: its plugin's stdin
/// closing; a push whose connection closed) asks whether it is over while it waits.
pub const ASK_OVER_EVERY: Duration = Duration::from_millis(250);

/// What an identity can do in a project: the operations every face calls.
///
/// A desk acts at the moment it is asked (leases, stalled marks and ages are judged then),
/// so a long-running face (the terminal board, `wait`, a push into a live session) may keep
/// one for as long as it runs.
pub trait Desk: Send + Sync {
    /// Who acts: the caller's name, or the error every identity-needing command gives.
    fn agent(&self) -> Result<String>;

    /// The id of the project acted on.
    fn project_id(&self) -> Result<String>;

    /// The project acted on as it is now, as this machine shows it: a remote caller sees
    /// the directory its machine maps to the project, never the hub's path (SPEC section 7).
    fn project(&self) -> Result<Project>;

    /// Where the hub is, when it is on another machine (`BATON_URL`).
    fn hub_url(&self) -> Option<&str>;

    /// `send`: a new pending task.
    fn send(&self, new: NewTask) -> Result<Changed>;

    /// Every transition of SPEC section 3 other than `send`.
    fn act(&self, id: TaskId, action: Action) -> Result<Changed>;

    /// `show`: one task, from the board or the archive.
    fn show(&self, id: TaskId) -> Result<TaskView>;

    /// [`Desk::show`] with what the caller may do with the task now (the web board's
    /// buttons: [`TaskView::offers`]).
    fn show_with_offers(&self, id: TaskId) -> Result<TaskView>;

    /// `board`: the tasks the filter lets through, oldest first.
    fn board(&self, filter: &BoardFilter) -> Result<Vec<TaskView>>;

    /// The caller's inbox, looked at as `look` says.
    fn inbox(&self, look: InboxLook) -> Result<Inbox>;

    /// `wait`: blocks until the caller's inbox holds something and returns it (as
    /// [`InboxLook::Peek`] shows it), or fails with [`Error::WaitTimedOut`] once `timeout`
    /// has passed. When the way changes arrive breaks and is opened again (a hub's
    /// stream), `on_broken` is told why; the wait goes on.
    fn wait(&self, timeout: Option<Duration>, on_broken: &dyn Fn(&Error)) -> Result<Inbox>;

    /// `log`: the last `last` activity records, of those at or after `since`, oldest first.
    fn log(&self, last: usize, since: Option<Timestamp>) -> Result<Vec<ActivityRecord>>;

    /// `log --follow`: the lines as they come, the first batch being [`Desk::log`]'s.
    fn follow_log(&self, last: usize, since: Option<Timestamp>) -> Result<Box<dyn LogFeed>>;

    /// `note`: a line in the activity log from the caller.
    fn note(&self, text: &str) -> Result<ActivityRecord>;

    /// `stats`: how the team is doing over `window` (SPEC section 19).
    fn stats(&self, window: Window) -> Result<Stats>;

    /// `msg`: one message to an agent, or to everyone else.
    fn message(
        &self,
        to: &str,
        text: &str,
        kind: MessageType,
        summary: Option<&str>,
    ) -> Result<Sent>;

    /// `messages`: the caller's unread messages (with `all`, every one it sent or received);
    /// `marking` says which count as read.
    fn messages(&self, all: bool, marking: Marking) -> Result<Mail>;

    /// `agents`: the capability matrix of the project.
    fn agents(&self) -> Result<AgentMatrix>;

    /// `agent show NAME`: an agent's record, its wake command shown only to those who may
    /// see it.
    fn agent_record(&self, name: &str) -> Result<AgentRecord>;

    /// `agent add NAME --strengths … --skills …`: an agent's profile (a wake command is set
    /// on the hub's own machine alone, SPEC section 8).
    fn describe_agent(&self, name: &str, profile: Profile) -> Result<AgentRecord>;

    /// `coordinator [--human NAME] [--not-human NAME] [--set NAME]`, in that order; the
    /// project as it is after them all.
    fn coordinate(
        &self,
        set: Option<&str>,
        human: Option<&str>,
        not_human: Option<&str>,
    ) -> Result<Project>;

    /// `context --add`: a shared project note; the project after it.
    fn add_context(&self, text: &str) -> Result<Project>;

    /// `project list`: every project the caller may name, as this machine shows them.
    fn projects(&self) -> Result<Vec<Project>>;

    /// `wake NAME`: the agent's wake command, run now on the hub's machine.
    fn wake(&self, agent: &str) -> Result<WakeOutcome>;

    /// `wake NAME` asked from another machine: the wake command runs only while work waits
    /// for the agent ([`Session::wake_for_waiting_work`]). A hub elsewhere does so for
    /// every `wake`.
    fn wake_for_waiting_work(&self, agent: &str) -> Result<WakeOutcome>;

    /// What the caller's client hook says for `event` ([`Answer`]): the inbox at the start
    /// of a session and on a prompt, a reason to go on at stop (none when the client says a
    /// stop hook already made the agent go on).
    fn hook(&self, event: HookEvent, stop_hook_active: bool) -> Result<Answer>;

    /// Changes of the project, for a face that looks again on each (`watch`, the terminal
    /// board, pushes into a live session).
    fn follow(&self) -> Result<Box<dyn Follow>>;

    /// The hand-overs to the caller not yet seen and not in `pushed`: what a push into a
    /// live session carries (SPEC section 11).
    fn handovers_to_push(&self, pushed: &mut Pushed) -> Result<Vec<Due>>;

    /// After `sent` was pushed into the live session: never pushed again, and recorded as
    /// seen (a failure to record is returned, and tried again at the next look).
    fn record_pushed(&self, pushed: &mut Pushed, sent: &[Push]) -> Result<()>;

    /// These tasks were pushed into the caller's live session: their delivery records say
    /// seen (SPEC section 11), for the caller's own hand-overs only. The ids recorded.
    fn record_seen(&self, ids: &[TaskId]) -> Result<Vec<TaskId>>;

    /// The caller was woken for these tasks (a remote `listen`): their delivery records say
    /// woken (SPEC section 11), for the caller's own hand-overs only. The ids asked for.
    fn record_woken(&self, ids: &[TaskId]) -> Result<Vec<TaskId>>;

    /// Announces a live session of `client` for the caller while the returned presence is
    /// kept, where the hub can be told (this machine's files); `None` where it cannot.
    fn announce(&self, client: &str) -> Result<Option<Presence>>;

    /// `reserve PATTERNS`: all or nothing, for the caller (SPEC section 18.2).
    fn reserve(&self, ask: ReserveAsk) -> Result<Reserved>;

    /// `unreserve PATTERNS|--all [--agent NAME]`.
    fn unreserve(&self, ask: UnreserveAsk) -> Result<Reserved>;

    /// `reservations [--mine]`: the live reservations.
    fn reservations(&self, mine: bool) -> Result<Vec<Reservation>>;

    /// `reserved PATH…`: who other than the caller holds each path (paths relative to the
    /// workspace's root); what a guard before an edit or a commit asks.
    fn reserved(&self, paths: &[String]) -> Result<Vec<Holding>>;

    /// `diff ID [--stat]`: a task's changes against its base (SPEC section 18.4), as the
    /// hub's machine sees them.
    fn diff(&self, id: TaskId, stat_only: bool) -> Result<TaskDiff>;
}

/// How an inbox is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InboxLook {
    /// `inbox --peek`: every task, no message marked read.
    Peek,
    /// `inbox`: every task, and the messages shown count as read.
    MarkRead,
    /// `status`: the first [`super::PREVIEW`] tasks in full and a count of the rest; no
    /// message marked read.
    Preview,
    /// [`InboxLook::Preview`], and the messages shown count as read.
    PreviewMarkRead,
    /// On the agent's behalf, showing it nothing (a remote `listen`, a push into a live
    /// session): every task, no hand-over recorded as seen, no message marked read.
    OnBehalf,
}

/// What tells a face that the project may have changed.
pub trait Follow: Send {
    /// Waits until the project may have changed (true) or `within` passes (false). An error
    /// says the way changes arrive broke (a hub's stream): the next call opens it again,
    /// and says true once it is open, since anything may have changed meanwhile.
    fn wait(&mut self, within: Duration) -> Result<bool>;

    /// Where changes come from now, for words to a person once a broken way is open again:
    /// "the hub at URL" (its password hidden) whose stream is open; `None` on this machine.
    fn source(&self) -> Option<String> {
        None
    }
}

/// One line of the activity log as `log --follow` prints it: the record, and its JSON as
/// the log holds it (a line that is no record has only its text).
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub record: Option<ActivityRecord>,
    pub json: String,
}

impl LogLine {
    pub fn of(record: ActivityRecord) -> LogLine {
        LogLine {
            json: serde_json::to_string(&record).unwrap_or_default(),
            record: Some(record),
        }
    }
}

/// The activity log as it grows.
pub trait LogFeed: Send {
    /// The lines logged since the last call, oldest first (the first call: the last ones
    /// asked for), waiting up to `within` for some. An error says the way lines arrive
    /// broke (a hub's stream): the next call opens it again and misses nothing.
    fn next(&mut self, within: Duration) -> Result<Vec<LogLine>>;

    /// Where lines come from now, as [`Follow::source`] says it.
    fn source(&self) -> Option<String> {
        None
    }
}

/// How a [`LocalDesk`] opens its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// As the agent at work ([`Session::open`]).
    Agent,
    /// As a process looking on the agent's behalf ([`Session::open_observer`]).
    Observer,
    /// As a client's hook: a busy lock is tried only briefly and skipped
    /// ([`Session::open_unless_busy`]).
    Hook,
}

/// The desk of this machine's hub: a [`Session`], opened when first needed (a command that
/// needs no project, `agent show` say, never resolves one).
pub struct LocalDesk {
    hub: Hub,
    agent: Option<String>,
    project: Option<String>,
    /// The directory the project is resolved from; the current one when `None`.
    cwd: Option<PathBuf>,
    opening: Opening,
    session: OnceLock<Session>,
}

impl LocalDesk {
    /// The desk of `agent` (none for a command run without an identity) in `project` (else
    /// the current directory's), as the agent at work.
    pub fn new(hub: Hub, agent: Option<String>, project: Option<String>) -> LocalDesk {
        LocalDesk {
            hub,
            agent,
            project,
            cwd: None,
            opening: Opening::Agent,
            session: OnceLock::new(),
        }
    }

    /// The same desk for a process that looks on the agent's behalf (`watch`): it renews no
    /// lease and records no heartbeat ([`Standing::Observer`]).
    pub fn observing(self) -> LocalDesk {
        LocalDesk {
            opening: Opening::Observer,
            ..self
        }
    }

    /// The same desk for a client's hook run in `cwd` (the client's directory, which
    /// decides the project unless it is named): a busy lock is tried only briefly, and a
    /// directory that does not exist is refused rather than guessed at.
    pub fn for_hook(self, cwd: Option<PathBuf>) -> LocalDesk {
        LocalDesk {
            hub: hub_for_hook(&self.hub),
            cwd,
            opening: Opening::Hook,
            ..self
        }
    }

    /// A desk over a session already open.
    pub fn of(session: Session) -> LocalDesk {
        let opening = match session.standing() {
            Standing::Agent => Opening::Agent,
            Standing::Observer => Opening::Observer,
        };
        LocalDesk {
            hub: session.hub.clone(),
            agent: session.agent().ok().map(str::to_string),
            project: Some(session.project_id().to_string()),
            cwd: None,
            opening,
            session: OnceLock::from(session),
        }
    }

    /// The session, opened on first use; as of now (see [`Desk`]).
    pub fn session(&self) -> Result<Session> {
        if let Some(session) = self.session.get() {
            return Ok(session.at_now());
        }
        let opened = self.open()?;
        // Two threads opening at once both opened one; either will do.
        let session = self.session.get_or_init(|| opened);
        Ok(session.at_now())
    }

    fn open(&self) -> Result<Session> {
        if let (Opening::Hook, Some(missing)) = (self.opening, self.missing_cwd()) {
            return Err(SessionError::ClientDirectory {
                exists: missing.exists(),
                dir: missing.to_path_buf(),
            }
            .into());
        }
        let request = Request {
            agent: self.agent.as_deref(),
            project: self.project.as_deref(),
            cwd: self.cwd.as_deref(),
        };
        let hub = self.hub.clone();
        match self.opening {
            Opening::Agent => Session::open(hub, request),
            Opening::Observer => Session::open_observer(hub, request),
            Opening::Hook => Session::open_unless_busy(hub, request),
        }
    }

    /// A directory the client names that is not one: it would leave the project to a
    /// guess. With a project named, the directory is still compared with the project's
    /// workspace as a path.
    fn missing_cwd(&self) -> Option<&Path> {
        self.cwd
            .as_deref()
            .filter(|cwd| !cwd.is_dir() && self.project.is_none())
    }
}

impl Session {
    /// The session as of this moment, for a long-running face whose session was opened long
    /// ago (leases and stalled marks depend on the time).
    pub fn at_now(&self) -> Session {
        let mut fresh = self.clone();
        fresh.now = time::now();
        fresh
    }
}

impl Desk for LocalDesk {
    fn agent(&self) -> Result<String> {
        match &self.agent {
            Some(agent) => Ok(agent.clone()),
            None => Err(Error::NoIdentity),
        }
    }

    fn project_id(&self) -> Result<String> {
        Ok(self.session()?.project.id)
    }

    fn project(&self) -> Result<Project> {
        let session = self.session()?;
        // As it is now: the coordinator and the notes change while a board runs.
        Ok(project::load(&*session.hub.store, session.project_id())?.unwrap_or(session.project))
    }

    fn hub_url(&self) -> Option<&str> {
        None
    }

    fn send(&self, new: NewTask) -> Result<Changed> {
        self.session()?.send(new)
    }

    fn act(&self, id: TaskId, action: Action) -> Result<Changed> {
        self.session()?.act(id, action)
    }

    fn show(&self, id: TaskId) -> Result<TaskView> {
        self.session()?.show(id)
    }

    fn show_with_offers(&self, id: TaskId) -> Result<TaskView> {
        let session = self.session()?;
        session.with_offers(session.show(id)?)
    }

    fn board(&self, filter: &BoardFilter) -> Result<Vec<TaskView>> {
        self.session()?.list(filter)
    }

    fn inbox(&self, look: InboxLook) -> Result<Inbox> {
        let session = self.session()?;
        match look {
            InboxLook::Peek => session.inbox(),
            InboxLook::MarkRead => session.inbox_and_mark_read(),
            InboxLook::Preview => session.inbox_preview(false),
            InboxLook::PreviewMarkRead => session.inbox_preview(true),
            InboxLook::OnBehalf => session.inbox_before_push(),
        }
    }

    fn wait(&self, timeout: Option<Duration>, _: &dyn Fn(&Error)) -> Result<Inbox> {
        let session = self.session()?;
        session.agent()?;
        let started = Instant::now();
        // Made before the first look: a change during it is a change.
        let mut changes = session.changes()?;
        loop {
            let looked_at = Instant::now();
            let inbox = session.at_now().inbox()?;
            if !inbox.is_empty() {
                return Ok(inbox);
            }
            loop {
                let mut pause = LOOK_AGAIN_EVERY.saturating_sub(looked_at.elapsed());
                if let Some(timeout) = timeout {
                    let waited = started.elapsed();
                    if waited >= timeout {
                        return Err(Error::WaitTimedOut {
                            seconds: timeout.as_secs(),
                        });
                    }
                    pause = pause.min(timeout - waited);
                }
                if pause.is_zero() || !changes.next(pause)?.is_empty() {
                    break;
                }
            }
        }
    }

    fn log(&self, last: usize, since: Option<Timestamp>) -> Result<Vec<ActivityRecord>> {
        self.session()?.log(Some(last), since)
    }

    fn follow_log(&self, last: usize, since: Option<Timestamp>) -> Result<Box<dyn LogFeed>> {
        Ok(Box::new(LocalLogFeed {
            session: self.session()?,
            first: Some((last, since)),
            tail: None,
        }))
    }

    fn note(&self, text: &str) -> Result<ActivityRecord> {
        self.session()?.note(text)
    }

    fn stats(&self, window: Window) -> Result<Stats> {
        self.session()?.stats(window)
    }

    fn message(
        &self,
        to: &str,
        text: &str,
        kind: MessageType,
        summary: Option<&str>,
    ) -> Result<Sent> {
        self.session()?.message(to, text, kind, summary)
    }

    fn messages(&self, all: bool, marking: Marking) -> Result<Mail> {
        self.session()?.messages(all, marking)
    }

    fn agents(&self) -> Result<AgentMatrix> {
        self.session()?.agents()
    }

    fn agent_record(&self, name: &str) -> Result<AgentRecord> {
        registry::require(&*self.hub.store, name)
    }

    fn describe_agent(&self, name: &str, profile: Profile) -> Result<AgentRecord> {
        registry::add(
            &*self.hub.store,
            name,
            time::now(),
            &profile,
            WakeCommandChange::Keep,
        )
    }

    fn coordinate(
        &self,
        set: Option<&str>,
        human: Option<&str>,
        not_human: Option<&str>,
    ) -> Result<Project> {
        self.session()?.coordinate(set, human, not_human)
    }

    fn add_context(&self, text: &str) -> Result<Project> {
        self.session()?.add_context(text)
    }

    fn projects(&self) -> Result<Vec<Project>> {
        project::list(&*self.hub.store)
    }

    fn wake(&self, agent: &str) -> Result<WakeOutcome> {
        self.session()?.wake_by_hand(agent)
    }

    fn wake_for_waiting_work(&self, agent: &str) -> Result<WakeOutcome> {
        self.session()?.wake_for_waiting_work(agent)
    }

    fn hook(&self, event: HookEvent, stop_hook_active: bool) -> Result<Answer> {
        if event == HookEvent::Stop && stop_hook_active {
            // The agent already went on once for its inbox; stopping now cannot loop.
            return Ok(Answer::Nothing);
        }
        self.session()?.hook_answer(event, stop_hook_active)
    }

    fn follow(&self) -> Result<Box<dyn Follow>> {
        // Only what changes from now on counts: the caller has just looked, or looks next.
        Ok(Box::new(LocalFollow(self.session()?.changes()?)))
    }

    fn handovers_to_push(&self, pushed: &mut Pushed) -> Result<Vec<Due>> {
        self.session()?.handovers_to_push(pushed)
    }

    fn record_pushed(&self, pushed: &mut Pushed, sent: &[Push]) -> Result<()> {
        self.session()?.record_pushed(pushed, sent)
    }

    fn record_seen(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        self.session()?.record_seen(ids)
    }

    fn record_woken(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        let session = self.session()?;
        super::record_woken(&session.hub, session.project_id(), session.agent()?, ids);
        Ok(ids.to_vec())
    }

    fn reserve(&self, ask: ReserveAsk) -> Result<Reserved> {
        self.session()?.reserve(ask)
    }

    fn unreserve(&self, ask: UnreserveAsk) -> Result<Reserved> {
        self.session()?.unreserve(ask)
    }

    fn reservations(&self, mine: bool) -> Result<Vec<Reservation>> {
        self.session()?.reservations(mine)
    }

    fn reserved(&self, paths: &[String]) -> Result<Vec<Holding>> {
        self.session()?.reserved(paths)
    }

    fn diff(&self, id: TaskId, stat_only: bool) -> Result<TaskDiff> {
        self.session()?.diff(id, stat_only)
    }

    fn announce(&self, client: &str) -> Result<Option<Presence>> {
        let session = self.session()?;
        let agent = session.agent()?;
        Ok(Some(session.hub.store.announce_session(
            session.project_id(),
            agent,
            client,
        )?))
    }
}

/// The store's feed of the project's changes.
struct LocalFollow(Box<dyn ChangeFeed>);

impl Follow for LocalFollow {
    fn wait(&mut self, within: Duration) -> Result<bool> {
        Ok(!self.0.next(within)?.is_empty())
    }
}

/// How often `log --follow` looks at the log on this machine.
const LOG_LOOK_EVERY: Duration = Duration::from_millis(200);

/// `log --follow` on this machine: the live log read on from where it was
/// ([`crate::store::Store::tail_log`]), so a line logged by a writer whose session began
/// earlier (its time is older) is printed all the same, and a rotation loses nothing.
struct LocalLogFeed {
    session: Session,
    /// The first batch, until it is read.
    first: Option<(usize, Option<Timestamp>)>,
    tail: Option<Box<dyn LogTail>>,
}

impl LogFeed for LocalLogFeed {
    fn next(&mut self, within: Duration) -> Result<Vec<LogLine>> {
        if let Some((last, since)) = self.first {
            let records = self.session.log(Some(last), since)?;
            self.tail = Some(self.session.hub.store.tail_log(self.session.project_id())?);
            self.first = None;
            return Ok(records.into_iter().map(LogLine::of).collect());
        }
        let started = Instant::now();
        loop {
            thread::sleep(LOG_LOOK_EVERY.min(within));
            // A writer killed before logging its change leaves its lines to be added.
            let _ = self.session.catch_up_log();
            let fresh = match self.tail.as_mut() {
                Some(tail) => tail.fresh_lines()?,
                None => Vec::new(),
            };
            let lines: Vec<LogLine> = fresh
                .into_iter()
                .map(|json| LogLine {
                    record: serde_json::from_str(&json).ok(),
                    json,
                })
                .collect();
            if !lines.is_empty() || started.elapsed() >= within {
                return Ok(lines);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::board::action::ActionKind;
    use crate::board::task::Status;
    use crate::file::lock::LockPolicy;
    use crate::home::Home;
    use crate::session::AfterEffects;

    fn hub(root: &Path) -> Hub {
        let policy = LockPolicy {
            timeout: Duration::from_secs(5),
            on_wait: |_| {},
        };
        Hub::new(Home::new(root.to_path_buf()), policy, AfterEffects::none())
    }

    fn desk(hub: &Hub, agent: &str) -> LocalDesk {
        LocalDesk::new(hub.clone(), Some(agent.to_string()), Some("default".into()))
    }

    #[test]
    fn a_task_goes_through_its_life_on_the_desks_of_two_agents() {
        let root = tempfile::tempdir().unwrap();
        let hub = hub(root.path());
        let (lead, dev) = (desk(&hub, "lead"), desk(&hub, "dev"));
        // Each is known once it has been at its desk.
        dev.inbox(InboxLook::Peek).unwrap();
        let sent = lead
            .send(NewTask {
                to: Some("dev".into()),
                subject: "Fix the parser".into(),
                ..NewTask::default()
            })
            .unwrap();
        let id = sent.task.task.id;
        assert_eq!(dev.inbox(InboxLook::Peek).unwrap().tasks[0].task.id, id);
        let refused = dev
            .act(id, Action::new(ActionKind::Done, " ".into()))
            .unwrap_err();
        assert_eq!(refused.to_string(), "done needs --result with some words");
        dev.act(id, Action::from(ActionKind::Claim)).unwrap();
        let done = dev
            .act(id, Action::new(ActionKind::Done, "fixed".into()))
            .unwrap();
        assert_eq!(done.task.task.status, Status::Completed);
        assert!(dev.inbox(InboxLook::Peek).unwrap().tasks.is_empty());
        let log = lead.log(10, None).unwrap();
        let actions: Vec<&str> = log.iter().map(|record| record.action.as_str()).collect();
        assert_eq!(actions, ["send", "claim", "done"]);
        assert_eq!(lead.project().unwrap().coordinator.as_deref(), Some("lead"));
    }

    #[test]
    fn without_an_identity_a_desk_reads_but_does_not_act() {
        let root = tempfile::tempdir().unwrap();
        let hub = hub(root.path());
        let nobody = LocalDesk::new(hub, None, Some("default".into()));
        assert!(matches!(nobody.agent(), Err(Error::NoIdentity)));
        assert!(nobody.board(&BoardFilter::default()).unwrap().is_empty());
        let refused = nobody.note("hello").unwrap_err();
        assert!(matches!(refused, Error::NoIdentity), "{refused}");
    }

    #[test]
    fn a_hook_of_an_active_stop_lets_the_agent_stop_before_anything_is_opened() {
        // A project that does not exist would fail any look; the stop never looks.
        let root = tempfile::tempdir().unwrap();
        let missing = LocalDesk::new(hub(root.path()), Some("dev".into()), Some("nope".into()))
            .for_hook(None);
        assert_eq!(
            missing.hook(HookEvent::Stop, true).unwrap(),
            Answer::Nothing
        );
        assert!(missing.hook(HookEvent::Stop, false).is_err());
    }

    #[test]
    fn a_wait_with_nothing_to_do_times_out() {
        let root = tempfile::tempdir().unwrap();
        let dev = desk(&hub(root.path()), "dev");
        let waited = dev.wait(Some(Duration::from_millis(200)), &|_| {});
        assert!(
            matches!(waited, Err(Error::WaitTimedOut { .. })),
            "{waited:?}"
        );
    }
}
