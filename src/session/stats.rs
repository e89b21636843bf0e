//! `stats`: how the team is doing, read from the store (the activity log, the board and the
//! archive) and worked out by the model ([`crate::board::stats`]).

use super::Session;
use crate::board::stats::{self, Stats, Window};
use crate::error::Result;

impl Session {
    /// The project's figures over `window`, as of now.
    pub fn stats(&self, window: Window) -> Result<Stats> {
        self.catch_up_log()?;
        let project = &self.project.id;
        // The whole log: a task finished in the window may have been claimed before it.
        let records = self.hub.store.log(project, None, None)?;
        let board = self.board()?;
        let on_board = board
            .tasks()
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.refused())?;
        let archived = self.hub.store.archived_tasks(project)?;
        // The board's last: a task a crash left in both is the board's.
        Ok(stats::compute(
            project,
            &records,
            archived.iter().chain(on_board),
            &self.project.settings.humans,
            window,
            self.now,
        ))
    }
}
