//! The integration test binary: every test runs the real `baton` in a private `BATON_HOME`.
//! One binary (not one per file) keeps link time down; each area has its own module.
//! The suite runs on Unix (its agents are sh scripts); for Windows it is compiled, the tests
//! of what only Unix has (permission bits, symlinks, sockets) left out.

mod common;

mod a2a;
mod agents;
mod alerts;
mod board;
mod board_reads;
mod channels;
mod clients;
mod clients_a2a;
mod clients_guarded;
// A Codex session in a pseudo-terminal, its daemon on a Unix socket: Unix.
#[cfg(unix)]
mod clients_pushed;
mod clients_woken;
// Codex's sandbox and the scripted model's shell commands: Unix.
#[cfg(unix)]
mod clients_worktree;
mod commit_guard;
// Its listener's shell is a process group of its own, and /proc shows every argv: Unix.
#[cfg(unix)]
mod clients_remote;
mod delivery;
mod delivery_faces;
mod dependencies;
mod diff;
// The README's and docs/' links, and the README's length.
mod docs_links;
// Its checks read Unix's permission bits.
#[cfg(unix)]
mod doctor;
mod edges;
mod edit;
mod faults;
mod floors;
mod fuzz;
mod group_commit;
mod hook;
mod hostile_files;
// haproxy in front of two hubs (tests/it/common/haproxy.rs).
mod balanced;
mod hubs;
mod import;
mod labels;
mod log_truth;
mod mail;
mod mcp;
mod mcp_http;
mod mcp_hubs;
mod mcp_pushes;
mod metrics;
// A private D-Bus session bus stands in for the desktop's: Linux alone here.
#[cfg(target_os = "linux")]
mod notify;
mod opencode;
mod postgres_store;
mod pre_edit;
mod projects;
// The README's tour, run word for word (its shell is sh).
#[cfg(unix)]
mod readme_tour;
mod remote;
mod remote_attacks;
// Its verify is an sh script.
#[cfg(unix)]
mod remote_worktrees;
mod reservations;
mod serve;
mod serve_attacks;
mod setup;
mod stats;
mod status_stores;
mod store_attacks;
mod store_copy;
mod store_secrets;
mod worktrees_kept;
// Its hub pins permission bits, which doctor's pinned output shows.
#[cfg(unix)]
mod snapshots_human;
mod tokens;
mod untrusted;
mod wake;
// Wake scripts are shell scripts: Unix only.
#[cfg(unix)]
mod wake_attacks;
mod wake_env;
// A pseudo-terminal drives the terminal board: Unix only.
#[cfg(unix)]
mod watch_tui;
mod web;
mod webdriver;
// Which store a command read, where it matters.
mod which_store;
mod worktree_faces;
mod worktree_settings;
mod worktrees;
