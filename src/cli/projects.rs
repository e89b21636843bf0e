//! Project commands: project init/list/show, and the shared context notes.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use baton::error::Error;
use baton::project::{self, Project};
use baton::text::{self, inline};
use baton::time;

use super::{Context, current_dir, output};

#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Create a project bound to a workspace directory (default: here)
    Init(InitArgs),
    /// Every project, with its workspace
    List,
    /// The project you are in
    Show,
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
            let created = project::init(
                &context.hub.home,
                args.name.as_deref(),
                &workspace,
                args.goal,
                &args.human,
                context.hub.lock,
                time::now(),
            )?;
            output::emit(as_json, &created, |project| {
                format!(
                    "created project {} bound to {}",
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
            let projects = project::list(&context.hub.home)?;
            output::emit(as_json, &projects, |projects| {
                if projects.is_empty() {
                    return "no projects yet: `baton project init` binds one to a directory"
                        .to_string();
                }
                projects.iter().map(summary).collect::<Vec<_>>().join("\n")
            });
        }
        ProjectCommand::Show => {
            let session = context.session()?;
            output::emit(as_json, &session.project, |project| {
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
                text
            });
        }
    }
    Ok(0)
}

fn summary(project: &Project) -> String {
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
    let session = context.session()?;
    let project = match args.add {
        Some(text) => session.add_context(&text)?,
        None => session.project.clone(),
    };
    output::emit(context.global.json, &project.context, |notes| {
        if notes.is_empty() {
            return format!(
                "project {} has no shared notes yet; add one with `baton context --add TEXT`",
                project.id
            );
        }
        notes
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
    });
    Ok(0)
}
