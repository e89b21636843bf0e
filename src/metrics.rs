//! What a running hub counts and times, and the Prometheus text format (0.0.4) it is read in
//! (`baton serve --metrics`, [`crate::serve::metrics`]).
//!
//! The counts are kept where the work is done, on every floor (the session counts changes,
//! the store its round trips, the group commit its batches, the server its requests), in
//! the few statics below: one process serves one hub, and a count that lower floors add to
//! needs no handle threaded down to them. A process that never serves (a CLI command) adds
//! to them too, at the price of an uncontended lock, and nobody reads them. Label values are
//! only ever `&'static str` from a table (an action, an outcome, a store) or a route's
//! template: never a path, a name or a participant's text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Counts by label.
#[derive(Debug)]
pub struct Counts<K> {
    counts: Mutex<BTreeMap<K, u64>>,
}

impl<K: Ord + Clone> Counts<K> {
    pub const fn new() -> Self {
        Counts {
            counts: Mutex::new(BTreeMap::new()),
        }
    }

    fn counts(&self) -> MutexGuard<'_, BTreeMap<K, u64>> {
        // A count is one addition: nothing is left half done by a panic.
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One more of `key`.
    pub fn add(&self, key: K) {
        *self.counts().entry(key).or_default() += 1;
    }

    /// Every count so far, by label.
    pub fn read(&self) -> BTreeMap<K, u64> {
        self.counts().clone()
    }
}

impl<K: Ord + Clone> Default for Counts<K> {
    fn default() -> Self {
        Counts::new()
    }
}

/// How observations are spread over `bounds` (each bucket counts those at most its bound),
/// with their sum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// Observations per bucket, not added up: one more than the bounds, the last for those
    /// above every bound.
    pub buckets: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Spread {
    fn observe(&mut self, bounds: &[f64], value: f64) {
        if self.buckets.is_empty() {
            self.buckets = vec![0; bounds.len() + 1];
        }
        let bucket = bounds
            .iter()
            .position(|bound| value <= *bound)
            .unwrap_or(bounds.len());
        self.buckets[bucket] += 1;
        self.sum += value;
        self.count += 1;
    }
}

/// Histograms by label, all with the same bounds.
#[derive(Debug)]
pub struct Histograms<K> {
    pub bounds: &'static [f64],
    spreads: Mutex<BTreeMap<K, Spread>>,
}

impl<K: Ord + Clone> Histograms<K> {
    pub const fn new(bounds: &'static [f64]) -> Self {
        Histograms {
            bounds,
            spreads: Mutex::new(BTreeMap::new()),
        }
    }

    fn spreads(&self) -> MutexGuard<'_, BTreeMap<K, Spread>> {
        // An observation is whole once the lock is let go.
        self.spreads.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn observe(&self, key: K, value: f64) {
        self.spreads()
            .entry(key)
            .or_default()
            .observe(self.bounds, value);
    }

    /// Every spread so far, by label.
    pub fn read(&self) -> BTreeMap<K, Spread> {
        self.spreads().clone()
    }
}

/// Seconds, from a millisecond to a minute: requests and store round trips.
pub const SECONDS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// How many changes a group commit wrote at once.
pub const BATCH_SIZES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// Changes committed, by action (`send`, and the names of the table of actions).
pub static CHANGES: Counts<&'static str> = Counts::new();
/// Changes refused (the request was wrong or not allowed), by action.
pub static REFUSALS: Counts<&'static str> = Counts::new();
/// Requests answered, by route template, method and status.
pub static REQUESTS: Counts<(String, &'static str, u16)> = Counts::new();
/// The time to each request's answer (its head), by route template.
pub static REQUEST_SECONDS: Histograms<String> = Histograms::new(SECONDS);
/// Wakes asked for, by outcome.
pub static WAKE_RUNS: Counts<&'static str> = Counts::new();
/// Pushes of new work sent on MCP sessions' streams over HTTP (each event of a session's
/// log sent on a stream; one resumed from further back sends some again).
pub static MCP_PUSHES: Counts<()> = Counts::new();
/// Round trips to the store and their time, by store ([`StoreKind`]).
pub static STORE_ROUND_TRIPS: Histograms<&'static str> = Histograms::new(SECONDS);
/// The changes each group commit wrote together.
pub static GROUP_COMMIT_BATCHES: Histograms<()> = Histograms::new(BATCH_SIZES);

/// A store, as the round trips' label names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    Files,
    Postgres,
}

impl StoreKind {
    pub fn label(self) -> &'static str {
        match self {
            StoreKind::Files => "files",
            StoreKind::Postgres => "postgres",
        }
    }
}

/// One round trip to the store, counted with its time when it ends (when dropped).
#[derive(Debug)]
#[must_use = "a round trip is timed until it is dropped"]
pub struct RoundTrip {
    store: StoreKind,
    started: Instant,
}

impl RoundTrip {
    pub fn start(store: StoreKind) -> RoundTrip {
        RoundTrip {
            store,
            started: Instant::now(),
        }
    }
}

impl Drop for RoundTrip {
    fn drop(&mut self) {
        STORE_ROUND_TRIPS.observe(self.store.label(), self.started.elapsed().as_secs_f64());
    }
}

