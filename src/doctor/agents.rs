//! The checks of who is on the hub and how work reaches them: the registry, the tokens,
//! the alerts, who has not been seen, hand-overs never shown, wake commands, and the agent
//! clients wired on this machine.

use std::fs;

use crate::board::delivery::UNSEEN_AFTER;
use crate::names::{self, NameKind};
use crate::process::{ProgramLookup, ProgramRules, find_program};
use crate::registry::{self, AgentRecord};
use crate::setup;
use crate::store::{Collection, Document, Duty, Store};
use crate::text;
use crate::time::{self};

use super::{Check, Inspection, STALE_AFTER, count, count_parse, read_dir_sorted, show_error};

/// Every registry record parses, has a known schema, and names its own file.
pub(super) fn check_agents(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "agents";
    let home = inspection.home;
    let mut checks = Vec::new();
    let mut good = 0;
    // A database names its records by agent alone.
    let paths = match inspection.on_files() {
        true => read_dir_sorted(&home.agents_dir()),
        false => inspection
            .store
            .list_documents(Collection::Agents)
            .unwrap_or_default()
            .iter()
            .map(|name| home.agent_file(name))
            .collect(),
    };
    for path in paths {
        let Some(name) = path
            .file_name()
            .and_then(|name| name.to_str())
            .and_then(|name| name.strip_suffix(".json"))
        else {
            continue;
        };
        if names::check(NameKind::Agent, name).is_err() {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{} is not named after a valid agent; baton ignores it",
                    inspection.show(&path)
                ),
            ));
            continue;
        }
        match registry::load(inspection.store, name) {
            Err(error) => checks.push(Check::fail(
                NAME,
                format!(
                    "agent {name}: {}; baton will not overwrite it",
                    show_error(inspection, &error)
                ),
            )),
            Ok(None) => {}
            Ok(Some(record)) if record.name != name => checks.push(Check::warn(
                NAME,
                format!(
                    "{} names itself `{}`; baton knows it as {name}",
                    inspection.show(&path),
                    record.name
                ),
            )),
            Ok(Some(_)) => good += 1,
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "{} (schema {})",
                count_parse(good, "registry record"),
                registry::AGENT_SCHEMA
            ),
        ));
    }
    checks
}

/// `baton serve`'s tokens read, where there are any: a file that does not lets no request in.
/// A web login that expired is worth a warning: it lets nobody in, but it sits in the file
/// until the next `baton serve` removes it.
pub(super) fn check_tokens(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "tokens";
    let path = inspection.home.tokens_file();
    if !inspection.holds(&path, &Document::Tokens) {
        return Vec::new();
    }
    let read = crate::tokens::list(inspection.store).and_then(|rows| {
        Ok((
            rows,
            crate::tokens::expired_logins(inspection.store, crate::time::now())?,
        ))
    });
    match read {
        Ok((rows, stale)) => {
            let logins = rows.iter().filter(|row| row.login).count();
            let mut checks = vec![Check::ok(
                NAME,
                format!(
                    "{} ({} among them); only their hashes are kept",
                    count(rows.len(), "token"),
                    count(logins, "web login")
                ),
            )];
            for login in stale {
                checks.push(Check::warn(
                    NAME,
                    format!(
                        "the web login of {} made {} expired {} and is refused already; the \
                         next `baton serve` removes it from {}",
                        login.name,
                        login.created_at,
                        login.expired_at,
                        inspection.show(&path)
                    ),
                ));
            }
            checks
        }
        Err(error) => vec![Check::fail(
            NAME,
            format!(
                "{}; baton serve lets no request in until it is fixed (or removed, \
                 which drops every token)",
                show_error(inspection, &error)
            ),
        )],
    }
}

