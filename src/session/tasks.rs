//! The task operations of a session: `send`, every other transition, `show` and `board`.

use super::{Changed, Session, TaskView};
use crate::activity::{ActivityRecord, LogAction};
use crate::board::delivery::DeliveryEvent;
use crate::board::edit::Edits;
use crate::board::handover;
use crate::board::new_task::{self, NewTask, SendRefusal};
use crate::board::routing::{self, Candidate};
use crate::board::search::{self, Search};
use crate::board::task::{Status, TaskId};
use crate::board::transition::{Action, TransitionError, Why};
use crate::board::{Board, BoardError};
use crate::error::{Error, Result, SessionError};
use crate::names::{self, NameKind};
use crate::project;
use crate::registry;
use crate::store::Transaction;
use crate::text;

/// `result` of a change by `action`, counted as a change or a refusal
/// ([`crate::metrics::CHANGES`], [`crate::metrics::REFUSALS`]). A refusal is what the
/// request got wrong or was not allowed (exit 1 or 2); a store that failed refused nothing.
fn counted<T>(action: &'static str, result: Result<T>) -> Result<T> {
    match &result {
        Ok(_) => crate::metrics::CHANGES.add(action),
        Err(error) if !matches!(error, Error::Store(_)) && matches!(error.exit_code(), 1 | 2) => {
            crate::metrics::REFUSALS.add(action)
        }
        Err(_) => {}
    }
    result
}

/// What `board` shows.
#[derive(Debug, Clone, Default)]
pub struct BoardFilter {
    pub status: Option<Status>,
    pub mine: bool,
    /// Finished tasks too; with a [`BoardFilter::search`], the archived ones too.
    pub all: bool,
    /// Only the tasks with a label, or holding some words (SPEC section 19).
    pub search: Search,
    /// Whether to say on each task what the caller may do with it now
    /// ([`TaskView::offers`]): for a face that shows it, the terminal board or the web's.
    pub offered: bool,
}

impl Session {
    /// `send`: puts a new pending task on the board, then wakes and notifies its assignee.
    pub fn send(&self, new: NewTask) -> Result<Changed> {
        let mut changed = counted(LogAction::Send.as_str(), self.put_new_task(new))?;
        (changed.woken, changed.unreachable) =
            self.after_change_reaching(&changed.handovers, &changed.notifications);
        Ok(changed)
    }

