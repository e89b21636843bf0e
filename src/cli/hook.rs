//! `hook EVENT --client CLIENT`: what an agent client runs at session start, on each prompt
//! and before it stops. It always exits 0 and prints only what the client parses.

use std::io::{ErrorKind, IsTerminal, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use clap::Args;

use baton::client::{Client, EditGuard, HookEvent};
use baton::error::Error;
use baton::hook::{self, Answer};
use baton::session::{ASK_OVER_EVERY, LOOK_AGAIN_EVERY, Push, Pushed};
use baton::store::StoreError;

use super::Context;

mod pre_edit;

/// The most of stdin a hook reads. A client's hook JSON is a few hundred bytes; a prompt
/// pasted whole may be large, but nothing past the `cwd` matters here.
const STDIN_LIMIT: usize = 1024 * 1024;

/// The most of stdin `hook pre-edit` reads: a tool call carries what it writes (a whole
/// file for Write), and the path may come after it. A larger call is not read to its end
/// and is let through, said on stderr.
const EDIT_STDIN_LIMIT: usize = 32 * 1024 * 1024;

/// How long a hook waits for the end of stdin. A client that leaves stdin open has sent all
/// it will send long before this.
const STDIN_DEADLINE: Duration = Duration::from_millis(500);

/// How long after it starts a hook answers, whatever its store does: SPEC section 10 gives
/// it 2 seconds, less what starting and ending the process take. A store that does not
/// answer in time (a database that accepts and then says nothing, a disk that hangs) leaves
/// the client's turn alone, as a hub out of reach does.
const ANSWER_BY: Duration = Duration::from_millis(1800);

#[derive(Debug, Args)]
#[command(
    after_help = "Examples (as a client's settings run it, its JSON on stdin):
  baton --as claude hook prompt --client claude
  baton --as codex hook pre-edit --client codex"
)]
pub struct HookArgs {
    /// When the client runs the hook: session-start, prompt or stop (or the client's own
    /// name for it: SessionStart, UserPromptSubmit, BeforeAgent, Stop, AfterAgent), or
    /// pre-edit, before a tool edits files; pre-commit is git's, from `setup --git`
    pub event: String,
    /// The client running it, whose answer format to use: claude, codex, gemini or opencode
    /// (whose plugin runs it)
    #[arg(long)]
    pub client: Option<String>,
}

pub fn run(context: &Context, args: HookArgs) -> i32 {
    if args.event == super::commit_guard::EVENT {
        return super::commit_guard::run(context);
    }
    if args.event == FOLLOW {
        return run_follow(context, &args);
    }
    if args.event == EditGuard::EVENT {
        return pre_edit::run(context, args.client.as_deref());
    }
    let started = Instant::now();
    // Refused before stdin is read: nothing the client sends could make the hook useful.
    let Ok((event, client)) = event_and_client(&args) else {
        return run_unknown(&args);
    };
    let input = hook::HookInput::parse(&read_client_input(STDIN_LIMIT));
    let desk = context.hook_desk(input.cwd.clone());
    // The desk works on a thread of its own, so that the hook answers by its deadline
    // whatever the store does; one still waiting then is left to the process's exit, which
    // does not wait for it (a change it had not committed is not made).
    let (sender, answered) = mpsc::channel();
    thread::spawn(move || {
        let _ = sender.send(desk.hook(event, input.stop_hook_active));
    });
    let silent = || answer_with(&hook::render(client, event, &Answer::Nothing));
    match answered.recv_timeout(ANSWER_BY.saturating_sub(started.elapsed())) {
        Ok(Ok(answer)) => answer_with(&hook::render(client, event, &answer)),
        // A hub or a store that cannot be reached leaves the client's turn alone (SPEC
        // sections 13 and 16): nothing on stdout, one line on stderr for the client's log.
        Ok(Err(
            error @ (Error::Unreachable { .. } | Error::Store(StoreError::Unreachable { .. })),
        )) => {
            eprintln!("baton hook: {}", baton::text::inline(&error.to_string()));
            silent()
        }
        Ok(Err(error)) => answer_with(&hook::render(client, event, &hook::note(&error))),
        Err(_) => {
            eprintln!(
                "baton hook: no answer from the store within {}s: nothing added",
                ANSWER_BY.as_secs_f64()
            );
            silent()
        }
    }
}