/// The alerts parse, and what waits in their queue (SPEC section 14): how many, since when,
/// the last error; never a URL or a secret.
pub(super) fn check_alerts(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "alerts";
    let home = inspection.home;
    let path = home.alerts_file();
    let has_queue = match inspection.on_files() {
        true => fs::symlink_metadata(home.alerts_dir()).is_ok(),
        false => inspection
            .store
            .list_documents(Collection::QueuedAlerts)
            .is_ok_and(|queued| !queued.is_empty()),
    };
    if !inspection.holds(&path, &Document::Alerts) && !has_queue {
        return Vec::new();
    }
    let mut checks = vec![match crate::alert::load(inspection.store) {
        Ok(alerts) => {
            let names: Vec<String> = alerts.iter().map(|alert| alert.name.clone()).collect();
            Check::ok(
                NAME,
                if names.is_empty() {
                    count(0, "alert")
                } else {
                    format!("{} ({})", count(names.len(), "alert"), names.join(", "))
                },
            )
        }
        Err(error) => Check::fail(
            NAME,
            format!(
                "{}; no alert is sent until it is fixed",
                show_error(inspection, &error)
            ),
        ),
    }];
    let waiting = crate::alert::queue::waiting(inspection.store);
    let sender = if inspection.store.is_held(&Duty::AlertSender) {
        "the sender is at it"
    } else {
        "no sender runs: the next alert queued starts one"
    };
    if waiting.count > 0 {
        let oldest = waiting
            .oldest
            .map(|oldest| {
                format!(
                    ", the oldest queued {} ago",
                    time::age(oldest, inspection.now)
                )
            })
            .unwrap_or_default();
        let line = format!(
            "{} to send{oldest}; {sender}",
            count(waiting.count, "alert")
        );
        checks.push(match &waiting.last_error {
            Some(error) => Check::warn(
                NAME,
                format!(
                    "{line}; last error: {}; see {}",
                    text::inline(error),
                    inspection.show(&home.alert_log())
                ),
            ),
            None => Check::ok(NAME, line),
        });
    } else {
        checks.push(Check::ok(NAME, "nothing waits to be sent"));
    }
    if waiting.dropped > 0 {
        checks.push(Check::warn(
            NAME,
            format!(
                "{} dropped: the queue held its limit of {}; {sender}",
                count(waiting.dropped as usize, "alert"),
                crate::alert::queue::QUEUE_LIMIT
            ),
        ));
    }
    if waiting.unreadable > 0 {
        checks.push(Check::warn(
            NAME,
            format!(
                "{} in {} cannot be read and waits for a look (named in {})",
                count(waiting.unreadable, "queued file"),
                inspection.show(&home.alert_queue_dir()),
                inspection.show(&home.alert_log())
            ),
        ));
    }
    checks
}

/// The records that parse (the others are `check_agents`' business).
fn readable_agents(store: &dyn Store) -> Vec<AgentRecord> {
    registry::list(store)
        .map(|(records, _)| records)
        .unwrap_or_default()
}

/// Agents not seen for [`STALE_AFTER`]: perhaps gone, perhaps renamed.
pub(super) fn check_last_seen(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "last-seen";
    let agents = readable_agents(inspection.store);
    let mut checks: Vec<Check> = agents
        .iter()
        .filter(|record| record.last_seen.until(inspection.now) >= STALE_AFTER)
        .map(|record| {
            Check::warn(
                NAME,
                format!(
                    "{} was last seen {} ago ({}); if it is gone for good: \
                     `baton agent rm {}`",
                    record.name,
                    time::age(record.last_seen, inspection.now),
                    record.last_seen,
                    record.name
                ),
            )
        })
        .collect();
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            if agents.is_empty() {
                "no agents yet".to_string()
            } else {
                format!(
                    "every agent seen within the last {} days",
                    STALE_AFTER.num_days()
                )
            },
        ));
    }
    checks
}

/// Work handed over and not seen by its agent for more than five minutes (SPEC section
/// 11): worth knowing, nothing is broken, so a warning per task. A board that does not
/// read is the boards check's finding, not this one's.
pub(super) fn check_delivery(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "delivery";
    let projects = inspection.project_ids();
    let mut checks = Vec::new();
    for id in &projects {
        let (_, read) = inspection.board(id);
        let Ok(Some(board)) = read else {
            continue;
        };
        for task in board.tasks().filter_map(|task| task.ok()) {
            let Some(delivery) = &task.delivery else {
                continue;
            };
            if !task.status.is_open() || delivery.unseen_for(inspection.now).is_none() {
                continue;
            }
            let project = if projects.len() > 1 {
                format!("{id}: ")
            } else {
                String::new()
            };
            checks.push(Check::warn(
                NAME,
                format!(
                    "{project}{} handed to {} {} ago, not seen yet ({})",
                    task.id,
                    text::inline(&delivery.to),
                    time::age(delivery.since, inspection.now),
                    delivery.state
                ),
            ));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            format!(
                "no work waits unseen for more than {} minutes",
                UNSEEN_AFTER.num_minutes()
            ),
        ));
    }
    checks
}

