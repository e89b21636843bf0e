//! Client hook events in, client hook answers out (SPEC section 9).
//!
//! Claude Code, Codex and Gemini CLI run `baton hook EVENT --client CLIENT` at the start of
//! a session, on each prompt and when the agent is about to stop. The hook puts the agent's
//! inbox in front of it, and keeps it working while tasks wait for it. What it says is the
//! desk's ([`crate::session::Desk::hook`]); here is what the client said ([`HookInput`]) and
//! the answer in each client's format ([`render`]). A hook must never break the client's
//! turn: an error becomes a short note in the answer ([`note`]), in the shape the client
//! parses.

pub mod edit;

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::client::{Client, HookEvent};

use crate::session::hook_answer::ASCII_ANSWERS;
pub use crate::session::hook_answer::{
    ANSWER_LIMIT, Answer, LOCK_TIMEOUT, TEXT_LIMIT, context, from_hub, hub_for_hook, note,
    stop_reason,
};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::hook_answer::Budget;

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
