//! `baton import`: carries a board read from another tool ([`crate::import::ForeignBoard`]) onto
//! this project, in one locked change of the board with one activity line per task.
//!
//! Each task gets a new id here and keeps its origin, so an import run twice adds nothing
//! the second time (tasks already carried over, on the board or archived, are counted, not
//! copied). A task's words pass the same checks as a task sent here; one that fails them is
//! named and left in its source. The agents it names are registered when they are not, never
//! with a wake command. Nobody is woken or notified: the work was handed over long ago.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::Session;
use crate::activity::{ActivityRecord, LogAction};
use crate::board::new_task;
use crate::board::task::{Origin, Status, Task, TaskId};
use crate::board::{Board, BoardError};
use crate::error::Result;
use crate::import::{self, ForeignAgent, ForeignBoard, ForeignTask, Skipped};
use crate::registry::{self, Profile, WakeCommandChange};
use crate::text::{self, LineField};

/// What an import did, or with `dry_run` would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Imported {
    pub project: String,
    pub dry_run: bool,
    /// The tasks carried over, each with its new id.
    pub tasks: Vec<ImportedTask>,
    /// Tasks an earlier import carried over already.
    pub already: usize,
    pub skipped: Vec<Skipped>,
    /// Agents registered because the source named them.
    pub agents_added: Vec<String>,
    /// Agents that had a wake command in the source, which is not carried over.
    pub wake_not_carried: Vec<String>,
    /// Names the source spelled in a way baton does not allow: `[as written, as named here]`.
    pub renamed: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedTask {
    pub id: TaskId,
    pub origin: Origin,
    pub status: Status,
    pub subject: String,
}

impl Session {
    /// Carries `source` onto this project; with `dry_run` only says what it would do.
    pub fn import(&self, mut source: ForeignBoard, dry_run: bool) -> Result<Imported> {
        let actor = self.agent()?.to_string();
        let tasks = std::mem::take(&mut source.tasks);
        let tasks = checked(&mut source, tasks);
        let agents_added = self.register_agents(&source, &tasks, dry_run)?;
        let wake_not_carried = source
            .agents
            .iter()
            .filter(|agent| agent.had_wake)
            .map(|agent| agent.name.clone())
            .collect();
        let store = &*self.hub.store;
        let project = self.project.id.clone();
        // The archive as the change sees it (under the lock, or in its transaction); a dry
        // run reads it as it is now.
        let carry = |board: &mut Board,
                     archived: Vec<Task>,
                     highest_archived: u64,
                     records: &mut Vec<ActivityRecord>|
         -> Result<_> {
            let mut known = origins_in(board).map_err(self.refused())?;
            known.extend(archived_origins(archived));
            Ok(self.carry(board, highest_archived, &known, &tasks, &actor, records))
        };
        let (carried, already, dropped_waits) = if dry_run {
            let mut board = self.board()?;
            let archived = store.archived_tasks(&project)?;
            let highest = store.highest_archived_id(&project)?;
            carry(&mut board, archived, highest, &mut Vec::new())?
        } else {
            self.update(|tx| {
                let mut records = Vec::new();
                let archived = tx.archived_tasks()?;
                let highest = tx.highest_archived_id()?;
                let outcome = carry(&mut tx.board, archived, highest, &mut records)?;
                for record in records {
                    tx.record(record);
                }
                Ok(outcome)
            })?
        };
        source.skipped.extend(dropped_waits);
        Ok(Imported {
            project: self.project.id.clone(),
            dry_run,
            tasks: carried,
            already,
            skipped: source.skipped,
            agents_added,
            wake_not_carried,
            renamed: source.renamed,
        })
    }

