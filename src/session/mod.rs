//! An identity acting in a project: the operations the CLI, the MCP server and the hooks all
//! call, so the three faces can never drift apart. Nothing here prints or exits.
//!
//! The session is the floor between the faces and the domains: it opens the project, calls
//! the model under the board lock, and then carries out every after-effect of the change
//! itself (notifications, waking), so that no face can forget one.

mod after_change;
mod agents;
pub mod blocking;
pub mod copy;
mod desk;
mod follow;
pub mod hook_answer;
mod import;
mod inbox;
mod log;
mod mail;
mod outside_scope;
pub mod reservations;
mod stats;
mod tasks;
#[cfg(test)]
pub(crate) mod testing;
mod wake_run;
mod worktrees;

pub use after_change::{AfterEffects, Unreachable, record_woken};
pub use agents::{AgentMatrix, AgentRow, UnreadableRecord, remove_agent};
pub use desk::{
    ASK_OVER_EVERY, Desk, Follow, InboxLook, LOOK_AGAIN_EVERY, LocalDesk, LogFeed, LogLine,
};
pub use follow::{Due, Push, Pushed};
pub use import::{Imported, ImportedTask};
pub use inbox::{Inbox, InboxEntry, PREVIEW};
pub use log::Archived;
pub use mail::{Mail, MailEntry, Sent};
pub use tasks::BoardFilter;
pub use wake_run::WakeRun;
pub use worktrees::Pruning;

use blocking::ReadAhead;

/// What `send` needs; defined with the rule that makes it a task.
pub use crate::board::new_task::NewTask;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::activity::ActivityRecord;
use crate::board::handover::Handover;
use crate::board::inbox::{Reason, Turn};
use crate::board::lease;
use crate::board::offers::Offers;
use crate::board::reservation::Reservation;
use crate::board::task::{Head, Task, TaskId};
use crate::board::transition::Event;
use crate::board::{Board, BoardError};
use crate::error::{Error, ProjectError, Result};
use crate::file::lock::LockPolicy;
use crate::home::Home;
use crate::mail::Arrival;
use crate::names::{self, NameKind};
use crate::project::{self, Project};
use crate::registry;
use crate::store::files::{FileStore, HomeFiles};
use crate::store::{self, Store, StoreError, Transaction};
use crate::time::{self, Timestamp};
use crate::wake::WakeOutcome;

/// Where the hub's state is kept, this machine's own directory, how it locks, and what
/// follows a change: the same for every command of one process.
#[derive(Debug, Clone)]
pub struct Hub {
    /// The hub's state: boards, logs, the archive (the files of the hub home, or another
    /// store). Every read and change of it goes through here.
    pub store: Arc<dyn Store>,
    /// The hub home on this machine: what belongs to the machine rather than to the hub's
    /// state (wake logs and locks, the setup manifest, the project map) lives under it.
    pub home: Home,
    pub lock: LockPolicy,
    pub after_effects: AfterEffects,
}

impl Hub {
    /// The hub whose state is the files of `home`.
    pub fn new(home: Home, lock: LockPolicy, after_effects: AfterEffects) -> Self {
        let store = Arc::new(FileStore::new(home.clone(), lock));
        Hub::on(store, home, lock, after_effects)
    }

    /// The hub whose state is kept where `BATON_STORE` says (the files of `home` when it is
    /// unset), on this machine's `home`.
    pub fn from_environment(
        home: Home,
        lock: LockPolicy,
        after_effects: AfterEffects,
    ) -> std::result::Result<Self, crate::setting::SettingError> {
        let store = store::from_environment(&home, lock)?;
        Ok(Hub::on(store, home, lock, after_effects))
    }

    /// The hub whose state `store` keeps, on this machine's `home`.
    pub fn on(
        store: Arc<dyn Store>,
        home: Home,
        lock: LockPolicy,
        after_effects: AfterEffects,
    ) -> Self {
        Hub {
            store,
            home,
            lock,
            after_effects,
        }
    }

