//! What a client's hook says (SPEC sections 9 and 10), before a face puts it in the
//! client's format (the `hook` module's `render`): the caller's inbox as context at the start of
//! a session and on a prompt, a reason to go on at stop, each within the hook's size
//! whatever the board holds. The same words on this machine and, for a remote agent, from
//! the hub that works them out.

use std::fmt::Write;

use super::{Hub, Inbox, Session};
use crate::client::HookEvent;
use crate::error::{Error, Result};
use crate::mail::{BROADCAST, Message, MessageType};
use crate::plural;
use crate::project::Project;
use crate::text;
use crate::time::Timestamp;

/// What the hook has to say, before it is put in the client's format. A hub serving a
/// remote agent's hook sends it as `{"answer": "context", "text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "answer", content = "text", rename_all = "snake_case")]
pub enum Answer {
    /// Nothing waits: the client goes on as if there were no hook.
    Nothing,
    /// Text to add to the agent's context.
    Context(String),
    /// Keep the agent working, for this reason (only at `stop`).
    KeepWorking(String),
    /// Something went wrong; a short line for the user.
    Note(String),
}

/// How long a hook tries a busy lock before it answers without it (the inbox shown, nothing
/// marked). A hook may meet up to four locks (project, registry, board, mail) and has two
/// seconds in all (SPEC section 10), stdin included; a writer holds a lock for milliseconds.
pub const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// `hub` as a hook uses it, on this machine or answering a remote agent's hook on the hub:
/// a busy lock is tried for at most [`LOCK_TIMEOUT`], silently.
pub fn hub_for_hook(hub: &Hub) -> Hub {
    hub.with_lock(crate::file::lock::LockPolicy {
        timeout: hub.lock.timeout.min(LOCK_TIMEOUT),
        on_wait: |_| {},
    })
}

/// An error as the short note a hook answers with instead of failing its client's turn.
pub fn note(error: &Error) -> Answer {
    let error = error.to_string();
    let (error, _) = text::cut(&error, TEXT_LIMIT / 2);
    Answer::Note(format!("baton hook: {}", text::inline(error)))
}

impl Session {
    /// What the hook answers in this session: the inbox in context at session start and on
    /// a prompt (its messages then count as read), a reason to go on at stop. A stop whose
    /// client says a stop hook already made the agent go on lets it stop, so it cannot
    /// loop. A hub serving a remote agent's hook answers with this too.
    pub fn hook_answer(&self, event: HookEvent, stop_hook_active: bool) -> Result<Answer> {
        Ok(match event {
            HookEvent::Stop if stop_hook_active => Answer::Nothing,
            HookEvent::SessionStart | HookEvent::Prompt => {
                let inbox = self.inbox_preview_unless_busy(true)?;
                context(&inbox, &self.project, self.now).map_or(Answer::Nothing, Answer::Context)
            }
            HookEvent::Stop => {
                let inbox = self.inbox_preview_unless_busy(false)?;
                stop_reason(&inbox).map_or(Answer::Nothing, Answer::KeepWorking)
            }
        })
    }
}

/// Whether answers are written in ASCII alone, every other character as a `\uXXXX` escape.
/// On Windows, Claude Code and Gemini CLI run hooks through PowerShell, which reads a
/// program's output in the console's code page and writes it out again: UTF-8 would not
/// reach the client whole. The JSON means the same either way.
pub const ASCII_ANSWERS: bool = cfg!(windows);

/// The reminder every context ends with: an agent's words in its own session reach nobody.
const REMINDER: &str = "Your plain replies here are not seen by your teammates: they hear from \
     you only through baton (the task commands above, `baton msg --to NAME TEXT`, or baton's \
     MCP tools).";

/// The most of one task's text (or one message's) a hook shows, in characters (SPEC
/// section 10): the rest is a `baton show` away.
pub const TEXT_LIMIT: usize = 2_000;
/// The most a hook's answer holds, in bytes as the client receives it.
pub const ANSWER_LIMIT: usize = 16 * 1024;
/// What the JSON around the context and the closing lines may take of [`ANSWER_LIMIT`].
pub const ANSWER_RESERVE: usize = 1024;

/// What the agent should know at the start of a session or a prompt: who it is, where, each
/// task whose turn is its own with all it needs to act, and its unread messages. `None` when
/// nothing waits. Whatever the board holds, the text stays under [`ANSWER_LIMIT`] once put
/// in the client's JSON: each task's and message's text is cut at [`TEXT_LIMIT`]
/// characters, and the tasks and messages that do not fit are counted instead of shown.
pub fn context(inbox: &Inbox, project: &Project, now: Timestamp) -> Option<String> {
    if inbox.is_empty() {
        return None;
    }
    let mut text = Budget::new(ANSWER_LIMIT - ANSWER_RESERVE);
    text.push(&format!(
        "baton: you are {} in project {}",
        inbox.agent, project.id
    ));
    if let Some(workspace) = &project.workspace {
        text.push(&format!(
            " (workspace {})",
            text::inline(&workspace.display().to_string())
        ));
    }
    text.push(".\n");
    if let Some(goal) = project
        .goal
        .as_deref()
        .filter(|goal| !goal.trim().is_empty())
    {
        let (goal, left) = text::cut(goal.trim(), TEXT_LIMIT / 4);
        let more = if left > 0 { "…" } else { "" };
        text.push(&format!("Project goal: {}{more}\n", text::inline(goal)));
    }
    if !inbox.tasks.is_empty() {
        text.push(&format!(
            "\n{} waiting for you:\n",
            plural::count(inbox.task_count(), "task")
        ));
        let mut unshown = inbox.more_tasks;
        for entry in &inbox.tasks {
            let piece = format!("\n{}", entry.describe(now, Some(TEXT_LIMIT)));
            if unshown > inbox.more_tasks || !text.try_push(&piece) {
                unshown += 1;
            }
        }
        if unshown > 0 {
            text.push(&format!(
                "\n…and {unshown} more; `baton inbox` lists every one.\n"
            ));
        }
    }
    if !inbox.messages.is_empty() {
        text.push(&format!(
            "\n{}:\n",
            plural::count(inbox.messages.len(), "unread message")
        ));
        let mut unshown = 0;
        for message in &inbox.messages {
            let piece = format!("\n{}", message_text(message));
            if unshown > 0 || !text.try_push(&piece) {
                unshown += 1;
            }
        }
        if unshown > 0 {
            text.push(&format!(
                "\n…and {unshown} more; `baton messages` shows them.\n"
            ));
        }
    }
    text.push(&format!("\n{REMINDER}"));
    Some(text.text)
}

