//! `doctor`: one line per check of the hub home; `doctor --restore PROJECT` brings a board
//! back from its backup after showing what that loses.

use std::fmt::Write;

use clap::Args;
use serde::Serialize;

use baton::doctor::{self, Check, RestorePlan, Verdict};
use baton::error::Error;
use baton::plural;
use baton::project;
use baton::time;

use super::{Context, current_dir, output, render};

#[derive(Debug, Args)]
#[command(after_help = "\
Checks: the home and its permissions (0700 directories, 0600 files); that every project,
board, registry record and log parses with a schema this baton knows; ids that two tasks on
a board share; open tasks that wait on each other in a circle; agent names in a board or the
mail that baton does not allow (a hand edit); that the activity log and the board agree (a change a killed writer left
unlogged is logged first); locks held by a process that is gone or held for long;
half-written files left by a killed writer; agents not seen for 7 days; wake programs
that are not on PATH; the alerts and what waits in their queue; which agent clients
(claude, codex, gemini, opencode) are here and what `baton setup` wired into each.

A `store` line says which store was read: the files at the home's path, or, with the hub's
state in PostgreSQL (BATON_STORE, which wins over BATON_HOME), the database first: that it
answers (its URL, never the password) and which schema it holds; the checks after read the
boards, logs, mail, agents and tokens from it, the same as from files, whether or not this
machine has a home of its own (without one, only its files go unchecked). A database that
cannot be reached exits 6, one whose schema a newer baton made exits 4, each with one error
line.

Prints one line per finding: ok, warn or fail. Exits 0 when nothing fails (warnings
included), 1 when something does.

--restore PROJECT shows what bringing back board.json.bak would lose (it works when
board.json does not parse) and exits 1; add --yes to restore. The replaced board becomes
board.json.bak, so running it again undoes it until the next change. Like every command on
a bound project, it runs only from inside the project's workspace (exit 2 elsewhere).

Examples:
  baton doctor
  baton doctor --restore api --yes")]
pub struct DoctorArgs {
    /// Bring back the project's board.json.bak (shows what would be lost; needs --yes)
    #[arg(long, value_name = "PROJECT")]
    pub restore: Option<String>,
    /// With --restore: really restore
    #[arg(long, requires = "restore")]
    pub yes: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    home: &'a std::path::Path,
    healthy: bool,
    checks: &'a [Check],
}

pub fn run(context: &Context, args: DoctorArgs) -> Result<i32, Error> {
    match args.restore {
        Some(project) => restore(context, &project, args.yes),
        None => check(context),
    }
}

fn check(context: &Context) -> Result<i32, Error> {
    let home = &context.hub.home;
    context.hub.store.only_looking();
    let mut checks = doctor::run(&*context.hub.store, home, time::now())?;
    // On an agent's machine the hub is checked too: this home holds only the wiring, the
    // project map and the wake logs.
    if let Some(hub) = &context.remote {
        let project = context.remote_project(None)?;
        checks.extend(baton::remote::hub_checks(hub, &project));
    }
    let healthy = doctor::is_healthy(&checks);
    let report = Report {
        home: home.root(),
        healthy,
        checks: &checks,
    };
    output::emit(context.global.json, &report, |report| {
        let width = report
            .checks
            .iter()
            .map(|check| check.name.len())
            .max()
            .unwrap_or(0);
        let mut text = String::new();
        for check in report.checks {
            let _ = writeln!(
                text,
                "{:<4}  {:<width$}  {}",
                check.status.as_str(),
                check.name,
                check.detail
            );
        }
        let failures = count(report.checks, Verdict::Fail);
        let warnings = count(report.checks, Verdict::Warn);
        let _ = write!(
            text,
            "doctor: {}",
            match (failures, warnings) {
                (0, 0) => "all is well".to_string(),
                (0, warnings) => format!(
                    "{} to look at, nothing broken",
                    plural::count(warnings, "warning")
                ),
                (failures, 0) => plural::count(failures, "failure"),
                (failures, warnings) => format!(
                    "{} and {}",
                    plural::count(failures, "failure"),
                    plural::count(warnings, "warning")
                ),
            }
        );
        text
    });
    Ok(if healthy { 0 } else { 1 })
}

fn count(checks: &[Check], status: Verdict) -> usize {
    checks.iter().filter(|check| check.status == status).count()
}

fn restore(context: &Context, project_id: &str, confirmed: bool) -> Result<i32, Error> {
    let now = time::now();
    // A bound project is repaired from inside its workspace, like every other command (or
    // by one of its humans or its coordinator from anywhere).
    project::resolve_for(
        &*context.hub.store,
        Some(project_id),
        context.agent().as_deref(),
        &current_dir()?,
        now,
    )?;
    if !confirmed {
        let plan = doctor::plan_restore(&*context.hub.store, project_id)?;
        output::emit(context.global.json, &plan, describe);
        eprintln!(
            "hint: nothing changed; run `baton doctor --restore {project_id} --yes` to restore"
        );
        return Ok(1);
    }
    let actor = context.agent().unwrap_or_else(|| "doctor".to_string());
    let plan = doctor::restore(&*context.hub.store, project_id, now, &actor)?;
    output::emit(context.global.json, &plan, describe);
    Ok(0)
}

fn describe(plan: &RestorePlan) -> String {
    let mut text = String::new();
    let verb = if plan.restored {
        "restored"
    } else {
        "restoring"
    };
    match &plan.current_error {
        Some(error) => {
            let _ = writeln!(
                text,
                "project {}: board.json cannot be read ({error}).\n{verb} board.json.bak \
                 ({}) loses whatever board.json held beyond it; that cannot be listed.",
                plan.project,
                plural::count(plan.backup_tasks, "task")
            );
            if !plan.recent_activity.is_empty() {
                let _ = writeln!(text, "the latest activity, the last of it perhaps lost:");
                for record in &plan.recent_activity {
                    let _ = writeln!(text, "  {}", render::activity_line(record));
                }
            }
        }
        None if plan.changes.is_empty() => {
            let _ = writeln!(
                text,
                "project {}: board.json and board.json.bak hold the same tasks; {verb} loses \
                 nothing",
                plan.project
            );
        }
        None => {
            let _ = writeln!(
                text,
                "project {}: {verb} board.json.bak ({} → {}) changes {}:",
                plan.project,
                plural::count(plan.current_tasks.unwrap_or(0), "task"),
                plural::count(plan.backup_tasks, "task"),
                plural::count(plan.changes.len(), "task")
            );
            for change in &plan.changes {
                let _ = writeln!(
                    text,
                    "  {} {}: {}",
                    change.task,
                    baton::text::inline(&change.subject),
                    change.describe()
                );
            }
        }
    }
    let _ = write!(text, "the next task will be T-{}", plan.next_id);
    if plan.restored {
        text.push_str(if plan.current_error.is_some() {
            "\nthe unreadable board is kept as board.json.bak until the next change"
        } else {
            "\nthe replaced board is now board.json.bak: run this again to undo"
        });
    }
    text
}
