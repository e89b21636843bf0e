//! The alert queue and its sender. A change writes one file per alert and receiver into
//! `alerts/queue/` (local, cheap: no network), then starts the sender unless one runs. The
//! sender (`baton __alert-send`, detached, one at a time among every process sharing the
//! store through its duty, [`Duty::AlertSender`]: on the files, `alerts/sender.lock`) posts
//! each file, deletes it once the receiver answered 2xx, and otherwise tries again with a
//! growing delay until a day after the alert was made, when it drops it with a log line.
//! A store the sender cannot read ends it, at once when that will not pass by itself (the
//! database gone, the login refused), else after [`STORE_PATIENCE`]; the queue stays for
//! the next sender, which the next alert queued starts.
//! Every attempt is a line of `alerts/alerts.log`, kept under [`crate::file::text_log::LIMIT`].
//!
//! The queue holds at most [`QUEUE_LIMIT`] files: a command finding it full queues nothing
//! more and counts what it turned away in `alerts/dropped.json`, which the sender logs as a
//! "dropped N alerts" line. Commands count and add under `alerts/queue.lock` (so the cap
//! holds however many queue at once); every file has a name of its own, and only the one
//! sender rewrites or removes them. The sender looks at the queue again after letting its
//! lock go, so a file queued while it held the lock (whose command therefore started no
//! sender) is never left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{Alert, Event, format, send};
use crate::error::{Error, Result};
use crate::file::lock;
use crate::file::text_log::TextLog;
use crate::home::Home;
use crate::plural;
use crate::process::spawn_detached;
use crate::store::versioned::{self, Durability, Versioned};
use crate::store::{Collection, Document, Duty, Edit, Origin, Store, StoreError, Wait};
use crate::time::{self, Timestamp};

/// The hidden subcommand that runs the sender.
pub const SENDER_COMMAND: &str = "__alert-send";
pub const QUEUED_SCHEMA: u32 = 1;
/// How long baton keeps trying an alert, from when it was queued.
pub const GIVE_UP_AFTER: chrono::Duration = chrono::Duration::days(1);
/// The most alerts that wait at once: at a second an alert, a day's flood of one token
/// would otherwise fill the disk one file at a time.
pub const QUEUE_LIMIT: usize = 1000;
/// How long a command waits for the queue lock before it queues without it (the cap may
/// then be passed by the few that queue at that moment).
const QUEUE_LOCK_WAIT: Duration = Duration::from_secs(2);
pub const DROPPED_SCHEMA: u32 = 1;

/// The alerts the full queue turned away since the sender last logged them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Dropped {
    schema: u32,
    count: u64,
    first_at: Timestamp,
    last_at: Timestamp,
}

impl Versioned for Dropped {
    const SCHEMA: u32 = DROPPED_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

/// Whether `text` (kept at `origin`) reads as `document` does, a queued alert or the count
/// of dropped ones: what a copy to another store checks before carrying it.
pub fn check_stored(
    document: &Document,
    origin: &Origin,
    text: &[u8],
) -> std::result::Result<(), StoreError> {
    match document {
        Document::AlertsDropped => versioned::decode::<Dropped>(origin, text).map(drop),
        _ => versioned::decode::<Queued>(origin, text).map(drop),
    }
}

/// One alert waiting to be posted: a file of `alerts/queue/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    schema: u32,
    /// The alert's name: its URL and secret are read from `alerts.json` at each attempt.
    pub alert: String,
    pub event: Event,
    pub created_at: Timestamp,
    #[serde(default)]
    pub attempts: u32,
    /// When the next attempt is due; now when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

impl Versioned for Queued {
    const SCHEMA: u32 = QUEUED_SCHEMA;

    fn schema(&self) -> u32 {
        self.schema
    }
}

/// How long the sender goes on failing to read its store before it ends. An outage of a
/// database store (the server restarting or failing over, the network) passes within
/// minutes, and the sender rides it out, looking again every second; a store still not
/// answering after ten is more likely gone for good in a way its words do not tell (an
/// address that leads nowhere now), and a sender looking for it a day long is a process
/// left behind for nothing. Ending loses nothing: the queue stays in the store, and the next
/// change that queues an alert (which needs the store back) starts a sender again.
pub const STORE_PATIENCE: Duration = Duration::from_secs(10 * 60);

/// The delays between attempts: doubling from `first` up to `cap`; and how long the sender
/// goes on failing to read its store before it ends ([`STORE_PATIENCE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub cap: Duration,
    pub patience: Duration,
}

