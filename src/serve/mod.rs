//! `baton serve`: the hub over HTTP (SPEC section 12), one more face on the session layer.
//!
//! One axum router on the tokio runtime rmcp already uses:
//! - `/mcp`: the MCP tools of `baton mcp` over rmcp's Streamable HTTP transport, each call
//!   acting as the agent of its request's token ([`crate::session::blocking::Caller`]);
//! - `/api/v1/…` ([`api`]): the JSON of the CLI's `--json`, and `/api/v1/events` ([`events`]),
//!   one server-sent event per change;
//! - `/.well-known/agent-card.json`, `/a2a/…` ([`a2a`]): the A2A server, an Agent Card and a
//!   JSON-RPC endpoint per agent (SPEC section 17);
//! - `/` and `/assets/…` ([`page`]): the web board, built into the binary;
//! - `/healthz`: `ok` while the store answers, else 503 ([`healthz`]); 503 too, as every
//!   request, once the server drains ([`Stop::Drain`]).
//!
//! Every request first passes the `Host` check ([`auth::Hosts`], against DNS rebinding);
//! every one but `/healthz` and the page's assets then needs a bearer token, which is the
//! identity ([`auth`]); an MCP session answers only the token that opened it ([`sessions`]).
//! The server bounds what a client may hold: the connections open and the time to send a
//! request's head ([`connections`]), and the streams open, per token and in all ([`streams`]).
//! Every refusal, whoever makes it (a handler, axum, rmcp), is the API's JSON
//! ([`api::refusals_as_json`]). The server works on the same files as the CLI, under the same
//! locks. What it keeps in memory (boards, tokens) it checks against the file before each use,
//! so a change from either side is seen by the other at once.

pub mod a2a;
pub mod answers;
pub mod api;
pub mod auth;
pub mod connections;
pub mod endpoint;
pub mod events;
pub mod metrics;
mod page;
mod priming;
pub mod pushes;
pub mod request_log;
pub mod sessions;
pub mod streams;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State as Shared;
use axum::http::StatusCode;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use connections::Limits;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::BatonServer;
use crate::session::Hub;
use crate::session::blocking::off_thread;
use crate::wake::WakeOutcome;

/// What a running server needs.
pub struct Settings {
    pub hub: Hub,
    /// Told whom each change woke, as `baton mcp` is.
    pub report_wake: fn(&WakeOutcome),
    /// Host names answered besides the listen address and `localhost` (`--allow-host`):
    /// the name remote agents, or a TLS proxy in front, reach the hub by.
    pub allowed_hosts: Vec<String>,
    /// The project the web board opens on: the one of the directory `serve` runs in.
    pub start_project: Option<String>,
    /// Where `/metrics` is answered, apart from the hub (`--metrics`), if anywhere.
    pub metrics: Option<std::net::TcpListener>,
    /// How each request is logged (`--log`).
    pub log: request_log::RequestLog,
}

/// What every handler shares.
#[derive(Clone)]
pub struct State {
    pub hub: Hub,
    pub hosts: Arc<auth::Hosts>,
    pub feed: events::Feed,
    /// `tokens.json` as last parsed, looked at again on every request.
    pub tokens: Arc<crate::tokens::KeptTokens>,
    /// The MCP sessions of `/mcp` and the token that opened each.
    pub sessions: Arc<sessions::McpSessions>,
    /// Cancelled when the server stops: open event streams end with it.
    pub stopping: CancellationToken,
    /// Cancelled when the server starts draining ([`Stop::Drain`]), just before `stopping`.
    pub draining: CancellationToken,
    /// Cancelled once the server closes its listener and connections: at once when stopped
    /// at once, once the requests under way are answered when draining. rmcp's sessions end
    /// with it, so that an MCP call under way when a drain begins is answered.
    pub closing: CancellationToken,
    /// One receiver per request under way (not refused as draining), until its answer is
    /// sent: closed when none is, which a drain waits for.
    pub under_way: Arc<tokio::sync::watch::Sender<()>>,
    pub report_wake: fn(&WakeOutcome),
    /// What the web board opens on ([`Settings::start_project`]).
    pub start_project: Option<String>,
    /// Board reads as encoded, kept per version of the board ([`answers`]).
    pub board_answers: Arc<answers::BoardAnswers>,
    /// The streams open, by token, and the cap on them ([`streams`]).
    pub streams: Arc<streams::Streams>,
}

/// How a server is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// At once (SIGINT, Ctrl-C): open requests have [`STOP_FOR`] to finish.
    Now,
    /// Draining (SIGTERM, as a service manager or an orchestrator stops a service): from
    /// that moment `/healthz` and every new request are answered 503 (`Retry-After`,
    /// `Connection: close`) untouched, for a load balancer to send elsewhere; the requests
    /// under way have [`DRAIN_FOR`] to finish.
    Drain,
}

