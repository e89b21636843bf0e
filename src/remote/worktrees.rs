//! A remote agent's task worktrees (SPEC sections 18.4 and 18.5's `--remote`): made on
//! the agent's own machine, from the clone `baton project map` gave the project here,
//! under this machine's `$BATON_HOME/worktrees/<project>/T-<n>`, and told to the hub with
//! the claim; a review refused while its worktree holds uncommitted changes, the task's
//! branch pushed to the project's remote and the reviewed commit told to the hub.
//!
//! The settings come from the hub's project: its base branch, its remote, the files it
//! copies. The command it runs in a new worktree (`--setup`) was set, and signed, on the
//! hub's machine: this machine never runs it (a hub cannot make other machines run its
//! commands), and says so.

use std::path::{Path, PathBuf};

use super::HubClient;
use crate::board::task::{TaskId, Worktree};
use crate::error::{Error, Result};
use crate::home::Home;
use crate::json_api::{OfferedQuery, endpoint};
use crate::project::Project;
use crate::project::worktrees::Worktrees;
use crate::worktree::{self, Made};

/// Task `id`'s worktree on this machine, found or made for it.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Where the work is done.
    pub worktree: Worktree,
    /// Made (or found in this machine's worktrees) for a task that had none, and the clone
    /// it is of: what a claim tells the hub.
    pub made: Option<(PathBuf, Made)>,
    /// What went wrong without stopping it, and the setup not run.
    pub warnings: Vec<String>,
}

/// The project's worktree settings as this machine acts on them, when it gives its tasks
/// worktrees: everything but the commands, which run only on the machine that set them.
/// The words saying so when there was a setup.
fn settings_here(project: &Project) -> Option<(Worktrees, Option<String>)> {
    let settings = project.settings.worktrees.as_ref().filter(|s| s.on)?;
    let skipped = settings.setup.as_ref().map(|_| {
        format!(
            "project {}'s setup was not run in the worktree: it was set on the hub's machine, \
             and this machine runs no command another machine set",
            project.id
        )
    });
    let here = Worktrees {
        setup: None,
        verify: None,
        signature: None,
        ..settings.clone()
    };
    Some((here, skipped))
}

/// Task `id`'s worktree on this machine for `project` (as this machine shows it: its
/// workspace is the clone mapped here): the task's own when it has one here, else one made
/// now from the clone, when the task has none yet. `None` when the project gives no
/// worktrees or the task's worktree is on another machine; refused when one is to be made
/// and no clone is mapped here (a worktree on the hub's machine would be out of reach).
pub fn prepare(
    hub: &HubClient,
    home: &Home,
    project: &Project,
    id: TaskId,
) -> Result<Option<Prepared>> {
    let Some((settings, skipped)) = settings_here(project) else {
        return Ok(None);
    };
    let task = id.0.to_string();
    let shown = hub.call::<endpoint::Show>(&[&project.id, &task], &OfferedQuery::default())?;
    if let Some(tree) = shown.task.worktree {
        let here = worktree::is_here(&tree).then(|| Prepared {
            worktree: tree,
            made: None,
            warnings: Vec::new(),
        });
        return Ok(here);
    }
    let Some(clone) = project.workspace.clone() else {
        return Err(Error::invalid_with_hint(
            format!(
                "project {} gives each task a worktree, made from a clone of its repository \
                 on the machine that claims it, and none is mapped on this one",
                project.id
            ),
            format!(
                "`baton project map {} DIR` names a clone of it here",
                project.id
            ),
        ));
    };
    let made = worktree::make(
        &clone,
        &home.worktrees_dir(&project.id),
        &home.worktree_logs(&project.id),
        &settings,
        id,
    )?;
    let mut warnings = made.warnings.clone();
    warnings.extend(skipped.filter(|_| made.fresh));
    if made.fresh && settings.remote.is_none() {
        warnings.push(format!(
            "project {0} names no remote: its hub cannot fetch {1} from this machine to land \
             it; on the hub's machine, `baton project set --remote NAME` names one both reach",
            project.id, made.worktree.branch
        ));
    }
    Ok(Some(Prepared {
        worktree: made.worktree.clone(),
        made: Some((clone, made)),
        warnings,
    }))
}

/// What a review of task `id` tells the hub from this machine: the head commit of its
/// worktree here (refused while the worktree holds uncommitted changes), once the task's
/// branch is pushed to the project's remote. `None` when its worktree is not here. A
/// `done` without review asks the same, so that the hub has the branch to land.
pub fn reviewed(project: &Project, tree: Option<&Worktree>, id: TaskId) -> Result<Option<String>> {
    let Some(tree) = tree.filter(|tree| worktree::is_here(tree)) else {
        return Ok(None);
    };
    let head = worktree::reviewed_head(id, tree)?;
    let remote = project
        .settings
        .worktrees
        .as_ref()
        .and_then(|settings| settings.remote.as_deref());
    if let Some(remote) = remote {
        worktree::push_branch(tree, remote)?;
    }
    Ok(Some(head))
}

/// After a claim that sent `prepared`'s worktree: removed again when the hub did not keep
/// it (the claim refused, or the task had one already) and it was made for this claim.
pub fn after_claim(prepared: &Prepared, kept: Option<&Worktree>) {
    let Some((clone, made)) = &prepared.made else {
        return;
    };
    if kept.is_none_or(|kept| Path::new(&kept.path) != Path::new(&made.worktree.path)) {
        worktree::discard_fresh(clone, made);
    }
}
