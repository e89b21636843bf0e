//! `baton serve --metrics ADDRESS`: a second listener, apart from the hub's own, that
//! answers `GET /metrics` in Prometheus' text format (0.0.4) with what this hub has counted
//! since it started ([`crate::metrics`]) and what it holds now (streams, MCP sessions, the
//! alert queue). The families are listed in docs/metrics.md.
//!
//! It asks no token, as scrapers expect: what it shows is counts by action, route template,
//! outcome and store, never a path, a name, a token or a participant's text. It answers only
//! the `Host` values the hub's own address rules allow ([`auth::Hosts`]: its address,
//! `localhost`, `--allow-host` names), against DNS rebinding.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State as Shared};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::auth;
use crate::activity::LogAction;
use crate::board::action::ACTIONS;
use crate::metrics::{
    self, CHANGES, Counts, Exposition, GROUP_COMMIT_BATCHES, Kind, MCP_PUSHES, REFUSALS,
    REQUEST_SECONDS, REQUESTS, STORE_ROUND_TRIPS, StoreKind, WAKE_RUNS,
};
use crate::session::blocking::off_thread;
use crate::wake::WakeOutcome;

/// What the metrics listener shares.
#[derive(Clone)]
struct Watched {
    hub: super::State,
    hosts: Arc<auth::Hosts>,
}

/// The metrics listener's application: `/metrics` alone, behind its own `Host` check.
pub fn router(hub: super::State, hosts: auth::Hosts) -> Router {
    let watched = Watched {
        hub,
        hosts: Arc::new(hosts),
    };
    Router::new()
        .route("/metrics", get(metrics))
        .fallback(super::api::not_found)
        .layer(middleware::from_fn_with_state(watched.clone(), check_host))
        .with_state(watched)
}

async fn check_host(Shared(watched): Shared<Watched>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok());
    if !host.is_some_and(|host| watched.hosts.allows(host)) {
        return auth::host_refusal(host).into_response();
    }
    next.run(request).await
}

/// What the hub holds now, asked for at each scrape.
struct Held {
    streams: usize,
    mcp_sessions: usize,
    /// None when the store did not say.
    alerts_queued: Option<usize>,
    /// The stores this hub keeps its state in: the files of its home always (its own
    /// documents), and a database when it shares one.
    stores: Vec<StoreKind>,
}

async fn metrics(Shared(watched): Shared<Watched>) -> Response {
    let state = &watched.hub;
    let store = state.hub.store.clone();
    let alerts_queued = off_thread(move || crate::alert::queue::length(&*store))
        .await
        .ok();
    let mut stores = vec![StoreKind::Files];
    if state.hub.store.is_shared_by_machines() {
        stores.push(StoreKind::Postgres);
    }
    let held = Held {
        streams: state.streams.open_in_all(),
        mcp_sessions: state.sessions.manager().sessions.read().await.len(),
        alerts_queued,
        stores,
    };
    (
        [(header::CONTENT_TYPE, metrics::CONTENT_TYPE)],
        exposition(&held),
    )
        .into_response()
}

/// Every action a change is counted by: `send`, then the table's, in its order.
fn action_names() -> impl Iterator<Item = &'static str> {
    std::iter::once(LogAction::Send.as_str()).chain(ACTIONS.iter().map(|row| row.name))
}

/// The counts of `counts` under `names` first (each shown, at 0 if none yet), then any
/// other seen.
fn with_every<'a>(
    counts: &Counts<&'static str>,
    names: impl Iterator<Item = &'a str>,
) -> Vec<(&'a str, u64)> {
    let read = counts.read();
    let mut all: Vec<(&str, u64)> = names
        .map(|name| (name, read.get(name).copied().unwrap_or(0)))
        .collect();
    for (name, count) in read {
        if !all.iter().any(|(known, _)| *known == name) {
            all.push((name, count));
        }
    }
    all
}