/// How long a server stopped at once waits for open requests before it exits anyway.
const STOP_FOR: Duration = Duration::from_secs(3);
/// How long a draining server waits for the requests under way before it exits anyway.
pub const DRAIN_FOR: Duration = Duration::from_secs(10);

/// Serves on `listener` until `stop` resolves, then lets open requests finish (at most
/// [`STOP_FOR`], or [`DRAIN_FOR`] when draining) and returns. Event streams and MCP
/// sessions end, cleanly, when it stops. What one client may hold is bounded by the
/// [`Limits`] of this process.
pub async fn serve(
    listener: tokio::net::TcpListener,
    settings: Settings,
    stop: impl Future<Output = Stop> + Send + 'static,
) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    let limits = Limits::for_this_process();
    let stopping = CancellationToken::new();
    // One process serves every request: it keeps boards between them and commits the
    // changes that arrive together in one write.
    let hub = settings.hub.resident();
    let feed = events::Feed::start(hub.store.clone(), stopping.clone());
    if hub.after_effects.wake {
        // On a shared store, the wakes of this machine's agents for work handed over
        // elsewhere; the thread ends with the process.
        let _ = crate::wake::wake_hosted_agents(
            hub.store.clone(),
            hub.home.clone(),
            hub.after_effects.program().map(Path::to_path_buf),
        );
    }
    let sessions = Arc::new(sessions::McpSessions::new(
        Arc::new(LocalSessionManager::default()),
        hub.store.clone(),
        feed.clone(),
    ));
    let tokens = Arc::new(crate::tokens::KeptTokens::default());
    tokio::spawn(end_sessions_of_stale_tokens(
        sessions.clone(),
        feed.clone(),
        tokens.clone(),
        stopping.clone(),
    ));
    let state = State {
        hub,
        hosts: Arc::new(
            auth::Hosts::for_listener(address).allowing(settings.allowed_hosts.clone()),
        ),
        feed,
        tokens: tokens.clone(),
        sessions,
        stopping: stopping.clone(),
        draining: CancellationToken::new(),
        closing: CancellationToken::new(),
        under_way: Arc::new(tokio::sync::watch::Sender::new(())),
        report_wake: settings.report_wake,
        start_project: settings.start_project,
        board_answers: Arc::default(),
        streams: Arc::new(streams::Streams::new(limits)),
    };
    let draining = state.draining.clone();
    let under_way = state.under_way.clone();
    let closing = state.closing.clone();
    if let Some(listener) = settings.metrics {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let hosts = auth::Hosts::for_listener(listener.local_addr()?)
            .allowing(settings.allowed_hosts.clone());
        let watched = metrics::router(state.clone(), hosts);
        // A scraper holds a connection or two: a few keep it from taking more.
        let limits = Limits {
            connections: 16,
            streams: 0,
            streams_per_token: 0,
        };
        // Scraped while the server drains, too.
        tokio::spawn(connections::serve(
            listener,
            watched,
            limits,
            closing.clone(),
        ));
    }
    // Outermost, so that every answer is counted, the refusals of the layers inside too.
    let app = router(state).layer(middleware::from_fn_with_state(
        settings.log,
        request_log::measure,
    ));
    let (closed_at, closed) = tokio::sync::oneshot::channel();
    let stopper = {
        let stopping = stopping.clone();
        let closing = closing.clone();
        async move {
            let how = stop.await;
            if how == Stop::Drain {
                // Told 503 from here on, new requests and health checks alike; the streams
                // end below, the requests already under way are waited for.
                draining.cancel();
            }
            stopping.cancel();
            if how == Stop::Drain {
                let _ = tokio::time::timeout(DRAIN_FOR, under_way.closed()).await;
            }
            let _ = closed_at.send(());
            closing.cancel();
        }
    };
    tokio::spawn(stopper);
    tokio::select! {
        () = connections::serve(listener, app, limits, closing) => Ok(()),
        // A connection that does not close when asked (a client that stopped reading)
        // does not keep the process alive.
        () = async {
            let _ = closed.await;
            tokio::time::sleep(STOP_FOR).await;
        } => Ok(()),
    }
}

