//! Alert commands: alert add/list/rm/test, and the hidden sender baton starts detached.

use std::io::Write;

use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use baton::alert::{self, Format, Kind, NewAlert, queue};
use baton::error::Error;
use baton::process;
use baton::text::inline;
use baton::time::{self, Timestamp};

use super::{Context, output};

const ALERT_ABOUT: &str = "\
Post work that reaches a human to a URL of theirs: a JSON webhook, ntfy, or a Slack-style
incoming webhook (Slack, Mattermost, Discord's /slack), so they hear wherever they are.

An alert goes out when a change hands work to the project's humans (`baton coordinator
--human NAME`), or to the one agent --for names. Kinds (--on, all by default):
  task      a task handed to them to do (sent, sent back with changes, or its dependency
            ended so it can never complete)
  question  an assignee asked them a question (input_required)
  review    an assignee asked them for a review (review_requested)
  failed    a task they sent failed
  stalled   a task they sent stalled: its assignee's lease ran out (found by the next
            change in the project that hands work over; no process watches the clock)
  message   a message to them, @all included

Formats:
  json   POST {project, task, kind, subject, from, to, url}, with
         X-Baton-Signature: sha256=HEX, the HMAC-SHA256 of the body under the secret that
         `alert add` prints once. Check it before trusting the body.
  ntfy   POST to a topic URL with Title, Priority, Tags and Click headers and a text body.
  slack  POST {\"text\": …}, with `&`, `<`, `>` escaped so nothing becomes a mention or link.

Everything an agent wrote is escaped (control characters and bidi overrides as \\u{…}).
Alerts are queued in $BATON_HOME/alerts/queue first, so the command that made the change
never waits on the network; a detached sender posts them, retrying with a growing delay
(10 s up to 15 min) for a day, one line per attempt in $BATON_HOME/alerts/alerts.log.
`baton doctor` shows what waits. URLs and secrets live in $BATON_HOME/alerts.json (0600);
`alert list` shows a URL's host only.

Examples:
  baton alert add phone --url https://ntfy.sh/my-secret-topic --format ntfy --on question,review
  baton alert add hook --url https://example.com/baton --board-url https://hub.example:7878
  baton alert test phone";

#[derive(Debug, Subcommand)]
#[command(about = "Post work that reaches a human to their webhook, ntfy or Slack", long_about = ALERT_ABOUT)]
pub enum AlertCommand {
    /// Add an alert; prints its signing secret once, alone on stdout
    #[command(after_help = "Examples:
  baton alert add phone --url https://ntfy.sh/my-secret-topic --format ntfy --on question,review
  S=$(baton alert add hook --url https://example.com/baton --board-url https://hub.example:7878)")]
    Add(AddArgs),
    /// The alerts (never their secrets), and what waits in the queue
    #[command(after_help = "Example: baton alert list")]
    List,
    /// Remove an alert; what still waits for it is dropped
    #[command(after_help = "Example: baton alert rm phone")]
    Rm {
        /// The alert's name
        name: String,
    },
    /// Post one sample alert to NAME now, through the same formatting, and show the answer
    #[command(after_help = "Example: baton alert test phone")]
    Test {
        /// The alert's name
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// A name for the alert: lowercase letters, digits, `.`, `-`, `_`
    pub name: String,
    /// Where to post: an http:// or https:// URL
    #[arg(long)]
    pub url: String,
    /// The request's shape
    #[arg(long, value_enum, default_value = "json")]
    pub format: FormatArg,
    /// Alert for this agent instead of the project's humans
    #[arg(long = "for", value_name = "AGENT")]
    pub for_agent: Option<String>,
    /// The kinds to post, between commas: task, question, review, failed, stalled, message
    #[arg(long, value_name = "KINDS")]
    pub on: Option<String>,
    /// The web board's address as the human reaches it (`baton serve`'s, or its proxy's):
    /// each alert then links to its task there; without it the link is null
    #[arg(long, value_name = "URL")]
    pub board_url: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    Ntfy,
    Slack,
}

impl From<FormatArg> for Format {
    fn from(format: FormatArg) -> Format {
        match format {
            FormatArg::Json => Format::Json,
            FormatArg::Ntfy => Format::Ntfy,
            FormatArg::Slack => Format::Slack,
        }
    }
}

/// `baton __alert-send`: the sender, started detached by baton itself.
#[derive(Debug, Args)]
pub struct SenderArgs {
    /// The test knob BATON_ALERT_RETRY_MS of the command that started it
    #[arg(long)]
    pub retry_ms: Option<u64>,
}

#[derive(Serialize)]
struct Added<'a> {
    name: &'a str,
    secret: &'a str,
    created_at: Timestamp,
}

#[derive(Serialize)]
struct Listed {
    alerts: Vec<alert::AlertRow>,
    queue: queue::Waiting,
}

#[derive(Serialize)]
struct Tested {
    name: String,
    delivered: bool,
    status: Option<u16>,
    answer: Option<String>,
    error: Option<String>,
}

pub fn run(context: &Context, command: AlertCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    match command {
        AlertCommand::Add(args) => {
            let on = match &args.on {
                Some(kinds) => Kind::parse_list(kinds)?,
                None => Kind::ALL.to_vec(),
            };
            let now = time::now();
            let new = NewAlert {
                name: args.name.clone(),
                url: args.url,
                format: args.format.into(),
                for_agent: args.for_agent,
                on,
                board_url: args.board_url,
            };
            let secret = alert::add(&*context.hub.store, new, now)?;
            let added = Added {
                name: &args.name,
                secret: &secret,
                created_at: now,
            };
            // The secret alone on stdout, so `S=$(baton alert add …)` holds just it.
            output::emit(as_json, &added, |added| added.secret.to_string());
            let _ = writeln!(
                std::io::stderr(),
                "alert {} added; this is its signing secret (X-Baton-Signature), shown this \
                 once: `baton alert test {}` posts a sample",
                args.name,
                args.name
            );
        }
        AlertCommand::List => {
            let listed = Listed {
                alerts: alert::load(&*context.hub.store)?
                    .iter()
                    .map(alert::Alert::row)
                    .collect(),
                queue: queue::waiting(&*context.hub.store),
            };
            output::emit(as_json, &listed, list_text);
        }
        AlertCommand::Rm { name } => {
            alert::remove(&*context.hub.store, &name)?;
            let value = serde_json::json!({"name": name, "removed": true});
            output::emit(as_json, &value, |_| format!("removed alert {name}"));
        }
        AlertCommand::Test { name } => {
            let found = alert::find(&*context.hub.store, &name)?;
            let tested = match alert::send::post(&found, &alert::sample_request(&found)) {
                Ok(answer) => Tested {
                    name: name.clone(),
                    delivered: answer.is_success(),
                    status: Some(answer.status),
                    answer: Some(answer.body),
                    error: None,
                },
                Err(error) => Tested {
                    name: name.clone(),
                    delivered: false,
                    status: None,
                    answer: None,
                    error: Some(error),
                },
            };
            let delivered = tested.delivered;
            output::emit(as_json, &tested, test_text);
            return Ok(if delivered { 0 } else { 1 });
        }
    }
    Ok(0)
}

/// Runs the sender (`baton __alert-send`).
pub fn send(context: &Context, args: SenderArgs) -> Result<i32, Error> {
    process::detach_from_caller();
    let backoff = match args.retry_ms {
        Some(millis) => queue::Backoff::of_millis(millis),
        None => queue::Backoff::STANDARD,
    };
    queue::run_sender(&*context.hub.store, &context.hub.home, backoff)?;
    Ok(0)
}

fn list_text(listed: &Listed) -> String {
    let mut text = String::new();
    if listed.alerts.is_empty() {
        text.push_str("no alerts yet: `baton alert add NAME --url URL` makes one\n");
    }
    for row in &listed.alerts {
        let on: Vec<&str> = row.on.iter().map(|kind| kind.as_str()).collect();
        let line = format!(
            "{}  {}  {}  for {}  on {}{}",
            inline(&row.name),
            row.format.as_str(),
            inline(&row.url),
            row.for_agent
                .as_deref()
                .map_or("the project's humans".to_string(), |agent| inline(agent)
                    .to_string()),
            on.join(","),
            row.board_url
                .as_deref()
                .map(|url| format!("  links to {}", inline(url)))
                .unwrap_or_default()
        );
        text.push_str(&line);
        text.push('\n');
    }
    let queue = &listed.queue;
    if queue.count > 0 {
        text.push_str(&format!(
            "{} alert(s) wait to be sent{}{}\n",
            queue.count,
            queue
                .oldest
                .map(|oldest| format!(", the oldest for {}", time::age(oldest, time::now())))
                .unwrap_or_default(),
            queue
                .last_error
                .as_deref()
                .map(|error| format!("; last error: {}", inline(error)))
                .unwrap_or_default()
        ));
    }
    if queue.dropped > 0 {
        text.push_str(&format!(
            "{} alert(s) dropped: the queue held its limit of {}\n",
            queue.dropped,
            queue::QUEUE_LIMIT
        ));
    }
    text.trim_end().to_string()
}

fn test_text(tested: &Tested) -> String {
    match (&tested.status, &tested.error) {
        (Some(status), _) => format!(
            "{} {}: the receiver answered HTTP {status}{}",
            if tested.delivered {
                "delivered"
            } else {
                "not delivered"
            },
            tested.name,
            tested
                .answer
                .as_deref()
                .filter(|answer| !answer.is_empty())
                .map(|answer| format!(": {answer}"))
                .unwrap_or_default()
        ),
        (None, Some(error)) => format!("not delivered {}: {}", tested.name, inline(error)),
        (None, None) => format!("not delivered {}", tested.name),
    }
}
