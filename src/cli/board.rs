//! Board commands: send, the transitions, show, board, inbox, status, log, note, archive.

use std::io::Read;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches, Subcommand};

use baton::board::action::{ACTIONS, ActionKind, Row};
use baton::board::edit::{Edits, FieldValue};
use baton::board::search::Search;
use baton::board::task::{Priority, Status, TaskId};
use baton::board::transition::Action;
use baton::error::Error;
use baton::session::{BoardFilter, Changed, Desk, InboxLook, LogLine, NewTask};
use baton::time::{self, Timestamp};

use super::{Context, output, render};

#[derive(Debug, Subcommand)]
pub enum BoardCommand {
    /// Put a new task on the board for an agent (by name, or by skill)
    #[command(after_help = "Examples:
  baton send --to codex --subject 'Fix the date parser' --body '2026-02-30 is accepted' --review
  baton send --skill rust --subject 'Port the lexer' --touches 'src/lex/**' --after 3")]
    Send(SendArgs),
    // `claim` … `reassign`, one subcommand a row of the model's table of actions.
    #[command(flatten)]
    Act(Transition),
    /// Show one task with its whole thread (archived tasks too)
    #[command(after_help = "Example: baton show T-12")]
    Show(TaskArg),
    /// The board: open tasks with status, priority, who, age and marks
    #[command(after_help = "Examples:
  baton board
  baton board --status review_requested --mine
  baton board --all --json")]
    Board(BoardArgs),
    /// The tasks whose turn is yours, with everything needed to act
    #[command(after_help = "Example: baton --as codex inbox --peek")]
    Inbox(InboxArgs),
    /// One line for prompts and hooks: what waits for you
    #[command(after_help = "Example: baton --as codex status --quiet")]
    Status(StatusArgs),
    /// The activity log
    #[command(after_help = "Examples:
  baton log -n 20
  baton log --since 2026-12-01T00:00:00Z --follow")]
    Log(LogArgs),
    /// Write a line into the activity log
    #[command(after_help = "Example: baton note 'main is frozen until the release'")]
    Note(NoteTextArgs),
    /// Move finished tasks off the board into archive/<YYYY-MM>.jsonl
    #[command(after_help = "Example: baton archive --older-than 30 --dry-run")]
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

/// A transition command (`claim` … `reassign`): the action, on which task, with what.
///
/// Made from the model's table of actions rather than derived: clap's derive would need a
/// variant and an argument struct per action, spelling again what each row says (its name,
/// its help, its words and whether it takes `--no-wake`). The builder walks the rows and
/// sets the arguments in the order the derive did, so `--help` reads as before.
#[derive(Debug)]
pub struct Transition {
    pub kind: ActionKind,
    pub id: TaskId,
    /// The words as given (`-`: read them from stdin); none for an action without words.
    pub words: Option<String>,
    /// The new assignee, for an action that names one.
    pub to: Option<String>,
    /// The fields an edit changes, by name, as given.
    pub fields: Vec<(&'static str, String)>,
    /// `--no-wake`, taken by an action that hands work over.
    pub no_wake: bool,
}

/// The id of the task argument, and of `--no-wake`.
const ID: &str = "id";
const NO_WAKE: &str = "no_wake";

/// The subcommand of `row`: its task, its words, its new assignee, and `--no-wake` where
/// it hands work over.
fn transition_command(row: &'static Row) -> clap::Command {
    let mut command = clap::Command::new(row.command)
        .about(row.help)
        .after_help(format!("Example: {}", row.example))
        .arg(
            Arg::new(ID)
                .value_name("ID")
                .required(true)
                .value_parser(parse_task_id)
                .help("The task: 12, T-12 or t-12"),
        );
    for argument in row.assignee.iter().chain(&row.argument) {
        let mut arg = Arg::new(argument.name)
            .long(argument.name)
            .value_name(argument.value_name)
            .action(ArgAction::Set)
            .help(argument.help)
            // Only the new assignee must be given here; missing words are the model's
            // refusal, the same on every face.
            .required(
                row.assignee
                    .as_ref()
                    .is_some_and(|to| to.name == argument.name),
            );
        if let Some(short) = argument.short {
            arg = arg.short(short);
        }
        command = command.arg(arg);
    }
    for field in row.fields {
        let argument = &field.argument;
        let mut arg = Arg::new(argument.name)
            .long(field.flag())
            .value_name(argument.value_name)
            .action(ArgAction::Set)
            .help(argument.help);
        if let Some(short) = argument.short {
            arg = arg.short(short);
        }
        command = command.arg(arg);
    }
    if row.hands_over {
        command = command.arg(
            Arg::new(NO_WAKE)
                .long("no-wake")
                .action(ArgAction::SetTrue)
                .help("Do not start the wake command of whoever receives work"),
        );
    }
    command
}

impl FromArgMatches for Transition {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        let missing = || clap::Error::new(clap::error::ErrorKind::MissingSubcommand);
        let (name, mut given) = matches.remove_subcommand().ok_or_else(missing)?;
        let kind = ActionKind::from_command(&name).ok_or_else(missing)?;
        let row = kind.row();
        let mut take = |argument: Option<&baton::board::action::Argument>| {
            argument.and_then(|argument| given.remove_one::<String>(argument.name))
        };
        let words = take(row.argument.as_ref());
        let to = take(row.assignee.as_ref());
        let fields = row
            .fields
            .iter()
            .filter_map(|field| {
                let name = field.argument.name;
                given.remove_one::<String>(name).map(|value| (name, value))
            })
            .collect();
        Ok(Transition {
            kind,
            // Required, so clap has it.
            id: given.remove_one::<TaskId>(ID).ok_or_else(missing)?,
            words,
            to,
            fields,
            no_wake: row.hands_over && given.get_flag(NO_WAKE),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for Transition {
    fn augment_subcommands(command: clap::Command) -> clap::Command {
        ACTIONS.iter().fold(command, |command, row| {
            command.subcommand(transition_command(row))
        })
    }

    fn augment_subcommands_for_update(command: clap::Command) -> clap::Command {
        Self::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        ActionKind::from_command(name).is_some()
    }
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
    /// What it will change, comma-separated: paths and globs from the workspace's root
    /// (src/date/**, Cargo.lock, docs/) or KIND:NAME (port:3000). Its claim reserves them,
    /// and other agents' work on them waits until it is done
    #[arg(long, value_delimiter = ',', value_name = "PATTERNS")]
    pub touches: Vec<String>,
    /// Labels, comma-separated (bug,ui): names of a-z 0-9 . _ -, at most 16
    #[arg(long = "label", value_delimiter = ',', value_name = "a,b")]
    pub labels: Vec<String>,
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
    /// Finished tasks too; with --label or --search, archived ones too
    #[arg(long)]
    pub all: bool,
    /// Only tasks with this label
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only tasks whose subject, body or thread holds these words, case aside
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
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
                touches: args.touches,
                labels: args.labels,
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
                search: Search::new(args.label.as_deref(), args.search.as_deref())?,
                ..BoardFilter::default()
            })?;
            // Who holds what, under the table (the JSON stays the list of tasks:
            // `reservations --json` lists them).
            let held = match as_json {
                true => Vec::new(),
                false => desk.reservations(false)?,
            };
            output::emit(as_json, &views, |views| {
                let now = time::now();
                let mut text = render::board_table(&project, views, now);
                text.push_str(&super::reserve::held_under_board(&held, now));
                text
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
    let BoardCommand::Act(transition) = command else {
        return Ok(None);
    };
    // clap requires `--to` of an action that names somebody.
    let action = Action::of(transition.kind, words(transition.words)?, transition.to);
    let Some(action) = action else {
        return Ok(None);
    };
    if transition.fields.is_empty() {
        return Ok(Some((transition.id, action)));
    }
    let mut edits = Edits::default();
    for field in transition.kind.row().fields {
        let name = field.argument.name;
        let Some((_, value)) = transition.fields.iter().find(|(given, _)| *given == name) else {
            continue;
        };
        let value = match field.value {
            FieldValue::Text => words(Some(value.clone()))?,
            _ => value.clone(),
        };
        edits
            .set(name, &value)
            .map_err(|refused| Error::invalid(format!("--{}: {refused}", field.flag())))?;
    }
    Ok(Some((transition.id, action.with_edits(edits))))
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
/// drops its stream says so and takes it up again, missing nothing, and says on which hub.
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
    let mut stream = super::reconnect::Reconnecting::new();
    loop {
        match feed.next(FOLLOW_EVERY) {
            Ok(lines) => {
                stream.answered(feed.source());
                lines.iter().for_each(print);
            }
            Err(error) => stream.broken(&error),
        }
    }
}

/// How long `log --follow` waits for lines at a time.
const FOLLOW_EVERY: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests {
    use baton::board::action::{ACTIONS, Words};
    use clap::{CommandFactory, Parser};

    /// The transition commands are made from the table of actions: each row is a
    /// subcommand taking its words, its new assignee and `--no-wake` as the row says.
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
                flags.contains(&row.argument_name()),
                row.words != Words::None,
                "{}: {flags:?}",
                row.command
            );
            assert_eq!(flags.contains(&"to"), row.takes_to(), "{}", row.command);
            assert_eq!(
                flags.contains(&"no-wake"),
                row.hands_over,
                "{}",
                row.command
            );
            // Its help shows its example, which parses as that subcommand.
            let help = command.clone().render_help().to_string();
            assert!(
                help.contains(&format!("Example: {}", row.example)),
                "{help}"
            );
            let parsed = super::super::Cli::try_parse_from(words(row.example))
                .unwrap_or_else(|error| panic!("{}: {error}", row.example));
            assert!(format!("{parsed:?}").contains(&format!("{:?}", row.kind)));
        }
    }

    /// A command line's words, `'…'` quoting a word with spaces.
    fn words(line: &str) -> Vec<String> {
        let mut words = vec![String::new()];
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => words.push(String::new()),
                c => words.last_mut().expect("a word").push(c),
            }
        }
        words
    }
}