    /// Puts each task not yet here on `board`, with an id of its own and the ids of the
    /// tasks it waits for made this board's; returns them, how many were here already, and
    /// the waits not carried over ([`waits`]).
    fn carry(
        &self,
        board: &mut Board,
        highest_archived: u64,
        known: &HashMap<Origin, TaskId>,
        tasks: &[ForeignTask],
        actor: &str,
        records: &mut Vec<ActivityRecord>,
    ) -> (Vec<ImportedTask>, usize, Vec<Skipped>) {
        // Every new task has its id before any is made, so that the tasks it waits for
        // can be named by theirs, in whatever order the source listed them.
        let mut ids = known.clone();
        let mut new_tasks = Vec::new();
        let mut already = 0;
        // Asked once: the ids after it are free too, one after another.
        let mut next = board.next_free_id(highest_archived);
        for foreign in tasks {
            if known.contains_key(&foreign.origin) {
                already += 1;
                continue;
            }
            ids.insert(foreign.origin.clone(), next);
            new_tasks.push((next, foreign));
            next = TaskId(next.0 + 1);
            board.next_id = next.0;
        }
        let (afters, dropped) = waits(&new_tasks, &ids);
        let mut carried = Vec::new();
        for ((id, foreign), after) in new_tasks.into_iter().zip(afters) {
            let mut task = self.task_of(foreign, id);
            task.after = after;
            records.push(ActivityRecord {
                at: self.now,
                project: self.project.id.clone(),
                actor: actor.to_string(),
                action: LogAction::Import,
                task: Some(id),
                from_status: None,
                to_status: Some(task.status),
                text: Some(format!(
                    "from {}: {} → {}: {}",
                    foreign.origin, task.from, task.to, task.subject
                )),
            });
            carried.push(ImportedTask {
                id,
                origin: foreign.origin.clone(),
                status: task.status,
                subject: task.subject.clone(),
            });
            board.push(task);
        }
        (carried, already, dropped)
    }

    /// A foreign task as a task of this board. A working one gets a fresh lease, so that an
    /// assignee who does not come back leaves it stalled, in its sender's inbox.
    fn task_of(&self, foreign: &ForeignTask, id: TaskId) -> Task {
        let is_working = foreign.status == Status::Working;
        Task {
            id,
            subject: foreign.subject.trim().to_string(),
            body: foreign.body.clone(),
            files: foreign.files.clone(),
            from: foreign.from.clone(),
            to: foreign.to.clone(),
            reviewer: None,
            status: foreign.status,
            priority: foreign.priority,
            after: Vec::new(),
            skill: foreign.skill.clone(),
            review: false,
            created_at: foreign.created_at,
            updated_at: foreign.updated_at,
            claimed_at: is_working.then_some(foreign.updated_at),
            lease_expires_at: is_working.then(|| self.now.plus(self.project.lease())),
            result: foreign.result.clone(),
            thread: foreign.thread.clone(),
            delivery: None,
            imported: Some(foreign.origin.clone()),
            touches: Vec::new(),
            worktree: None,
            landed: None,
            labels: Vec::new(),
        }
    }

    /// Registers every agent the tasks or the source's registry name that is not registered
    /// yet (never with a wake command); those registered already are left as they are.
    fn register_agents(
        &self,
        source: &ForeignBoard,
        tasks: &[ForeignTask],
        dry_run: bool,
    ) -> Result<Vec<String>> {
        let store = &*self.hub.store;
        let mut names: BTreeSet<&str> = source.agents.iter().map(|a| a.name.as_str()).collect();
        // The source's record of each agent, by name (the first, should it list one twice).
        let mut records: HashMap<&str, &ForeignAgent> = HashMap::new();
        for agent in source.agents.iter().rev() {
            records.insert(&agent.name, agent);
        }
        for task in tasks {
            names.insert(&task.from);
            names.insert(&task.to);
            for entry in &task.thread {
                names.insert(&entry.by);
            }
        }
        let mut added = Vec::new();
        for name in names {
            if registry::load(store, name)?.is_some() {
                continue;
            }
            added.push(name.to_string());
            if dry_run {
                continue;
            }
            let known = records.get(name);
            let profile = Profile {
                strengths: known
                    .map(|agent| agent.strengths.clone())
                    .filter(|strengths| text::check_long("strengths", strengths).is_ok()),
                skills: known.map(|agent| {
                    registry::normalize_skills(&agent.skills)
                        .into_iter()
                        .filter(|skill| text::check_line(LineField::Skill, skill).is_ok())
                        .collect()
                }),
            };
            registry::add(store, name, self.now, &profile, WakeCommandChange::Keep)?;
        }
        Ok(added)
    }
}

