//! Client hook events in, client hook answers out (SPEC section 9).
//!
//! Claude Code, Codex and Gemini CLI run `baton hook EVENT --client CLIENT` at the start of
//! a session, on each prompt and when the agent is about to stop. The hook puts the agent's
//! inbox in front of it, and keeps it working while tasks wait for it. A hook must never
//! break the client's turn, so [`run`] cannot fail: an error becomes a short note in the
//! answer, in the shape the client parses.

use std::fmt::Write;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::client::{Client, HookEvent};
use crate::error::{Error, Result};
use crate::mail::{BROADCAST, Message, MessageType};
use crate::plural;
use crate::project::Project;
use crate::session::{Hub, Inbox, Request, Session};
use crate::text;
use crate::time::Timestamp;

/// What the client said on stdin. Every field may be missing: a hook run by hand, or by a
/// client version that sends less, still answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookInput {
    /// The directory the agent works in; it decides the project.
    pub cwd: Option<PathBuf>,
    /// Set by the client when the agent is already going on because a stop hook said so.
    pub stop_hook_active: bool,
}

impl HookInput {
    /// Reads the client's JSON, taking what it understands and ignoring the rest (empty or
    /// garbled input reads as no input at all).
    pub fn parse(text: &str) -> HookInput {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return HookInput::default();
        };
        HookInput {
            cwd: value["cwd"]
                .as_str()
                .filter(|cwd| !cwd.trim().is_empty())
                .map(PathBuf::from),
            stop_hook_active: value["stop_hook_active"].as_bool().unwrap_or(false),
        }
    }
}

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

/// Runs the whole hook: finds the project (from the client's `cwd` unless `project` is
/// given), reads the inbox, and returns what to print on stdout, which may be empty.
/// At session start and on a prompt, the messages shown count as read, unless the mail
/// lock stays busy past the hub's lock policy: then they are shown and left unread.
pub fn run(
    hub: Hub,
    agent: Option<&str>,
    project: Option<&str>,
    event: HookEvent,
    client: Client,
    stdin: &str,
) -> String {
    let input = HookInput::parse(stdin);
    let answer = answer(hub, agent, project, event, &input).unwrap_or_else(|error| note(&error));
    render(client, event, &answer)
}

/// How long a hook tries a busy lock before it answers without it (the inbox shown, nothing
/// marked). A hook may meet up to four locks (project, registry, board, mail) and has two
/// seconds in all (SPEC section 10), stdin included; a writer holds a lock for milliseconds.
pub const LOCK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// `hub` as a hook uses it, on this machine or answering a remote agent's hook on the hub:
/// a busy lock is tried for at most [`LOCK_TIMEOUT`], silently.
pub fn hub_for_hook(hub: &Hub) -> Hub {
    Hub {
        lock: crate::store::lock::LockPolicy {
            timeout: hub.lock.timeout.min(LOCK_TIMEOUT),
            on_wait: |_| {},
        },
        ..hub.clone()
    }
}

/// An error as the short note a hook answers with instead of failing its client's turn.
pub fn note(error: &Error) -> Answer {
    let error = error.to_string();
    let (error, _) = text::cut(&error, TEXT_LIMIT / 2);
    Answer::Note(format!("baton hook: {}", text::inline(error)))
}

fn answer(
    hub: Hub,
    agent: Option<&str>,
    project: Option<&str>,
    event: HookEvent,
    input: &HookInput,
) -> Result<Answer> {
    if event == HookEvent::Stop && input.stop_hook_active {
        // The agent already went on once for its inbox; stopping now cannot loop.
        return Ok(Answer::Nothing);
    }
    // A directory the client names but that does not exist would leave the project to a
    // guess; with --project, it is still compared as a path with the project's workspace.
    let cwd = input.cwd.as_deref();
    if let Some(missing) = cwd.filter(|cwd| !cwd.is_dir())
        && project.is_none()
    {
        let problem = match missing.exists() {
            true => "is not a directory",
            false => "does not exist",
        };
        return Err(Error::invalid(format!(
            "the client's working directory {} {problem}",
            missing.display()
        )));
    }
    let session = Session::open_unless_busy(
        hub,
        Request {
            agent,
            project,
            cwd,
        },
    )?;
    answer_in(&session, event)
}

