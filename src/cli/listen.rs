//! `baton listen [--wake -- CMD ARGS…]`: on an agent's machine, wakes the agent when work
//! for it arrives at the hub at `BATON_URL` (see [`baton::remote::listen`]).

use std::time::Duration;

use clap::Args;

use baton::error::Error;
use baton::remote::Hub;
use baton::remote::listen::Listener;

use super::Context;

#[derive(Debug, Args)]
#[command(after_help = "\
Example, on the machine where codex runs:
  export BATON_URL=http://buildbox:7878 BATON_TOKEN=…   # from `baton token add codex` there
                                         # (and `baton serve --allow-host buildbox` there)
  baton listen --wake -- codex exec --skip-git-repo-check -s workspace-write --

When a task is handed to the token's agent, or a message arrives for it, the command runs
with a prompt appended (in the directory `baton project map` gives the project, else here),
at most one run at a time, again while more work waits (3 runs in a row, then a pause until
the next change on the hub or half a minute), with BATON_URL and BATON_TOKEN in its
environment and its output in wake/<agent>.log of this machine's home. While it runs, the
hub tells senders that the agent's listener takes their work; it renews none of the agent's
leases (only the agent's own commands do), so work a crashed agent claimed stalls on time.
It reconnects by itself, saying so (with several hubs in BATON_URL, comma-separated, to the
next that answers), and after a gap runs for what arrived meanwhile.
Without --wake it runs the wake command of the agent's record on this machine, if any, and
otherwise says what arrived. Ctrl-C or SIGTERM stops it at once; a run going on is left to
finish.")]
pub struct ListenArgs {
    /// Run this command when work arrives: everything after `--`, one argument per word
    #[arg(long, requires = "command")]
    pub wake: bool,
    /// The wake command, after `--`; the prompt is appended as its last argument
    #[arg(last = true, value_name = "CMD ARGS", requires = "wake")]
    pub command: Vec<String>,
}

pub fn run(context: &Context, hub: &Hub, args: ListenArgs) -> Result<i32, Error> {
    // First, before anything is opened: the wake runs are this process's children, and
    // must hold nothing of whoever started it (SPEC section 8).
    baton::process::close_inherited();
    baton::registry::check_wake_command(&args.command)?;
    let say = |line: &str| eprintln!("baton listen: {}", baton::text::inline(line));
    stop_when_asked();
    let wake = args.wake.then_some(args.command);
    // A service started before its hub (at boot, say) waits for it rather than exiting.
    let mut backoff = Duration::from_secs(1);
    let listener = loop {
        match Listener::new(
            hub,
            &*context.hub.store,
            &context.hub.home,
            wake.clone(),
            &say,
        ) {
            Ok(listener) => break listener,
            Err(error @ Error::Unreachable { .. }) => {
                say(&format!("{error}; trying again in {}s", backoff.as_secs()));
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
            Err(error) => return Err(error),
        }
    };
    listener.run()?;
    Ok(0)
}

/// Ends the process at once on SIGTERM, SIGINT or SIGHUP (Ctrl-C, a service manager
/// stopping it), saying so on stderr. Nothing of listen's needs finishing: the lock it holds
/// goes with the process, the hub notices the stream close, and a wake run going on is in a
/// session of its own and finishes by itself. tokio's signal handling, because a handler of
/// its own would have to be `unsafe`; in place when this returns.
fn stop_when_asked() {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let asked = {
        let _inside = runtime.enter();
        asked_to_stop()
    };
    let Ok(asked) = asked else {
        return;
    };
    std::thread::spawn(move || {
        let signal = runtime.block_on(asked);
        eprintln!("baton listen: stopping ({signal}); a wake run going on is left to finish");
        std::process::exit(0);
    });
}

/// What completes, with the signal's name, when the process is asked to end.
#[cfg(unix)]
fn asked_to_stop() -> std::io::Result<impl Future<Output = &'static str> + Send> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut hang_up = signal(SignalKind::hangup())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
            _ = hang_up.recv() => "SIGHUP",
        }
    })
}

#[cfg(not(unix))]
fn asked_to_stop() -> std::io::Result<impl Future<Output = &'static str> + Send> {
    let interrupt = tokio::signal::ctrl_c();
    Ok(async move {
        let _ = interrupt.await;
        "Ctrl-C"
    })
}
