//! How the team is doing (SPEC section 19): per agent, the tasks it finished, how long they
//! took from claim to finish, how long its questions waited on a human, how often its work
//! came back with changes requested, and how many hand-overs to it went unseen past five
//! minutes. Pure: worked out from the activity log and the tasks (board and archive), the
//! clock passed in. docs/stats.md says what each figure means; the rules are here.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;

use chrono::Duration;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::action::ActionKind;
use super::record::{ActivityRecord, LogAction};
use super::task::{Status, Task, TaskId};
use crate::time::{self, Timestamp};

/// The longest window `--since` takes: past it, `all` says what is meant.
pub const LONGEST_WINDOW_DAYS: i64 = 36_500;

/// How far back the figures look: the last stretch of time before now, or everything the
/// log holds. The default is the last seven days: how the team is doing now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    All,
    Last(Duration),
}

impl Default for Window {
    fn default() -> Self {
        Window::Last(Duration::days(7))
    }
}

impl Window {
    /// Where the window starts, if it does, seen from `now`.
    pub fn start(self, now: Timestamp) -> Option<Timestamp> {
        match self {
            Window::All => None,
            Window::Last(length) => Some(now.plus(-length)),
        }
    }
}

impl fmt::Display for Window {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Window::All => formatter.write_str("all"),
            Window::Last(length) => formatter.write_str(&time::describe_duration(*length)),
        }
    }
}

/// `all`, or a length of time as `project set --lease` takes one: `7d`, `24h`, `90m`.
impl FromStr for Window {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim() == "all" {
            return Ok(Window::All);
        }
        let length = time::parse_duration(text).map_err(|refusal| format!("{refusal}, or all"))?;
        let shown = crate::text::inline(text.trim());
        if length <= Duration::zero() {
            return Err(format!(
                "a window of {shown} holds nothing: give e.g. 7d, 24h or 90m, or all"
            ));
        }
        if length > Duration::days(LONGEST_WINDOW_DAYS) {
            return Err(format!(
                "a window of {shown} is longer than {LONGEST_WINDOW_DAYS}d: say all for \
                 everything"
            ));
        }
        Ok(Window::Last(length))
    }
}

impl Serialize for Window {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Window {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The figures of one project over one window: each agent's, and the team's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub project: String,
    pub window: Window,
    /// Where the window starts; none for `all`.
    pub since: Option<Timestamp>,
    /// Where it ends: the moment the figures were worked out.
    pub until: Timestamp,
    /// The project's humans (`coordinator --human`): whose answers are waited on by
    /// `waited_on_human_seconds`.
    pub humans: Vec<String>,
    /// Every agent that acted on a task, finished one or was handed one in the window, by
    /// name.
    pub agents: Vec<AgentStats>,
    /// Everyone together.
    pub team: Figures,
}

/// One agent's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStats {
    pub agent: String,
    /// Whether the project names it a human.
    pub human: bool,
    #[serde(flatten)]
    pub figures: Figures,
}

/// The figures themselves (docs/stats.md). Lengths are whole seconds, rounded down.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Tasks completed in the window that were assigned to the agent.
    pub finished: u64,
    /// Of those, the median time from the agent's first claim of the task to its
    /// completion; none when none of them was claimed.
    pub claim_to_finish_median_seconds: Option<u64>,
    /// Time in the window that its questions (`input_required`) waited on a sender who is
    /// one of the project's humans; none when the project names no human.
    pub waited_on_human_seconds: Option<u64>,
    /// Changes requested on the tasks it finished in the window, over their whole lives.
    pub changes_requested: u64,
    /// `changes_requested` per task finished, to two places; none when none was finished.
    pub rework_per_task: Option<f64>,
    /// Hand-overs to it made in the window that waited more than five minutes before it
    /// was shown them (SPEC section 11); each task's last hand-over only.
    pub unseen_handovers: u64,
}

