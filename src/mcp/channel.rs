//! Pushing work into a running session (SPEC section 11, CLIENTS.md "Pushing into a session
//! that is already running"): Claude Code's through channels, Codex's through its
//! app-server ([`super::codex`]).
//!
//! `baton mcp` declares the `claude/channel` capability; once a client that takes pushes has
//! opened its session, a [`Follower`] follows the board of the server's project on its desk
//! (the file events `wait` waits on) and pushes each hand-over to the server's agent that it
//! has not been shown yet: one `notifications/claude/channel` per task into Claude Code, one
//! turn per batch into the Codex thread the server belongs to. Then it records the batch as
//! seen: the push showed it ([`Desk::handovers_to_push`] holds the rule, shared with
//! opencode's `hook follow`). It announces the live session ([`Desk::announce`]) while it
//! runs, and ends when the connection does, or when a push into Codex fails (the session
//! can take no more: the work waits, unseen, for the wake or the next prompt).

use std::sync::Arc;
use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{CustomNotification, Implementation, ServerNotification};
use rmcp::service::Peer;
use serde_json::{Value, json};

use super::codex;
use crate::error::Result;
use crate::hook::TEXT_LIMIT;
use crate::session::{
    ASK_OVER_EVERY, Desk, Follow, Hub, InboxEntry, LOOK_AGAIN_EVERY, LocalDesk, Pushed,
};
use crate::store::presence::Presence;
use crate::text;
use crate::time::{self, Timestamp};

/// The experimental capability a channel server declares.
pub const CAPABILITY: &str = "claude/channel";
/// The notification that carries a push.
pub const METHOD: &str = "notifications/claude/channel";
/// The name under which a live session of this kind is announced.
pub const CLIENT: &str = "claude";

/// Whether the client on the other end takes channel pushes into its model's session.
///
/// Only Claude Code does (CLIENTS.md): Codex, Gemini and opencode drop MCP notifications
/// without showing them to the model. A push counts as the agent having seen its task
/// (SPEC section 11), so pushing to a client that drops it would report as delivered what
/// never reached the agent; and announcing a live session for such a client would make a
/// hand-over say the agent will see its work at once. So the follower runs for Claude Code's `clientInfo` name
/// only. (Claude Code started without `--dangerously-load-development-channels` drops the
/// push too, and no part of the handshake tells; `baton setup --client claude` says how
/// to start a session that takes them.)
pub fn takes_pushes(client: &Implementation) -> bool {
    client.name == "claude-code"
}

/// Where a follower's pushes go.
#[derive(Debug, Clone)]
pub enum Target {
    /// Claude Code's channel: one notification per task, on the MCP connection.
    Channel,
    /// The thread of Codex's app-server this server belongs to: one turn per batch.
    Codex(codex::Thread),
}

impl Target {
    /// The client a live session of this target is announced as.
    fn client(&self) -> &'static str {
        match self {
            Target::Channel => CLIENT,
            Target::Codex(_) => codex::CLIENT,
        }
    }
}

/// What follows one server's board for its agent.
#[derive(Debug, Clone)]
pub struct Follower {
    pub hub: Hub,
    pub agent: String,
    /// The server's project (`baton mcp --project ID`), else the working directory's.
    pub project: Option<String>,
}

