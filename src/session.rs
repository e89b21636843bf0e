//! An identity acting in a project: the operations the CLI, the MCP server and the hooks all
//! call, so the three faces can never drift apart. Nothing here prints or exits.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::activity::{self, ActivityRecord};
use crate::archive;
use crate::board::inbox::{Reason, Turn};
use crate::board::task::{Head, Priority, Status, Task, TaskId, ThreadEntry};
use crate::board::transition::{self, Action, Event};
use crate::board::{Board, InboxItem};
use crate::change::{self, Transaction};
use crate::error::{Error, Result};
use crate::mail::{Delivery, Message};
use crate::names::{self, NameKind};
use crate::project::{self, Project};
use crate::registry;
use crate::store::StoreError;
use crate::store::board_file;
use crate::store::lock::LockPolicy;
use crate::store::paths::Home;
use crate::text;
use crate::time::{self, Timestamp};

/// Where the hub lives and how it locks: the same for every command of one process.
#[derive(Debug, Clone)]
pub struct Hub {
    pub home: Home,
    pub lock: LockPolicy,
}

impl Hub {
    pub fn new(home: Home, lock: LockPolicy) -> Self {
        Hub { home, lock }
    }
}

/// What a command asked for before the project is known.
#[derive(Debug, Clone, Default)]
pub struct Request<'a> {
    pub agent: Option<&'a str>,
    pub project: Option<&'a str>,
    pub cwd: Option<&'a Path>,
}

/// An identity (perhaps none) in a resolved project.
#[derive(Debug, Clone)]
pub struct Session {
    pub hub: Hub,
    pub project: Project,
    agent: Option<String>,
    pub now: Timestamp,
}

/// Someone whose inbox just gained a task: the cue to wake and notify them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Handover {
    pub agent: String,
    pub project: String,
    pub task: TaskId,
    pub reason: Reason,
    pub subject: String,
}

/// A task with what the board knows about it beyond its own fields.
#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    /// Whose inbox holds it, if anyone's.
    pub turn: Option<String>,
    pub reason: Option<Reason>,
    /// Unfinished tasks it waits on.
    pub blocked_by: Vec<TaskId>,
    pub stalled: bool,
    pub archived: bool,
}

/// The answer to a command that changed a task.
#[derive(Debug, Clone, Serialize)]
pub struct Changed {
    pub project: String,
    pub task: TaskView,
    pub handovers: Vec<Handover>,
    /// Set when `send --skill` chose the assignee: the skill it matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routed_by_skill: Option<String>,
    /// The notifications baton wrote about this change (SPEC section 6).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notifications: Vec<Delivery>,
    /// What went wrong after the change was made (it stands): one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// What `send` needs.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    pub to: Option<String>,
    pub skill: Option<String>,
    pub subject: String,
    pub body: String,
    pub files: Vec<String>,
    pub priority: Priority,
    pub after: Vec<TaskId>,
    pub review: bool,
    pub reviewer: Option<String>,
}

/// One task in an inbox, with all that is needed to act on it.
#[derive(Debug, Clone, Serialize)]
pub struct InboxEntry {
    #[serde(flatten)]
    pub task: Task,
    pub reason: Reason,
    /// Who is waiting on the owner of the inbox.
    pub waiting: String,
    /// The last question, answer or review note.
    pub last_word: Option<ThreadEntry>,
}

