//! Waking the agents hosted on this machine for work handed over through a store that
//! several machines share.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::work::{Work, is_queued, waiting, waiting_in};
use super::{wake_agent, wake_command};
use crate::board::task::TaskId;
use crate::home::Home;
use crate::project;
use crate::registry;
use crate::store::Store;
use crate::store::feed::What;

/// On a store several machines share, wakes the agents whose wake command is registered on
/// this machine for work handed over anywhere: through another hub, or a command on another
/// machine, which start no wake command of this one's (SPEC section 16). `baton serve` runs
/// it on a thread of its own for as long as it serves. Nothing to do on a home of files, one
/// machine's, where whoever hands work over wakes the agent, nor on a machine with no name.
pub fn wake_hosted_agents(
    store: std::sync::Arc<dyn Store>,
    home: Home,
    program: Option<PathBuf>,
) -> Option<std::thread::JoinHandle<()>> {
    if !store.is_shared_by_machines() {
        return None;
    }
    let host = crate::process::this_host()?;
    std::thread::Builder::new()
        .name("hosted wakes".into())
        .spawn(move || follow_for_hosted(&*store, &home, &host, program.as_deref()))
        .ok()
}

/// How often the agents of this machine are looked up again: one registered meanwhile is
/// woken at most this late for work that arrived for it.
const HOSTED_LOOKUP_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// [`wake_hosted_agents`]' loop: after each batch of changes, each agent of `host` for which
/// work arrived since the last look (other than its own) is woken, as a hand-over here would
/// wake it. A supervisor already running for it, started here by the change itself or by a
/// command, holds the agent's wake duty, and then this start does nothing.
fn follow_for_hosted(store: &dyn Store, home: &Home, host: &str, program: Option<&Path>) {
    let feed = loop {
        match store.changes(&crate::store::feed::Scope::Hub) {
            Ok(feed) => break feed,
            Err(_) => std::thread::sleep(std::time::Duration::from_secs(1)),
        }
    };
    let mut feed = feed;
    let mut agents = hosted_agents(store, host);
    let mut looked_up = Instant::now();
    // What waits already, handed over before the feed was made (while this hub was down or
    // starting), and never woken for nor shown: woken for now, as a listener does after a gap.
    let mut seen: std::collections::HashMap<String, Vec<Work>> = std::collections::HashMap::new();
    for agent in &agents {
        let now = waiting(store, agent);
        let queued: Vec<Work> = now
            .iter()
            .filter(|work| work.by != *agent && is_queued(store, agent, work))
            .cloned()
            .collect();
        wake_for(store, home, agent, &queued, program);
        seen.insert(agent.clone(), now);
    }
    loop {
        let changes = match feed.next(std::time::Duration::from_secs(30)) {
            Ok(changes) => changes,
            // The feed says it broke, and tells everything once it is back.
            Err(_) => {
                std::thread::sleep(std::time::Duration::from_millis(500));
                continue;
            }
        };
        // Only the projects that changed are looked at again, unless the feed may have
        // missed changes; the tokens' changes put no work anywhere.
        let projects: Vec<String> = if changes.iter().any(|change| change.what == What::Everything)
        {
            project::project_ids(store).unwrap_or_default()
        } else {
            let mut projects: Vec<String> = changes
                .into_iter()
                .filter_map(|change| change.project)
                .collect();
            projects.sort();
            projects.dedup();
            projects
        };
        if projects.is_empty() {
            continue;
        }
        if looked_up.elapsed() >= HOSTED_LOOKUP_EVERY {
            agents = hosted_agents(store, host);
            looked_up = Instant::now();
            seen.retain(|agent, _| agents.contains(agent));
        }
        for agent in &agents {
            let now = waiting_in(store, agent, &projects);
            let mut kept = seen.remove(agent).unwrap_or_default();
            let fresh: Vec<Work> = now
                .iter()
                .filter(|work| work.by != *agent && !kept.contains(work))
                .cloned()
                .collect();
            wake_for(store, home, agent, &fresh, program);
            kept.retain(|work| !projects.contains(&work.project));
            kept.extend(now);
            seen.insert(agent.clone(), kept);
        }
    }
}

/// Wakes `agent` for `fresh` work, in the project of the first of it; nothing when there is
/// none.
fn wake_for(store: &dyn Store, home: &Home, agent: &str, fresh: &[Work], program: Option<&Path>) {
    let Some(first) = fresh.first() else {
        return;
    };
    let tasks: Vec<TaskId> = Work::tasks_by_project(fresh)
        .into_iter()
        .find(|(project, _)| *project == first.project)
        .map(|(_, ids)| ids)
        .unwrap_or_default();
    let _ = wake_agent(store, home, agent, &first.project, &tasks, program);
}

/// The agents whose wake command is registered on `host`.
fn hosted_agents(store: &dyn Store, host: &str) -> Vec<String> {
    registry::names(store)
        .unwrap_or_default()
        .into_iter()
        .filter(|agent| {
            registry::load(store, agent)
                .ok()
                .flatten()
                .is_some_and(|record| {
                    wake_command(&record).is_some() && record.host.as_deref() == Some(host)
                })
        })
        .collect()
}
