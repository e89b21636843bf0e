//! The record of a change: one line of a project's activity log, as the model tells it.

use serde::{Deserialize, Serialize};

use super::task::{Status, TaskId};
use crate::time::Timestamp;

/// One line of the activity log: who did what to which task, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityRecord {
    pub at: Timestamp,
    pub project: String,
    pub actor: String,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