/// While the server drains, the answer to every request: 503, untouched, with
/// `Retry-After` and `Connection: close`, which a load balancer sends to another hub. Any
/// other request is counted under way until its answer is sent, for the drain to wait on.
async fn refuse_while_draining(
    Shared(state): Shared<State>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    // Counted before the drain is looked at: a drain that begins in between waits for it.
    let counted = state.under_way.subscribe();
    if !state.draining.is_cancelled() {
        // An MCP session's stream (GET) ends when the drain begins, as event streams do
        // with `stopping`: its client opens it again elsewhere. The session lives on until
        // the calls under way are answered ([`State::closing`]).
        let is_mcp_stream =
            request.method() == axum::http::Method::GET && request.uri().path() == "/mcp";
        let response = next.run(request).await;
        return response.map(|body| {
            let body = match is_mcp_stream {
                true => {
                    axum::body::Body::new(connections::Until::new(body, state.draining.clone()))
                }
                false => body,
            };
            axum::body::Body::new(connections::Held::new(body, counted))
        });
    }
    drop(counted);
    let mut refusal = api::ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "this hub is stopping")
        .with_hint("send it again: another hub, or this one once it is back, takes it")
        .into_response();
    let headers = refusal.headers_mut();
    headers.insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    headers.insert(
        axum::http::header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    headers.insert(
        crate::json_api::DRAINING_HEADER,
        axum::http::HeaderValue::from_static("1"),
    );
    refusal
}

/// The whole application: the routes, the token check on all but the open ones, each MCP
/// session bound to its token, and the `Host` check, page headers and JSON refusals on
/// everything.
pub fn router(state: State) -> Router {
    let mcp = Router::new()
        .nest_service("/mcp", mcp_service(&state))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            pushes::stream_pushes,
        ))
        .layer(middleware::from_fn_with_state(
            state.streams.clone(),
            streams::hold_mcp_stream,
        ))
        .layer(middleware::from_fn(priming::for_the_version))
        .layer(middleware::from_fn_with_state(
            state.sessions.clone(),
            sessions::bind_to_token,
        ));
    let guarded = Router::new()
        .nest("/api/v1", api::routes())
        .merge(mcp)
        .merge(a2a::card_routes())
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ));
    // A2A's JSON-RPC endpoints refuse a token as JSON-RPC errors (A2A clients read those).
    let a2a_rpc = a2a::rpc_routes()
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::require_token,
        ))
        .layer(middleware::from_fn(a2a::refusals_as_rpc));
    Router::new()
        .merge(page::routes())
        .route("/healthz", get(healthz))
        .merge(guarded)
        .merge(a2a_rpc)
        .fallback(api::not_found)
        .layer(middleware::from_fn(api::refusals_as_json))
        .layer(middleware::from_fn(page::headers))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refuse_while_draining,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::check_host,
        ))
        .with_state(state)
}

/// How long `/healthz` waits for the store's answer: less than the few seconds a load
/// balancer's check waits (5 on the common ones), so that it hears 503 rather than nothing.
/// A database that cannot answer the least of questions in this time cannot serve.
const HEALTH_WITHIN: Duration = Duration::from_secs(3);

/// `/healthz`: `ok` when the store answers within [`HEALTH_WITHIN`], else 503 with the
/// API's JSON error, so that a balancer sends no request to a hub whose store does not
/// answer. Open without a token, it names neither the store nor what failed (the address
/// of a database is not for anyone who asks).
async fn healthz(Shared(state): Shared<State>) -> Response {
    let store = state.hub.store.clone();
    let checked =
        tokio::time::timeout(HEALTH_WITHIN, off_thread(move || store.check_answers())).await;
    match checked {
        Ok(Ok(Ok(()))) => "ok".into_response(),
        _ => api::ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the store does not answer")
            .into_response(),
    }
}

/// rmcp's Streamable HTTP service: a [`BatonServer`] per MCP session, each call acting as
/// its request's token, each session kept in the store so that any hub sharing it serves
/// the session ([`sessions`]). The `Host` check is ours, on every route, so rmcp's is off.
fn mcp_service(state: &State) -> StreamableHttpService<BatonServer, LocalSessionManager> {
    let hub = state.hub.clone();
    let report_wake = state.report_wake;
    let mut config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(state.closing.child_token());
    config.session_store = Some(state.sessions.clone());
    StreamableHttpService::new(
        move || Ok(BatonServer::per_request(hub.clone(), report_wake)),
        state.sessions.manager(),
        config,
    )
}

/// Whenever the tokens change, ends the MCP sessions whose token it no longer holds, so
/// that their open streams end with the token and not only their next request.
async fn end_sessions_of_stale_tokens(
    sessions: Arc<sessions::McpSessions>,
    feed: events::Feed,
    tokens: Arc<crate::tokens::KeptTokens>,
    stopping: CancellationToken,
) {
    let mut tokens_changed = feed.tokens_changed();
    loop {
        tokio::select! {
            () = stopping.cancelled() => return,
            changed = tokens_changed.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
        sessions.end_those_of_stale_tokens(&tokens).await;
    }
}

/// Whether `address` reaches beyond this machine.
pub fn is_beyond_loopback(address: &SocketAddr) -> bool {
    !address.ip().is_loopback()
}