impl InboxEntry {
    /// Everything needed to act on the entry without another call, as the CLI's inbox and
    /// the hooks show it: subject, who waits, body, files, the last word, the next commands.
    /// Participants' text is shown by SPEC section 10's rules; with `limit`, the subject,
    /// body and last word are each cut to about that many characters, saying what was left
    /// out and where to read it whole.
    pub fn describe(&self, now: Timestamp, limit: Option<usize>) -> String {
        use std::fmt::Write;
        let task = &self.task;
        let id = task.id;
        let cut = |text: &'_ str, limit: Option<usize>| -> String {
            match limit.map(|limit| text::cut(text, limit)) {
                Some((kept, left)) if left > 0 => {
                    format!("{kept}… ({left} more: baton show {id})")
                }
                _ => text.to_string(),
            }
        };
        let subject_limit = limit.map(|limit| (limit / 10).max(80));
        let mut out = format!(
            "{} [{}] {}: {}\n",
            id,
            task.priority,
            self.reason.what_to_do(),
            text::inline(&cut(&task.subject, subject_limit))
        );
        let _ = writeln!(
            out,
            "  from {} to {}, sent {} ago; {} is waiting on you",
            task.from,
            task.to,
            time::age(task.created_at, now),
            self.waiting
        );
        out.push_str(&text::framed(&cut(&task.body, limit), "  | ").to_string());
        if !task.files.is_empty() {
            let files: Vec<String> = task
                .files
                .iter()
                .map(|file| text::inline(file).to_string())
                .collect();
            let _ = writeln!(out, "  files: {}", cut(&files.join(", "), subject_limit));
        }
        if let Some(word) = &self.last_word {
            let _ = write!(
                out,
                "  last {} by {} ({} ago):",
                word.kind.as_str().replace('_', " "),
                word.by,
                time::age(word.at, now),
            );
            let said = cut(&word.text, limit);
            if text::is_multiline(&said) {
                let _ = write!(out, "\n{}", text::framed(&said, "  | "));
            } else {
                let _ = writeln!(out, " {}", text::inline(&said));
            }
        }
        let _ = writeln!(out, "  next: {}", self.next_steps());
        out
    }

    /// The commands that move the task on from where it is in this inbox.
    pub fn next_steps(&self) -> String {
        let id = self.task.id.0;
        match self.reason {
            Reason::Assigned | Reason::ChangesRequested => {
                let finish = if self.task.review {
                    format!("baton review {id} --body WHAT-YOU-DID")
                } else {
                    format!("baton done {id} --result WHAT-YOU-DID")
                };
                format!("baton claim {id} · baton ask {id} --body QUESTION · {finish}")
            }
            Reason::Question => format!("baton answer {id} --body ANSWER"),
            Reason::ReviewRequested => {
                format!("baton approve {id} · baton request-changes {id} --body WHAT")
            }
            Reason::Stalled => format!(
                "ask {} how it goes (baton msg), baton reassign {id} --to NAME, or baton cancel {id}",
                self.task.to
            ),
            Reason::DependencyEnded { .. } => format!(
                "baton cancel {id} --reason WHY, or baton reassign {id} --to NAME to go ahead \
                 without it (NAME may be {})",
                self.task.to
            ),
        }
    }
}

/// The caller's inbox.
#[derive(Debug, Clone, Serialize)]
pub struct Inbox {
    pub agent: String,
    pub project: String,
    pub tasks: Vec<InboxEntry>,
    /// Tasks in the inbox beyond those in `tasks` (a preview lists only the first few).
    #[serde(skip_serializing_if = "is_zero")]
    pub more_tasks: usize,
    /// Unread messages, oldest first.
    pub messages: Vec<Message>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// How many inbox tasks `status` and the hooks show in full.
pub const PREVIEW: usize = 10;

impl Inbox {
    /// Nothing waits: no task and no unread message.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.messages.is_empty()
    }

    /// How many tasks wait, listed or not.
    pub fn task_count(&self) -> usize {
        self.tasks.len() + self.more_tasks
    }
}

/// What `board` shows.
#[derive(Debug, Clone, Default)]
pub struct BoardFilter {
    pub status: Option<Status>,
    pub mine: bool,
    pub all: bool,
}

/// Which finished tasks `archive` moved (or would move).
#[derive(Debug, Clone, Serialize)]
pub struct Archived {
    pub project: String,
    pub dry_run: bool,
    pub tasks: Vec<TaskId>,
}

impl Session {
    /// Resolves the project, checks names and workspace access, and records the identity
    /// (registering it on first sight, refreshing its leases and last-seen).
    pub fn open(hub: Hub, request: Request<'_>) -> Result<Session> {
        Session::open_with(hub, request, WhenBusy::Fail)
    }

    /// What the hooks open: [`Session::open`], except that a registry lock still busy when
    /// the hub's lock policy gives up skips the heartbeat (the next look refreshes it)
    /// rather than failing.
    pub fn open_unless_busy(hub: Hub, request: Request<'_>) -> Result<Session> {
        Session::open_with(hub, request, WhenBusy::ShowUnmarked)
    }

