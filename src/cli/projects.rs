//! Project commands: project init/list/show, and the shared context notes.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use baton::error::Error;
use baton::project::worktrees::{self, LandMode, WorktreeChange, Worktrees};
use baton::project::{self, Project};
use baton::remote::map::{self as remote_map, ProjectMap};
use baton::secret::machine_key::MachineKey;
use baton::text::{self, inline};
use baton::time;

use super::{Context, current_dir, output};

#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Create a project bound to a workspace directory (default: here)
    #[command(after_help = "Example: cd ~/src/api && baton project init --name api --human alice")]
    Init(InitArgs),
    /// Every project, with its workspace
    #[command(after_help = "Example: baton project list --json")]
    List,
    /// The project you are in
    #[command(after_help = "Example: cd ~/src/api && baton project show")]
    Show,
    /// Change a setting of the project you are in (the coordinator or a human of it)
    Set(SetArgs),
    /// For a hub on another machine (BATON_URL): make a directory of this machine stand for
    /// one of its projects, so commands run there act on it; alone, list what is mapped
    Map(MapArgs),
    /// Forget the directory mapped to a project of the remote hub
    #[command(after_help = "Example: baton project unmap api")]
    Unmap {
        /// The project's id on the hub
        project: String,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "\
A project's workspace is a directory of the hub's machine. On another machine, map a
directory of yours to it once.

Example:
  baton project map api ~/src/api

Commands run under ~/src/api then act on project api without --project, and a command
naming project api from elsewhere is refused (exit 2), as on the hub. Unmapped directories
act on `default`. The map is kept in this machine's $BATON_HOME/project-map.json.")]
pub struct MapArgs {
    /// The project's id on the hub
    #[arg(requires = "dir")]
    pub project: Option<String>,
    /// The directory of this machine that stands for it
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Its id (default: the workspace's directory name, made unique)
    #[arg(long)]
    pub name: Option<String>,
    /// The directory it is bound to (default: the current directory)
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// What the project is for, for agents planning work
    #[arg(long)]
    pub goal: Option<String>,
    /// A human who may change the coordinator (repeat, or comma-separate, for several)
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub human: Vec<String>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
A claim holds its task for the project's lease (30 minutes unless set): while the assignee
does anything with baton the lease is renewed; once it runs out the task shows as stalled in
its sender's inbox. Claims already made keep their lease until their next renewal.

Examples:
  baton project set --lease 45m
  baton --project api project set --lease 2h

Worktrees (the workspace must be a git repository; set on the workspace's machine): each
task claimed gets a worktree of its own, branch baton/T-<n> from the base branch, under
$BATON_HOME/worktrees/<project>/T-<n>. Approving it (or `done`, without review) lands its
work on the base branch first: squashed into one commit unless --land says otherwise, the
--verify command run on the result, the base branch moved only if nobody moved it meanwhile.
  baton project set --worktrees on --copy .env --setup 'npm ci' --verify 'cargo test'
  baton project set --land rebase --verify-timeout 20m
  baton project set --remote origin       # several machines: push branches, land there
  baton project set --worktrees off       # tasks that have one keep it, and still land")]
#[command(group(clap::ArgGroup::new("setting").required(true).multiple(true)))]
pub struct SetArgs {
    /// How long a claim holds: 45m, 2h, 1d (whole minutes, from 1m to 7d)
    #[arg(long, value_name = "TIME", value_parser = project::parse_lease, group = "setting")]
    pub lease: Option<u32>,
    /// Give each claimed task a git worktree of its own: on or off
    #[arg(long, value_name = "on|off", value_parser = on_or_off, group = "setting")]
    pub worktrees: Option<bool>,
    /// The branch tasks start from and land on (default: the one checked out now)
    #[arg(long, value_name = "BRANCH", group = "setting")]
    pub base: Option<String>,
    /// Untracked files copied into each new worktree, e.g. .env (comma-separated patterns)
    #[arg(
        long,
        value_name = "PATTERNS",
        value_delimiter = ',',
        group = "setting"
    )]
    pub copy: Option<Vec<String>>,
    /// A command run in each new worktree, bounded to 10 minutes ('' for none)
    #[arg(long, value_name = "CMD", group = "setting")]
    pub setup: Option<String>,
    /// How work lands: squash (one commit, the default), rebase or merge
    #[arg(long, value_name = "HOW", group = "setting")]
    pub land: Option<LandMode>,
    /// A command run on the landed result before the base branch moves ('' for none)
    #[arg(long, value_name = "CMD", group = "setting")]
    pub verify: Option<String>,
    /// How long --verify may run: 90s, 10m, 1h (default 10m)
    #[arg(long, value_name = "TIME", value_parser = worktrees::parse_verify_timeout, group = "setting")]
    pub verify_timeout: Option<u64>,
    /// A git remote: review pushes the task's branch there, landing pushes the base branch
    /// there with a lease ('' for none)
    #[arg(long, value_name = "NAME", group = "setting")]
    pub remote: Option<String>,
}

impl SetArgs {
    fn worktree_change(&self) -> WorktreeChange {
        WorktreeChange {
            on: self.worktrees,
            base: self.base.clone(),
            copy: self.copy.clone(),
            setup: self.setup.clone(),
            land: self.land,
            verify: self.verify.clone(),
            verify_timeout_seconds: self.verify_timeout,
            remote: self.remote.clone(),
        }
    }
}

fn on_or_off(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => Ok(true),
        "off" | "false" | "no" => Ok(false),
        other => Err(format!("on or off, not {}", inline(other))),
    }
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  baton context
  baton context --add 'the API is frozen until the 15th'")]
pub struct ContextArgs {
    /// Add a note (kept with who wrote it and when)
    #[arg(long, value_name = "TEXT")]
    pub add: Option<String>,
}

pub fn run(context: &Context, command: ProjectCommand) -> Result<i32, Error> {
    let as_json = context.global.json;
    match command {
        ProjectCommand::Init(args) => {
            let workspace = match args.workspace {
                Some(dir) => dir,
                None => current_dir()?,
            };
            let key = MachineKey::load_or_make(&context.hub.home.machine_key_file())?;
            let now = time::now();
            let created = project::init(
                &*context.hub.store,
                &key,
                args.name.as_deref(),
                &workspace,
                args.goal,
                &args.human,
                now,
            )?;
            output::emit(as_json, &created, |project| {
                // A project bound there already was signed for this machine, not made.
                let done = match project.created_at == now {
                    true => "created project",
                    false => "signed for this machine: project",
                };
                format!(
                    "{done} {} bound to {}",
                    project.id,
                    inline(
                        &project
                            .workspace
                            .as_deref()
                            .unwrap_or(std::path::Path::new("-"))
                            .display()
                            .to_string()
                    )
                )
            });
        }
        ProjectCommand::List => {
            let projects = context.desk().projects()?;
            output::emit(as_json, &projects, |projects| list_text(projects));
        }
        ProjectCommand::Show => {
            let project = context.desk().project()?;
            output::emit(as_json, &project, show_text);
        }
        ProjectCommand::Set(args) => {
            let session = context.session()?;
            let before = session.project.settings.lease_minutes;
            let mut project = session.project.clone();
            if let Some(minutes) = args.lease {
                project = session.set_lease(minutes)?;
            }
            let change = args.worktree_change();
            if !change.is_empty() {
                project = session.set_worktrees(&change)?;
            }
            output::emit(as_json, &project, |project| {
                let mut lines = Vec::new();
                if args.lease.is_some() {
                    lines.push(format!(
                        "project {}: lease {} (was {})",
                        project.id,
                        minutes_text(project.settings.lease_minutes),
                        minutes_text(before)
                    ));
                }
                if let Some(worktrees) = project
                    .settings
                    .worktrees
                    .as_ref()
                    .filter(|_| !change.is_empty())
                {
                    lines.push(format!(
                        "project {}: {}",
                        project.id,
                        worktrees_text(worktrees)
                    ));
                }
                lines.join("\n")
            });
        }
        ProjectCommand::Map(args) => return map(context, args),
        ProjectCommand::Unmap { project } => return unmap(context, &project),
    }
    Ok(0)
}

/// A lease in the words `project set` takes: `45m`, `2h`.
fn minutes_text(minutes: u32) -> String {
    baton::time::describe_duration(chrono::Duration::minutes(i64::from(minutes)))
}

/// A project's worktree settings in words, on one line.
pub(super) fn worktrees_text(settings: &Worktrees) -> String {
    let mut words = vec![format!(
        "worktrees {}, base {}, land {}",
        if settings.on { "on" } else { "off" },
        inline(&settings.base),
        settings.land.as_str()
    )];
    if !settings.copy.is_empty() {
        let copy: Vec<String> = settings
            .copy
            .iter()
            .map(|p| inline(p).to_string())
            .collect();
        words.push(format!("copy {}", copy.join(",")));
    }
    if let Some(setup) = &settings.setup {
        words.push(format!("setup `{}`", inline(setup)));
    }
    if let Some(verify) = &settings.verify {
        words.push(format!(
            "verify `{}` (at most {})",
            inline(verify),
            baton::time::describe_duration(chrono::Duration::seconds(
                i64::try_from(settings.verify_timeout_seconds).unwrap_or(i64::MAX)
            ))
        ));
    }
    if let Some(remote) = &settings.remote {
        words.push(format!("remote {}", inline(remote)));
    }
    words.join(", ")
}

/// `project show` in words.
pub(super) fn show_text(project: &Project) -> String {
    let mut text = summary(project);
    if let Some(goal) = &project.goal {
        text.push_str(&format!("\n  goal:{}", text::after_label(goal, "    | ")));
        text.pop();
    }
    text.push_str(&format!(
        "\n  coordinator: {}\n  lease: {} minutes, wake: {}",
        project.coordinator.as_deref().unwrap_or("none yet"),
        project.settings.lease_minutes,
        if project.settings.wake { "on" } else { "off" }
    ));
    if let Some(worktrees) = &project.settings.worktrees {
        text.push_str(&format!("\n  {}", worktrees_text(worktrees)));
    }
    text
}

/// `project list` in words.
pub(super) fn list_text(projects: &[Project]) -> String {
    if projects.is_empty() {
        return "no projects yet: `baton project init` binds one to a directory".to_string();
    }
    projects.iter().map(summary).collect::<Vec<_>>().join("\n")
}

pub(super) fn summary(project: &Project) -> String {
    format!(
        "{:<20} {}",
        project.id,
        project.workspace.as_ref().map_or_else(
            || "(any directory)".to_string(),
            |dir| inline(&dir.display().to_string()).to_string()
        )
    )
}

pub fn context(context: &Context, args: ContextArgs) -> Result<i32, Error> {
    let desk = context.desk();
    let project = match args.add {
        Some(text) => desk.add_context(&text)?,
        None => desk.project()?,
    };
    output::emit(context.global.json, &project.context, |_| {
        context_text(&project)
    });
    Ok(0)
}

/// The shared notes of `context`, in words.
pub(super) fn context_text(project: &Project) -> String {
    if project.context.is_empty() {
        return format!(
            "project {} has no shared notes yet; add one with `baton context --add TEXT`",
            project.id
        );
    }
    project
        .context
        .iter()
        .map(|note| {
            format!(
                "{} {}:{}",
                note.at,
                note.by,
                text::after_label(&note.text, "  | ")
            )
        })
        .collect::<String>()
}

/// `project map [ID DIR]`: maps a directory of this machine to a project of the remote hub,
/// checking with the hub (when BATON_URL is set) that the project is there; alone, lists the
/// map.
pub(super) fn map(context: &Context, args: MapArgs) -> Result<i32, Error> {
    let home = &context.hub.home;
    let map = match (args.project, args.dir) {
        (Some(project), Some(dir)) => {
            if let Some(hub) = &context.remote {
                baton::names::check(baton::names::NameKind::Project, &project)?;
                hub.call::<baton::json_api::endpoint::ProjectShow>(
                    &[&project],
                    &baton::json_api::NoBody {},
                )?;
            }
            remote_map::set(&context.hub.local(), &project, &dir)?
        }
        _ => ProjectMap::load(home)?,
    };
    output::emit(context.global.json, &map.projects, |projects| {
        if projects.is_empty() {
            return "no directory of this machine is mapped to a project: \
                    `baton project map ID DIR` maps one"
                .to_string();
        }
        projects
            .iter()
            .map(|(id, dir)| format!("{id:<20} {}", inline(&dir.display().to_string())))
            .collect::<Vec<_>>()
            .join("\n")
    });
    Ok(0)
}

/// `project unmap ID`.
pub(super) fn unmap(context: &Context, project: &str) -> Result<i32, Error> {
    let map = remote_map::remove(&context.hub.local(), project)?;
    output::emit(context.global.json, &map.projects, |_| {
        format!("project {project} is no longer mapped on this machine")
    });
    Ok(0)
}
