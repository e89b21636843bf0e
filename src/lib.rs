//! baton: a task board on the local disk that coding agents and humans share.
//!
//! The library never prints and never exits; the CLI (`src/cli`), the MCP server and the
//! hooks are thin faces over [`session::Session`], which reaches the hub's state through
//! [`store::Store`].

/// The activity log: one line per change, rotated.
pub mod activity;
/// Alerts: posting hand-overs to a human's webhook, ntfy or Slack, queued and retried.
pub mod alert;
/// The model: tasks, the state machine, whose turn it is, routing, handovers, leases, the
/// records of changes and the messages; pure, holding no file.
pub mod board;
/// The agent clients and their hook events, with each client's spellings in one table.
pub mod client;
/// Desktop notifications on hand-overs.
pub mod desktop;
/// Checks of the hub home, and bringing a board back from its backup.
pub mod doctor;
/// The crate's error type.
pub mod error;
/// Baton's files, whatever they hold: the one lock, atomic replacement, regular files only,
/// what differs by platform, the text logs of unwatched processes.
pub mod file;
/// Asking the machine's `git` about a repository: its root, its hooks, what a commit
/// changes and what changed since the last one.
pub mod git;
/// The hub home and where each file lives beneath it.
pub mod home;
/// Client hook events in, client hook answers out.
pub mod hook;
/// Boards kept by other tools (roundtable, agent-bridge), read for `baton import`.
pub mod import;
/// The JSON API of `baton serve` as it travels: its paths, and every request and answer as
/// one type that the server and the client of a remote hub share.
pub mod json_api;
/// Messages between agents, read positions, notifications, the mail archive.
pub mod mail;
/// The MCP server's tools, over the same session functions as the CLI.
pub mod mcp;
/// What a running hub counts and times, and the Prometheus text format it is read in.
pub mod metrics;
/// Agent and project names, checked before they touch a path.
pub mod names;
/// Counted nouns for people to read: "1 task", "3 tasks".
pub mod plural;
/// Starting other programs: finding them on PATH, spawning baton's detached processes.
pub mod process;
/// Projects, workspaces and isolation.
pub mod project;
/// The agent registry.
pub mod registry;
/// The client side of a hub on another machine (`BATON_URL`): requests, refusals, the
/// event stream, and the local map of its projects.
pub mod remote;
/// Secrets baton makes (tokens, alerts' signing secrets, a machine's key), hex and HMAC.
pub mod secret;
/// The hub over HTTP (`baton serve`): MCP, the JSON API, the event stream, the web board.
pub mod serve;
/// An identity acting in a project: the operations every face calls, and the after-effects
/// of each change (notifying, waking) that no face must forget.
pub mod session;
/// A setting from the environment that cannot be used, with how to put it right.
pub mod setting;
/// Wiring agent clients (Claude Code, Codex, Gemini CLI, opencode) to baton, and back.
pub mod setup;
/// The seam to where the hub's state is kept: the `Store` trait, and its implementation on
/// the files of the hub home (locks, atomic writes, layouts, the group commit).
pub mod store;
/// Participants' text: checked on the way in, made safe to show on the way out.
pub mod text;
/// Timestamps and the clock.
pub mod time;
/// The tokens of `baton serve`: kept as hashes, each the identity of one agent.
pub mod tokens;
/// Waking agents that are not running: the detached wake supervisor.
pub mod wake;
/// Each task in a git worktree of its own, and how its work lands (SPEC 18.4, 18.5).
pub mod worktree;

pub use error::{Error, Result};