    fn open_with(hub: Hub, request: Request<'_>, when_busy: WhenBusy) -> Result<Session> {
        let now = time::now();
        if let Some(agent) = request.agent {
            names::check(NameKind::Agent, agent)?;
        }
        let cwd = match request.cwd {
            Some(cwd) => cwd.to_path_buf(),
            None => match project::current_dir() {
                Ok(cwd) => cwd,
                // From a deleted directory only a project named with --project will do, and
                // only one bound to no workspace: inside a bound one or not, nobody can say.
                Err(gone) => {
                    let Some(id) = request.project else {
                        return Err(gone);
                    };
                    match project::load(&hub.home, id)?.and_then(|found| found.workspace) {
                        None => PathBuf::from("/"),
                        Some(workspace) => {
                            return Err(Error::invalid_with_hint(
                                format!(
                                    "the current directory no longer exists, and project {id} \
                                     is bound to {}",
                                    workspace.display()
                                ),
                                format!("cd into {}", workspace.display()),
                            ));
                        }
                    }
                }
            },
        };
        let project = project::resolve(&hub.home, request.project, &cwd, hub.lock, now)?;
        let session = Session {
            hub,
            project,
            agent: request.agent.map(str::to_string),
            now,
        };
        if let Some(agent) = &session.agent {
            match registry::heartbeat(&session.hub.home, agent, session.hub.lock, now) {
                Err(error) if when_busy.shows_unmarked(&error) => {}
                heartbeat => heartbeat?,
            }
        }
        Ok(session)
    }

    /// The caller's name, or the error every identity-needing command gives.
    pub fn agent(&self) -> Result<&str> {
        self.agent.as_deref().ok_or(Error::NoIdentity)
    }

    pub fn home(&self) -> &Home {
        &self.hub.home
    }

    pub fn project_id(&self) -> &str {
        &self.project.id
    }

    /// The board as it is now, read without the lock. A signed-in agent keeps its claims
    /// alive by using baton: when its leases are due for renewal, this read becomes a write.
    pub fn board(&self) -> Result<Board> {
        let board = board_file::read(&self.hub.home, &self.project.id)?;
        match &self.agent {
            Some(agent) if has_due_leases(&board, agent, self.now, self.project.lease()) => {
                self.update(|tx| Ok(tx.board.clone()))
            }
            _ => Ok(board),
        }
    }

    /// The locked read-change-write every change goes through; it also renews the caller's
    /// due leases, so a renewal never costs a write of its own.
    fn update<T>(&self, change: impl FnOnce(&mut Transaction) -> Result<T>) -> Result<T> {
        change::update(
            &self.hub.home,
            &self.project.id,
            self.hub.lock,
            self.now,
            |tx| {
                if let Some(agent) = &self.agent
                    && renew_due_leases(&mut tx.board, agent, self.now, self.project.lease())?
                {
                    tx.touch();
                }
                change(tx)
            },
        )
    }

    fn view(&self, board: &Board, task: Task, archived: bool) -> TaskView {
        let head = Head::of(&task);
        let (turn, reason, blocked_by) = match board.turn(&head, self.now) {
            Turn::Of { agent, reason } => (Some(agent.to_string()), Some(reason), Vec::new()),
            Turn::Blocked(ids) => (None, None, ids),
            Turn::Nobody => (None, None, Vec::new()),
        };
        TaskView {
            stalled: task.is_stalled(self.now),
            task,
            turn,
            reason,
            blocked_by,
            archived,
        }
    }

    fn record(&self, actor: &str, event: &Event) -> ActivityRecord {
        ActivityRecord {
            at: self.now,
            project: self.project.id.clone(),
            actor: actor.to_string(),
            action: event.action.to_string(),
            task: Some(event.task),
            from_status: Some(event.from_status),
            to_status: Some(event.to_status),
            text: Some(event.text.clone()).filter(|text| !text.is_empty()),
        }
    }