/// What is counted for one agent before it becomes [`Figures`].
#[derive(Debug, Default)]
struct Tally {
    finished: u64,
    /// Claim to finish of each task finished, in milliseconds.
    lengths: Vec<i64>,
    waited: Duration,
    changes_requested: u64,
    unseen_handovers: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.finished += other.finished;
        self.lengths.extend(&other.lengths);
        self.waited += other.waited;
        self.changes_requested += other.changes_requested;
        self.unseen_handovers += other.unseen_handovers;
    }

    fn figures(&self, has_humans: bool) -> Figures {
        let seconds = |millis: i64| u64::try_from(millis / 1_000).unwrap_or(0);
        Figures {
            finished: self.finished,
            claim_to_finish_median_seconds: median(&self.lengths).map(seconds),
            waited_on_human_seconds: has_humans.then(|| seconds(self.waited.num_milliseconds())),
            changes_requested: self.changes_requested,
            rework_per_task: (self.finished > 0).then(|| {
                let per_task = self.changes_requested as f64 / self.finished as f64;
                (per_task * 100.0).round() / 100.0
            }),
            unseen_handovers: self.unseen_handovers,
        }
    }
}

/// The middle value of `values` (the mean of the two middle ones for an even count), in
/// whole milliseconds; none for none.
fn median(values: &[i64]) -> Option<i64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        count if count % 2 == 1 => Some(sorted[middle]),
        _ => Some(sorted[middle - 1] + (sorted[middle] - sorted[middle - 1]) / 2),
    }
}

/// The window as the counting sees it: from `start` (none: from the beginning) to `now`.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: Option<Timestamp>,
    now: Timestamp,
}

impl Span {
    fn contains(self, at: Timestamp) -> bool {
        self.start.is_none_or(|start| at >= start) && at <= self.now
    }

    /// How much of `from`‥`to` lies in the window.
    fn overlap(self, from: Timestamp, to: Timestamp) -> Duration {
        let from = self.start.map_or(from, |start| from.max(start));
        from.until(to.min(self.now)).max(Duration::zero())
    }
}

/// The figures of `project` over `window` seen from `now`, from its activity log
/// (`records`, oldest first, as the log holds them) and its tasks (the board's and the
/// archive's), `humans` being the project's humans.
///
/// A task's history is its records in log order: the claims, the changes requested, the
/// stretches in `input_required`, its completion. Who finished it is its assignee (`to`),
/// as the task says; what the tasks alone keep is each one's last hand-over (`delivery`),
/// the only one whose seen time is known. docs/stats.md tells the same in words.
pub fn compute<'a>(
    project: &str,
    records: &[ActivityRecord],
    tasks: impl IntoIterator<Item = &'a Task>,
    humans: &[String],
    window: Window,
    now: Timestamp,
) -> Stats {
    let span = Span {
        start: window.start(now),
        now,
    };
    // A task the board and the archive both hold (a crash between the two): the board's,
    // which comes last.
    let tasks: HashMap<TaskId, &Task> = tasks.into_iter().map(|task| (task.id, task)).collect();
    let mut histories: BTreeMap<TaskId, Vec<&ActivityRecord>> = BTreeMap::new();
    for record in records {
        if let Some(id) = record.task {
            histories.entry(id).or_default().push(record);
        }
    }
    let mut count = Count {
        span,
        humans,
        tallies: BTreeMap::new(),
        active: BTreeSet::new(),
    };
    for (id, history) in &histories {
        count.history(tasks.get(id).copied(), history);
    }
    for task in tasks.values() {
        count.last_handover(task);
    }
    count.stats(project, window)
}

/// What the records and the tasks add up to so far.
struct Count<'a> {
    span: Span,
    humans: &'a [String],
    tallies: BTreeMap<String, Tally>,
    /// Who sent or acted on a task in the window.
    active: BTreeSet<String>,
}