/// The tasks whose words pass the checks a task sent here passes (SPEC section 10), with
/// ids in their source that are one short line, each origin once; the others are named in
/// `source.skipped`.
fn checked(source: &mut ForeignBoard, tasks: Vec<ForeignTask>) -> Vec<ForeignTask> {
    let mut passed: Vec<ForeignTask> = Vec::new();
    let mut origins: HashSet<Origin> = HashSet::new();
    for task in tasks {
        let what = format!("task {}", task.origin.id);
        let refusal = if origins.contains(&task.origin) {
            Some("an earlier task of the source has its id".to_string())
        } else if task.subject.trim().is_empty() {
            Some("it has no subject".to_string())
        } else {
            text::check_line(LineField::SourceId, &task.origin.id)
                .and_then(|()| text::check_line(LineField::SourceId, &task.origin.project))
                .and_then(|()| {
                    new_task::check_words(
                        &task.subject,
                        &task.body,
                        &task.files,
                        task.skill.as_deref(),
                    )
                })
                .and_then(|()| {
                    task.thread
                        .iter()
                        .try_for_each(|entry| text::check_long("thread", &entry.text))
                })
                .err()
                .map(|refused| refused.to_string())
        };
        match refusal {
            Some(why) => source.skip(what, why),
            None => {
                origins.insert(task.origin.clone());
                passed.push(task);
            }
        }
    }
    passed
}

/// The ids, on this board, of the tasks each of `new_tasks` waits for, and the waits not
/// carried over, each named with why, in the order of the tasks and of their waits:
/// - a wait for a task that is not carried over (the source has none such in the project,
///   or it could not be carried over) would be for nothing; the task starts without it;
/// - a wait that would close a circle of tasks each waiting for the next, none of which
///   could ever start, is left out where the circle closes: the tasks are followed in the
///   source's order, each through its waits in order, depth first, and a wait for a task
///   still being followed is the one that closes a circle. What is kept has no circle,
///   whatever the source held; the same source always loses the same waits; and it takes
///   one pass, however many tasks there are.
///
/// Waits for tasks carried over before are kept: those tasks wait for none of these.
fn waits(
    new_tasks: &[(TaskId, &ForeignTask)],
    ids: &HashMap<Origin, TaskId>,
) -> (Vec<Vec<TaskId>>, Vec<Skipped>) {
    let place_of: HashMap<TaskId, usize> = new_tasks
        .iter()
        .enumerate()
        .map(|(place, (id, _))| (*id, place))
        .collect();
    // Each task's waits that name a task carried over: (id here, as the source wrote it).
    let mut resolved: Vec<Vec<(TaskId, &str)>> = Vec::with_capacity(new_tasks.len());
    // (place of the task, place of the wait in its list, what was left out).
    let mut dropped: Vec<(usize, usize, Skipped)> = Vec::new();
    for (place, (id, foreign)) in new_tasks.iter().enumerate() {
        let mut seen = HashSet::new();
        let mut waits = Vec::new();
        for dependency in &foreign.after {
            if !seen.insert(dependency.as_str()) {
                continue;
            }
            let origin = Origin {
                id: dependency.clone(),
                ..foreign.origin.clone()
            };
            match ids.get(&origin) {
                Some(dependency_id) => waits.push((*dependency_id, dependency.as_str())),
                None => dropped.push((
                    place,
                    waits.len(),
                    Skipped {
                        what: wait_of(foreign, dependency),
                        why: format!(
                            "no task {} is carried over from the source's project, so {id} \
                             does not wait for it",
                            import::shown(dependency)
                        ),
                    },
                )),
            }
        }
        resolved.push(waits);
    }

    // Depth first, without recursion (a chain of 40,000 waits is no deeper a stack).
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Unseen,
        Followed,
        Done,
    }
    let mut marks = vec![Mark::Unseen; new_tasks.len()];
    let mut closes_circle: Vec<Vec<bool>> = resolved
        .iter()
        .map(|waits| vec![false; waits.len()])
        .collect();
    // The tasks being followed, each with how many of its waits are followed already.
    let mut path: Vec<(usize, usize)> = Vec::new();
    let mut on_path_at: Vec<usize> = vec![0; new_tasks.len()];
    for start in 0..new_tasks.len() {
        if marks[start] != Mark::Unseen {
            continue;
        }
        marks[start] = Mark::Followed;
        on_path_at[start] = 0;
        path.push((start, 0));
        while let Some(&mut (place, ref mut next)) = path.last_mut() {
            let Some(&(dependency_id, _)) = resolved[place].get(*next) else {
                marks[place] = Mark::Done;
                path.pop();
                continue;
            };
            let wait = *next;
            *next += 1;
            let Some(&target) = place_of.get(&dependency_id) else {
                continue;
            };
            match marks[target] {
                Mark::Unseen => {
                    marks[target] = Mark::Followed;
                    on_path_at[target] = path.len();
                    path.push((target, 0));
                }
                Mark::Followed => {
                    closes_circle[place][wait] = true;
                    let circle: Vec<&str> = path[on_path_at[target]..]
                        .iter()
                        .map(|(member, _)| new_tasks[*member].1.origin.id.as_str())
                        .collect();
                    let (id, foreign) = new_tasks[place];
                    dropped.push((
                        place,
                        wait,
                        Skipped {
                            what: wait_of(foreign, resolved[place][wait].1),
                            why: format!(
                                "it would close the circle {}, in which no task can start; \
                                 {id} does not wait for {dependency_id}",
                                circle_text(&circle)
                            ),
                        },
                    ));
                }
                Mark::Done => {}
            }
        }
    }
    let afters = resolved
        .iter()
        .zip(&closes_circle)
        .map(|(waits, closes)| {
            waits
                .iter()
                .zip(closes)
                .filter(|(_, closes)| !**closes)
                .map(|((id, _), _)| *id)
                .collect()
        })
        .collect();
    // A wait for nothing is counted at its place among the waits that name a task.
    dropped.sort_by_key(|(place, wait, _)| (*place, *wait));
    (
        afters,
        dropped.into_iter().map(|(_, _, skipped)| skipped).collect(),
    )
}