    /// `send`: puts a new pending task on the board.
    pub fn send(&self, new: NewTask) -> Result<Changed> {
        let sender = self.agent()?.to_string();
        if new.subject.trim().is_empty() {
            return Err(Error::invalid("send needs --subject with some words"));
        }
        text::check_line("subject", &new.subject)?;
        text::check_long("body", &new.body)?;
        for file in &new.files {
            if file.trim().is_empty() {
                return Err(Error::invalid_with_hint(
                    "--files holds an empty file name",
                    "separate file names with single commas: --files src/a.rs,src/b.rs",
                ));
            }
            text::check_line("file name", file)?;
        }
        if let Some(skill) = &new.skill {
            text::check_line("skill", skill)?;
        }
        // With --skill, the candidates are read now and the choice is made under the board
        // lock, so two sends at once both see each other's load.
        let route = match (&new.to, &new.skill) {
            (Some(to), _) => {
                names::check(NameKind::Agent, to)?;
                registry::require(&self.hub.home, to)?;
                Route::To(to.clone())
            }
            (None, Some(skill)) => Route::BySkill {
                skill: skill.trim().to_lowercase(),
                candidates: registry::list(&self.hub.home)?.0,
            },
            (None, None) => {
                return Err(Error::invalid_with_hint(
                    "send needs --to NAME or --skill TAG",
                    "`baton agents` lists who is here and what they are good at",
                ));
            }
        };
        if let Some(reviewer) = &new.reviewer {
            registry::require(&self.hub.home, reviewer)?;
        }
        let home = &self.hub.home;
        let project_id = self.project.id.clone();
        self.update(|tx| {
            for id in &new.after {
                tx.board.check_unambiguous(*id)?;
                let status = match tx.board.head(*id) {
                    Some(dependency) => dependency.status,
                    None => match archive::find(home, &project_id, *id)? {
                        Some(archived) => archived.status,
                        None => {
                            return Err(Error::UnknownTask {
                                task: *id,
                                project: project_id.clone(),
                            });
                        }
                    },
                };
                // A task waiting on one that can never complete could never start.
                if matches!(status, Status::Failed | Status::Canceled) {
                    return Err(Error::invalid_with_hint(
                        format!("{id} is {status}: a task sent --after it could never start"),
                        format!(
                            "send it without {id} in --after, or after a task that can still \
                             complete"
                        ),
                    ));
                }
            }
            let to = match &route {
                Route::To(to) => to.clone(),
                Route::BySkill { skill, candidates } => {
                    choose_by_skill(candidates, &tx.board, skill, &sender)?
                }
            };
            let before = HashMap::new();
            let id = tx
                .board
                .next_free_id(archive::highest_id(home, &project_id)?);
            tx.board.next_id = id.0 + 1;
            let task = Task {
                id,
                subject: new.subject.trim().to_string(),
                body: new.body.trim().to_string(),
                files: new.files.clone(),
                from: sender.clone(),
                to: to.clone(),
                reviewer: new.reviewer.clone().filter(|reviewer| *reviewer != sender),
                status: Status::Pending,
                priority: new.priority,
                after: new.after.clone(),
                skill: match &route {
                    Route::To(_) => new.skill.clone(),
                    Route::BySkill { skill, .. } => Some(skill.clone()),
                },
                review: new.review || new.reviewer.is_some(),
                created_at: self.now,
                updated_at: self.now,
                claimed_at: None,
                lease_expires_at: None,
                result: None,
                thread: Vec::new(),
            };
            tx.board.push(task.clone());
            tx.record(ActivityRecord {
                at: self.now,
                project: project_id.clone(),
                actor: sender.clone(),
                action: "send".into(),
                task: Some(id),
                from_status: None,
                to_status: Some(Status::Pending),
                text: Some(format!("{} → {}: {}", sender, to, task.subject)),
            });
            project::update_locked(home, &project_id, |project| {
                if let Some(project) = project
                    && project.coordinator.is_none()
                {
                    project.coordinator = Some(sender.clone());
                }
                Ok(())
            })?;
            let handovers = handovers(&before, &tx.board, &[id], self.now, &sender);
            Ok(Changed {
                project: project_id.clone(),
                task: self.view(&tx.board, task.clone(), false),
                handovers,
                routed_by_skill: match &route {
                    Route::To(_) => None,
                    Route::BySkill { skill, .. } => Some(skill.clone()),
                },
                notifications: Vec::new(),
                warnings: Vec::new(),
            })
        })
    }

