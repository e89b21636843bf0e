//! Pushing work into a running Claude Code session through channels (SPEC section 11,
//! CLIENTS.md "Pushing into a session that is already running").

/// The experimental capability a channel server declares.
pub const CAPABILITY: &str = "claude/channel";