/// The plumbing event baton's opencode plugin starts once: `hook follow --client opencode`.
const FOLLOW: &str = "follow";

/// `hook follow`: while its stdin stays open (the plugin's process lives), announces the
/// agent's live session and prints one JSON line per hand-over to the agent not yet seen
/// (each batch then recorded as seen), for the plugin to prompt its idle session with. It
/// looks when the desk says the project changed (and every few seconds, for leases running
/// out); a hub whose stream breaks is looked at again once it is back, which covers what
/// arrived meanwhile. Ends when stdin closes or stdout does; always exits 0, a problem said
/// in one line on stderr.
fn run_follow(context: &Context, args: &HookArgs) -> i32 {
    let client = args.client.as_deref().and_then(Client::from_name);
    let Some(client) = client.filter(|client| client.plugin().is_some()) else {
        eprintln!("error: hook follow is for baton's opencode plugin: pass --client opencode");
        return 0;
    };
    let over = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&over);
    // The plugin never writes; its stdin closes when the plugin's process ends.
    thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        flag.store(true, Ordering::SeqCst);
    });
    let is_over = || over.load(Ordering::SeqCst);
    let result = (|| -> Result<(), Error> {
        let desk = context.desk();
        let _presence = desk.announce(client.name())?;
        let mut changes = desk.follow()?;
        let mut pushed = Pushed::default();
        let mut pause = FIRST_PAUSE;
        while !is_over() {
            let looked_at = Instant::now();
            let due = match desk.handovers_to_push(&mut pushed) {
                Ok(due) => due,
                // A lock held past the timeout (a long write, a loaded machine) is no
                // reason to end the session's pushes: look again in a moment.
                Err(Error::Store(error)) if error.is_lock_timeout() => {
                    thread::sleep(LOCK_BUSY_PAUSE);
                    continue;
                }
                // The hub is away: looked at again once it is back.
                Err(error @ Error::Unreachable { .. }) => {
                    pause = said_and_paused(&error, pause);
                    continue;
                }
                Err(error) => return Err(error),
            };
            pause = FIRST_PAUSE;
            let mut sent = Vec::new();
            for due in due {
                if !print_push(&due.push) {
                    return Ok(());
                }
                sent.push(due.push);
            }
            // One write for the batch. A failure leaves them unseen on the board and held
            // in `pushed`: the next look records them, and nothing is pushed twice.
            let _ = desk.record_pushed(&mut pushed, &sent);
            // Until the next look: a change, or LOOK_AGAIN_EVERY; the wait is cut in pieces
            // to ask between them whether the plugin is gone.
            while !is_over() {
                let within = LOOK_AGAIN_EVERY
                    .saturating_sub(looked_at.elapsed())
                    .min(ASK_OVER_EVERY);
                if within.is_zero() {
                    break;
                }
                match changes.wait(within) {
                    Ok(false) => {}
                    Ok(true) => break,
                    Err(error) => {
                        pause = said_and_paused(&error, pause);
                        break;
                    }
                }
            }
        }
        Ok(())
    })();
    if let Err(error) = result {
        eprintln!("error: {}", baton::text::inline(&error.to_string()));
    }
    0
}

/// How long `hook follow` waits before it looks again when a lock was held past its timeout.
const LOCK_BUSY_PAUSE: Duration = Duration::from_millis(100);

/// The first pause after the hub could not be reached, doubled while it stays away.
const FIRST_PAUSE: Duration = Duration::from_millis(250);

/// Says on stderr that the hub could not be reached and waits `pause`; the next pause.
fn said_and_paused(error: &Error, pause: Duration) -> Duration {
    eprintln!(
        "baton hook follow: {}",
        baton::text::inline(&error.to_string())
    );
    thread::sleep(pause);
    (pause * 2).min(Duration::from_secs(10))
}