/// What the hook answers in an open session: the inbox in context at session start and on
/// a prompt (its messages then count as read), a reason to go on at stop. The caller has
/// already let a stop that is active pass. A hub serving a remote agent's hook calls this.
pub fn answer_in(session: &Session, event: HookEvent) -> Result<Answer> {
    Ok(match event {
        HookEvent::SessionStart | HookEvent::Prompt => {
            let inbox = session.inbox_preview_unless_busy(true)?;
            context(&inbox, &session.project, session.now).map_or(Answer::Nothing, Answer::Context)
        }
        HookEvent::Stop => {
            let inbox = session.inbox_preview_unless_busy(false)?;
            stop_reason(&inbox).map_or(Answer::Nothing, Answer::KeepWorking)
        }
    })
}

/// The answer as `client` expects it on stdout for `event`, in the shape its row of the
/// client table gives. A client whose hooks are baton's plugin takes baton's own shape
/// ([`render_for_plugin`]); one without hooks never runs one, so has nothing printed.
pub fn render(client: Client, event: HookEvent, answer: &Answer) -> String {
    let Some(hooks) = client.hooks() else {
        return match client.plugin() {
            Some(_) => render_for_plugin(answer),
            None => String::new(),
        };
    };
    let value = match answer {
        Answer::Nothing => return hooks.nothing_to_add.to_string(),
        Answer::Context(text) => json!({
            "hookSpecificOutput": {
                "hookEventName": hooks.event_name(event),
                "additionalContext": text,
            }
        }),
        Answer::KeepWorking(reason) => json!({
            "decision": hooks.keep_working_decision,
            "reason": reason,
        }),
        Answer::Note(text) => json!({ "systemMessage": text }),
    };
    answer_line(&value)
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

/// The answer in the shape baton's own plugins read: one JSON object on a line, with
/// `context` (text for the agent's context), `prompt` (one more turn, with this text, before
/// the session rests) or `note` (a line for the user); nothing at all when nothing waits.
fn render_for_plugin(answer: &Answer) -> String {
    let value = match answer {
        Answer::Nothing => return String::new(),
        Answer::Context(text) => json!({ "context": text }),
        Answer::KeepWorking(reason) => json!({ "prompt": reason }),
        Answer::Note(text) => json!({ "note": text }),
    };
    answer_line(&value)
}

/// Whether answers are written in ASCII alone, every other character as a `\uXXXX` escape.
/// On Windows, Claude Code and Gemini CLI run hooks through PowerShell, which reads a
/// program's output in the console's code page and writes it out again: UTF-8 would not
/// reach the client whole. The JSON means the same either way.
const ASCII_ANSWERS: bool = cfg!(windows);

/// `value` as one line of JSON, in ASCII where [`ASCII_ANSWERS`] says so.
fn answer_line(value: &Value) -> String {
    let json = value.to_string();
    let mut line = if ASCII_ANSWERS {
        ascii_json(&json)
    } else {
        json
    };
    line.push('\n');
    line
}

/// `json` with each character beyond ASCII written as JSON's `\uXXXX` escapes (two for one
/// beyond the Basic Multilingual Plane). Outside its strings JSON holds only ASCII, so
/// every such character is inside a string, where the escape means the same.
fn ascii_json(json: &str) -> String {
    let mut ascii = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            ascii.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                ascii.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    ascii
}

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
const ANSWER_RESERVE: usize = 1024;

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
struct Budget {
    text: String,
    left: usize,
}

impl Budget {
    fn new(bytes: usize) -> Self {
        Budget {
            text: String::new(),
            left: bytes,
        }
    }

    /// Adds `piece` whatever its size: for baton's own short lines, which the reserve covers.
    fn push(&mut self, piece: &str) {
        self.left = self.left.saturating_sub(json_size(piece));
        self.text.push_str(piece);
    }

    /// Adds `piece` if it fits.
    fn try_push(&mut self, piece: &str) -> bool {
        let size = json_size(piece);
        if size > self.left {
            return false;
        }
        self.left -= size;
        self.text.push_str(piece);
        true
    }
}

/// The bytes `text` takes inside a JSON string, as [`answer_line`] writes it.
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
            format!(
                "{} {}: {}{}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_read_tolerantly() {
        assert_eq!(HookInput::parse(""), HookInput::default());
        assert_eq!(HookInput::parse("not json {"), HookInput::default());
        assert_eq!(HookInput::parse("[1, 2]"), HookInput::default());
        let input = HookInput::parse(
            r#"{"session_id":"x","cwd":"/src/api","hook_event_name":"Stop","stop_hook_active":true}"#,
        );
        assert_eq!(input.cwd, Some(PathBuf::from("/src/api")));
        assert!(input.stop_hook_active);
        let odd = HookInput::parse(r#"{"cwd": 7, "stop_hook_active": "yes"}"#);
        assert_eq!(odd, HookInput::default(), "wrong types count as missing");
    }

    #[test]
    fn ascii_json_means_the_same_json() {
        let value = json!({"additionalContext": "é 中 😀 \u{202e} \"q\" \\ end"});
        let ascii = ascii_json(&value.to_string());
        assert!(ascii.is_ascii(), "{ascii}");
        assert!(
            ascii.contains(r"\ud83d\ude00"),
            "two escapes beyond the BMP: {ascii}"
        );
        assert_eq!(serde_json::from_str::<Value>(&ascii).unwrap(), value);
    }

    #[test]
    fn the_budget_counts_what_the_answer_line_takes() {
        let mut budget = Budget::new(4_000);
        while budget.try_push("é中😀\"\n a") {}
        let line = render(
            Client::Claude,
            HookEvent::Prompt,
            &Answer::Context(budget.text.clone()),
        );
        let wrapping = render(
            Client::Claude,
            HookEvent::Prompt,
            &Answer::Context(String::new()),
        );
        let taken = line.len() - wrapping.len();
        assert!(taken <= 4_000, "{taken} bytes for a budget of 4000");
        assert!(taken > 4_000 - 40, "{taken} bytes: the budget undercounts");
        // ASCII on Windows, where PowerShell carries the answer; UTF-8 elsewhere.
        assert_eq!(line.is_ascii(), cfg!(windows));
    }

    #[test]
    fn answers_take_each_clients_shape() {
        let context = Answer::Context("hello".into());
        for client in [Client::Claude, Client::Codex] {
            assert_eq!(render(client, HookEvent::Stop, &Answer::Nothing), "");
            let value: Value =
                serde_json::from_str(&render(client, HookEvent::Prompt, &context)).unwrap();
            assert_eq!(
                value["hookSpecificOutput"]["hookEventName"],
                "UserPromptSubmit"
            );
            assert_eq!(value["hookSpecificOutput"]["additionalContext"], "hello");
            let stop = render(client, HookEvent::Stop, &Answer::KeepWorking("T-1".into()));
            assert_eq!(
                serde_json::from_str::<Value>(&stop).unwrap(),
                json!({"decision": "block", "reason": "T-1"})
            );
        }
        assert_eq!(
            render(Client::Gemini, HookEvent::Stop, &Answer::Nothing),
            "{}\n"
        );
        let value: Value =
            serde_json::from_str(&render(Client::Gemini, HookEvent::Prompt, &context)).unwrap();
        assert_eq!(value["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
        let stop = render(
            Client::Gemini,
            HookEvent::Stop,
            &Answer::KeepWorking("T-1".into()),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&stop).unwrap(),
            json!({"decision": "deny", "reason": "T-1"})
        );
        assert_eq!(
            render(Client::Opencode, HookEvent::Stop, &Answer::Nothing),
            ""
        );
        let cases = [
            (
                HookEvent::SessionStart,
                context.clone(),
                json!({"context": "hello"}),
            ),
            (HookEvent::Prompt, context, json!({"context": "hello"})),
            (
                HookEvent::Stop,
                Answer::KeepWorking("T-1".into()),
                json!({"prompt": "T-1"}),
            ),
            (
                HookEvent::Prompt,
                Answer::Note("oops".into()),
                json!({"note": "oops"}),
            ),
        ];
        for (event, answer, expected) in cases {
            let line = render(Client::Opencode, event, &answer);
            assert!(
                line.ends_with('\n') && line.lines().count() == 1,
                "{line:?}"
            );
            assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), expected);
        }
        for client in [Client::Claude, Client::Codex, Client::Gemini] {
            let note = render(
                client,
                HookEvent::SessionStart,
                &Answer::Note("oops".into()),
            );
            assert_eq!(
                serde_json::from_str::<Value>(&note).unwrap(),
                json!({"systemMessage": "oops"})
            );
        }
    }
}