/// What a wait left out is called: `task 9f1c: its wait for a77e`.
fn wait_of(foreign: &ForeignTask, dependency: &str) -> String {
    format!(
        "task {}: its wait for {}",
        foreign.origin.id,
        import::shown(dependency)
    )
}

/// A circle of tasks as their source ids: `c3 → c1 → c2 → c3`, the task whose wait closes it
/// last (`members` ends with it); a long one shortened, with how many tasks are in it.
fn circle_text(members: &[&str]) -> String {
    let Some(closing) = members.last() else {
        return String::new();
    };
    let shown: Vec<String> = if members.len() <= 6 {
        members.iter().map(|member| import::shown(member)).collect()
    } else {
        let mut shown: Vec<String> = members[..3].iter().map(|m| import::shown(m)).collect();
        shown.push("…".to_string());
        shown.push(import::shown(closing));
        shown
    };
    let mut text = format!("{} → {}", import::shown(closing), shown.join(" → "));
    if members.len() > 6 {
        text.push_str(&format!(" ({} tasks)", members.len()));
    }
    text
}

/// The origins of the imported tasks on `board`.
fn origins_in(board: &Board) -> Result<HashMap<Origin, TaskId>, BoardError> {
    let mut origins = HashMap::new();
    for task in board.tasks() {
        let task = task?;
        if let Some(origin) = &task.imported {
            origins.insert(origin.clone(), task.id);
        }
    }
    Ok(origins)
}

/// The origins of the imported tasks among the project's `archived` tasks.
fn archived_origins(archived: Vec<Task>) -> HashMap<Origin, TaskId> {
    let mut origins = HashMap::new();
    for task in archived {
        if let Some(origin) = task.imported {
            origins.insert(origin, task.id);
        }
    }
    origins
}
