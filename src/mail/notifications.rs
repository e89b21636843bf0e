//! The messages baton writes itself when a task changes under someone, and who a message
//! reaches as a cue to wake them.

use serde_json::json;

use super::{Arrival, BATON, Draft, Message, MessageType};
use crate::board::action::ActionKind;
use crate::board::task::{Status, Task};
use crate::board::transition::Action;
use crate::registry;

/// The notifications baton writes when `actor`'s action took `before` to `after`: to the
/// sender when the task completed, failed or was canceled, and to the assignee when it was
/// canceled or reassigned away. Nobody is told of what they did themselves.
pub fn notifications(before: &Task, after: &Task, actor: &str, action: &Action) -> Vec<Draft> {
    let id = after.id;
    let payload = |event: &str| {
        json!({
            "task": id.0,
            "event": event,
            "status": after.status,
            "by": actor,
        })
    };
    let words = action.text().trim();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut tell = |to: &str, summary: String, body: String, event: &str| {
        if to != actor && !drafts.iter().any(|draft| draft.to == to) {
            drafts.push(Draft {
                from: BATON.to_string(),
                to: to.to_string(),
                kind: MessageType::Notification,
                summary,
                body,
                payload: payload(event),
            });
        }
    };
    let finished = before.status.is_open() && after.status.is_finished();
    match after.status {
        Status::Completed if finished => {
            let result = after.result.as_deref().unwrap_or("").trim();
            let verb = match action.kind() {
                ActionKind::Approve => "approved",
                _ => "completed",
            };
            let body = if result.is_empty() {
                format!("{actor} {verb} {id} ({}).", after.subject)
            } else {
                format!("{actor} {verb} {id} ({}). Result: {result}", after.subject)
            };
            tell(
                &after.from,
                format!("{id} completed: {}", after.subject),
                body,
                "completed",
            );
        }
        Status::Failed if finished => tell(
            &after.from,
            format!("{id} failed: {}", after.subject),
            format!(
                "{actor} gave up on {id} ({}). Reason: {words}",
                after.subject
            ),
            "failed",
        ),
        Status::Canceled if finished => {
            let reason = if words.is_empty() {
                String::new()
            } else {
                format!(" Reason: {words}")
            };
            let body = format!("{actor} canceled {id} ({}).{reason}", after.subject);
            let summary = format!("{id} canceled: {}", after.subject);
            tell(&after.from, summary.clone(), body.clone(), "canceled");
            tell(&before.to, summary, body, "canceled");
        }
        _ => {}
    }
    if let Some(to) = action.to()
        && before.to != after.to
    {
        let note = if words.is_empty() {
            String::new()
        } else {
            format!(" Note: {words}")
        };
        tell(
            &before.to,
            format!("{id} reassigned to {to}: {}", after.subject),
            format!(
                "{actor} reassigned {id} ({}) from you to {to}; it is no longer yours.{note}",
                after.subject
            ),
            "reassigned",
        );
    }
    drafts
}

/// The agents that `message` reaches, as wake cues.
pub fn arrivals(
    message: &Message,
    project: &str,
    agents: &[registry::AgentRecord],
) -> Vec<Arrival> {
    agents
        .iter()
        .filter(|agent| message.reaches(&agent.name, agent.created_at))
        .map(|agent| Arrival::of(message, &agent.name, project))
        .collect()
}