/// The page `/metrics` answers.
fn exposition(held: &Held) -> String {
    let mut page = Exposition::default();
    let by_action = [
        (
            "baton_changes_total",
            "Changes committed on this hub, by action: send and the actions of the table.",
            &CHANGES,
        ),
        (
            "baton_refusals_total",
            "Changes refused on this hub (the request was wrong or not allowed), by action.",
            &REFUSALS,
        ),
    ];
    for (name, help, counts) in by_action {
        page.family(name, Kind::Counter, help);
        for (action, count) in with_every(counts, action_names()) {
            page.sample(name, &[("action", action)], count as f64);
        }
    }

    let name = "baton_http_requests_total";
    page.family(
        name,
        Kind::Counter,
        "HTTP requests answered, by route template, method and status.",
    );
    for ((route, method, status), count) in REQUESTS.read() {
        let status = status.to_string();
        let labels = [
            ("route", route.as_str()),
            ("method", method),
            ("status", &status),
        ];
        page.sample(name, &labels, count as f64);
    }
    let name = "baton_http_request_duration_seconds";
    page.family(
        name,
        Kind::Histogram,
        "Time from a request's arrival to its answer's head, by route template.",
    );
    for (route, spread) in REQUEST_SECONDS.read() {
        page.histogram(name, &[("route", &route)], REQUEST_SECONDS.bounds, &spread);
    }

    let gauges = [
        (
            "baton_streams_open",
            "Streams open now: event streams, MCP GET streams, A2A streams and blocking sends.",
            Some(held.streams),
        ),
        (
            "baton_mcp_sessions_open",
            "MCP sessions open on this hub now.",
            Some(held.mcp_sessions),
        ),
        (
            "baton_alert_queue_length",
            "Alerts waiting in the queue to be sent.",
            held.alerts_queued,
        ),
    ];
    for (name, help, value) in gauges {
        page.family(name, Kind::Gauge, help);
        if let Some(value) = value {
            page.sample(name, &[], value as f64);
        }
    }

    let name = "baton_wake_runs_total";
    page.family(
        name,
        Kind::Counter,
        "Wakes of agents asked for by this hub, by outcome.",
    );
    for (outcome, count) in with_every(&WAKE_RUNS, WakeOutcome::NAMES.iter().copied()) {
        page.sample(name, &[("outcome", outcome)], count as f64);
    }

    let name = "baton_mcp_pushes_total";
    page.family(
        name,
        Kind::Counter,
        "Pushes of new work sent on MCP sessions' streams by this hub.",
    );
    let pushes = MCP_PUSHES.read().get(&()).copied().unwrap_or(0);
    page.sample(name, &[], pushes as f64);

    let trips = STORE_ROUND_TRIPS.read();
    let mut stores: Vec<&str> = held.stores.iter().map(|store| store.label()).collect();
    for store in trips.keys() {
        if !stores.contains(store) {
            stores.push(store);
        }
    }
    let name = "baton_store_round_trips_total";
    page.family(
        name,
        Kind::Counter,
        "Round trips to the store, by store: each statement sent to PostgreSQL and waited for, \
         each locked read-change-write of the files.",
    );
    for store in &stores {
        let count = trips.get(store).map_or(0, |spread| spread.count);
        page.sample(name, &[("store", store)], count as f64);
    }
    let name = "baton_store_round_trip_duration_seconds";
    page.family(
        name,
        Kind::Histogram,
        "Time of each round trip to the store, by store.",
    );
    for store in &stores {
        let spread = trips.get(store).cloned().unwrap_or_default();
        page.histogram(name, &[("store", store)], STORE_ROUND_TRIPS.bounds, &spread);
    }

    let name = "baton_group_commit_batch_size";
    page.family(
        name,
        Kind::Histogram,
        "Changes written together by one group commit (one lock, one write, or one transaction).",
    );
    let spread = GROUP_COMMIT_BATCHES.read().remove(&()).unwrap_or_default();
    page.histogram(name, &[], GROUP_COMMIT_BATCHES.bounds, &spread);
    page.finish()
}
