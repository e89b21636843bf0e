//! `store copy`: a whole hub's state from one store to another (the copy itself is
//! `baton::store::copy`).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde::Serialize;

use baton::error::Error;
use baton::home::Home;
use baton::plural::count;
use baton::session::copy::copy_store;
use baton::store::copy::{Copied, CopyError, Differing};
use baton::store::postgres::address::is_postgres_url;
use baton::store::postgres::url::{may_hold_password, shown_form};
use baton::store::{Store, files::FileStore};

use super::{Context, current_dir, output};

const STORE_ABOUT: &str = "\
Move a hub's state between the files of a hub home and PostgreSQL (SPEC section 16).

`baton store copy --to postgres://baton@db:5432/baton` moves a files home up to a database;
`baton store copy --from postgres://… --to DIR` (or with BATON_STORE set, just `--to DIR`)
takes a snapshot humans can read, or a backup.";

#[derive(Debug, Subcommand)]
#[command(about = "Copy a hub's state between the files and PostgreSQL", long_about = STORE_ABOUT)]
pub enum StoreCommand {
    /// Copy everything a hub holds from one store to another (files ↔ PostgreSQL)
    Copy(CopyArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "\
What is copied: every project (its record and settings, its board, its activity log in order,
its archive, its mail with everyone's read positions and the mail's archive), the agents, the
tokens (as their hashes: every token logs in on the copy as on the source), the alerts and
their queue. Not copied: who is live now (sessions, listeners) and the MCP sessions, which
end with their hub; this machine's own files (setup manifest, project map, wake logs); the
board before the last change (doctor --restore starts afresh on the copy); which stalls were
already alerted (a task stalled at the move may be alerted once more).

Idempotent: what the destination already holds alike is left untouched (nothing written, no
version counted up), so a second copy changes nothing. The tokens are compared as their users
made them: a hub's own login tokens and when each token was last used, which a hub writes
as it serves, are left out. What it holds differently is refused
(exit 1, nothing written, the first differences named) unless --replace, which writes the
source's over them. Nothing is ever removed from the destination: what only it holds stays,
and the summary names it.

Stop the hubs (`baton serve`) on both stores first. No change is ever read half made: a
project's board, log, archive and record are read together under its board lock (its mail
under the mail lock), or all in one transaction on PostgreSQL; but a hub writing meanwhile
may change one project after another was read, and what it writes to the destination may
be overwritten or refused as different.

What baton would not read is not copied, and the summary names it: a document reached
through a symbolic link, longer than 16 MiB, that does not parse or names another agent or
project than its file; a line of a log or of the mail that does not parse.

A copy cut short (killed, a full disk) is finished by running it again: on PostgreSQL each
project is written in one transaction, whole or not at all; on files a project written half
way is told apart as different, and --replace writes it whole.

A password never goes on the command line, where every user of the machine can read it:
give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass), or put the whole URL in
BATON_STORE and leave out --from. Errors name the database without it. A database that
cannot be reached exits 6.

Examples:
  BATON_HOME=/srv/baton PGPASSWORD=… baton store copy --to postgres://baton@db:5432/baton
  BATON_STORE=postgres://baton@db:5432/baton baton store copy --to /backup/baton-$(date +%F)")]
pub struct CopyArgs {
    /// Where to copy to: a postgres:// URL, or the directory of a hub home (made if missing)
    #[arg(long, value_name = "URL|DIR")]
    pub to: String,
    /// Where to copy from (default: the store BATON_STORE names, else BATON_HOME's files)
    #[arg(long, value_name = "URL|DIR")]
    pub from: Option<String>,
    /// Write the source's over what the destination holds differently (default: refuse)
    #[arg(long)]
    pub replace: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    from: String,
    to: String,
    /// The stores as the summary names them: `the files at PATH`, or a database's address.
    #[serde(skip)]
    from_named: String,
    #[serde(skip)]
    to_named: String,
    #[serde(flatten)]
    copied: &'a Copied,
}

pub fn run(context: &Context, command: StoreCommand) -> Result<i32, Error> {
    match command {
        StoreCommand::Copy(args) => run_copy(context, args),
    }
}