impl Backoff {
    /// Ten seconds, doubling up to fifteen minutes; the store given [`STORE_PATIENCE`].
    pub const STANDARD: Backoff = Backoff {
        first: Duration::from_secs(10),
        cap: Duration::from_secs(15 * 60),
        patience: STORE_PATIENCE,
    };

    /// A test knob: `first` of `millis`, up to eight times that; the store given fifty
    /// times that, and at least five seconds (a test's store is not down for longer).
    pub fn of_millis(millis: u64) -> Backoff {
        let first = Duration::from_millis(millis.max(1));
        Backoff {
            first,
            cap: first * 8,
            patience: (first * 50).max(Duration::from_secs(5)),
        }
    }

    /// The delay after the `attempts`-th failed attempt.
    pub fn after(self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(20);
        self.first.saturating_mul(1 << doublings).min(self.cap)
    }

    /// How long the sender sleeps at most before it looks at the queue again, for alerts
    /// queued while it runs: a second, or less under the test knob.
    fn look_again(self) -> Duration {
        self.first.min(Duration::from_secs(1))
    }
}

/// What waits in the queue, for `doctor` and `alert list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Waiting {
    pub count: usize,
    pub oldest: Option<Timestamp>,
    /// The error of the most recent failed attempt, if any failed.
    pub last_error: Option<String>,
    /// Files of the queue that cannot be read (left in place, named in the log).
    pub unreadable: usize,
    /// Alerts the full queue turned away that the sender has not logged yet.
    pub dropped: u64,
}

/// Queues one file for each alert of `alerts` that wants each of `events`; `humans` gives
/// the humans of a project. Returns how many were queued: what would take the queue past
/// [`QUEUE_LIMIT`] is counted as dropped instead.
pub fn enqueue(
    store: &dyn Store,
    alerts: &[Alert],
    events: &[Event],
    humans: impl Fn(&str) -> Vec<String>,
    now: Timestamp,
) -> Result<usize> {
    let wanted: Vec<(&Alert, &Event)> = events
        .iter()
        .flat_map(|event| {
            let humans = humans(&event.project);
            alerts
                .iter()
                .filter(move |alert| alert.wants(event, &humans))
                .map(move |alert| (alert, event))
        })
        .collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let quiet = store.with_lock(lock::LockPolicy {
        timeout: QUEUE_LOCK_WAIT,
        on_wait: |_| {},
    });
    let counted = versioned::update_with(
        &*quiet,
        &Document::AlertsDropped,
        Wait::AsTheStoreDoes,
        |dropped| {
            add_to_queue(store, &wanted, dropped, now).map(|queued| (queued, Durability::Unsynced))
        },
    );
    match counted {
        Ok(queued) => Ok(queued.unwrap_or(0)),
        // The lock stayed busy: queued without it (the cap may be passed by the few that
        // queue at that moment).
        Err(Error::Store(error)) if error.is_lock_timeout() => {
            let mut dropped = versioned::read(store, &Document::AlertsDropped)
                .ok()
                .flatten();
            let before = dropped.clone();
            let queued = add_to_queue(store, &wanted, &mut dropped, now)?;
            if let Some(dropped) = dropped.filter(|dropped| before.as_ref() != Some(dropped)) {
                let origin = store.document_origin(&Document::AlertsDropped);
                let text = versioned::text_of(&origin, &dropped)?;
                store.save_document(&Document::AlertsDropped, Edit::WriteUnsynced(text))?;
            }
            Ok(queued)
        }
        Err(error) => Err(error),
    }
}

