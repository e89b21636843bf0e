//! The activity log and the archive as a session reads and writes them: `log`, `note`,
//! `archive`.

use serde::Serialize;

use super::Session;
use crate::activity::{ActivityRecord, LogAction};
use crate::board::finished;
use crate::board::task::TaskId;
use crate::error::{Result, SessionError};
use crate::plural;
use crate::text;
use crate::time::Timestamp;

/// Which finished tasks `archive` moved (or would move).
#[derive(Debug, Clone, Serialize)]
pub struct Archived {
    pub project: String,
    pub dry_run: bool,
    pub tasks: Vec<TaskId>,
}

impl Session {
    /// `log`: activity records, oldest first; the last `limit` of those at or after `since`.
    pub fn log(
        &self,
        limit: Option<usize>,
        since: Option<Timestamp>,
    ) -> Result<Vec<ActivityRecord>> {
        self.catch_up_log()?;
        Ok(self.hub.store.log(&self.project.id, since, limit)?)
    }

    /// Logs a change whose writer was killed after it committed but before it was logged
    /// (or drops the journal of one that never committed), unless a writer holds the board
    /// lock: that writer does it first itself. Costs one `stat` when there is nothing to do.
    pub fn catch_up_log(&self) -> Result<()> {
        Ok(self.hub.store.catch_up_log(&self.project.id)?)
    }

    /// `note`: a line in the activity log from the caller.
    pub fn note(&self, text: &str) -> Result<ActivityRecord> {
        let actor = self.agent()?.to_string();
        if text.trim().is_empty() {
            return Err(SessionError::NoNoteWords.into());
        }
        text::check_long("note", text)?;
        let record = ActivityRecord {
            at: self.now,
            project: self.project.id.clone(),
            actor,
            action: LogAction::Note,
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
        let project_id = self.project.id.clone();
        if dry_run {
            let board = self.board()?;
            return Ok(Archived {
                project: project_id,
                dry_run,
                tasks: finished::select(&board, self.now, older_than),
            });
        }
        let actor = self.agent.clone().unwrap_or_else(|| "baton".to_string());
        self.update(|tx| {
            let ids = finished::select(&tx.board, self.now, older_than);
            tx.archive(&ids).map_err(self.refused())?;
            if !ids.is_empty() {
                tx.record(ActivityRecord {
                    at: self.now,
                    project: project_id.clone(),
                    actor,
                    action: LogAction::Archive,
                    task: None,
                    from_status: None,
                    to_status: None,
                    text: Some(format!(
                        "{} archived",
                        plural::count(ids.len(), "finished task")
                    )),
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