    /// This hub for a process that serves many requests: its store may keep what it read
    /// between them and commit changes that arrive together in one write
    /// ([`Store::resident`]).
    pub fn resident(self) -> Self {
        Hub {
            store: self.store.resident(),
            ..self
        }
    }

    /// This hub, with its locks waiting as `lock` says (a hook's wait briefly).
    pub fn with_lock(&self, lock: LockPolicy) -> Self {
        Hub {
            store: self.store.with_lock(lock),
            lock,
            ..self.clone()
        }
    }

    /// This machine's own documents (the setup manifest, the project map), which are files
    /// under its home wherever the hub's state is kept.
    pub fn local(&self) -> HomeFiles {
        HomeFiles::new(self.home.clone(), self.lock)
    }

    /// The board of `project` as it is now, read without the lock.
    pub fn board(&self, project: &str) -> Result<Board> {
        Ok(self.store.board(project)?)
    }

    /// [`crate::mail::append`]: one change of the mail of `project`.
    pub fn append_mail(
        &self,
        project: &str,
        now: Timestamp,
        drafts: Vec<crate::mail::Draft>,
    ) -> Result<Vec<crate::mail::Message>> {
        crate::mail::append(&*self.store, project, now, drafts)
    }

    /// One change of the board of `project`, under its lock ([`Store::change_board`]).
    pub fn update<T>(
        &self,
        project: &str,
        now: Timestamp,
        change: impl FnOnce(&mut Transaction) -> Result<T>,
    ) -> Result<T> {
        store::change_board(&*self.store, project, now, change)
    }

    /// The model's refusal of the board of `project`, as the store names the board.
    pub fn refused<'a>(&'a self, project: &'a str) -> impl Fn(BoardError) -> Error + 'a {
        move |refused| {
            let origin = store::board_origin(&*self.store, project);
            StoreError::board(origin, refused).into()
        }
    }
}

/// What a command asked for before the project is known.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub agent: Option<&'a str>,
    pub project: Option<&'a str>,
    pub cwd: Option<&'a Path>,
}

/// Who the session's identity is at the desk: the agent itself, or a process that looks on
/// its behalf while it may be away (SPEC section 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Standing {
    /// The agent at work: its commands, hooks, MCP and API calls. What it does shows it is
    /// alive, so its due leases are renewed and its `last_seen` refreshed.
    #[default]
    Agent,
    /// A process acting for the agent while it is away: `baton listen` on its machine, a
    /// terminal board (`baton watch`), a wake supervisor. It runs whether the agent lives or
    /// not, so it renews no lease and records no heartbeat: a crashed agent's claims stall
    /// on time, however long its listener keeps looking.
    Observer,
}

impl Standing {
    /// Whether this standing's looks and changes renew the identity's due leases.
    pub fn renews_leases(self) -> bool {
        self == Standing::Agent
    }
}

/// An identity (perhaps none) in a resolved project.
#[derive(Debug, Clone)]
pub struct Session {
    pub hub: Hub,
    pub project: Project,
    agent: Option<String>,
    standing: Standing,
    pub now: Timestamp,
    /// When the caller joined, as the heartbeat read it (`None`: not read, or not yet).
    joined: Option<Timestamp>,
}

/// A task with what the board knows about it beyond its own fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    /// Whose inbox holds it, if anyone's.
    pub turn: Option<String>,
    #[serde(flatten, with = "crate::board::inbox::fields::optional")]
    pub reason: Option<Reason>,
    /// Unfinished tasks it waits on.
    pub blocked_by: Vec<TaskId>,
    /// Another agent's reservation that holds it back (SPEC section 18.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<Reservation>,
    /// The reservations its claim took.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<Reservation>,
    pub stalled: bool,
    pub archived: bool,
    /// What the caller may do with the task now, where the face asked
    /// ([`BoardFilter::offered`], [`Session::with_offers`]): judged here, once, for the web
    /// board's buttons and the terminal board's keys. Not part of `--json`.
    #[serde(flatten)]
    pub offers: Option<Offers>,
}

