//! The caller's inbox: the tasks whose turn is theirs, with all that is needed to act on
//! each, and their unread messages.

use serde::{Deserialize, Serialize};

use super::{Session, WhenBusy};
use crate::board::InboxItem;
use crate::board::delivery::DeliveryEvent;
use crate::board::inbox::Reason;
use crate::board::task::{Task, TaskId, ThreadEntry};
use crate::error::Result;
use crate::mail::Message;
use crate::text;
use crate::time::{self, Timestamp};

/// One task in an inbox, with all that is needed to act on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InboxEntry {
    #[serde(flatten)]
    pub task: Task,
    #[serde(flatten, with = "crate::board::inbox::fields")]
    pub reason: Reason,
    /// Who is waiting on the owner of the inbox.
    pub waiting: String,
    /// The last question, answer or review note.
    pub last_word: Option<ThreadEntry>,
}

impl InboxEntry {
    /// Everything needed to act on the entry without another call, as the CLI's inbox and
    /// the hooks show it: subject, who waits, body, files, the last word, the next commands.
    /// Participants' text is shown by SPEC section 10's rules; with `limit`, the subject,
    /// body and last word are each cut to about that many characters, saying what was left
    /// out and where to read it whole.
    pub fn describe(&self, now: Timestamp, limit: Option<usize>) -> String {
        use std::fmt::Write;
        let task = &self.task;
        let id = task.id;
        let cut = |text: &'_ str, limit: Option<usize>| -> String {
            match limit.map(|limit| text::cut(text, limit)) {
                Some((kept, left)) if left > 0 => {
                    format!("{kept}… ({left} more: baton show {id})")
                }
                _ => text.to_string(),
            }
        };
        let subject_limit = limit.map(|limit| (limit / 10).max(80));
        let mut out = format!(
            "{} [{}] {}: {}\n",
            id,
            task.priority,
            self.reason.what_to_do(),
            text::inline(&cut(&task.subject, subject_limit))
        );
        // A stalled task waits on nobody: its assignee went quiet, and the one whose inbox
        // it is in must check on them.
        let waiting = match self.reason {
            Reason::Stalled => format!("{} has not renewed its lease", text::inline(&task.to)),
            _ => format!("{} is waiting on you", text::inline(&self.waiting)),
        };
        let _ = writeln!(
            out,
            "  from {} to {}, sent {} ago; {waiting}",
            text::inline(&task.from),
            text::inline(&task.to),
            time::age(task.created_at, now),
        );
        if let Some(place) = self.where_to_work() {
            let _ = writeln!(out, "  {place}");
        }
        out.push_str(&text::framed(&cut(&task.body, limit), "  | ").to_string());
        if !task.files.is_empty() {
            let files: Vec<String> = task
                .files
                .iter()
                .map(|file| text::inline(file).to_string())
                .collect();
            let _ = writeln!(out, "  files: {}", cut(&files.join(", "), subject_limit));
        }
        if !task.labels.is_empty() {
            let labels: Vec<String> = task
                .labels
                .iter()
                .map(|label| text::inline(label).to_string())
                .collect();
            let _ = writeln!(out, "  labels: {}", labels.join(", "));
        }
        if let Some(word) = &self.last_word {
            let _ = write!(
                out,
                "  last {} by {} ({} ago):",
                word.kind.entry().replace('_', " "),
                text::inline(&word.by),
                time::age(word.at, now),
            );
            out.push_str(&text::after_label(&cut(&word.text, limit), "  | "));
        }
        let _ = writeln!(out, "  next: {}", self.next_steps());
        out
    }

    /// Where to work on the task ([`Task::where_to_work`]), when the one whose inbox it is
    /// works on it (it is theirs to do, or sent back to them) and it has a worktree.
    pub fn where_to_work(&self) -> Option<String> {
        match self.reason {
            Reason::Assigned | Reason::ChangesRequested => self.task.where_to_work(),
            _ => None,
        }
    }

    /// The commands that move the task on from where it is in this inbox.
    pub fn next_steps(&self) -> String {
        let id = self.task.id.0;
        match self.reason {
            Reason::Assigned | Reason::ChangesRequested => {
                let finish = if self.task.review {
                    format!("baton review {id} --body WHAT-YOU-DID")
                } else {
                    format!("baton done {id} --result WHAT-YOU-DID")
                };
                format!("baton claim {id} · baton ask {id} --body QUESTION · {finish}")
            }
            Reason::Question => format!("baton answer {id} --body ANSWER"),
            Reason::ReviewRequested => {
                format!("baton approve {id} · baton request-changes {id} --body WHAT")
            }
            Reason::Stalled => format!(
                "ask {} how it goes (baton msg), baton reassign {id} --to NAME, or baton cancel {id}",
                text::inline(&self.task.to)
            ),
            Reason::DependencyEnded { .. } => format!(
                "baton cancel {id} --reason WHY, or baton reassign {id} --to NAME to go ahead \
                 without it (NAME may be {})",
                self.task.to
            ),
        }
    }
}