/// Queues `wanted` while the queue has room, and counts what it has none for in `dropped`;
/// how many were queued.
fn add_to_queue(
    store: &dyn Store,
    wanted: &[(&Alert, &Event)],
    dropped: &mut Option<Dropped>,
    now: Timestamp,
) -> Result<usize> {
    let room = QUEUE_LIMIT.saturating_sub(queued_names(store).len());
    let mut queued = 0;
    for &(alert, event) in wanted.iter().take(room) {
        let entry = Queued {
            schema: QUEUED_SCHEMA,
            alert: alert.name.clone(),
            event: event.clone(),
            created_at: now,
            attempts: 0,
            next_at: None,
            last_error: None,
            other: serde_json::Map::new(),
        };
        let document = Document::QueuedAlert(file_name(now));
        let text = versioned::text_of(&store.document_origin(&document), &entry)?;
        store.save_document(&document, Edit::Write(text))?;
        queued += 1;
    }
    let turned_away = (wanted.len() - queued) as u64;
    if turned_away > 0 {
        *dropped = Some(match dropped.take() {
            Some(dropped) => Dropped {
                count: dropped.count.saturating_add(turned_away),
                last_at: now,
                ..dropped
            },
            None => Dropped {
                schema: DROPPED_SCHEMA,
                count: turned_away,
                first_at: now,
                last_at: now,
            },
        });
    }
    Ok(queued)
}

/// Whether the full queue turned alerts away that the sender has not logged yet.
pub fn has_dropped(store: &dyn Store) -> bool {
    store
        .load_document(&Document::AlertsDropped)
        .is_ok_and(|dropped| dropped.is_some())
}

/// Takes the count of alerts the full queue turned away (none left behind for the next).
fn take_dropped(store: &dyn Store) -> Option<Dropped> {
    let quiet = store.with_lock(lock::LockPolicy {
        timeout: QUEUE_LOCK_WAIT,
        on_wait: |_| {},
    });
    let taken = versioned::update_with(
        &*quiet,
        &Document::AlertsDropped,
        Wait::AsTheStoreDoes,
        |dropped: &mut Option<Dropped>| Ok::<_, Error>((dropped.take(), Durability::Durable)),
    );
    taken.ok().flatten().flatten()
}

/// A name no other queued file has: the time (so names sort by age), this process, and a
/// count within it.
fn file_name(now: Timestamp) -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}-{}.json",
        now.datetime().format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Starts the sender unless one runs; `retry_ms` passes the test knob on (the sender's
/// environment holds no `BATON_*`).
pub fn start_sender(
    store: &dyn Store,
    home: &Home,
    program: &Path,
    retry_ms: Option<u64>,
) -> io::Result<()> {
    if store.is_held(&Duty::AlertSender) {
        return Ok(());
    }
    let retry = retry_ms.map(|millis| millis.to_string());
    let mut args = vec![SENDER_COMMAND];
    if let Some(retry) = &retry {
        args.extend(["--retry-ms", retry]);
    }
    spawn_detached(program, &args, home.root())
}

/// The test knob `BATON_ALERT_RETRY_MS`: the first delay between attempts, in milliseconds.
pub fn retry_ms_from_environment() -> Option<u64> {
    std::env::var("BATON_ALERT_RETRY_MS")
        .ok()
        .and_then(|value| value.trim().parse().ok())
}

/// The names of the queued alerts, oldest first. One that cannot be listed counts as none:
/// there is nobody to tell.
fn queued_names(store: &dyn Store) -> Vec<String> {
    store
        .list_documents(Collection::QueuedAlerts)
        .unwrap_or_default()
}

/// One queued alert read; `None` when it is gone (sent and removed since it was listed).
fn read_queued(store: &dyn Store, name: &str) -> Option<std::result::Result<Queued, String>> {
    match versioned::read::<Queued>(store, &Document::QueuedAlert(name.to_string())) {
        Ok(Some(entry)) => Some(Ok(entry)),
        Ok(None) => None,
        Err(error) => Some(Err(error.to_string())),
    }
}

/// The queued alerts, oldest first, each read (or the error it gave).
fn queued(store: &dyn Store) -> Vec<(String, std::result::Result<Queued, String>)> {
    queued_names(store)
        .into_iter()
        .filter_map(|name| read_queued(store, &name).map(|read| (name, read)))
        .collect()
}

/// How many alerts wait in the queue now (listed, not read).
pub fn length(store: &dyn Store) -> usize {
    queued_names(store).len()
}

/// What waits in the queue now.
pub fn waiting(store: &dyn Store) -> Waiting {
    let mut waiting = Waiting {
        count: 0,
        oldest: None,
        last_error: None,
        unreadable: 0,
        dropped: versioned::read::<Dropped>(store, &Document::AlertsDropped)
            .ok()
            .flatten()
            .map_or(0, |dropped| dropped.count),
    };
    let mut last_failed: Option<Timestamp> = None;
    for (_, read) in queued(store) {
        let Ok(entry) = read else {
            waiting.unreadable += 1;
            continue;
        };
        waiting.count += 1;
        waiting.oldest = Some(
            waiting
                .oldest
                .map_or(entry.created_at, |oldest| oldest.min(entry.created_at)),
        );
        if let (Some(error), Some(at)) = (&entry.last_error, entry.next_at)
            && last_failed.is_none_or(|last| at > last)
        {
            last_failed = Some(at);
            waiting.last_error = Some(error.clone());
        }
    }
    waiting
}

/// `baton __alert-send`: posts what waits until the queue is empty, or its store cannot be
/// read ([`on_unread`]), then ends. Returns at once when another sender holds the lock.
pub fn run_sender(store: &dyn Store, home: &Home, backoff: Backoff) -> Result<()> {
    let log = AlertLog::new(home);
    loop {
        let held = match store.try_hold(&Duty::AlertSender) {
            Ok(Some(held)) => held,
            Ok(None) => return Ok(()),
            Err(error) => {
                log.line(&format!(
                    "cannot take up sending: {error}; the sender stopped; the queue is kept \
                     for the next sender, which the next alert queued starts"
                ));
                return Err(error.into());
            }
        };
        log.trim();
        let drained = drain(store, backoff, &log);
        drop(held);
        if drained == Drained::StoreLost {
            return Ok(());
        }
        // Queued while the lock was held, by a command that therefore started no sender.
        if queued(store).iter().all(|(_, read)| read.is_err()) && !has_dropped(store) {
            return Ok(());
        }
    }
}

/// How [`drain`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drained {
    /// Nothing waits that the sender can read.
    Empty,
    /// The store could not be read, for good or past [`Backoff::patience`]; the alerts
    /// stay queued for the next sender.
    StoreLost,
}