/// Prints one push as a JSON line; false when the plugin stopped reading.
fn print_push(push: &Push) -> bool {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, push)
        .map_err(std::io::Error::from)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Answers with a note when baton cannot start at all (a bad `BATON_HOME` or
/// `BATON_LOCK_TIMEOUT`): the client shows it, and the hook still exits 0.
pub fn refuse(args: &HookArgs, error: &Error) -> i32 {
    if args.event == super::commit_guard::EVENT {
        return super::commit_guard::refuse(error);
    }
    let Ok((event, client)) = event_and_client(args) else {
        // An unknown event or client is said as `run` says it; the note has no format.
        return run_unknown(args);
    };
    let note = Answer::Note(format!(
        "baton hook: {}",
        baton::text::inline(&error.to_string())
    ));
    answer_with(&hook::render(client, event, &note))
}

/// An unknown event or client: one line on stderr, nothing on stdout (which the client
/// would parse), and exit 0, which the client expects.
fn run_unknown(args: &HookArgs) -> i32 {
    if let Err(line) = event_and_client(args) {
        eprintln!(
            "error: {}; this hook does nothing",
            baton::text::inline(&line)
        );
    }
    0
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

/// The event and the client named on the command line, or a line saying which is unknown.
/// Not parsed by clap: a hook must exit 0 whatever it is given, so an unknown name is
/// refused here, after parsing, with one line on stderr.
fn event_and_client(args: &HookArgs) -> Result<(HookEvent, Client), String> {
    let event = HookEvent::from_name(&args.event).ok_or_else(|| {
        format!(
            "unknown hook event {:?}: expected session-start, prompt, stop or pre-edit",
            args.event
        )
    })?;
    let Some(client) = &args.client else {
        return Err("no client: pass --client claude, codex, gemini or opencode".into());
    };
    // Every client runs this: through its shell hooks, or through baton's plugin.
    let client = Client::from_name(client)
        .filter(|client| client.runs_hooks())
        .ok_or_else(|| {
            format!("unknown hook client {client:?}: expected claude, codex, gemini or opencode")
        })?;
    Ok((event, client))
}

/// The client's hook JSON from stdin: up to `limit` bytes, read until the end of stdin, one
/// whole JSON object, or [`STDIN_DEADLINE`], whichever comes first. A client that sends its
/// JSON and keeps stdin open is answered at once; one that sends nothing and keeps it open,
/// after the deadline.
fn read_client_input(limit: usize) -> String {
    let stdin = std::io::stdin();
    // Run by hand from a terminal, there is no client JSON to wait for.
    if stdin.is_terminal() {
        return String::new();
    }
    let (sender, receiver) = mpsc::channel::<Vec<u8>>();
    // A read cannot be given a deadline, so it runs on a thread of its own. If the deadline
    // passes, that thread stays blocked until the process exits, which does not wait for it.
    thread::spawn(move || {
        let mut stdin = stdin.lock();
        let mut chunk = vec![0; 64 * 1024];
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => {
                    if sender.send(chunk[..read].to_vec()).is_err() {
                        break;
                    }
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    });
    let deadline = Instant::now() + STDIN_DEADLINE;
    let mut input = Vec::new();
    // Ends at the deadline, or when the reader ends (end of stdin, or an error).
    while let Ok(chunk) = receiver.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        let room = limit - input.len();
        input.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if input.len() == limit || is_whole_object(&input) {
            break;
        }
    }
    String::from_utf8_lossy(&input).into_owned()
}

/// Whether `input` is one whole JSON object. Parsed only when it ends in `}`, so a large
/// input arriving in many small reads is not parsed again after each.
fn is_whole_object(input: &[u8]) -> bool {
    input.trim_ascii_end().ends_with(b"}")
        && serde_json::from_slice::<serde::de::IgnoredAny>(input).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_object_ends_the_read() {
        assert!(is_whole_object(b"{\"cwd\": \"/src\"}\n"));
        assert!(!is_whole_object(b"{\"cwd\": "));
        assert!(!is_whole_object(b"{\"a\": {\"b\": 1}"));
        assert!(!is_whole_object(b"[1, 2]"));
        assert!(!is_whole_object(b""));
    }
}