impl Count<'_> {
    fn is_human(&self, name: &str) -> bool {
        self.humans.iter().any(|human| human == name)
    }

    fn tally(&mut self, agent: &str) -> &mut Tally {
        self.tallies.entry(agent.to_string()).or_default()
    }

    /// One task's records, oldest first; `task` as the board or the archive holds it, if
    /// either does.
    fn history(&mut self, task: Option<&Task>, history: &[&ActivityRecord]) {
        let mut first_claims: HashMap<&str, Timestamp> = HashMap::new();
        let mut changes_requested = 0;
        // The question open now: since when, and who asked it.
        let mut asking: Option<(Timestamp, &str)> = None;
        // The task's completion: when, by whose work, claimed when, with how much rework.
        let mut completion: Option<(Timestamp, &str, Option<Timestamp>, u64)> = None;
        for record in history {
            // baton's own records (an archive, a worktree made) are nobody's work.
            let is_agents_own = matches!(record.action, LogAction::Send | LogAction::Act(_));
            if is_agents_own && self.span.contains(record.at) {
                self.active.insert(record.actor.clone());
            }
            match record.action {
                LogAction::Act(ActionKind::Claim) => {
                    first_claims.entry(&record.actor).or_insert(record.at);
                }
                LogAction::Act(ActionKind::RequestChanges) => changes_requested += 1,
                _ => {}
            }
            // A status set otherwise (a task imported as it stood elsewhere) is where the
            // history here starts, not a question asked or a task finished here.
            let Some(status) = record
                .to_status
                .filter(|_| matches!(record.action, LogAction::Act(_)))
            else {
                continue;
            };
            match (status, asking) {
                (Status::InputRequired, None) => asking = Some((record.at, &record.actor)),
                (Status::InputRequired, Some(_)) | (_, None) => {}
                (_, Some((since, asker))) => {
                    asking = None;
                    // The one asked is the sender, who alone answers.
                    let is_answer = record.action == LogAction::Act(ActionKind::Answer);
                    let asked = task
                        .map(|task| task.from.as_str())
                        .or(is_answer.then_some(record.actor.as_str()));
                    self.waited(asker, asked, since, record.at);
                }
            }
            if status == Status::Completed {
                // The assignee, as the task says; a `done` is its assignee's own.
                let is_done = record.action == LogAction::Act(ActionKind::Done);
                let finisher = task
                    .map(|task| task.to.as_str())
                    .or(is_done.then_some(record.actor.as_str()));
                if let Some(finisher) = finisher {
                    let claimed = first_claims.get(finisher).copied();
                    completion = Some((record.at, finisher, claimed, changes_requested));
                }
            }
        }
        if let Some((since, asker)) = asking {
            // Still asking, unless the task says it moved on in a change the log no longer
            // holds (then it waited until the task last changed).
            let until = match task {
                Some(task) if task.status != Status::InputRequired => task.updated_at,
                _ => self.span.now,
            };
            self.waited(asker, task.map(|task| task.from.as_str()), since, until);
        }
        if let Some((at, finisher, claimed, changes_requested)) = completion
            && self.span.contains(at)
        {
            let tally = self.tally(finisher);
            tally.finished += 1;
            tally.changes_requested += changes_requested;
            if let Some(claimed) = claimed.filter(|claimed| *claimed <= at) {
                tally.lengths.push(claimed.until(at).num_milliseconds());
            }
        }
    }

    /// `asker`'s question to `asked` (if known) waited from `since` to `until`.
    fn waited(&mut self, asker: &str, asked: Option<&str>, since: Timestamp, until: Timestamp) {
        if asked.is_some_and(|asked| self.is_human(asked)) {
            let overlap = self.span.overlap(since, until);
            self.tally(asker).waited += overlap;
        }
    }

    /// The last hand-over of `task`, if it has one and it was made in the window.
    fn last_handover(&mut self, task: &Task) {
        let Some(delivery) = &task.delivery else {
            return;
        };
        if !self.span.contains(delivery.since) {
            return;
        }
        self.active.insert(delivery.to.clone());
        // A hand-over waits no longer once its task has ended.
        let until = match task.status.is_finished() {
            true => task.updated_at.min(self.span.now),
            false => self.span.now,
        };
        if delivery.was_unseen_too_long(until) {
            self.tally(&delivery.to).unseen_handovers += 1;
        }
    }

    fn stats(mut self, project: &str, window: Window) -> Stats {
        let has_humans = !self.humans.is_empty();
        for name in std::mem::take(&mut self.active) {
            self.tallies.entry(name).or_default();
        }
        let mut team = Tally::default();
        let agents = self
            .tallies
            .iter()
            .map(|(agent, tally)| {
                team.add(tally);
                AgentStats {
                    agent: agent.clone(),
                    human: self.is_human(agent),
                    figures: tally.figures(has_humans),
                }
            })
            .collect();
        Stats {
            project: project.to_string(),
            window,
            since: self.span.start,
            until: self.span.now,
            humans: self.humans.to_vec(),
            agents,
            team: team.figures(has_humans),
        }
    }
}

#[cfg(test)]
mod tests;