/// Text that grows while it fits in a number of bytes, counted as JSON will carry it.
pub struct Budget {
    pub text: String,
    left: usize,
}

impl Budget {
    pub fn new(bytes: usize) -> Self {
        Budget {
            text: String::new(),
            left: bytes,
        }
    }

    /// Adds `piece` whatever its size: for baton's own short lines, which the reserve covers.
    pub fn push(&mut self, piece: &str) {
        self.left = self.left.saturating_sub(json_size(piece));
        self.text.push_str(piece);
    }

    /// Adds `piece` if it fits.
    pub fn try_push(&mut self, piece: &str) -> bool {
        let size = json_size(piece);
        if size > self.left {
            return false;
        }
        self.left -= size;
        self.text.push_str(piece);
        true
    }
}

/// The bytes `text` takes inside a JSON string, as the hook's answer line writes it.
fn json_size(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\t' | '\r' | '\u{8}' | '\u{c}' => 2,
            c if u32::from(c) < 0x20 => 6,
            c if ASCII_ANSWERS && !c.is_ascii() => 6 * c.len_utf16(),
            c => c.len_utf8(),
        })
        .sum()
}

/// One unread message, its words cut at [`TEXT_LIMIT`] characters and framed.
fn message_text(message: &Message) -> String {
    let mut text = format!("#{} from {}", message.seq, message.from);
    if message.to == BROADCAST {
        text.push_str(" to everyone");
    }
    if message.kind != MessageType::Text {
        let _ = write!(text, " ({})", message.kind);
    }
    let body = message.body.trim();
    let (kept, left) = text::cut(body, TEXT_LIMIT);
    let more = if left > 0 {
        format!("… ({left} more: baton messages)")
    } else {
        String::new()
    };
    let body = format!("{kept}{more}");
    if (message.summary.is_empty() || message.summary == message.body.trim())
        && !text::is_multiline(&body)
    {
        let _ = writeln!(text, ": {}", text::inline(&body));
        return text;
    }
    let (summary, _) = text::cut(&message.summary, TEXT_LIMIT / 10);
    let _ = write!(
        text,
        ": {}\n{}",
        text::inline(summary),
        text::framed(&body, "  | ")
    );
    text
}

/// Why the agent should not stop yet: the tasks whose turn is its own. `None` lets it stop.
pub fn stop_reason(inbox: &Inbox) -> Option<String> {
    if inbox.tasks.is_empty() {
        return None;
    }
    let mut items: Vec<String> = inbox
        .tasks
        .iter()
        .map(|entry| {
            let (subject, left) = text::cut(&entry.task.subject, TEXT_LIMIT / 20);
            let place = entry
                .where_to_work()
                .map_or_else(String::new, |place| format!(" ({place})"));
            format!(
                "{} {}: {}{}{place}",
                entry.task.id,
                entry.reason.what_to_do(),
                text::inline(subject),
                if left > 0 { "…" } else { "" }
            )
        })
        .collect();
    if inbox.more_tasks > 0 {
        items.push(format!("and {} more", inbox.more_tasks));
    }
    Some(format!(
        "baton: {} still waiting for {} in project {}: {}. Act on {} before you stop \
         (`baton inbox` shows everything needed); your teammates hear from you only through baton.",
        plural::count_either(inbox.task_count(), "task is", "tasks are"),
        inbox.agent,
        inbox.project,
        items.join("; "),
        if inbox.task_count() == 1 {
            "it"
        } else {
            "them"
        },
    ))
}

/// A hub's answer to a remote agent's hook (SPEC section 13), made what a hook answer is on
/// this machine (SPEC section 10) whatever the hub sent: every control character but
/// newline and tab and every bidirectional override shown as an escape, and the text cut
/// to fit the answer's [`ANSWER_LIMIT`], saying so. A hub that works sends nothing either
/// changes; one that does not (another server, a hostile one) cannot write to the client's
/// terminal, or fill its context.
pub fn from_hub(answer: Answer) -> Answer {
    let bounded = |text: String| {
        let text = text::escape_controls(&text).into_owned();
        let mut budget = Budget::new(ANSWER_LIMIT - ANSWER_RESERVE);
        if budget.try_push(&text) {
            return budget.text;
        }
        for (at, c) in text.char_indices() {
            if !budget.try_push(c.encode_utf8(&mut [0; 4])) {
                let left = text[at..].chars().count();
                budget.push(&format!(
                    "… ({left} more characters the hub sent are left out: a hook's answer is \
                     at most 16 KiB)"
                ));
                break;
            }
        }
        budget.text
    };
    match answer {
        Answer::Nothing => Answer::Nothing,
        Answer::Context(text) => Answer::Context(bounded(text)),
        Answer::KeepWorking(text) => Answer::KeepWorking(bounded(text)),
        Answer::Note(text) => Answer::Note(bounded(text)),
    }
}