    fn put_new_task(&self, mut new: NewTask) -> Result<Changed> {
        let sender = self.agent()?.to_string();
        if new.subject.trim().is_empty() {
            return Err(SendRefusal::NoSubject.into());
        }
        if new.files.iter().any(|file| file.trim().is_empty()) {
            return Err(SendRefusal::EmptyFileName.into());
        }
        new_task::check_words(&new.subject, &new.body, &new.files, new.skill.as_deref())?;
        new_task::check_touches(&new.touches)?;
        new.labels = search::check_labels(&new.labels)?;
        // With --skill, the candidates are read now and the choice is made under the board
        // lock, so two sends at once both see each other's load.
        let route = match (&new.to, &new.skill) {
            (Some(to), _) => {
                names::check(NameKind::Agent, to)?;
                self.require_known(to)?;
                Route::To(to.clone())
            }
            (None, Some(skill)) => Route::BySkill {
                skill: skill.trim().to_lowercase(),
                candidates: registry::list(&*self.hub.store)?.0,
            },
            (None, None) => return Err(SendRefusal::NoAssignee.into()),
        };
        if let Some(reviewer) = &new.reviewer {
            self.require_known(reviewer)?;
        }
        let store = &*self.hub.store;
        let project_id = self.project.id.clone();
        self.update(|tx| {
            for id in &new.after {
                tx.board.check_unambiguous(*id).map_err(self.refused())?;
                let status = match tx.board.head(*id) {
                    Some(dependency) => dependency.status,
                    None => match tx.find_archived(*id)? {
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
                    return Err(SendRefusal::AfterEnded { task: *id, status }.into());
                }
            }
            let to = match &route {
                Route::To(to) => to.clone(),
                Route::BySkill { skill, candidates } => {
                    let candidates: Vec<Candidate<'_>> = candidates
                        .iter()
                        .map(|agent| Candidate {
                            name: &agent.name,
                            skills: &agent.skills,
                            last_seen: agent.last_seen,
                        })
                        .collect();
                    routing::choose_by_skill(&candidates, &tx.board, skill, &sender)
                        .map_err(SendRefusal::NobodyHasSkill)?
                }
            };
            let before = handover::Owners::new();
            let id = tx.board.next_free_id(tx.highest_archived_id()?);
            tx.board.next_id = id.0 + 1;
            let skill = match &route {
                Route::To(_) => new.skill.clone(),
                Route::BySkill { skill, .. } => Some(skill.clone()),
            };
            let task = new.clone().into_task(id, &sender, &to, skill, self.now);
            tx.board.push(task.clone());
            tx.record(ActivityRecord {
                at: self.now,
                project: project_id.clone(),
                actor: sender.clone(),
                action: LogAction::Send,
                task: Some(id),
                from_status: None,
                to_status: Some(Status::Pending),
                text: Some(format!("{} → {}: {}", sender, to, task.subject)),
            });
            project::update_in(store, tx, |project| {
                if let Some(project) = project
                    && project.coordinator.is_none()
                {
                    project.coordinator = Some(sender.clone());
                }
                Ok(())
            })?;
            let handovers = handover::handovers(&before, &tx.board, &[id], self.now, &sender);
            handover::record_delivery(&mut tx.board, None, &handovers, &sender, self.now)
                .map_err(self.refused())?;
            let task = tx
                .board
                .task_owned(id)
                .map_err(self.refused())?
                .unwrap_or(task);
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
                woken: Vec::new(),
                unreachable: Vec::new(),
            })
        })
    }

    /// Every transition of SPEC section 3 other than `send`; then notifies whom the change
    /// concerns and wakes whoever it handed work to.
    pub fn act(&self, id: TaskId, action: Action) -> Result<Changed> {
        counted(action.name(), self.act_on(id, action))
    }

    fn act_on(&self, id: TaskId, action: Action) -> Result<Changed> {
        self.agent()?;
        text::check_long(action.text_name(), action.text())?;
        let action = self.noting_outside_scope(id, action);
        let placed = self.placing(id, action)?;
        let mut changed = self.act_placed(id, &placed.action);
        let taken = changed.as_ref().ok().map(|changed| &changed.task.task);
        let words = self.after_placing(&placed, taken);
        if let Ok(changed) = &mut changed {
            changed.warnings.extend(words);
        }
        changed
    }

    /// [`Session::act`] once the machine of the work has made `action` ready.
    fn act_placed(&self, id: TaskId, action: &Action) -> Result<Changed> {
        let actor = self.agent()?.to_string();
        let action = action.clone();
        if let Some(to) = action.to() {
            self.require_known(to)?;
        }
        if let Some(edits) = action.edits() {
            self.check_edits(edits)?;
        }
        let project_id = self.project.id.clone();
        let lease = self.project.lease();
        let mut previous = None;
        let result = self.update(|tx| {
            previous = tx.board.task(id).map_err(self.refused())?.cloned();
            // The coordinator may change between resolving and locking; read it under the lock.
            let coordinator =
                project::load_in(&*self.hub.store, tx)?.and_then(|project| project.coordinator);
            let affected = handover::affected_by(&tx.board, id);
            let before = handover::owners(&tx.board, &affected, self.now);
            let event = tx
                .board
                .apply(id, &action, &actor, coordinator.as_deref(), lease, self.now)
                .map_err(self.refused())?
                .ok_or_else(|| self.missing_task(id))??;
            if let Some(after) = action.edits().and_then(|edits| edits.after.as_ref()) {
                self.check_waits(tx, id, after)?;
            }
            let record = self.record(&actor, &event);
            tx.record(record);
            let handovers = handover::handovers(&before, &tx.board, &affected, self.now, &actor);
            handover::record_delivery(&mut tx.board, Some(id), &handovers, &actor, self.now)
                .map_err(self.refused())?;
            let next = tx
                .board
                .task(id)
                .map_err(self.refused())?
                .cloned()
                .ok_or_else(|| self.missing_task(id))?;
            Ok(Changed {
                project: project_id.clone(),
                task: self.view(&tx.board, next, false),
                handovers,
                routed_by_skill: None,
                notifications: Vec::new(),
                warnings: Vec::new(),
                woken: Vec::new(),
                unreachable: Vec::new(),
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
        (changed.woken, changed.unreachable) =
            self.after_change_reaching(&changed.handovers, &changed.notifications);
        Ok(changed)
    }

    /// What an edit gives, checked as `send` checks it before anything is read.
    fn check_edits(&self, edits: &Edits) -> Result<()> {
        let subject = edits.subject.as_deref().unwrap_or_default();
        let body = edits.body.as_deref().unwrap_or_default();
        let files = edits.files.as_deref().unwrap_or_default();
        new_task::check_words(subject, body, files, None)?;
        if let Some(touches) = &edits.touches {
            new_task::check_touches(touches)?;
        }
        if let Some(labels) = &edits.labels {
            search::check_labels(labels)?;
        }
        if let Some(reviewer) = edits.reviewer() {
            names::check(NameKind::Agent, reviewer)?;
            self.require_known(reviewer)?;
        }
        Ok(())
    }

    /// The tasks an edit makes task `id` wait on, each on the board or in the archive, and
    /// none ended without completing (it could never start).
    fn check_waits(&self, tx: &mut Transaction, id: TaskId, after: &[TaskId]) -> Result<()> {
        for dependency in after {
            tx.board
                .check_unambiguous(*dependency)
                .map_err(self.refused())?;
            let status = match tx.board.head(*dependency) {
                Some(head) => head.status,
                None => match tx.find_archived(*dependency)? {
                    Some(archived) => archived.status,
                    None => {
                        return Err(Error::UnknownTask {
                            task: *dependency,
                            project: self.project.id.clone(),
                        });
                    }
                },
            };
            if matches!(status, Status::Failed | Status::Canceled)
                && let Some(task) = tx.board.head(id)
            {
                return Err(TransitionError::Refused {
                    task: id,
                    status: task.status,
                    assignee: task.to.to_string(),
                    why: Why::WaitsOnEnded {
                        dependency: *dependency,
                        status,
                    },
                }
                .into());
            }
        }
        Ok(())
    }

    pub(super) fn missing_task(&self, id: TaskId) -> Error {
        match self.hub.store.archived_task(&self.project.id, id) {
            Ok(Some(task)) => SessionError::Archived {
                task: id,
                status: task.status,
            }
            .into(),
            _ => Error::UnknownTask {
                task: id,
                project: self.project.id.clone(),
            },
        }
    }

    /// `show`: one task, from the board or the archive.
    pub fn show(&self, id: TaskId) -> Result<TaskView> {
        let board = self.board()?;
        if let Some(task) = board.task_owned(id).map_err(self.refused())? {
            return Ok(self.view(&board, task, false));
        }
        match self.hub.store.archived_task(&self.project.id, id)? {
            Some(task) => Ok(self.view(&board, task, true)),
            None => Err(Error::UnknownTask {
                task: id,
                project: self.project.id.clone(),
            }),
        }
    }

    /// `view` with what the caller may do with its task now ([`TaskView::offers`]), judged
    /// on the project's board as it is (kept by a server, so this costs no read there).
    pub fn with_offers(&self, view: TaskView) -> Result<TaskView> {
        let board = self.hub.board(&self.project.id)?;
        let mut views = [view];
        self.offer(&board, &mut views)?;
        let [view] = views;
        Ok(view)
    }

    /// Says on each of `views`, read from `board`, what the caller may do with its task
    /// now: the one place a face's offers are worked out, with the project as it is now
    /// (its coordinator may change while a board is shown).
    fn offer(&self, board: &Board, views: &mut [TaskView]) -> Result<()> {
        let actor = self.agent()?;
        let now = project::load(&*self.hub.store, &self.project.id)?;
        let project = now.as_ref().unwrap_or(&self.project);
        let coordinator = project.coordinator.as_deref();
        for view in views {
            let offers = board.offers(&view.task, actor, coordinator, project.lease(), self.now);
            view.offers = Some(offers);
        }
        Ok(())
    }

    /// `board`: open tasks (with `all`, finished ones too), oldest first; with a search
    /// (SPEC section 19), those it asks for, and with `all` the archived ones it asks for
    /// after them.
    pub fn list(&self, filter: &BoardFilter) -> Result<Vec<TaskView>> {
        self.list_on(&self.board()?, filter)
    }

    /// [`Session::list`] of `board`, as [`Session::board`] gave it (a face that keeps what it
    /// worked out from one version of the board reads it first, to know which).
    pub fn list_on(&self, board: &Board, filter: &BoardFilter) -> Result<Vec<TaskView>> {
        let me = if filter.mine {
            Some(self.agent()?.to_string())
        } else {
            None
        };
        let is_listed = |status: Status| match filter.status {
            Some(wanted) => status == wanted,
            None => filter.all || status.is_open(),
        };
        let is_mine = |to: &str, from: &str, reviewer: &str| {
            me.as_deref()
                .is_none_or(|me| to == me || from == me || reviewer == me)
        };
        // Every task by its place on the board, so two with one id are both listed.
        let mut views = Vec::new();
        for (index, head) in board.heads().enumerate() {
            if !is_listed(head.status) || !is_mine(&head.to, &head.from, head.reviewer()) {
                continue;
            }
            let task = board.task_at(index).map_err(self.refused())?;
            if filter.search.matches(&task) {
                views.push(self.view(board, task, false));
            }
        }
        if filter.all && !filter.search.is_empty() {
            let archived = self
                .hub
                .store
                .search_archive(&self.project.id, &filter.search)?;
            for task in archived {
                // A crash between the archive's write and the board's leaves a task in
                // both: the board's copy is the one.
                let listed = is_listed(task.status)
                    && is_mine(&task.to, &task.from, task.reviewer())
                    && board.head(task.id).is_none();
                if listed {
                    views.push(self.view(board, task, true));
                }
            }
        }
        if filter.offered {
            self.offer(board, &mut views)?;
        }
        Ok(views)
    }
}

/// How `send` picks the assignee.
enum Route {
    To(String),
    BySkill {
        skill: String,
        candidates: Vec<registry::AgentRecord>,
    },
}

impl Session {
    /// The caller's tasks whose last hand-over was to it and is not yet seen (queued or
    /// woken): what a push into a live session carries.
    pub fn unseen_handovers(&self) -> Result<Vec<TaskView>> {
        let me = self.agent()?.to_string();
        let board = self.board()?;
        let mut unseen = Vec::new();
        for index in 0..board.len() {
            let task = board.task_at(index).map_err(self.refused())?;
            let delivered = task
                .delivery
                .as_ref()
                .is_some_and(|delivery| delivery.to == me && delivery.state.is_unseen());
            if delivered && task.status.is_open() {
                unseen.push(self.view(&board, task, false));
            }
        }
        Ok(unseen)
    }

    /// Records `seen` now on those of `ids` delivered to the caller and not yet seen: one
    /// locked write, and none when nothing changes. A delivery mark is baton's observation,
    /// not a participant's change of the task, so it has no activity line (as a lease
    /// renewal has none). Returns the ids that changed.
    pub fn record_seen(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        let me = self.agent()?.to_string();
        let unseen = |board: &crate::board::Board| unseen_among(board, &me, ids);
        // Read first without the lock: a look with nothing new writes nothing.
        if unseen(&self.hub.board(&self.project.id)?)
            .map_err(self.refused())?
            .is_empty()
        {
            return Ok(Vec::new());
        }
        self.record_seen_unchecked(ids)
    }

    /// [`Session::record_seen`] for a caller that has just read the board and found some of
    /// `ids` unseen: straight to the locked write, which checks them again under the lock.
    pub(super) fn record_seen_unchecked(&self, ids: &[TaskId]) -> Result<Vec<TaskId>> {
        let me = self.agent()?.to_string();
        let unseen = |board: &crate::board::Board| unseen_among(board, &me, ids);
        self.update(|tx| {
            let found = unseen(&tx.board).map_err(self.refused())?;
            for id in &found {
                tx.board
                    .modify(*id, |task| {
                        if let Some(delivery) = &mut task.delivery {
                            delivery.record(DeliveryEvent::Shown, &me, self.now);
                        }
                    })
                    .map_err(self.refused())?;
            }
            if !found.is_empty() {
                tx.touch();
            }
            Ok(found)
        })
    }
}

/// Those of `ids` on `board` whose delivery is to `agent` and not yet seen.
fn unseen_among(
    board: &crate::board::Board,
    agent: &str,
    ids: &[TaskId],
) -> Result<Vec<TaskId>, BoardError> {
    let mut found = Vec::new();
    for id in ids {
        if let Some(task) = board.task(*id)?
            && task
                .delivery
                .as_ref()
                .is_some_and(|delivery| delivery.to == agent && delivery.state.is_unseen())
        {
            found.push(*id);
        }
    }
    Ok(found)
}
