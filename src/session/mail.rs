//! The mail operations of a session: `msg`, `messages`, the caller's unread messages, and
//! the notifications written about a change the caller made.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Session;
use crate::board::task::Task;
use crate::board::transition::Action;
use crate::error::{MessageRefusal, Result};
use crate::mail::{
    Arrival, BROADCAST, Draft, Marking, Message, MessageType, arrivals, look, notifications,
    summarize, take_unread, unread,
};
use crate::names::{self, NameKind};
use crate::registry;
use crate::text::{self, LineField};
use crate::time::Timestamp;
use crate::wake::WakeOutcome;

/// The answer to `msg`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sent {
    pub project: String,
    pub message: Message,
    /// Whose inbox gained it (named `deliveries` in `--json`, as it always was).
    #[serde(rename = "deliveries")]
    pub arrivals: Vec<Arrival>,
    /// Whom the message woke, for the face to tell the user; not part of `--json`.
    #[serde(skip)]
    pub woken: Vec<WakeOutcome>,
}

/// A message as `messages` lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MailEntry {
    #[serde(flatten)]
    pub message: Message,
    /// Not shown to the caller before this listing.
    pub unread: bool,
}

/// The answer to `messages`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mail {
    pub agent: String,
    pub project: String,
    pub messages: Vec<MailEntry>,
}

impl Session {
    /// When the caller joined the hub: broadcasts from before then are not theirs.
    fn joined(&self, agent: &str) -> Result<Timestamp> {
        if let Some(joined) = self.joined.filter(|_| self.agent.as_deref() == Some(agent)) {
            return Ok(joined);
        }
        Ok(registry::require(&*self.hub.store, agent)?.created_at)
    }

    /// `msg`: one message to an agent, or one record for everyone else ([`BROADCAST`]).
    pub fn message(
        &self,
        to: &str,
        text: &str,
        kind: MessageType,
        summary: Option<&str>,
    ) -> Result<Sent> {
        let sender = self.agent()?.to_string();
        let body = text.trim();
        if body.is_empty() {
            return Err(MessageRefusal::NoWords.into());
        }
        text::check_long("message", text)?;
        if let Some(summary) = summary {
            text::check_line(LineField::Summary, summary)?;
        }
        match kind {
            MessageType::Notification => return Err(MessageRefusal::Notification.into()),
            MessageType::PlanApprovalResponse
                if self.project.coordinator.as_deref() != Some(sender.as_str()) =>
            {
                return Err(MessageRefusal::NotCoordinator {
                    project: self.project.id.clone(),
                    coordinator: self.project.coordinator.clone(),
                }
                .into());
            }
            _ => {}
        }
        let (agents, _unreadable) = registry::list(&*self.hub.store)?;
        if to == BROADCAST {
            if !agents.iter().any(|agent| agent.name != sender) {
                return Err(MessageRefusal::NobodyToBroadcastTo.into());
            }
        } else {
            names::check(NameKind::Agent, to)?;
            self.require_known(to)?;
        }
        let summary = summary
            .map(str::trim)
            .filter(|summary| !summary.is_empty())
            .map_or_else(|| summarize(body), str::to_string);
        let draft = Draft {
            from: sender,
            to: to.to_string(),
            kind,
            summary,
            body: body.to_string(),
            payload: Value::Null,
        };
        let mut written = self
            .hub
            .append_mail(self.project_id(), self.now, vec![draft])?;
        // One draft in, one message out: `append` numbers every draft it is given.
        let message = written.remove(0);
        let arrivals = arrivals(&message, &self.project.id, &agents);
        let woken = self.after_change(&[], &arrivals);
        Ok(Sent {
            project: self.project.id.clone(),
            arrivals,
            message,
            woken,
        })
    }

    /// The caller's unread messages, oldest first; with `mark_read`, they count as shown.
    pub fn unread_messages(&self, mark_read: bool) -> Result<Vec<Message>> {
        let agent = self.agent()?;
        let joined = self.joined(agent)?;
        if mark_read {
            take_unread(&*self.hub.store, self.project_id(), agent, joined, self.now)
        } else {
            Ok(unread(&*self.hub.store, self.project_id(), agent, joined)?)
        }
    }

    /// `messages`: the caller's unread messages, or with `all` every message they sent or
    /// received that is still in `mail.jsonl`; what the `marking` says counts as read.
    pub fn messages(&self, all: bool, marking: Marking) -> Result<Mail> {
        let agent = self.agent()?.to_string();
        let joined = self.joined(&agent)?;
        let (messages, position) = look(
            &*self.hub.store,
            self.project_id(),
            &agent,
            joined,
            marking,
            self.now,
        )?;
        let entries = messages
            .into_iter()
            .filter_map(|message| {
                let reaches = message.reaches(&agent, joined);
                let unread = reaches && message.seq > position;
                let shown = unread || (all && (reaches || message.from == agent));
                shown.then_some(MailEntry { message, unread })
            })
            .collect();
        Ok(Mail {
            agent,
            project: self.project.id.clone(),
            messages: entries,
        })
    }

    /// Writes the notifications for a change the caller just made to a task.
    pub(crate) fn notify_change(
        &self,
        before: &Task,
        after: &Task,
        action: &Action,
    ) -> Result<Vec<Arrival>> {
        let actor = self.agent()?;
        let drafts = notifications(before, after, actor, action);
        let written = self.hub.append_mail(self.project_id(), self.now, drafts)?;
        Ok(written
            .iter()
            .map(|message| Arrival::of(message, &message.to, &self.project.id))
            .collect())
    }
}