/// The caller's inbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inbox {
    pub agent: String,
    pub project: String,
    pub tasks: Vec<InboxEntry>,
    /// Tasks in the inbox beyond those in `tasks` (a preview lists only the first few).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_tasks: usize,
    /// Unread messages, oldest first.
    pub messages: Vec<Message>,
}

impl Session {
    /// Records `seen` on the hand-overs among `shown` that reach the caller for the first
    /// time (SPEC section 11), and in `shown` too, so what is returned says what is stored.
    /// A look with nothing new writes nothing. Recording is bookkeeping, never a reason to
    /// withhold the inbox: when it cannot be written (the lock stays busy, a hook's short
    /// wait runs out, twin ids on a board edited by hand), the inbox is shown and the next
    /// look records it.
    fn record_shown(&self, agent: &str, shown: &mut [InboxEntry]) {
        let new: Vec<TaskId> = shown
            .iter()
            .filter(|entry| {
                entry
                    .task
                    .delivery
                    .as_ref()
                    .is_some_and(|delivery| delivery.to == agent && delivery.state.is_unseen())
            })
            .map(|entry| entry.task.id)
            .collect();
        if new.is_empty() {
            return;
        }
        let Ok(recorded) = self.record_seen_unchecked(&new) else {
            return;
        };
        for entry in shown {
            if recorded.contains(&entry.task.id)
                && let Some(delivery) = &mut entry.task.delivery
            {
                delivery.record(DeliveryEvent::Shown, agent, self.now);
            }
        }
    }
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// How many inbox tasks `status` and the hooks show in full.
pub const PREVIEW: usize = 10;

impl Inbox {
    /// Nothing waits: no task and no unread message.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty() && self.messages.is_empty()
    }

    /// How many tasks wait, listed or not.
    pub fn task_count(&self) -> usize {
        self.tasks.len() + self.more_tasks
    }
}

impl Session {
    /// `inbox --peek`: the tasks whose turn is the caller's and its unread messages,
    /// marking nothing read.
    pub fn inbox(&self) -> Result<Inbox> {
        self.inbox_marking(false, None, WhenBusy::Fail, true)
    }

    /// `inbox`: as [`Session::inbox`], and the messages it returns count as read.
    pub fn inbox_and_mark_read(&self) -> Result<Inbox> {
        self.inbox_marking(true, None, WhenBusy::Fail, true)
    }

    /// The first [`PREVIEW`] tasks of the inbox in full and how many more there are, and
    /// the unread messages (with `mark_read`, marking them read): what `status` and the
    /// hooks show. Only the tasks shown are read whole, so a long inbox costs little more
    /// than a short one.
    pub fn inbox_preview(&self, mark_read: bool) -> Result<Inbox> {
        self.inbox_marking(mark_read, Some(PREVIEW), WhenBusy::Fail, true)
    }