/// The answer to a command that changed a task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Changed {
    pub project: String,
    pub task: TaskView,
    pub handovers: Vec<Handover>,
    /// Set when `send --skill` chose the assignee: the skill it matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routed_by_skill: Option<String>,
    /// The notifications baton wrote about this change (SPEC section 6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<Arrival>,
    /// What went wrong after the change was made (it stands): one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Whom the change woke, for the face to tell the user; not part of `--json`.
    #[serde(skip)]
    pub woken: Vec<WakeOutcome>,
    /// Agents handed work that nothing will bring it to before their next prompt, for the
    /// face to tell the sender; not part of `--json`.
    #[serde(skip)]
    pub unreachable: Vec<Unreachable>,
}

/// `cwd`, or, when it is in a task's worktree on this machine, its project's workspace,
/// which the worktree stands for (SPEC section 18.4).
fn workspace_standing_for(hub: &Hub, cwd: PathBuf) -> Result<PathBuf> {
    let Some(id) = crate::worktree::project_of(&hub.home.worktrees_root(), &cwd) else {
        return Ok(cwd);
    };
    // A directory named as no project could be is not one of baton's worktrees.
    Ok(project::load(&*hub.store, &id)
        .ok()
        .flatten()
        .and_then(|project| project.workspace)
        .unwrap_or(cwd))
}

