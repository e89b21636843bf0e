//! What the tokens of `baton serve` refuse.

use super::list_or_none;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// `token add` for an agent that has a token (login tokens aside).
    #[error("agent {agent} already has a token")]
    HasToken { agent: String },
    /// `token rm` for an agent with no token; `holders` are the agents that have one.
    #[error(
        "agent {agent} has no token; agents with tokens: {}",
        list_or_none(holders)
    )]
    NoToken { agent: String, holders: Vec<String> },
}

impl TokenError {
    /// How to get past it.
    pub fn hint(&self) -> Option<String> {
        match self {
            TokenError::HasToken { agent } => Some(format!("`baton token rm {agent}` first")),
            TokenError::NoToken { .. } => None,
        }
    }
}