fn run_copy(context: &Context, args: CopyArgs) -> Result<i32, Error> {
    let from = match &args.from {
        Some(place) => open(context, "--from", place, false)?,
        None => context.hub.store.clone(),
    };
    if let Some(home) = from.readable_files()
        && !home.root().is_dir()
    {
        return Err(Error::invalid_with_hint(
            format!("no hub home at {} to copy from", home.root().display()),
            "name the source with --from URL|DIR, or set BATON_HOME (or BATON_STORE) to it",
        ));
    }
    let to = open(context, "--to", &args.to, true)?;
    let differing = match args.replace {
        true => Differing::Replace,
        false => Differing::Refuse,
    };
    let copied = copy_store(&*from, &*to, differing).map_err(|error| match error {
        CopyError::Store(error) => Error::from(error),
        CopyError::SameStore(_) => Error::invalid_with_hint(
            error.to_string(),
            "name another with --to (and the source with --from, else BATON_STORE or \
             BATON_HOME is it)",
        ),
        CopyError::Differs { .. } => Error::invalid_with_hint(
            error.to_string(),
            "add --replace to write the source's over them, or copy to an empty destination",
        ),
    })?;
    let report = Report {
        from: from.location(),
        to: to.location(),
        from_named: baton::store::named(&*from),
        to_named: baton::store::named(&*to),
        copied: &copied,
    };
    output::emit(context.global.json, &report, summary);
    Ok(0)
}

/// The summary a human reads: what was copied, and what the destination holds on its own.
fn summary(report: &Report<'_>) -> String {
    let copied = report.copied;
    let what = format!(
        "{}, {}, {}, {}, {}, {}",
        count(copied.projects, "project"),
        count(copied.tasks, "task"),
        count(copied.log_records, "log record"),
        count(copied.messages, "message"),
        count(copied.agents, "agent"),
        count(copied.tokens, "token"),
    );
    let mut text = match copied.written {
        0 => format!(
            "nothing written: everything in {} is in {} already ({what})",
            report.from_named, report.to_named
        ),
        written => format!(
            "copied {} to {}: {what} ({} written{})",
            report.from_named,
            report.to_named,
            count(written, "item"),
            match copied.replaced.len() {
                0 => String::new(),
                replaced => format!(", {replaced} replaced"),
            }
        ),
    };
    if !copied.only_in_destination.is_empty() {
        text.push_str(&format!(
            "\nkept, found only in {}: {}",
            report.to_named,
            copied.only_in_destination.join(", ")
        ));
    }
    if !copied.skipped.is_empty() {
        text.push_str(&format!(
            "\nnot copied, {} that baton does not read:",
            count(copied.skipped.len(), "thing")
        ));
        // Names and paths come from files anyone with the home could have made.
        for skipped in &copied.skipped {
            text.push_str(&format!(
                "\n  {}: {}",
                baton::text::inline(&skipped.what),
                baton::text::inline(&skipped.why)
            ));
        }
    }
    text
}

/// The store `place` names: a database by its URL (never one with a password in it: the
/// command line is public), or the files of the hub home at a directory, which a
/// destination may make.
fn open(
    context: &Context,
    flag: &str,
    place: &str,
    is_destination: bool,
) -> Result<Arc<dyn Store>, Error> {
    if is_postgres_url(place) {
        if may_hold_password(place) {
            return Err(Error::invalid_with_hint(
                format!(
                    "{flag} {} holds a password, which every user of this machine can read in \
                     the process list",
                    shown_form(place)
                ),
                "give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass), or the \
                 whole URL in BATON_STORE and leave out --from",
            ));
        }
        return Ok(baton::store::open(
            place,
            &context.hub.home,
            context.hub.lock,
        )?);
    }
    if place.contains("://") {
        return Err(Error::invalid_with_hint(
            format!(
                "{flag} takes a postgres:// URL or a directory, not `{}`",
                shown_form(place)
            ),
            "e.g. --to postgres://baton@db:5432/baton, or --to /backup/baton",
        ));
    }
    let mut dir = PathBuf::from(place);
    if !dir.is_absolute() {
        dir = current_dir()?.join(dir);
    }
    if !dir.is_dir() {
        if !is_destination || dir.exists() {
            return Err(Error::invalid(format!(
                "{flag} {}: no hub home there (not a directory)",
                dir.display()
            )));
        }
        baton::file::atomic::create_private_dir_all(&dir)?;
    } else if !is_hub_home(&dir) {
        // A directory named by mistake (a workspace, the user's home) gets no hub written
        // into it, nor is read as an empty one.
        return Err(Error::invalid_with_hint(
            format!(
                "{flag} {}: not a hub home (no projects/, agents/ or tokens.json) and not empty",
                dir.display()
            ),
            "name a new or empty directory, or a hub home (what BATON_HOME names)",
        ));
    }
    Ok(Arc::new(FileStore::new(Home::new(dir), context.hub.lock)))
}

/// Whether `dir` is a hub home, or empty (a home yet to be made).
fn is_hub_home(dir: &std::path::Path) -> bool {
    let Ok(mut entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let is_empty = entries.next().is_none();
    is_empty
        || ["projects", "agents", "tokens.json", "alerts.json"]
            .iter()
            .any(|name| dir.join(name).exists())
}
