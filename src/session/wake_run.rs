//! What a wake supervisor asks of the session before a run (SPEC sections 8 and 18.4): the
//! tasks the run is for recorded as woken, and the worktree of the task it starts on, made
//! before any claim (work lands in an inbox, and wakes its agent, while the task is still
//! pending). The claim then finds the worktree and keeps it.

use super::Hub;
use crate::activity::{ActivityRecord, LogAction};
use crate::board::task::{Status, TaskId};
use crate::error::Result;
use crate::project;
use crate::wake::{RunSetup, Workplace};
use crate::worktree;

/// The session's side of one agent's wake supervisor.
pub struct WakeRun<'a> {
    pub hub: &'a Hub,
    pub agent: &'a str,
}

impl RunSetup for WakeRun<'_> {
    fn record_woken(&self, project: &str, ids: &[TaskId]) {
        super::record_woken(self.hub, project, self.agent, ids);
    }

    fn worktree(
        &self,
        project: &str,
        id: TaskId,
    ) -> std::result::Result<Option<Workplace>, String> {
        worktree_for_run(self.hub, project, self.agent, id).map_err(|error| error.to_string())
    }
}

/// Task `id`'s worktree, for a run of `agent`'s wake: the one it has, else, when the project
/// has worktrees on (set on this machine) and the task is `agent`'s to do, one made here as
/// its claim would make it, and recorded on the task in one change with one activity line
/// (`worktree`). A worktree made here that the task does not take (it was claimed, or
/// finished, meanwhile) is removed again.
fn worktree_for_run(
    hub: &Hub,
    project_id: &str,
    agent: &str,
    id: TaskId,
) -> Result<Option<Workplace>> {
    let Some(project) = project::load(&*hub.store, project_id)? else {
        return Ok(None);
    };
    let board = hub.board(project_id)?;
    let Some(task) = board.task_owned(id).map_err(hub.refused(project_id))? else {
        return Ok(None);
    };
    if let Some(worktree) = task.worktree {
        return Ok(Some(Workplace {
            worktree,
            warnings: Vec::new(),
        }));
    }
    let is_to_do =
        task.to == agent && matches!(task.status, Status::Pending | Status::ChangesRequested);
    let settings = super::worktrees::settings_signed_here(hub, &project).filter(|s| s.on);
    let (true, Some(settings), Some(workspace)) = (is_to_do, settings, &project.workspace) else {
        return Ok(None);
    };
    let made = worktree::make(
        workspace,
        &hub.home.worktrees_dir(project_id),
        &hub.home.worktree_logs(project_id),
        &settings,
        id,
    )?;
    let now = crate::time::now();
    let recorded = hub.update(project_id, now, |tx| {
        let mut found = None;
        let mut given = false;
        tx.board
            .modify(id, |task| match &task.worktree {
                Some(worktree) => found = Some(worktree.clone()),
                None if task.status.is_open() => {
                    task.worktree = Some(made.worktree.clone());
                    found = task.worktree.clone();
                    given = true;
                }
                None => {}
            })
            .map_err(hub.refused(project_id))?;
        if given {
            tx.record(ActivityRecord {
                at: now,
                project: project_id.to_string(),
                actor: agent.to_string(),
                action: LogAction::Worktree,
                task: Some(id),
                from_status: None,
                to_status: None,
                text: Some(made.worktree.where_to_work()),
            });
        }
        Ok(found)
    });
    let kept = matches!(&recorded, Ok(Some(found)) if found.path == made.worktree.path);
    if !kept {
        worktree::discard_fresh(workspace, &made);
    }
    Ok(recorded?.map(|worktree| Workplace {
        worktree,
        warnings: if kept { made.warnings } else { Vec::new() },
    }))
}