/// Every wake command's program can be found on this process's PATH (hooks and MCP servers
/// that hand work over usually run with the same PATH as the shell).
pub(super) fn check_wake_commands(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "wake";
    let path_variable = std::env::var_os("PATH");
    let mut checks = Vec::new();
    let mut found = 0;
    for record in readable_agents(inspection.store) {
        let Some(argv) = &record.wake else {
            continue;
        };
        let Some(program) = argv.first().filter(|program| !program.trim().is_empty()) else {
            checks.push(Check::fail(
                NAME,
                format!(
                    "{} has an empty wake command; set one with `baton agent add {} --wake -- \
                     CMD ARGS` or remove it with --no-wake-command",
                    record.name, record.name
                ),
            ));
            continue;
        };
        match find_program(program, path_variable.as_deref()) {
            ProgramLookup::Found(_) => found += 1,
            ProgramLookup::Relative => checks.push(Check::warn(
                NAME,
                format!(
                    "{}'s wake program `{program}` is a relative path; it is looked up in each \
                     project's workspace",
                    record.name
                ),
            )),
            ProgramLookup::Missing => checks.push(Check::fail(
                NAME,
                format!(
                    "{}'s wake program `{program}` is not {}; waking {} will fail",
                    record.name,
                    if ProgramRules::of_this_system().is_path(program) {
                        "an executable file"
                    } else {
                        "on PATH"
                    },
                    record.name
                ),
            )),
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            if found == 0 {
                "no wake commands set".to_string()
            } else {
                format!("{} found", count(found, "wake program"))
            },
        ));
    }
    checks
}

/// Which agent clients are on this machine and what `baton setup` wired into each: one line
/// per client found or wired. A client whose baton server points at a program that is gone,
/// or is wired only in part, or as an agent baton does not know, is worth a warning. One
/// wired to a remote hub names the hub (its agent is the token's, known only there).
pub(super) fn check_clients(inspection: &Inspection<'_>) -> Vec<Check> {
    const NAME: &str = "clients";
    let Some(env) = setup::Environment::from_process() else {
        return vec![Check::warn(
            NAME,
            "no home directory: cannot look for agent clients",
        )];
    };
    let mut checks = Vec::new();
    for status in setup::status(&env) {
        let client = status.client;
        if let Some(problem) = &status.problem {
            checks.push(Check::warn(NAME, format!("{client}: {problem}")));
            continue;
        }
        if !status.is_wired() {
            if status.is_found() {
                checks.push(Check::ok(
                    NAME,
                    format!("{client}: found, not wired (`baton setup --client {client}`)"),
                ));
            }
            continue;
        }
        let rerun = format!("run `baton setup --client {client}` again");
        let summary = status.summary();
        if let Some(program) = &status.server_program
            && !program.is_file()
        {
            checks.push(Check::warn(
                NAME,
                format!(
                    "{client} starts baton as {}, which is not there; {rerun}",
                    program.display()
                ),
            ));
        } else if !status.is_fully_wired() {
            checks.push(Check::warn(
                NAME,
                format!("{client} is wired only in part ({summary}); {rerun}"),
            ));
        } else if let Some(agent) = &status.agent
            && !matches!(registry::load(inspection.store, agent), Ok(Some(_)))
        {
            checks.push(Check::warn(
                NAME,
                format!("{client} is wired as agent {agent}, which is not registered; {rerun}"),
            ));
        } else if let Some(variable) = &status.token_env
            && std::env::var_os(variable).is_none_or(|value| value.is_empty())
        {
            // Wired right: the token is for the client's environment, which need not be this
            // shell's.
            checks.push(Check::ok(
                NAME,
                format!("{client}: {summary}; ${variable} is not set in this shell"),
            ));
        } else {
            checks.push(Check::ok(NAME, format!("{client}: {summary}")));
        }
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            NAME,
            "no agent client found (claude, codex, gemini, opencode); `baton setup --auto` \
             wires those it finds",
        ));
    }
    checks
}
