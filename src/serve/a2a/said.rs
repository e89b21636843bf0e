//! What a caller's message says to baton: its words as a task's subject and body, and
//! baton's own metadata beyond A2A (`metadata.baton`).

use serde_json::{Map, Value};

use super::protocol::{self, RpcError, code};
use crate::board::task::Priority;
use crate::text;

/// What a caller says to baton beyond A2A, under `metadata.baton` (the message's, else the
/// request's).
#[derive(Debug, Clone, Default)]
pub(super) struct Said {
    pub(super) project: Option<String>,
    pub(super) action: Option<String>,
    pub(super) to: Option<String>,
    pub(super) priority: Option<Priority>,
    pub(super) review: bool,
    pub(super) reason: Option<String>,
}

impl Said {
    pub(super) fn of(
        layers: &[Option<&Map<String, Value>>],
    ) -> std::result::Result<Said, RpcError> {
        let mut said = Said::default();
        // The request's first, the message's over it.
        for layer in layers.iter().rev().flatten() {
            let Some(baton) = layer.get("baton") else {
                continue;
            };
            let Value::Object(baton) = baton else {
                return Err(said_wrong("metadata.baton", "an object"));
            };
            let text = |name: &str| -> std::result::Result<Option<String>, RpcError> {
                match baton.get(name) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(value)) => Ok(Some(value.clone())),
                    Some(_) => Err(said_wrong(&format!("metadata.baton.{name}"), "a string")),
                }
            };
            said.project = text("project")?.or(said.project);
            said.action = text("action")?.or(said.action);
            said.to = text("to")?.or(said.to);
            said.reason = text("reason")?.or(said.reason);
            if let Some(priority) = text("priority")? {
                said.priority = Some(priority.parse().map_err(|refused: String| {
                    RpcError::new(
                        code::INVALID_PARAMS,
                        "INVALID_PARAMS",
                        text::inline(&refused).to_string(),
                    )
                })?);
            }
            match baton.get("review") {
                None | Some(Value::Null) => {}
                Some(Value::Bool(review)) => said.review = *review,
                Some(_) => return Err(said_wrong("metadata.baton.review", "true or false")),
            }
        }
        Ok(said)
    }
}

pub(super) fn said_wrong(what: &str, wanted: &str) -> RpcError {
    RpcError::new(
        code::INVALID_PARAMS,
        "INVALID_PARAMS",
        format!("{what} must be {wanted}"),
    )
}

/// The text of a message: its text parts, one after the other. baton takes nothing else.
pub(super) fn message_text(
    message: &protocol::IncomingMessage,
) -> std::result::Result<String, RpcError> {
    let mut texts = Vec::new();
    for part in &message.parts {
        match part.as_text() {
            Some(text) => texts.push(text),
            None => {
                return Err(RpcError::new(
                    code::CONTENT_TYPE_NOT_SUPPORTED,
                    "CONTENT_TYPE_NOT_SUPPORTED",
                    "baton takes text parts only: put the task in words (name files by their \
                     paths in the body)",
                ));
            }
        }
    }
    Ok(texts.join("\n"))
}

/// A message's text as a task: the first line its subject, the rest its body.
pub(super) fn subject_and_body(text: &str) -> (String, String) {
    let (subject, body) = text.split_once('\n').unwrap_or((text, ""));
    let subject = subject.strip_suffix('\r').unwrap_or(subject);
    (
        subject.to_string(),
        body.trim_start_matches(['\r', '\n']).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_a_subject_line_and_a_body() {
        assert_eq!(
            subject_and_body("Fix the parser\n\nIt drops commas.\nSee src/parse.rs"),
            (
                "Fix the parser".to_string(),
                "It drops commas.\nSee src/parse.rs".to_string()
            )
        );
        assert_eq!(
            subject_and_body("One line"),
            ("One line".to_string(), String::new())
        );
        assert_eq!(
            subject_and_body("Windows\r\nbody"),
            ("Windows".to_string(), "body".to_string())
        );
    }

    #[test]
    fn metadata_baton_is_read_from_the_message_over_the_request() {
        let message = serde_json::json!({"baton": {"project": "api", "action": "approve"}});
        let request = serde_json::json!({"baton": {"project": "web", "to": "dev", "review": true}});
        let said = Said::of(&[message.as_object(), request.as_object()]).unwrap();
        assert_eq!(said.project.as_deref(), Some("api"));
        assert_eq!(said.action.as_deref(), Some("approve"));
        assert_eq!(said.to.as_deref(), Some("dev"));
        assert!(said.review);
        let wrong = serde_json::json!({"baton": {"project": 3}});
        assert_eq!(
            Said::of(&[wrong.as_object()]).unwrap_err().message,
            "metadata.baton.project must be a string"
        );
    }
}
