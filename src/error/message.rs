//! Why a message was refused (SPEC section 6), in the mail domain's words.

use crate::text::Face;

/// Why a message was refused (SPEC section 6): the words are the mail domain's, each
/// argument spelled as the face that tells it spells it ([`Face`]). Kept here, beside the
/// crate's error, because `mail` itself returns that error: a message `msg` (or the
/// `message` tool) would not send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageRefusal {
    /// The text is empty, or only spaces.
    NoWords,
    /// `notification` is baton's own type.
    Notification,
    /// A plan approval's answer from someone other than the project's coordinator.
    NotCoordinator {
        project: String,
        coordinator: Option<String>,
    },
    /// A broadcast with nobody but the sender to receive it.
    NobodyToBroadcastTo,
}

impl MessageRefusal {
    /// The refusal as `face` tells it.
    pub fn words(&self, face: Face) -> String {
        match self {
            MessageRefusal::NoWords => match face {
                Face::Cli => "msg needs some words".to_string(),
                Face::Tool => format!("message needs some words in {}", face.argument("text")),
            },
            MessageRefusal::Notification => "notifications are written by baton itself".into(),
            MessageRefusal::NotCoordinator {
                project,
                coordinator,
            } => format!(
                "only the coordinator of project {project} ({}) can send plan_approval_response",
                coordinator.as_deref().unwrap_or("nobody yet")
            ),
            MessageRefusal::NobodyToBroadcastTo => {
                "nobody but you is here to receive a broadcast".to_string()
            }
        }
    }

    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> Option<String> {
        match self {
            MessageRefusal::Notification => Some(format!(
                "send {} instead",
                match face {
                    Face::Cli => "`--type text` (the default)".to_string(),
                    Face::Tool => format!("{} `text` (the default)", face.argument("type")),
                }
            )),
            MessageRefusal::NobodyToBroadcastTo => {
                Some("agents are known once they run a baton command".to_string())
            }
            MessageRefusal::NoWords | MessageRefusal::NotCoordinator { .. } => None,
        }
    }
}

impl std::fmt::Display for MessageRefusal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.words(Face::Cli))
    }
}

impl std::error::Error for MessageRefusal {}