    /// Every transition of SPEC section 3 other than `send`.
    pub fn act(&self, id: TaskId, action: Action) -> Result<Changed> {
        let actor = self.agent()?.to_string();
        text::check_long(action.text_name(), action.text())?;
        if let Action::Reassign { to, .. } = &action {
            registry::require(&self.hub.home, to)?;
        }
        let project_id = self.project.id.clone();
        let lease = self.project.lease();
        let mut previous = None;
        let result = self.update(|tx| {
            previous = tx.board.task(id)?.cloned();
            // The coordinator may change between resolving and locking; read it under the lock.
            let coordinator =
                project::load(&self.hub.home, &project_id)?.and_then(|project| project.coordinator);
            let affected = affected_by(&tx.board, id);
            let before = owners(&tx.board, &affected, self.now);
            let event = tx
                .board
                .apply(id, &action, &actor, coordinator.as_deref(), lease, self.now)?
                .ok_or_else(|| self.missing_task(id))??;
            let next = tx
                .board
                .task(id)?
                .cloned()
                .ok_or_else(|| self.missing_task(id))?;
            let record = self.record(&actor, &event);
            tx.record(record);
            let handovers = handovers(&before, &tx.board, &affected, self.now, &actor);
            Ok(Changed {
                project: project_id.clone(),
                task: self.view(&tx.board, next, false),
                handovers,
                routed_by_skill: None,
                notifications: Vec::new(),
                warnings: Vec::new(),
            })
        });
        let mut changed = result?;
        // After the board lock is released: the change stands whatever happens to the mail.
        if let Some(previous) = previous {
            match self.notify_change(&previous, &changed.task.task, &action) {
                Ok(notifications) => changed.notifications = notifications,
                Err(error) => changed.warnings.push(format!(
                    "the change was made, but its notifications were not sent: {error}"
                )),
            }
        }
        Ok(changed)
    }

    fn missing_task(&self, id: TaskId) -> Error {
        match archive::find(&self.hub.home, &self.project.id, id) {
            Ok(Some(task)) => Error::invalid(format!(
                "{id} is {} and archived; nothing moves it again",
                task.status
            )),
            _ => Error::UnknownTask {
                task: id,
                project: self.project.id.clone(),
            },
        }
    }

    /// `show`: one task, from the board or the archive.
    pub fn show(&self, id: TaskId) -> Result<TaskView> {
        let board = self.board()?;
        if let Some(task) = board.task_owned(id)? {
            return Ok(self.view(&board, task, false));
        }
        match archive::find(&self.hub.home, &self.project.id, id)? {
            Some(task) => Ok(self.view(&board, task, true)),
            None => Err(Error::UnknownTask {
                task: id,
                project: self.project.id.clone(),
            }),
        }
    }

    /// `board`: open tasks (with `all`, finished ones too), oldest first.
    pub fn list(&self, filter: &BoardFilter) -> Result<Vec<TaskView>> {
        let board = self.board()?;
        let me = if filter.mine {
            Some(self.agent()?.to_string())
        } else {
            None
        };
        // Every task by its place on the board, so two with one id are both listed.
        board
            .heads()
            .enumerate()
            .filter(|(_, task)| match filter.status {
                Some(status) => task.status == status,
                None => filter.all || task.status.is_open(),
            })
            .filter(|(_, task)| {
                me.as_deref()
                    .is_none_or(|me| &*task.to == me || &*task.from == me || task.reviewer() == me)
            })
            .map(|(index, _)| Ok(self.view(&board, board.task_at(index)?, false)))
            .collect()
    }

    /// `inbox --peek`: the tasks whose turn is the caller's and its unread messages,
    /// marking nothing read.
    pub fn inbox(&self) -> Result<Inbox> {
        self.inbox_marking(false, None, WhenBusy::Fail)
    }

    /// `inbox`: as [`Session::inbox`], and the messages it returns count as read.
    pub fn inbox_and_mark_read(&self) -> Result<Inbox> {
        self.inbox_marking(true, None, WhenBusy::Fail)
    }

    /// The first [`PREVIEW`] tasks of the inbox in full and how many more there are, and
    /// the unread messages (with `mark_read`, marking them read): what `status` and the
    /// hooks show. Only the tasks shown are read whole, so a long inbox costs little more
    /// than a short one.
    pub fn inbox_preview(&self, mark_read: bool) -> Result<Inbox> {
        self.inbox_marking(mark_read, Some(PREVIEW), WhenBusy::Fail)
    }

    /// What the hooks show: [`Session::inbox_preview`], except that a lock still busy when
    /// the hub's lock policy gives up does not fail it. The inbox is then shown unmarked:
    /// the messages stay unread and the caller's leases are not renewed, both left for the
    /// next look. A hook must answer before its client stops waiting, lock or no lock.
    pub fn inbox_preview_unless_busy(&self, mark_read: bool) -> Result<Inbox> {
        self.inbox_marking(mark_read, Some(PREVIEW), WhenBusy::ShowUnmarked)
    }