impl Session {
    /// The model's refusal of this project's board, as the store names the board.
    fn refused(&self) -> impl Fn(BoardError) -> Error + '_ {
        self.hub.refused(&self.project.id)
    }

    /// Resolves the project, checks names and workspace access, and records the identity
    /// (registering it on first sight, refreshing its leases and last-seen).
    pub fn open(hub: Hub, request: Request<'_>) -> Result<Session> {
        Session::open_with(hub, request, WhenBusy::Fail, Standing::Agent)
    }

    /// [`Session::open`] for a process that looks on the identity's behalf
    /// ([`Standing::Observer`]): the terminal board. It records no heartbeat, and nothing it
    /// reads or does through this session renews a lease.
    pub fn open_observer(hub: Hub, request: Request<'_>) -> Result<Session> {
        Session::open_with(hub, request, WhenBusy::Fail, Standing::Observer)
    }

    /// What the hooks open: [`Session::open`], except that a registry lock still busy when
    /// the hub's lock policy gives up skips the heartbeat (the next look refreshes it)
    /// rather than failing.
    pub fn open_unless_busy(hub: Hub, request: Request<'_>) -> Result<Session> {
        Session::open_with(hub, request, WhenBusy::ShowUnmarked, Standing::Agent)
    }

    /// The session of `agent` in the project `id`, for a caller with no working directory on
    /// the hub (over HTTP, SPEC section 13): the project is named, opened from its own
    /// workspace, and whoever authenticated the caller is the authority, so every project is
    /// reachable by id whatever directory the serving process runs in. A name that is not a
    /// project's is refused as on the CLI (`default` springs into being).
    pub fn open_by_id(hub: Hub, agent: &str, id: &str) -> Result<Session> {
        Session::open_by_id_read(hub, agent, id, Standing::Agent, &ReadAhead::default())
    }

    /// [`Session::open_by_id`] with the standing the request claims: a request that says it
    /// comes from a process looking on the agent's behalf is served as an
    /// [`Standing::Observer`].
    pub fn open_by_id_as(hub: Hub, agent: &str, id: &str, standing: Standing) -> Result<Session> {
        Session::open_by_id_read(hub, agent, id, standing, &ReadAhead::default())
    }

    /// [`Session::open_by_id_as`], with the records the request's token check read for it
    /// ([`ReadAhead`]), which are not read again.
    pub fn open_by_id_read(
        hub: Hub,
        agent: &str,
        id: &str,
        standing: Standing,
        read: &ReadAhead,
    ) -> Result<Session> {
        Session::open_by_id_with(hub, agent, id, WhenBusy::Fail, standing, read)
    }

    /// What a hook over HTTP opens: [`Session::open_by_id`], skipping the heartbeat when
    /// the registry lock stays busy, as [`Session::open_unless_busy`] does; with what the
    /// token's check read for it ([`ReadAhead`]).
    pub fn open_by_id_unless_busy(
        hub: Hub,
        agent: &str,
        id: &str,
        read: &ReadAhead,
    ) -> Result<Session> {
        Session::open_by_id_with(
            hub,
            agent,
            id,
            WhenBusy::ShowUnmarked,
            Standing::Agent,
            read,
        )
    }

    fn open_by_id_with(
        hub: Hub,
        agent: &str,
        id: &str,
        when_busy: WhenBusy,
        standing: Standing,
        ahead: &ReadAhead,
    ) -> Result<Session> {
        let read = match ahead.project(id) {
            Some(text) => project::load_read(&*hub.store, id, text)?,
            None => project::load(&*hub.store, id)?,
        };
        let workspace = read.as_ref().and_then(|found| found.workspace.clone());
        let cwd = workspace.unwrap_or_else(|| PathBuf::from("/"));
        Session::open_read(
            hub,
            Request {
                agent: Some(agent),
                project: Some(id),
                cwd: Some(&cwd),
            },
            Read {
                project: read,
                agent: ahead.agent(agent),
            },
            when_busy,
            standing,
        )
    }

    fn open_with(
        hub: Hub,
        request: Request<'_>,
        when_busy: WhenBusy,
        standing: Standing,
    ) -> Result<Session> {
        Session::open_read(hub, request, Read::default(), when_busy, standing)
    }

    /// [`Session::open_with`], given the requested project's record and the agent's as just
    /// read (`read`), which are not read again.
    fn open_read(
        hub: Hub,
        request: Request<'_>,
        read: Read<'_>,
        when_busy: WhenBusy,
        standing: Standing,
    ) -> Result<Session> {
        let now = time::now();
        if let Some(agent) = request.agent {
            names::check(NameKind::Agent, agent)?;
        }
        let cwd = match request.cwd {
            Some(cwd) => cwd.to_path_buf(),
            None => match project::current_dir() {
                Ok(cwd) => cwd,
                // From a deleted directory only a project named with --project will do, and
                // only one bound to no workspace (inside a bound one or not, nobody can
                // say), or one the caller may reach from anywhere.
                Err(gone) => {
                    let Some(id) = request.project else {
                        return Err(gone);
                    };
                    let found = project::load(&*hub.store, id)?;
                    let reaches = found.as_ref().is_some_and(|found| {
                        request
                            .agent
                            .is_some_and(|agent| found.reaches_anywhere(agent))
                    });
                    match found.and_then(|found| found.workspace) {
                        None => PathBuf::from("/"),
                        Some(_) if reaches => PathBuf::from("/"),
                        Some(workspace) => {
                            return Err(ProjectError::CurrentDirGoneFrom {
                                project: id.to_string(),
                                workspace,
                            }
                            .into());
                        }
                    }
                }
            },
        };
        let cwd = workspace_standing_for(&hub, cwd)?;
        let project = project::resolve_read(
            &*hub.store,
            request.project,
            read.project,
            request.agent,
            &cwd,
            now,
        )?;
        let mut session = Session {
            hub,
            project,
            agent: request.agent.map(str::to_string),
            standing,
            now,
            joined: None,
        };
        // An observer runs whether the agent lives or not: it says nothing of the agent.
        if let Some(agent) = session.agent.as_ref().filter(|_| standing.renews_leases()) {
            session.joined =
                match registry::heartbeat_read(&*session.hub.store, agent, now, read.agent) {
                    Err(error) if when_busy.shows_unmarked(&error) => None,
                    heartbeat => heartbeat?,
                };
        }
        Ok(session)
    }

    /// The caller's name, or the error every identity-needing command gives.
    pub fn agent(&self) -> Result<&str> {
        self.agent.as_deref().ok_or(Error::NoIdentity)
    }

    /// That agent `name` is known (its record is there), or the error that says it is not.
    /// The caller, whose record its heartbeat read as the session opened, is not read again.
    fn require_known(&self, name: &str) -> Result<()> {
        if self.joined.is_some() && self.agent.as_deref() == Some(name) {
            return Ok(());
        }
        registry::require(&*self.hub.store, name)?;
        Ok(())
    }

    pub fn project_id(&self) -> &str {
        &self.project.id
    }

    /// The feed of this project's changes from now on ([`Store::changes`]).
    pub fn changes(&self) -> Result<Box<dyn store::ChangeFeed>> {
        let scope = store::Scope::Project(self.project.id.clone());
        Ok(self.hub.store.changes(&scope)?)
    }

    /// How this session's identity stands at the desk.
    pub fn standing(&self) -> Standing {
        self.standing
    }

    /// The agent whose due leases this session renews: the caller, unless it is an
    /// observer ([`Standing::Observer`]), which renews nothing.
    fn renewing(&self) -> Option<&str> {
        self.agent
            .as_deref()
            .filter(|_| self.standing.renews_leases())
    }

    /// The board as it is now, read without the lock. A signed-in agent keeps its claims
    /// alive by using baton: when its leases are due for renewal, this read becomes a write.
    pub fn board(&self) -> Result<Board> {
        let board = self.hub.board(&self.project.id)?;
        match self.renewing() {
            Some(agent) if lease::has_due_leases(&board, agent, self.now, self.project.lease()) => {
                self.update(|tx| Ok(tx.board.clone()))
            }
            _ => Ok(board),
        }
    }

    /// The locked read-change-write every change goes through; it also renews the caller's
    /// due leases (an agent's, not an observer's), so a renewal never costs a write of its
    /// own.
    fn update<T>(&self, change: impl FnOnce(&mut Transaction) -> Result<T>) -> Result<T> {
        self.hub.update(&self.project.id, self.now, |tx| {
            if let Some(agent) = self.renewing()
                && lease::renew_due_leases(&mut tx.board, agent, self.now, self.project.lease())
                    .map_err(self.refused())?
            {
                tx.touch();
            }
            change(tx)
        })
    }

    fn view(&self, board: &Board, task: Task, archived: bool) -> TaskView {
        let head = Head::of(&task);
        let mut held_by = None;
        let (turn, reason, blocked_by) = match board.turn(&head, self.now) {
            Turn::Of { agent, reason } => (Some(agent.to_string()), Some(reason), Vec::new()),
            Turn::Blocked(ids) => (None, None, ids),
            Turn::Held(holder) => {
                held_by = Some(holder.clone());
                (None, None, Vec::new())
            }
            Turn::Nobody => (None, None, Vec::new()),
        };
        let reservations = board
            .live_reservations(self.now)
            .filter(|reservation| reservation.task == Some(task.id) && !archived)
            .cloned()
            .collect();
        TaskView {
            stalled: task.is_stalled(self.now),
            task,
            turn,
            reason,
            blocked_by,
            held_by,
            reservations,
            archived,
            offers: None,
        }
    }

    fn record(&self, actor: &str, event: &Event) -> ActivityRecord {
        ActivityRecord {
            at: self.now,
            project: self.project.id.clone(),
            actor: actor.to_string(),
            action: event.action.into(),
            task: Some(event.task),
            from_status: Some(event.from_status),
            to_status: Some(event.to_status),
            text: Some(event.text.clone()).filter(|text| !text.is_empty()),
        }
    }
}

/// What a session's opening was given as just read: the requested project's record, and
/// the text of the agent's (`Some(None)`: there was none).
#[derive(Default)]
struct Read<'a> {
    project: Option<Project>,
    agent: Option<Option<&'a [u8]>>,
}

/// What a look that also writes (renewing leases, marking mail read) does when a lock it
/// needs stays busy past the hub's lock timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WhenBusy {
    /// Fails with the lock timeout, as every command does.
    Fail,
    /// Looks without writing instead.
    ShowUnmarked,
}

impl WhenBusy {
    fn shows_unmarked(self, error: &Error) -> bool {
        self == WhenBusy::ShowUnmarked
            && matches!(error, Error::Store(error) if error.is_lock_timeout())
    }
}
