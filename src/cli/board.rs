//! Board commands: send, the transitions, show, board, inbox, status, log, note, archive.

use std::io::Read;
use std::time::Duration;

use clap::{Args, Subcommand};

use baton::board::action::ActionKind;
use baton::board::task::{Priority, Status, TaskId};
use baton::board::transition::Action;
use baton::error::Error;
use baton::session::{BoardFilter, Changed, Desk, InboxLook, LogLine, NewTask};
use baton::time::{self, Timestamp};

use super::{Context, output, render};

#[derive(Debug, Subcommand)]
pub enum BoardCommand {
    /// Put a new task on the board for an agent (by name, or by skill)
    Send(SendArgs),
    /// Start work on a task assigned to you (pending or changes_requested → working)
    Claim(TaskArg),
    /// Give a claimed task back (working → pending)
    Release(TaskArg),
    /// Ask the sender a question (→ input_required, in the sender's inbox)
    Ask(WordsArgs),
    /// Answer the question on a task you sent (input_required → pending)
    Answer(WordsArgs),
    /// Ask for a review of your work (→ review_requested, in the reviewer's inbox)
    Review(NoteArgs),
    /// Approve work you were asked to review (review_requested → completed)
    Approve(NoteArgs),
    /// Send reviewed work back for rework (review_requested → changes_requested)
    RequestChanges(WordsArgs),
    /// Complete a task assigned to you (→ completed; not for tasks sent with --review)
    Done(DoneArgs),
    /// Give up on a task assigned to you (→ failed)
    Fail(FailArgs),
    /// Withdraw a task you sent, or any task as coordinator (→ canceled)
    Cancel(CancelArgs),
    /// Hand a task to another agent (→ pending, in their inbox)
    Reassign(ReassignArgs),
    /// Show one task with its whole thread (archived tasks too)
    Show(TaskArg),
    /// The board: open tasks with status, priority, who, age and marks
    Board(BoardArgs),
    /// The tasks whose turn is yours, with everything needed to act
    Inbox(InboxArgs),
    /// One line for prompts and hooks: what waits for you
    Status(StatusArgs),
    /// The activity log
    Log(LogArgs),
    /// Write a line into the activity log
    Note(NoteTextArgs),
    /// Move finished tasks off the board into archive/<YYYY-MM>.jsonl
    Archive(ArchiveArgs),
}

fn parse_task_id(text: &str) -> Result<TaskId, String> {
    text.parse()
}

fn parse_time(text: &str) -> Result<Timestamp, String> {
    text.parse()
}

#[derive(Debug, Args)]
pub struct TaskArg {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
}