impl Follower {
    /// Follows the board until the connection ends, pushing each unseen hand-over into
    /// `target` (Claude Code's channel on `peer`, or a Codex thread). The board is looked
    /// at only when the desk says it changed (and every [`LOOK_AGAIN_EVERY`], for what
    /// changes without a write); between looks it waits on the store's feed of changes, so
    /// an idle board costs no reads.
    pub async fn follow(self, peer: Peer<RoleServer>, target: Target) {
        let opened = {
            let follower = self.clone();
            let client = target.client();
            tokio::task::spawn_blocking(move || follower.open(client)).await
        };
        let (desk, _presence, mut changes) = match opened {
            Ok(Ok(opened)) => opened,
            Ok(Err(error)) => {
                eprintln!(
                    "baton mcp: no pushes into this session: {}",
                    text::inline(&error.to_string())
                );
                return;
            }
            Err(_) => return,
        };
        let Ok(project) = desk.project_id() else {
            return;
        };
        let mut pushed = Pushed::default();
        while !peer.is_transport_closed() {
            let looked_at = Instant::now();
            let looked = {
                let desk = Arc::clone(&desk);
                tokio::task::spawn_blocking(move || {
                    let due = desk.handovers_to_push(&mut pushed);
                    (pushed, due)
                })
                .await
            };
            let Ok((kept, due)) = looked else { return };
            pushed = kept;
            // A board being rewritten by hand, a lock held too long: the next change
            // or look tries again.
            let due = due.unwrap_or_default();
            let now = time::now();
            let (sent, is_open) = match &target {
                Target::Channel => {
                    let mut sent = Vec::new();
                    let mut is_open = true;
                    for due in due {
                        let notification = notification(&due.entry, &self.agent, &project, now);
                        if peer.send_notification(notification).await.is_err() {
                            is_open = false;
                            break;
                        }
                        sent.push(due.push);
                    }
                    (sent, is_open)
                }
                Target::Codex(_) if due.is_empty() => (Vec::new(), true),
                Target::Codex(thread) => {
                    let entries: Vec<&InboxEntry> = due.iter().map(|due| &due.entry).collect();
                    let text = codex::push_text(&entries, &self.agent, &project, now);
                    let thread = thread.clone();
                    let pushed = tokio::task::spawn_blocking(move || thread.push(&text)).await;
                    match pushed {
                        Ok(Ok(())) => (due.into_iter().map(|due| due.push).collect(), true),
                        Ok(Err(error)) => {
                            eprintln!(
                                "baton mcp: no more pushes into this Codex session: {}",
                                text::inline(&error.to_string())
                            );
                            (Vec::new(), false)
                        }
                        Err(_) => (Vec::new(), false),
                    }
                }
            };
            if !sent.is_empty() {
                // One write for the batch. A failure leaves it unseen on the board and
                // held in `pushed`: the next look records it, nothing is pushed twice.
                let desk = Arc::clone(&desk);
                let recorded = tokio::task::spawn_blocking(move || {
                    let _ = desk.record_pushed(&mut pushed, &sent);
                    pushed
                })
                .await;
                let Ok(kept) = recorded else { return };
                pushed = kept;
            }
            if !is_open {
                return;
            }
            // Until the next look: a change of the project, or LOOK_AGAIN_EVERY; the wait
            // is cut in pieces to ask between them whether the connection closed.
            while !peer.is_transport_closed() {
                let pause = LOOK_AGAIN_EVERY
                    .saturating_sub(looked_at.elapsed())
                    .min(ASK_OVER_EVERY);
                if pause.is_zero() {
                    break;
                }
                let waited = tokio::task::spawn_blocking(move || {
                    let is_changed = changes.wait(pause).unwrap_or(true);
                    (changes, is_changed)
                })
                .await;
                let Ok((kept, is_changed)) = waited else {
                    return;
                };
                changes = kept;
                if is_changed {
                    break;
                }
            }
        }
    }

    /// The desk the follower looks through (its session opened once: opening records a
    /// heartbeat), the announcement of the live session, held while the follower runs, and
    /// the changes of the board.
    fn open(&self, client: &str) -> Result<Opened> {
        let desk = LocalDesk::new(
            self.hub.clone(),
            Some(self.agent.clone()),
            self.project.clone(),
        );
        let presence = desk.announce(client)?;
        // Before the first look: a change during it is a change.
        let changes = desk.follow()?;
        Ok((Arc::new(desk), presence, changes))
    }
}

/// What a follower holds while it runs: its desk, the announcement of the live session,
/// and the changes of the board.
type Opened = (Arc<LocalDesk>, Option<Presence>, Box<dyn Follow>);

/// The push of one inbox entry: the task as the hooks show it (SPEC section 10: hidden
/// characters escaped, multi-line text framed, each text cut at [`TEXT_LIMIT`]), with the
/// task id and subject as meta.
pub fn notification(
    entry: &InboxEntry,
    agent: &str,
    project: &str,
    now: Timestamp,
) -> ServerNotification {
    let params = json!({
        "content": content(entry, agent, project, now),
        "meta": meta(entry, project),
    });
    ServerNotification::CustomNotification(CustomNotification::new(METHOD, Some(params)))
}

fn content(entry: &InboxEntry, agent: &str, project: &str, now: Timestamp) -> String {
    format!(
        "baton: new work for you ({agent}) in project {project}.\n\n{}",
        entry.describe(now, Some(TEXT_LIMIT))
    )
}

/// Meta keys are identifiers and values strings (Claude Code drops other keys). The
/// subject is one line by SPEC section 10, and escaped here all the same: the client
/// writes meta into the model's context as attributes.
fn meta(entry: &InboxEntry, project: &str) -> Value {
    let (subject, _) = text::cut(&entry.task.subject, TEXT_LIMIT / 10);
    json!({
        "task_id": entry.task.id.to_string(),
        "subject": text::inline(subject).to_string(),
        "project": project,
        "reason": entry.reason.what_to_do(),
    })
}
