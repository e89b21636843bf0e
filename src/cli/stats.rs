//! `stats [--since 7d]` (SPEC section 19): how the team is doing, per agent, as a table for
//! people or as JSON (docs/stats.md names and explains every field).

use std::fmt::Write as _;

use chrono::Duration;
use clap::Args;

use super::{Context, output};
use baton::board::stats::{Figures, Stats, Window};
use baton::error::Error;
use baton::text::inline;
use baton::time;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  baton stats                     # the last 7 days
  baton stats --since 24h         # the last day (also 90m, 30d, or all)
  baton stats --since all --json  # everything the activity log holds, for a program

Per agent: tasks finished (completed, assigned to it), the median time from its claim to the
finish, time its questions waited on a human (the project's humans: `baton coordinator
--human NAME`), changes requested per task finished (rework), and hand-overs to it seen only
after more than 5 minutes. docs/stats.md says how each is worked out.")]
pub struct StatsArgs {
    /// How far back to look: 7d, 24h, 90m, or all (everything the activity log holds)
    #[arg(long, value_name = "WINDOW", default_value_t = Window::default(), value_parser = |text: &str| text.parse::<Window>())]
    pub since: Window,
}

pub fn run(context: &Context, args: StatsArgs) -> Result<i32, Error> {
    let stats = context.desk().stats(args.since)?;
    output::emit(context.global.json, &stats, table);
    Ok(0)
}

/// What stands where there is nothing to measure.
const NONE: &str = "—";

/// The figures as a table: one row an agent, then everyone's.
pub fn table(stats: &Stats) -> String {
    let window = match stats.since {
        Some(since) => format!(
            "the last {}, since {}",
            stats.window,
            since.datetime().format("%Y-%m-%d %H:%M UTC")
        ),
        None => "all the activity log holds".to_string(),
    };
    let project = inline(&stats.project);
    if stats.agents.is_empty() {
        return format!("project {project}, {window}: no task was sent, worked on or finished");
    }
    let mut rows: Vec<(String, &Figures)> = stats
        .agents
        .iter()
        .map(|agent| {
            let name = inline(&agent.agent).to_string();
            let name = match agent.human {
                true => format!("{name} (human)"),
                false => name,
            };
            (name, &agent.figures)
        })
        .collect();
    rows.push(("all agents".to_string(), &stats.team));
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0)
        .max("AGENT".len());
    let mut text = format!("project {project}, {window}\n");
    let _ = writeln!(
        text,
        "{:<width$}  {:>8}  {:>12}  {:>15}  {:>6}  {:>10}",
        "AGENT", "FINISHED", "CLAIM→FINISH", "WAITED ON HUMAN", "REWORK", "UNSEEN >5M"
    );
    for (name, figures) in &rows {
        let _ = writeln!(
            text,
            "{:<width$}  {:>8}  {:>12}  {:>15}  {:>6}  {:>10}",
            name,
            figures.finished,
            length(figures.claim_to_finish_median_seconds),
            length(figures.waited_on_human_seconds),
            figures
                .rework_per_task
                .map_or(NONE.to_string(), |rework| format!("{rework:.2}")),
            figures.unseen_handovers,
        );
    }
    text.push_str(
        "claim→finish is the median; rework is changes requested per task finished;\n\
         unseen >5m counts hand-overs first seen more than 5 minutes after they were made\n",
    );
    if stats.humans.is_empty() {
        text.push_str(
            "waited on human: this project names no human (`baton coordinator --human NAME` \
             names one)\n",
        );
    }
    text
}

/// A length in seconds as people read it (`1h 05m`), or a dash for none.
fn length(seconds: Option<u64>) -> String {
    seconds.map_or(NONE.to_string(), |seconds| {
        let seconds = i64::try_from(seconds).unwrap_or(i64::MAX);
        time::readable_length(Duration::try_seconds(seconds).unwrap_or(Duration::MAX))
    })
}