    fn inbox_marking(
        &self,
        mark_read: bool,
        limit: Option<usize>,
        when_busy: WhenBusy,
    ) -> Result<Inbox> {
        let agent = self.agent()?.to_string();
        // Renewing leases makes this read a write under the board lock.
        let board = match self.board() {
            Err(error) if when_busy.shows_unmarked(&error) => {
                board_file::read(&self.hub.home, &self.project.id)?
            }
            board => board?,
        };
        let items = board.inbox(&agent, self.now);
        let shown = limit.unwrap_or(items.len()).min(items.len());
        // Sized up front: a list of thousands regrown by doubling would briefly need twice
        // the room.
        let mut tasks = Vec::with_capacity(shown);
        for &InboxItem { reason, index, .. } in &items[..shown] {
            // By place, not id: two tasks with one id (a board edited by hand) are both shown.
            let task = board.task_at(index)?;
            tasks.push(InboxEntry {
                waiting: match reason {
                    Reason::Assigned | Reason::ChangesRequested => task.from.clone(),
                    Reason::Question
                    | Reason::ReviewRequested
                    | Reason::Stalled
                    | Reason::DependencyEnded { .. } => task.to.clone(),
                },
                last_word: task.last_word().cloned(),
                reason,
                task,
            });
        }
        Ok(Inbox {
            agent,
            project: self.project.id.clone(),
            tasks,
            more_tasks: items.len() - shown,
            messages: match self.unread_messages(mark_read) {
                Err(error) if when_busy.shows_unmarked(&error) => self.unread_messages(false)?,
                messages => messages?,
            },
        })
    }

    /// `log`: activity records, oldest first; the last `limit` of those at or after `since`.
    pub fn log(
        &self,
        limit: Option<usize>,
        since: Option<Timestamp>,
    ) -> Result<Vec<ActivityRecord>> {
        self.catch_up_log()?;
        let mut records = activity::read(&self.hub.home.activity_file(&self.project.id))?;
        if let Some(since) = since {
            records.retain(|record| record.at >= since);
        }
        if let Some(limit) = limit {
            let skip = records.len().saturating_sub(limit);
            records.drain(..skip);
        }
        Ok(records)
    }

    /// Logs a change whose writer was killed after it committed but before it was logged
    /// (or drops the journal of one that never committed), unless a writer holds the board
    /// lock: that writer does it first itself. Costs one `stat` when there is nothing to do.
    pub fn catch_up_log(&self) -> Result<()> {
        board_file::try_recover_log::<ActivityRecord>(&self.hub.home, &self.project.id)?;
        Ok(())
    }

    /// `note`: a line in the activity log from the caller.
    pub fn note(&self, text: &str) -> Result<ActivityRecord> {
        let actor = self.agent()?.to_string();
        if text.trim().is_empty() {
            return Err(Error::invalid("note needs some words"));
        }
        text::check_long("note", text)?;
        let record = ActivityRecord {
            at: self.now,
            project: self.project.id.clone(),
            actor,
            action: "note".into(),
            task: None,
            from_status: None,
            to_status: None,
            text: Some(text.trim().to_string()),
        };
        self.update(|tx| {
            tx.record(record.clone());
            Ok(())
        })?;
        Ok(record)
    }

    /// `archive`: moves finished tasks older than `older_than_days` off the board now.
    pub fn archive(&self, older_than_days: u32, dry_run: bool) -> Result<Archived> {
        let older_than = chrono::Duration::days(i64::from(older_than_days));
        let home = &self.hub.home;
        let project_id = self.project.id.clone();
        if dry_run {
            let board = self.board()?;
            return Ok(Archived {
                project: project_id,
                dry_run,
                tasks: archive::select(&board, self.now, older_than),
            });
        }
        let actor = self.agent.clone().unwrap_or_else(|| "baton".to_string());
        self.update(|tx| {
            let ids = archive::select(&tx.board, self.now, older_than);
            archive::move_off(home, &mut tx.board, &ids)?;
            if !ids.is_empty() {
                tx.record(ActivityRecord {
                    at: self.now,
                    project: project_id.clone(),
                    actor,
                    action: "archive".into(),
                    task: None,
                    from_status: None,
                    to_status: None,
                    text: Some(format!("{} finished tasks archived", ids.len())),
                });
            }
            Ok(Archived {
                project: project_id.clone(),
                dry_run,
                tasks: ids,
            })
        })
    }
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
            && matches!(error, Error::Store(StoreError::LockTimeout { .. }))
    }
}

