//! Messages between agents as the model knows them: a message, the draft it is made from,
//! and how far each agent has read a project's mail.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::time::Timestamp;

/// The `to` of a broadcast: every agent but the sender.
pub const BROADCAST: &str = "@all";
/// The `schema` of a project's read positions this binary writes and the highest it reads.
pub const POSITIONS_SCHEMA: u32 = 1;

/// What a message is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    Text,
    /// Written by baton itself when a task changes under someone.
    Notification,
    ShutdownRequest,
    ShutdownResponse,
    PlanApprovalRequest,
    /// The coordinator's verdict on a plan; only the coordinator sends it.
    PlanApprovalResponse,
}

impl MessageType {
    pub const ALL: [MessageType; 6] = [
        MessageType::Text,
        MessageType::Notification,
        MessageType::ShutdownRequest,
        MessageType::ShutdownResponse,
        MessageType::PlanApprovalRequest,
        MessageType::PlanApprovalResponse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Text => "text",
            MessageType::Notification => "notification",
            MessageType::ShutdownRequest => "shutdown_request",
            MessageType::ShutdownResponse => "shutdown_response",
            MessageType::PlanApprovalRequest => "plan_approval_request",
            MessageType::PlanApprovalResponse => "plan_approval_response",
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MessageType {
    type Err = String;

    /// Accepts the stored names, and `-` for `_` (`plan-approval-request`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().replace('-', "_");
        MessageType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == wanted)
            .ok_or_else(|| {
                let names: Vec<&str> = MessageType::ALL.iter().map(|kind| kind.as_str()).collect();
                format!(
                    "unknown message type `{text}` (one of {})",
                    names.join(", ")
                )
            })
    }
}

/// One line of `mail.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Counts up from 1 per project and never repeats, even after the sweep.
    pub seq: u64,
    pub at: Timestamp,
    pub from: String,
    /// An agent's name, or [`BROADCAST`].
    pub to: String,
    #[serde(rename = "type")]
    pub kind: MessageType,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub payload: Value,
}

impl Message {
    pub fn is_broadcast(&self) -> bool {
        self.to == BROADCAST
    }

    /// Whether this message is addressed to `agent`, who joined the hub at `joined`. A
    /// broadcast reaches the agents there when it was sent, the sender excepted.
    pub fn reaches(&self, agent: &str, joined: Timestamp) -> bool {
        if self.is_broadcast() {
            self.from != agent && joined <= self.at
        } else {
            self.to == agent
        }
    }
}

/// A message before it has a number and a time.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub from: String,
    pub to: String,
    pub kind: MessageType,
    pub summary: String,
    pub body: String,
    pub payload: Value,
}

/// The contents of `mail.read.json`: how far each agent has read, and the highest number
/// the sweep has moved out (so numbering carries on when `mail.jsonl` is emptied).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadPositions {
    pub schema: u32,
    /// The highest `seq` each agent has been shown.
    #[serde(default)]
    pub positions: BTreeMap<String, u64>,
    #[serde(default)]
    pub archived_through: u64,
}

impl Default for ReadPositions {
    fn default() -> Self {
        ReadPositions {
            schema: POSITIONS_SCHEMA,
            positions: BTreeMap::new(),
            archived_through: 0,
        }
    }
}

impl ReadPositions {
    pub fn of(&self, agent: &str) -> u64 {
        self.positions.get(agent).copied().unwrap_or(0)
    }
}