#[derive(Debug, Args)]
pub struct SendArgs {
    /// The agent to give it to
    #[arg(long, value_name = "NAME", required_unless_present = "skill")]
    pub to: Option<String>,
    /// Give it to the least busy agent with this skill instead
    #[arg(long, value_name = "TAG", conflicts_with = "to")]
    pub skill: Option<String>,
    /// One line saying what is wanted
    #[arg(long, short)]
    pub subject: String,
    /// The details (`-` reads them from stdin)
    #[arg(long, short, default_value = "")]
    pub body: String,
    /// Files concerned, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "a,b")]
    pub files: Vec<String>,
    /// urgent, high, normal or low
    #[arg(long, short, default_value = "normal")]
    pub priority: Priority,
    /// Only take it up once these tasks are completed, e.g. 3,4
    #[arg(long, value_delimiter = ',', value_parser = parse_task_id, value_name = "IDS")]
    pub after: Vec<TaskId>,
    /// It must be reviewed (by you, or --reviewer) before it completes
    #[arg(long)]
    pub review: bool,
    /// Who reviews it (implies --review)
    #[arg(long, value_name = "NAME")]
    pub reviewer: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct WordsArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// The words (required; `-` reads them from stdin)
    #[arg(long, short)]
    pub body: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct NoteArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// An optional note (`-` reads it from stdin)
    #[arg(long, short)]
    pub body: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct DoneArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// What was done (required)
    #[arg(long, short)]
    pub result: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct FailArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// Why it cannot be done (required)
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// Why it is withdrawn
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct ReassignArgs {
    /// The task: 12, T-12 or t-12
    #[arg(value_parser = parse_task_id)]
    pub id: TaskId,
    /// The agent who takes it over
    #[arg(long, value_name = "NAME")]
    pub to: String,
    /// Why, for the new assignee
    #[arg(long, short)]
    pub body: Option<String>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

#[derive(Debug, Args)]
pub struct BoardArgs {
    /// Only tasks in this status
    #[arg(long)]
    pub status: Option<Status>,
    /// Only tasks you sent, hold or review
    #[arg(long)]
    pub mine: bool,
    /// Finished tasks too
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct InboxArgs {
    /// Look without marking messages read
    #[arg(long)]
    pub peek: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print nothing when nothing waits
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// How many of the latest lines
    #[arg(short = 'n', long = "lines", default_value_t = 20)]
    pub lines: usize,
    /// Keep printing new lines as they come
    #[arg(long, short)]
    pub follow: bool,
    /// Only lines at or after this RFC 3339 time
    #[arg(long, value_parser = parse_time)]
    pub since: Option<Timestamp>,
}

#[derive(Debug, Args)]
pub struct NoteTextArgs {
    /// The words
    #[arg(required = true, num_args = 1..)]
    pub text: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// Finished tasks at least this many days old (0: every finished task)
    #[arg(long, default_value_t = 7)]
    pub older_than: u32,
    /// Show what would move, move nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `-` means: read the words from stdin.
pub(super) fn words(value: Option<String>) -> Result<String, Error> {
    match value {
        Some(dash) if dash == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|error| Error::invalid(format!("cannot read stdin: {error}")))?;
            Ok(text)
        }
        Some(text) => Ok(text),
        None => Ok(String::new()),
    }
}

pub fn run(context: &Context, command: BoardCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    if let BoardCommand::Archive(args) = command {
        // Only on the hub's own machine (a remote hub refuses it before this).
        let archived = context.session()?.archive(args.older_than, args.dry_run)?;
        output::emit(as_json, &archived, render::archived);
        return Ok(0);
    }
    let desk = context.desk();
    match command {
        BoardCommand::Send(args) => {
            let changed = desk.send(NewTask {
                to: args.to,
                skill: args.skill,
                subject: args.subject,
                body: words(Some(args.body))?,
                files: args.files,
                priority: args.priority,
                after: args.after,
                review: args.review,
                reviewer: args.reviewer,
            })?;
            finish_change(context, &changed);
        }
        BoardCommand::Show(args) => {
            let view = desk.show(args.id)?;
            output::emit(as_json, &view, |view| {
                render::task_detail(view, time::now())
            });
        }
        BoardCommand::Board(args) => {
            let project = desk.project_id()?;
            let views = desk.board(&BoardFilter {
                status: args.status,
                mine: args.mine,
                all: args.all,
            })?;
            output::emit(as_json, &views, |views| {
                render::board_table(&project, views, time::now())
            });
        }
        BoardCommand::Inbox(args) => {
            let inbox = desk.inbox(match args.peek {
                true => InboxLook::Peek,
                false => InboxLook::MarkRead,
            })?;
            output::emit_streamed(as_json, &inbox, |out, inbox| {
                render::inbox(out, inbox, time::now())
            });
        }
        BoardCommand::Status(args) => {
            let inbox = desk.inbox(InboxLook::Preview)?;
            if as_json {
                output::json(&inbox);
            } else if !(args.quiet && inbox.is_empty()) {
                output::line(&render::status_line(&inbox));
            }
        }
        BoardCommand::Log(args) => log(context, desk.as_ref(), args)?,
        BoardCommand::Note(args) => {
            let record = desk.note(&args.text.join(" "))?;
            output::emit(as_json, &record, |_| "noted".to_string());
        }
        transition => {
            if let Some((id, action)) = self::transition(transition)? {
                let changed = desk.act(id, action)?;
                finish_change(context, &changed);
            }
        }
    }
    Ok(0)
}

/// The task and the action of a transition command (`claim` … `reassign`), its words read
/// (from stdin for `-`); `None` for every other command.
pub(super) fn transition(command: BoardCommand) -> Result<Option<(TaskId, Action)>, Error> {
    let (id, kind, given, to) = match command {
        BoardCommand::Claim(args) => (args.id, ActionKind::Claim, None, None),
        BoardCommand::Release(args) => (args.id, ActionKind::Release, None, None),
        BoardCommand::Ask(args) => (args.id, ActionKind::Ask, args.body, None),
        BoardCommand::Answer(args) => (args.id, ActionKind::Answer, args.body, None),
        BoardCommand::Review(args) => (args.id, ActionKind::Review, args.body, None),
        BoardCommand::Approve(args) => (args.id, ActionKind::Approve, args.body, None),
        BoardCommand::RequestChanges(args) => {
            (args.id, ActionKind::RequestChanges, args.body, None)
        }
        BoardCommand::Done(args) => (args.id, ActionKind::Done, args.result, None),
        BoardCommand::Fail(args) => (args.id, ActionKind::Fail, args.reason, None),
        BoardCommand::Cancel(args) => (args.id, ActionKind::Cancel, args.reason, None),
        BoardCommand::Reassign(args) => (args.id, ActionKind::Reassign, args.body, Some(args.to)),
        _ => return Ok(None),
    };
    // clap requires `--to` of `reassign`, the one action that names somebody.
    Ok(Action::of(kind, words(given)?, to).map(|action| (id, action)))
}

/// Prints the result of a change, and on stderr what went wrong after it was made and whom
/// it woke.
pub(super) fn finish_change(context: &Context, changed: &Changed) {
    output::emit(context.global.json, changed, render::changed);
    for warning in &changed.warnings {
        eprintln!("warning: {}", baton::text::inline(warning));
    }
    super::wake::report(&changed.woken);
}

/// `log`, and with `--follow` every line logged after, as it comes. A follow whose hub
/// drops its stream says so and takes it up again, missing nothing.
fn log(context: &Context, desk: &dyn Desk, args: LogArgs) -> Result<(), Error> {
    let print = |line: &LogLine| match &line.record {
        _ if context.global.json => output::line_exact(&line.json),
        Some(record) => output::line(&render::activity_line(record)),
        None => {}
    };
    if !args.follow {
        for record in desk.log(args.lines, args.since)? {
            print(&LogLine::of(record));
        }
        return Ok(());
    }
    let mut feed = desk.follow_log(args.lines, args.since)?;
    // The first look fails as the command does (a hub unreachable is exit 6).
    feed.next(FOLLOW_EVERY)?.iter().for_each(print);
    let mut pause = super::reconnect::FIRST_PAUSE;
    loop {
        match feed.next(FOLLOW_EVERY) {
            Ok(lines) => {
                pause = super::reconnect::FIRST_PAUSE;
                lines.iter().for_each(print);
            }
            Err(error) => pause = super::reconnect::broken(&error, pause),
        }
    }
}

/// How long `log --follow` waits for lines at a time.
const FOLLOW_EVERY: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests {
    use baton::board::action::{ACTIONS, Words};
    use clap::CommandFactory;

    /// clap's derive names each transition command after its variant; the table of actions
    /// is where the name is spelled, so the two must agree, flag for flag.
    #[test]
    fn every_action_of_the_table_is_a_subcommand_with_the_tables_arguments() {
        let cli = super::super::Cli::command();
        for row in ACTIONS {
            let command = cli
                .find_subcommand(row.command)
                .unwrap_or_else(|| panic!("no subcommand `{}`", row.command));
            let flags: Vec<&str> = command
                .get_arguments()
                .filter_map(|argument| argument.get_long())
                .collect();
            assert_eq!(
                flags.contains(&row.argument),
                row.words != Words::None,
                "{}: {flags:?}",
                row.command
            );
            assert_eq!(flags.contains(&"to"), row.takes_to, "{}", row.command);
        }
    }
}