/// Working tasks of `agent` with less than half their lease left.
fn is_due(task: &Head, agent: &str, now: Timestamp, lease: chrono::Duration) -> bool {
    task.status == Status::Working
        && &*task.to == agent
        && task
            .lease_expires_at
            .is_some_and(|until| now.until(until) < lease / 2)
}

fn has_due_leases(board: &Board, agent: &str, now: Timestamp, lease: chrono::Duration) -> bool {
    board.heads().any(|task| is_due(task, agent, now, lease))
}

/// Renews the due leases of `agent`; true when any was renewed. Renewing only past half the
/// lease keeps frequent commands from each writing the board.
fn renew_due_leases(
    board: &mut Board,
    agent: &str,
    now: Timestamp,
    lease: chrono::Duration,
) -> Result<bool> {
    let due: Vec<usize> = board
        .heads()
        .enumerate()
        .filter(|(_, task)| is_due(task, agent, now, lease))
        .map(|(index, _)| index)
        .collect();
    for index in &due {
        board.modify_at(*index, |task| transition::renew_lease(task, now, lease))?;
    }
    Ok(!due.is_empty())
}

/// The tasks a change to `id` can move between inboxes: itself, and the tasks waiting on
/// it (its completion unblocks them). Looking only at these keeps a change's cost from
/// growing with the board.
fn affected_by(board: &Board, id: TaskId) -> Vec<TaskId> {
    std::iter::once(id)
        .chain(
            board
                .open_heads()
                .filter(|task| task.after.contains(&id))
                .map(|task| task.id),
        )
        .collect()
}

/// Whose inbox each of `ids` is in.
fn owners(board: &Board, ids: &[TaskId], now: Timestamp) -> HashMap<TaskId, (String, Reason)> {
    ids.iter()
        .filter_map(|id| board.head(*id))
        .filter_map(|task| match board.turn(task, now) {
            Turn::Of { agent, reason } => Some((task.id, (agent.to_string(), reason))),
            _ => None,
        })
        .collect()
}

/// The tasks among `ids` that entered someone's inbox (other than the actor's) with this
/// change.
fn handovers(
    before: &HashMap<TaskId, (String, Reason)>,
    board: &Board,
    ids: &[TaskId],
    now: Timestamp,
    actor: &str,
) -> Vec<Handover> {
    let mut arrived: Vec<Handover> = owners(board, ids, now)
        .into_iter()
        .filter(|(id, (agent, reason))| {
            agent != actor && before.get(id) != Some(&(agent.clone(), *reason))
        })
        .filter_map(|(id, (agent, reason))| {
            board.task(id).ok().flatten().map(|task| Handover {
                agent,
                project: board.project.clone(),
                task: id,
                reason,
                subject: task.subject.clone(),
            })
        })
        .collect();
    arrived.sort_by_key(|handover| handover.task);
    arrived
}

/// How `send` picks the assignee.
enum Route {
    To(String),
    BySkill {
        skill: String,
        candidates: Vec<registry::AgentRecord>,
    },
}

/// Skill routing: among the agents with `skill`, never the sender, the one with the fewest
/// open tasks on `board`, then the most recently seen (then by name, so the choice is
/// stable). With nobody to choose, the error lists the skills on offer.
fn choose_by_skill(
    agents: &[registry::AgentRecord],
    board: &Board,
    skill: &str,
    sender: &str,
) -> Result<String> {
    let open_count = |name: &str| board.open_heads().filter(|task| &*task.to == name).count();
    let has_skill = |agent: &registry::AgentRecord| {
        agent
            .skills
            .iter()
            .any(|tag| tag.trim().eq_ignore_ascii_case(skill))
    };
    let chosen = agents
        .iter()
        .filter(|agent| agent.name != sender && has_skill(agent))
        .min_by(|left, right| {
            open_count(&left.name)
                .cmp(&open_count(&right.name))
                .then(right.last_seen.cmp(&left.last_seen))
                .then(left.name.cmp(&right.name))
        });
    if let Some(agent) = chosen {
        return Ok(agent.name.clone());
    }
    let mut offered: Vec<String> = agents
        .iter()
        .filter(|agent| agent.name != sender)
        .flat_map(|agent| registry::normalize_skills(&agent.skills))
        .collect();
    offered.sort();
    offered.dedup();
    let offered = if offered.is_empty() {
        "none yet".to_string()
    } else {
        offered.join(", ")
    };
    Err(Error::invalid_with_hint(
        format!("no agent but you has the skill `{skill}`; skills on offer: {offered}"),
        "give an agent a skill with `baton agent add NAME --skills a,b`, or send with --to NAME",
    ))
}