/// What the sender does about a store it cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Unread {
    /// Looks again: an outage, for all it knows.
    LookAgain,
    /// Ends, for the reason given.
    Stop(String),
}

/// What the sender does about `error`, met reading its store, which it has failed to read
/// for `failing_for`: it stops at once on what holds until someone changes something (the
/// database gone, the login refused, a newer baton's data), and after `patience` on
/// anything else.
fn on_unread(error: &Error, failing_for: Duration, patience: Duration) -> Unread {
    match error {
        Error::Store(error) if error.is_lasting() => {
            Unread::Stop("that will not pass by itself".to_string())
        }
        _ if failing_for >= patience => Unread::Stop(format!(
            "the store could not be read for {}",
            words(patience)
        )),
        _ => Unread::LookAgain,
    }
}

/// Posts every due alert, sleeping between rounds, until none waits. Each file is read
/// once: the sender keeps what it learned of it (it alone rewrites the files), and a round
/// reads only the files queued since the last, so a long outage costs a directory listing
/// a second, whatever waits. A store that cannot be read ends it ([`on_unread`]).
fn drain(store: &dyn Store, backoff: Backoff, log: &AlertLog) -> Drained {
    let mut known: BTreeMap<String, Queued> = BTreeMap::new();
    let mut unreadable: BTreeSet<String> = BTreeSet::new();
    // Since when the store has failed every read, and the words last logged of it.
    let mut failing: Option<(Instant, String)> = None;
    loop {
        let mut drops_looked_at = Instant::now();
        log_drops(store, log);
        for name in queued_names(store) {
            if known.contains_key(&name) || unreadable.contains(&name) {
                continue;
            }
            match read_queued(store, &name) {
                Some(Ok(entry)) => {
                    known.insert(name, entry);
                }
                Some(Err(error)) => {
                    // Left in place for a human to look at (`doctor` counts it).
                    let origin = store.document_origin(&Document::QueuedAlert(name.clone()));
                    log.line(&format!("cannot read {}: {error}", origin.place));
                    unreadable.insert(name);
                }
                None => {}
            }
        }
        if known.is_empty() {
            return Drained::Empty;
        }
        let mut next_round = time::now().plus(to_chrono(backoff.look_again()));
        let alerts = match super::load(store) {
            Ok(alerts) => {
                failing = None;
                alerts
            }
            Err(error) => {
                let words_now = error.to_string();
                let since = failing
                    .as_ref()
                    .map_or_else(Instant::now, |(since, _)| *since);
                match on_unread(&error, since.elapsed(), backoff.patience) {
                    Unread::Stop(why) => {
                        log.line(&format!(
                            "cannot read the alerts: {words_now}; the sender stopped: {why}; \
                             {} kept in the queue for the next sender, which the next \
                             alert queued starts",
                            plural::count(known.len(), "alert")
                        ));
                        return Drained::StoreLost;
                    }
                    Unread::LookAgain => {
                        // Once per kind of failure, not every second of an outage.
                        if failing
                            .as_ref()
                            .is_none_or(|(_, logged)| *logged != words_now)
                        {
                            log.line(&format!(
                                "cannot read the alerts: {words_now}; trying again for up to \
                                 {}",
                                words(backoff.patience)
                            ));
                        }
                        failing = Some((since, words_now));
                        std::thread::sleep(backoff.look_again());
                        continue;
                    }
                }
            }
        };
        let names: Vec<String> = known.keys().cloned().collect();
        for name in names {
            // A round over a long queue of slow receivers can take minutes: drops are
            // logged as they happen all the same.
            if drops_looked_at.elapsed() >= backoff.look_again() {
                drops_looked_at = Instant::now();
                log_drops(store, log);
            }
            let Some(entry) = known.get(&name) else {
                continue;
            };
            let now = time::now();
            if let Some(due) = entry.next_at
                && due > now
            {
                next_round = next_round.min(due);
                continue;
            }
            let entry = entry.clone();
            let document = Document::QueuedAlert(name.clone());
            match attempt(store, &alerts, &document, entry, backoff, log) {
                Some(entry) => {
                    if let Some(due) = entry.next_at {
                        next_round = next_round.min(due);
                    }
                    known.insert(name, entry);
                }
                None => {
                    known.remove(&name);
                }
            }
        }
        if known.is_empty() {
            continue;
        }
        let wait = time::now().until(next_round).to_std().unwrap_or_default();
        std::thread::sleep(wait.max(Duration::from_millis(1)));
    }
}