/// Counts `elapsed` as one round trip to `store`.
pub fn round_trip(store: StoreKind, elapsed: Duration) {
    STORE_ROUND_TRIPS.observe(store.label(), elapsed.as_secs_f64());
}

/// What a family is, as its `# TYPE` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A page of Prometheus' text format (0.0.4), written family by family: each family's
/// `# HELP` and `# TYPE`, then its samples.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

/// The `Content-Type` of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

impl Exposition {
    /// Starts the family `name` (a counter's ends in `_total`).
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        debug_assert!(is_metric_name(name), "{name}");
        debug_assert!(kind != Kind::Counter || name.ends_with("_total"), "{name}");
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.word());
    }

    /// One sample of the family just started.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        write_labels(&mut self.text, labels);
        let _ = writeln!(self.text, " {}", number(value));
    }

    /// The samples of one histogram of the family `name`: its buckets added up, `+Inf`
    /// last, its sum and its count.
    pub fn histogram(
        &mut self,
        name: &str,
        labels: &[(&str, &str)],
        bounds: &[f64],
        spread: &Spread,
    ) {
        let bucket = format!("{name}_bucket");
        let mut below = 0;
        for (place, bound) in bounds.iter().enumerate() {
            below += spread.buckets.get(place).copied().unwrap_or(0);
            let le = number(*bound);
            let mut with_le = labels.to_vec();
            with_le.push(("le", &le));
            self.sample(&bucket, &with_le, below as f64);
        }
        let mut with_le = labels.to_vec();
        with_le.push(("le", "+Inf"));
        self.sample(&bucket, &with_le, spread.count as f64);
        self.sample(&format!("{name}_sum"), labels, spread.sum);
        self.sample(&format!("{name}_count"), labels, spread.count as f64);
    }

    pub fn finish(self) -> String {
        self.text
    }
}

/// `{name="value",…}`, each value escaped as the format says (backslash, quote, newline);
/// nothing for no labels.
fn write_labels(text: &mut String, labels: &[(&str, &str)]) {
    if labels.is_empty() {
        return;
    }
    text.push('{');
    for (place, (name, value)) in labels.iter().enumerate() {
        if place > 0 {
            text.push(',');
        }
        text.push_str(name);
        text.push_str("=\"");
        for character in value.chars() {
            match character {
                '\\' => text.push_str("\\\\"),
                '"' => text.push_str("\\\""),
                '\n' => text.push_str("\\n"),
                other => text.push(other),
            }
        }
        text.push('"');
    }
    text.push('}');
}

/// A value as the format spells it: whole numbers without a point, `+Inf` for infinity.
fn number(value: f64) -> String {
    if value.is_infinite() {
        return if value > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if value.is_nan() {
        return "NaN".to_string();
    }
    // Rust writes a float in full, never in exponent form, which the format takes.
    format!("{value}")
}

/// Whether `name` is a metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(name: &str) -> bool {
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == ':')
        && characters.all(|rest| rest.is_ascii_alphanumeric() || rest == '_' || rest == ':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_written_with_its_help_its_type_and_escaped_labels() {
        let mut page = Exposition::default();
        page.family(
            "baton_things_total",
            Kind::Counter,
            "Things,\\ counted\non two lines",
        );
        page.sample("baton_things_total", &[("route", "/a\"b\\c\nd")], 3.0);
        page.sample("baton_things_total", &[], 0.5);
        assert_eq!(
            page.finish(),
            "# HELP baton_things_total Things,\\\\ counted\\non two lines\n\
             # TYPE baton_things_total counter\n\
             baton_things_total{route=\"/a\\\"b\\\\c\\nd\"} 3\n\
             baton_things_total 0.5\n"
        );
    }

    #[test]
    fn a_histogram_adds_its_buckets_up_and_ends_with_inf_sum_and_count() {
        let histograms: Histograms<&str> = Histograms::new(&[0.25, 1.0]);
        for value in [0.125, 0.25, 0.5, 7.0] {
            histograms.observe("x", value);
        }
        let spread = &histograms.read()["x"];
        assert_eq!(spread.buckets, vec![2, 1, 1]);
        let mut page = Exposition::default();
        page.family("baton_wait_seconds", Kind::Histogram, "Waits.");
        page.histogram(
            "baton_wait_seconds",
            &[("on", "x")],
            histograms.bounds,
            spread,
        );
        let text = page.finish();
        let samples: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(
            samples,
            [
                "baton_wait_seconds_bucket{on=\"x\",le=\"0.25\"} 2",
                "baton_wait_seconds_bucket{on=\"x\",le=\"1\"} 3",
                "baton_wait_seconds_bucket{on=\"x\",le=\"+Inf\"} 4",
                "baton_wait_seconds_sum{on=\"x\"} 7.875",
                "baton_wait_seconds_count{on=\"x\"} 4",
            ]
        );
    }

    #[test]
    fn counts_add_by_label() {
        let counts: Counts<&str> = Counts::new();
        counts.add("send");
        counts.add("send");
        counts.add("claim");
        assert_eq!(
            counts.read().into_iter().collect::<Vec<_>>(),
            [("claim", 1), ("send", 2)]
        );
    }

    #[test]
    fn metric_names_are_checked() {
        assert!(is_metric_name("baton_changes_total"));
        assert!(!is_metric_name("9lives"));
        assert!(!is_metric_name("a-b"));
        assert!(!is_metric_name(""));
    }
}
