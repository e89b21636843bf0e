//! Message commands: msg, messages.

use clap::{Args, Subcommand};

use baton::error::Error;
use baton::mail::Marking;
use baton::time;

use super::{Context, board, output, render};

#[derive(Debug, Subcommand)]
pub enum MessagesCommand {
    /// Send a message to an agent, or to everyone else with --to @all
    #[command(after_help = "Examples:
  baton msg --to codex 'the benchmarks are in bench/'
  baton msg --to @all --type shutdown_request 'wrapping up at six'")]
    Msg(MsgArgs),
    /// Your unread messages (marks them read); --all for every one you sent or received
    #[command(after_help = "Example: baton --as codex messages --peek")]
    Messages(MessagesArgs),
}

#[derive(Debug, Args)]
pub struct MsgArgs {
    /// The agent to write to, or @all for every agent but you
    #[arg(long, value_name = "NAME|@all")]
    pub to: String,
    /// The words (`-` reads them from stdin)
    #[arg(required = true, num_args = 1.., value_name = "TEXT")]
    pub text: Vec<String>,
    /// text, shutdown_request, shutdown_response, plan_approval_request or
    /// plan_approval_response (the coordinator's)
    #[arg(long = "type", value_name = "TYPE", default_value = "text")]
    pub kind: String,
    /// One line for lists (default: the first line of the text)
    #[arg(long, value_name = "LINE")]
    pub summary: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct MessagesArgs {
    /// Every message you sent or received, read or not
    #[arg(long)]
    pub all: bool,
    /// Look without marking messages read
    #[arg(long)]
    pub peek: bool,
}

pub fn run(context: &Context, command: MessagesCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    let desk = context.desk();
    match command {
        MessagesCommand::Msg(args) => {
            let kind = args.kind.parse().map_err(Error::invalid)?;
            let text = board::words(Some(args.text.join(" ")))?;
            let sent = desk.message(&args.to, &text, kind, args.summary.as_deref())?;
            output::emit(as_json, &sent, render::sent);
            super::wake::report(&sent.woken);
        }
        MessagesCommand::Messages(args) => {
            let marking = match args.peek {
                true => Marking::Leave,
                false => Marking::All,
            };
            let mail = desk.messages(args.all, marking)?;
            output::emit(as_json, &mail, |mail| render::mail(mail, time::now()));
        }
    }
    Ok(0)
}