/// Logs the alerts the full queue turned away since the last look, if it turned any away.
fn log_drops(store: &dyn Store, log: &AlertLog) {
    if let Some(dropped) = take_dropped(store) {
        log.line(&format!(
            "dropped {} queued from {} to {}: the queue held its limit of {QUEUE_LIMIT}",
            plural::count(dropped.count as usize, "alert"),
            dropped.first_at,
            dropped.last_at
        ));
    }
}

/// One attempt at `entry`; returns it as it waits for the next, or `None` when it left the
/// queue (delivered, dropped after a day, or its alert is gone).
fn attempt(
    store: &dyn Store,
    alerts: &[Alert],
    document: &Document,
    mut entry: Queued,
    backoff: Backoff,
    log: &AlertLog,
) -> Option<Queued> {
    let what = describe(&entry);
    let Some(alert) = alerts.iter().find(|alert| alert.name == entry.alert) else {
        log.line(&format!("{what}: dropped: the alert was removed"));
        let _ = store.remove_document(document);
        return None;
    };
    entry.attempts += 1;
    let result = send::post(alert, &format::request(alert, &entry.event));
    let error = match result {
        Ok(answer) if answer.is_success() => {
            log.line(&format!(
                "{what}: attempt {}: delivered (HTTP {})",
                entry.attempts, answer.status
            ));
            let _ = store.remove_document(document);
            return None;
        }
        Ok(answer) => format!("HTTP {}", answer.status),
        Err(error) => error,
    };
    let now = time::now();
    if entry.created_at.until(now) >= GIVE_UP_AFTER {
        log.line(&format!(
            "{what}: attempt {}: failed ({error}); dropped: tried for a day since {}",
            entry.attempts, entry.created_at
        ));
        let _ = store.remove_document(document);
        return None;
    }
    let delay = backoff.after(entry.attempts);
    let next = now.plus(to_chrono(delay));
    log.line(&format!(
        "{what}: attempt {}: failed ({error}); next try in {}",
        entry.attempts,
        words(delay)
    ));
    entry.next_at = Some(next);
    entry.last_error = Some(error);
    // Unsynced: losing an attempt's record to a power cut only means one more attempt.
    let saved = versioned::text_of(&store.document_origin(document), &entry)
        .and_then(|text| store.save_document(document, Edit::WriteUnsynced(text)));
    if let Err(error) = saved {
        log.line(&format!("{what}: cannot record the attempt: {error}"));
    }
    Some(entry)
}

