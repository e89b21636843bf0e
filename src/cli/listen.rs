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
at most one run at a time, again while more work waits (3 runs in a row at most), with
BATON_URL and BATON_TOKEN in its environment and its output in wake/<agent>.log of this
machine's home. It reconnects by itself, and after a gap runs for what arrived meanwhile.
Without --wake it runs the wake command of the agent's record on this machine, if any, and
otherwise says what arrived.")]
pub struct ListenArgs {
    /// Run this command when work arrives: everything after `--`, one argument per word
    #[arg(long, requires = "command")]
    pub wake: bool,
    /// The wake command, after `--`; the prompt is appended as its last argument
    #[arg(last = true, value_name = "CMD ARGS", requires = "wake")]
    pub command: Vec<String>,
}

pub fn run(context: &Context, hub: &Hub, args: ListenArgs) -> Result<i32, Error> {
    baton::registry::check_wake_command(&args.command)?;
    let say = |line: &str| eprintln!("baton listen: {}", baton::text::inline(line));
    let wake = args.wake.then_some(args.command);
    // A service started before its hub (at boot, say) waits for it rather than exiting.
    let mut backoff = Duration::from_secs(1);
    let mut said = false;
    let listener = loop {
        match Listener::new(hub, &context.hub.home, wake.clone(), &say) {
            Ok(listener) => break listener,
            Err(error @ Error::Unreachable { .. }) => {
                if !said {
                    say(&format!("{error}; trying again"));
                    said = true;
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(30));
            }
            Err(error) => return Err(error),
        }
    };
    listener.run()?;
    Ok(0)
}
