//! `hook EVENT --client CLIENT`: what an agent client runs at session start, on each prompt
//! and before it stops. It always exits 0 and prints only what the client parses.

use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use clap::{Args, ValueEnum};

use baton::error::Error;
use baton::hook::{self, Answer, Client, HookEvent};
use baton::session::Hub;
use baton::store::lock::LockPolicy;

use super::Context;

/// A hook waits for a busy lock at most this long: the client is waiting on it.
const HOOK_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Args)]
pub struct HookArgs {
    /// When the client runs the hook
    #[arg(value_enum)]
    pub event: EventArg,
    /// The client running it, whose answer format to use
    #[arg(long, value_enum)]
    pub client: ClientArg,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EventArg {
    /// At the start of a session: the inbox joins the context
    #[value(alias = "SessionStart")]
    SessionStart,
    /// On each prompt: the inbox joins the context
    #[value(alias = "UserPromptSubmit", alias = "BeforeAgent")]
    Prompt,
    /// Before the agent stops: it goes on while tasks wait for it
    #[value(alias = "Stop", alias = "AfterAgent")]
    Stop,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClientArg {
    Claude,
    Codex,
    Gemini,
}

pub fn run(context: &Context, args: HookArgs) -> i32 {
    let (event, client) = event_and_client(&args);
    // Run by hand from a terminal, there is no client JSON to wait for.
    let mut stdin = String::new();
    if !std::io::stdin().is_terminal() {
        let _ = std::io::stdin().read_to_string(&mut stdin);
    }
    let hub = Hub::new(
        context.hub.home.clone(),
        LockPolicy {
            timeout: context.hub.lock.timeout.min(HOOK_LOCK_TIMEOUT),
            on_wait: |_| {},
        },
    );
    let agent = context.agent();
    let answer = hook::run(
        hub,
        agent.as_deref(),
        context.global.project.as_deref(),
        event,
        client,
        &stdin,
    );
    answer_with(&answer)
}

/// Answers with a note when baton cannot start at all (a bad `BATON_HOME` or
/// `BATON_LOCK_TIMEOUT`): the client shows it, and the hook still exits 0.
pub fn refuse(args: &HookArgs, error: &Error) -> i32 {
    let (event, client) = event_and_client(args);
    let note = Answer::Note(format!("baton hook: {error}"));
    answer_with(&hook::render(client, event, &note))
}

fn event_and_client(args: &HookArgs) -> (HookEvent, Client) {
    let event = match args.event {
        EventArg::SessionStart => HookEvent::SessionStart,
        EventArg::Prompt => HookEvent::Prompt,
        EventArg::Stop => HookEvent::Stop,
    };
    let client = match args.client {
        ClientArg::Claude => Client::Claude,
        ClientArg::Codex => Client::Codex,
        ClientArg::Gemini => Client::Gemini,
    };
    (event, client)
}

/// Prints the answer; returns the hook's exit code, always 0.
fn answer_with(answer: &str) -> i32 {
    // Nothing to be done if the client stopped listening; the exit code must stay 0.
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(answer.as_bytes())
        .and_then(|()| stdout.flush());
    0
}