/// "alert phone: question on T-3 for ann in api", naming no URL and no secret.
fn describe(entry: &Queued) -> String {
    let event = &entry.event;
    let task = event
        .task
        .as_deref()
        .map(|task| format!(" {task}"))
        .unwrap_or_default();
    format!(
        "alert {}: {}{task} for {} in {}",
        crate::text::inline(&entry.alert),
        event.kind,
        crate::text::inline(&event.to),
        crate::text::inline(&event.project)
    )
}

fn to_chrono(duration: Duration) -> chrono::Duration {
    chrono::Duration::from_std(duration).unwrap_or(chrono::Duration::MAX)
}

fn words(delay: Duration) -> String {
    if delay >= Duration::from_secs(60) {
        format!("{} min", delay.as_secs() / 60)
    } else if delay >= Duration::from_secs(1) {
        format!("{} s", delay.as_secs())
    } else {
        format!("{} ms", delay.as_millis())
    }
}

/// `alerts/alerts.log`: one line per attempt, written by the sender alone, under its lock.
/// It keeps the log bounded as it writes, for a sender may run for a day.
struct AlertLog(TextLog);

impl AlertLog {
    fn new(home: &Home) -> Self {
        AlertLog(TextLog::new(home.alert_log(), "baton alert"))
    }

    fn line(&self, text: &str) {
        self.0.line(text);
        self.0.trim();
    }

    fn trim(&self) {
        self.0.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_up_to_its_cap() {
        let backoff = Backoff::STANDARD;
        let delays: Vec<u64> = (1..=9).map(|n| backoff.after(n).as_secs()).collect();
        assert_eq!(delays, [10, 20, 40, 80, 160, 320, 640, 900, 900]);
        assert_eq!(backoff.after(u32::MAX).as_secs(), 900);
        let knob = Backoff::of_millis(50);
        assert_eq!(knob.after(1), Duration::from_millis(50));
        assert_eq!(knob.after(10), Duration::from_millis(400));
    }

    #[test]
    fn the_sender_stops_on_a_store_gone_for_good_at_once_and_on_an_outage_after_its_patience() {
        let unreachable = |lasting| {
            Error::Store(StoreError::Unreachable {
                store: "postgres://app@db/baton".to_string(),
                detail: "database \"baton\" does not exist".to_string(),
                lasting,
            })
        };
        let patience = Backoff::STANDARD.patience;
        assert_eq!(patience, STORE_PATIENCE);
        let at_once = Duration::ZERO;
        let stopped = |unread| matches!(unread, Unread::Stop(_));
        // Gone for good (the database, the login): at once.
        assert!(stopped(on_unread(&unreachable(true), at_once, patience)));
        let newer = Error::Store(StoreError::NewerDatabase {
            store: "postgres://app@db/baton".to_string(),
            found: 99,
            known: 1,
        });
        assert!(stopped(on_unread(&newer, at_once, patience)));
        // An outage, or damage a human may mend: looked at again until the patience is out.
        let outage = unreachable(false);
        assert_eq!(on_unread(&outage, at_once, patience), Unread::LookAgain);
        let almost = patience - Duration::from_secs(1);
        assert_eq!(on_unread(&outage, almost, patience), Unread::LookAgain);
        assert_eq!(
            on_unread(&outage, patience, patience),
            Unread::Stop("the store could not be read for 10 min".to_string())
        );
        let corrupt = Error::Store(StoreError::Corrupt {
            origin: Origin::unwritten(),
            detail: "expected value".to_string(),
        });
        assert_eq!(on_unread(&corrupt, almost, patience), Unread::LookAgain);
        assert!(stopped(on_unread(&corrupt, patience, patience)));
        // The test knob shortens the patience with the delays.
        assert_eq!(Backoff::of_millis(100).patience, Duration::from_secs(5));
        assert_eq!(Backoff::of_millis(1000).patience, Duration::from_secs(50));
    }

    #[test]
    fn queued_file_names_are_unique_and_sort_by_time() {
        let early: Timestamp = "2026-12-03T12:00:00.001Z".parse().unwrap();
        let late: Timestamp = "2026-12-03T12:00:00.002Z".parse().unwrap();
        let (a, b) = (file_name(early), file_name(early));
        assert_ne!(a, b);
        assert!(file_name(early) < file_name(late));
    }
}
