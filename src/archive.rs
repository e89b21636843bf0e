//! Finished tasks move off the board into the archive, so a board stays small however long
//! its project runs. Nothing is deleted: `show` still finds archived tasks. Which tasks
//! leave is the model's rule ([`crate::board::finished`]); where they go is the store's.

use crate::board::task::{Task, TaskId};
use crate::store::{Store, StoreError};

pub use crate::board::finished::{KEEP_FINISHED_AT_MOST, KEEP_FINISHED_FOR, select};

/// Finds an archived task of `project`; the last copy wins (a crash can leave two).
pub fn find(store: &dyn Store, project: &str, id: TaskId) -> Result<Option<Task>, StoreError> {
    store.archived_task(project, id)
}
