//! `baton import`: carry a roundtable board or an agent-bridge database onto a project.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use baton::error::Error;
use baton::import::{self, ImportError};
use baton::plural;
use baton::session::Imported;
use baton::text::inline;

use super::{Context, output};

const IMPORT_ABOUT: &str = "\
Carry the tasks of another tool's board onto this project (--project ID, else the current
directory's).

Each task keeps its status, subject, body, files, sender, assignee, times and the words said
on it (as its thread), and gets a new id here, T-N. The agents it names are registered when
they are not, never with a wake command (set those with `baton agent add NAME --wake -- …`).
Each task carried over is one `import` line in the activity log; nobody is woken.

Running it again adds nothing: every task remembers where it came from. The source is only
read (agent-bridge's database is opened read-only, so a running agent-bridge is not
disturbed; one whose tables are views is refused). Anything that cannot be carried over is
named with the reason: a task, or a wait for a task not carried over or that would close a
circle of tasks waiting on each other. Names that differ in the source stay different agents.

Examples:
  baton import roundtable ~/old/board.json --dry-run
  baton import roundtable ~/old/board.json --agents ~/old/agents.json
  baton import agent-bridge ~/.agent-bridge/bridge.db --source-project api";

#[derive(Debug, Args)]
#[command(about = "Carry a roundtable board or an agent-bridge database onto this project", long_about = IMPORT_ABOUT)]
pub struct ImportArgs {
    #[command(subcommand)]
    pub source: ImportSource,
    /// Say what would be carried over, and change nothing
    #[arg(long, global = true)]
    pub dry_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum ImportSource {
    /// A roundtable board.json ({"tasks": [...]})
    #[command(after_help = "Examples:
  baton import roundtable ~/old/board.json --dry-run
  baton import roundtable ~/old/board.json --agents ~/old/agents.json")]
    Roundtable {
        /// The board file
        path: PathBuf,
        /// roundtable's registry of agents ({"agents": [...]}), when it has one
        #[arg(long, value_name = "FILE")]
        agents: Option<PathBuf>,
    },
    /// An agent-bridge v2 SQLite database
    #[command(
        after_help = "Example: baton import agent-bridge ~/.agent-bridge/bridge.db --source-project api"
    )]
    AgentBridge {
        /// The database file
        path: PathBuf,
        /// The agent-bridge project to take, when the database holds several
        #[arg(long, value_name = "ID")]
        source_project: Option<String>,
    },
}

pub fn run(context: &Context, args: ImportArgs) -> Result<i32, Error> {
    let source = match &args.source {
        ImportSource::Roundtable { path, agents } => {
            import::roundtable::read(path, agents.as_deref())
        }
        ImportSource::AgentBridge {
            path,
            source_project,
        } => import::agent_bridge::read(path, source_project.as_deref()),
    }
    .map_err(refused)?;
    let session = context.session()?;
    let imported = session.import(source, args.dry_run)?;
    output::emit(context.global.json, &imported, describe);
    Ok(0)
}

fn refused(error: ImportError) -> Error {
    let hint = match &error {
        ImportError::WhichProject { .. } | ImportError::NoSuchProject { .. } => {
            "e.g. `baton import agent-bridge PATH --source-project ID`"
        }
        ImportError::Unreadable { .. } => "check the path: the file must exist and be readable",
        ImportError::NotATable { .. } => {
            "baton reads agent-bridge's tables only: a view is a query, which may never end"
        }
        ImportError::NotTheFormat { .. } => {
            "`baton import roundtable` takes a board.json, `baton import agent-bridge` a \
             SQLite database"
        }
    };
    // Paths and details come from the user's file system and the source's bytes.
    Error::invalid_with_hint(inline(&error.to_string()).to_string(), hint)
}

/// What was carried over, a line each, then what was not.
fn describe(imported: &Imported) -> String {
    let verb = if imported.dry_run {
        "would carry"
    } else {
        "carried"
    };
    let mut text = format!(
        "{verb} {} onto {}",
        plural::count(imported.tasks.len(), "task"),
        imported.project
    );
    if imported.already > 0 {
        text.push_str(&format!(
            " ({} imported before, left as they are)",
            imported.already
        ));
    }
    text.push('\n');
    for task in &imported.tasks {
        text.push_str(&format!(
            "  {} {} {} ← {}\n",
            task.id,
            task.status,
            inline(&task.subject),
            inline(&task.origin.to_string())
        ));
    }
    if !imported.agents_added.is_empty() {
        let added = if imported.dry_run {
            "agents to register"
        } else {
            "agents registered"
        };
        text.push_str(&format!("{added}: {}\n", imported.agents_added.join(", ")));
    }
    for (was, now) in &imported.renamed {
        text.push_str(&format!("renamed: `{}` is {now} here\n", inline(was)));
    }
    if !imported.wake_not_carried.is_empty() {
        text.push_str(&format!(
            "wake commands not carried over (set them with `baton agent add NAME --wake -- …`): \
             {}\n",
            imported.wake_not_carried.join(", ")
        ));
    }
    for skipped in &imported.skipped {
        text.push_str(&format!(
            "not carried over: {}: {}\n",
            inline(&skipped.what),
            inline(&skipped.why)
        ));
    }
    text.pop();
    text
}