    /// What the hooks show: [`Session::inbox_preview`], except that a lock still busy when
    /// the hub's lock policy gives up does not fail it. The inbox is then shown unmarked:
    /// the messages stay unread and the caller's leases are not renewed, both left for the
    /// next look. A hook must answer before its client stops waiting, lock or no lock.
    pub fn inbox_preview_unless_busy(&self, mark_read: bool) -> Result<Inbox> {
        self.inbox_marking(mark_read, Some(PREVIEW), WhenBusy::ShowUnmarked, true)
    }

    /// The inbox as [`Session::inbox`] has it, recording nothing as seen: for a push, which
    /// records what it showed only once it has shown it ([`Session::record_pushed`]), and
    /// for a remote `listen`, which looks on the agent's behalf without showing it anything.
    pub fn inbox_before_push(&self) -> Result<Inbox> {
        self.inbox_marking(false, None, WhenBusy::Fail, false)
    }

    /// The inbox; with `mark_read` its messages count as read, with `record_seen` the
    /// hand-overs it holds count as seen.
    fn inbox_marking(
        &self,
        mark_read: bool,
        limit: Option<usize>,
        when_busy: WhenBusy,
        record_seen: bool,
    ) -> Result<Inbox> {
        let agent = self.agent()?.to_string();
        // Renewing leases makes this read a write under the board lock.
        let board = match self.board() {
            Err(error) if when_busy.shows_unmarked(&error) => self.hub.board(&self.project.id)?,
            board => board?,
        };
        let items = board.inbox(&agent, self.now);
        let shown = limit.unwrap_or(items.len()).min(items.len());
        // Sized up front: a list of thousands regrown by doubling would briefly need twice
        // the room.
        let mut tasks = Vec::with_capacity(shown);
        for &InboxItem { reason, index, .. } in &items[..shown] {
            // By place, not id: two tasks with one id (a board edited by hand) are both shown.
            let task = board.task_at(index).map_err(self.refused())?;
            tasks.push(InboxEntry {
                waiting: reason.who_waits(&task.from, &task.to).to_string(),
                last_word: task.last_word().cloned(),
                reason,
                task,
            });
        }
        if record_seen {
            self.record_shown(&agent, &mut tasks);
        }
        Ok(Inbox {
            agent,
            project: self.project.id.clone(),
            tasks,
            more_tasks: items.len() - shown,
            messages: match self.unread_messages(mark_read) {
                Err(error) if when_busy.shows_unmarked(&error) => self.unread_messages(false)?,
                messages => messages?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::task::{Status, Worktree};
    use crate::session::hook_answer;

    #[test]
    fn the_one_who_works_on_a_task_is_told_where_and_nobody_else() {
        let at = Timestamp::parse_stored("2026-01-01T00:00:00Z").unwrap();
        let mut task = Task::example(Status::Pending, at);
        task.worktree = Some(Worktree {
            path: "/wt/app/T-4".into(),
            branch: "baton/T-4".into(),
            base: "main".into(),
            base_commit: "0".repeat(40),
            host: None,
            reviewed: None,
        });
        let entry = |reason| InboxEntry {
            task: task.clone(),
            reason,
            waiting: "claude".into(),
            last_word: None,
        };
        let place = "work in /wt/app/T-4 (branch baton/T-4)";
        for reason in [Reason::Assigned, Reason::ChangesRequested] {
            let text = entry(reason).describe(at, None);
            assert!(text.contains(&format!("\n  {place}\n")), "{text}");
        }
        for reason in [Reason::ReviewRequested, Reason::Question, Reason::Stalled] {
            let text = entry(reason).describe(at, None);
            assert!(!text.contains("work in"), "not theirs to work on: {text}");
        }
        let inbox = Inbox {
            agent: "codex".into(),
            project: "app".into(),
            tasks: vec![entry(Reason::Assigned)],
            more_tasks: 0,
            messages: Vec::new(),
        };
        let reason = hook_answer::stop_reason(&inbox).unwrap();
        assert!(
            reason.contains(&format!("T-4 to do: fix the parser ({place})")),
            "{reason}"
        );
    }
}