/// One row of the capability matrix.
#[derive(Debug, Clone, Serialize)]
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
    /// Whether a wake command is set.
    pub wake: bool,
    /// Seconds from `last_seen` to now, so a reader need not know the time.
    pub seen_seconds_ago: i64,
}

/// `agents`: the rows a coordinator reads to decide who gets what.
#[derive(Debug, Clone, Serialize)]
pub struct AgentMatrix {
    pub project: String,
    pub agents: Vec<AgentRow>,
    /// Registry records that could not be read; their agents are missing from `agents`.
    pub problems: Vec<UnreadableRecord>,
}

/// A registry record that did not parse (or has a newer schema), named.
#[derive(Debug, Clone, Serialize)]
pub struct UnreadableRecord {
    pub agent: String,
    pub error: String,
}

impl Session {
    /// `agents`: who is here and what they are good at, with their load in this project.
    /// A record that does not parse is listed in `problems`, not allowed to hide the rest.
    pub fn agents(&self) -> Result<AgentMatrix> {
        let (records, problems) = registry::list(&self.hub.home)?;
        let board = self.board()?;
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

    /// `coordinator --set NAME`: only the coordinator (or a human named in the project's
    /// settings, or anyone while there is none) may hand the role on.
    pub fn set_coordinator(&self, name: &str) -> Result<Project> {
        let actor = self.agent()?.to_string();
        registry::require(&self.hub.home, name)?;
        project::update(&self.hub.home, &self.project.id, self.hub.lock, |slot| {
            let Some(project) = slot else {
                return Err(Error::UnknownProject {
                    project: self.project.id.clone(),
                    known: Vec::new(),
                });
            };
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
        project::update(&self.hub.home, &self.project.id, self.hub.lock, |slot| {
            let Some(project) = slot else {
                return Err(Error::UnknownProject {
                    project: self.project.id.clone(),
                    known: Vec::new(),
                });
            };
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
            return Err(Error::invalid("context --add needs some words"));
        }
        text::check_long("note", text)?;
        project::update(&self.hub.home, &self.project.id, self.hub.lock, |slot| {
            let Some(project) = slot else {
                return Err(Error::UnknownProject {
                    project: self.project.id.clone(),
                    known: Vec::new(),
                });
            };
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
    if project.may_change_coordinator(actor) {
        return Ok(());
    }
    let humans = if project.settings.humans.is_empty() {
        String::new()
    } else {
        format!(" or {}", project.settings.humans.join(", "))
    };
    Err(Error::invalid_with_hint(
        format!(
            "only {} (the coordinator){humans} can change the coordinator of project {}",
            project.coordinator.as_deref().unwrap_or("nobody"),
            project.id
        ),
        "ask one of them to run `baton coordinator --set NAME`",
    ))
}

/// `agent rm NAME`: removes an agent's record, unless work would be left with nobody to do
/// it: a task open in any project that it is assigned to, or that waits on it now (its
/// question to answer, its review to give, its stalled or unstartable task to decide on).
/// Those are named, with the way to hand them on first.
pub fn remove_agent(hub: &Hub, name: &str) -> Result<()> {
    names::check(NameKind::Agent, name)?;
    let now = time::now();
    let mut held = Vec::new();
    for project in project::project_ids(&hub.home)? {
        // A board that cannot be read stops the removal: its tasks cannot be checked.
        let board: Board = board_file::read(&hub.home, &project)?;
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
        return Err(Error::invalid_with_hint(
            format!(
                "{name} has open tasks, which would be left with nobody: {}",
                held.join(", ")
            ),
            "hand each on first: `baton reassign ID --to NAME` or `baton cancel ID` \
             (--project ID for another project), then remove it",
        ));
    }
    registry::remove(&hub.home, name, hub.lock)
}
