//! `baton serve`: the hub over HTTP until SIGINT or SIGTERM (SPEC section 12).
//!
//! The first line on stdout is the URL that logs a browser in as the command's identity,
//! with a login token made for it in the fragment; the rest goes to stderr. The login token
//! lasts until it has gone unused for `--login-ttl` (SPEC section 13), whether this server
//! still runs or not: a restart makes one more and logs nobody out.

use std::net::SocketAddr;

use clap::Args;

use baton::error::Error;
use baton::names::{self, NameKind};
use baton::serve::request_log::RequestLog;
use baton::serve::{self, Settings};
use baton::{time, tokens};

use super::Context;

#[derive(Debug, Args)]
#[command(after_help = "\
Open the printed URL in a browser: it logs in as --as NAME (a login token is in the fragment).
The page opens on the project of the directory serve runs in (or --project), and keeps the login
for every tab of this browser, so a link from an alert opens its task logged in. A login ends
once unused for --login-ttl (12h), or at `baton token rm NAME`; a restart of serve ends none
(each start prints a new URL, and the old ones stay good). Agents need a token of their own:
  T=$(baton token add codex)
  curl -H \"Authorization: Bearer $T\" http://127.0.0.1:7878/api/v1/projects/default/board
  claude mcp add --transport http baton http://127.0.0.1:7878/mcp \\
    --header \"Authorization: Bearer $T\"
The token is the identity: nothing else in a request can make it act as another agent. An MCP
tool call names its project by id (`project`; `default` without one), and an MCP session
answers only the token that opened it.
A2A (Agent2Agent 1.0, and 0.3's method names): each agent's Agent Card is at
/a2a/agents/NAME/.well-known/agent-card.json, the hub's at /.well-known/agent-card.json; a
message to /a2a/agents/NAME sends NAME a task as the token's agent (first line the subject),
or answers or reviews a task waiting on it; statuses, results and streams follow the board.
Requests naming another Host than this address or localhost are refused.
Limits, against clients that hold the server: a request's head must arrive within 10s (and a
kept-alive connection is closed after 10s unused); at most 512 connections are open (half the
descriptors `ulimit -n` allows, if fewer), a new one past them closing the idlest; a token may
keep 32 streams open at once (event streams, MCP GET streams, A2A streams and waiting sends)
and all tokens 256 (half the connections), a stream beyond that refused with 429.

Watching it: --metrics 127.0.0.1:9187 answers GET /metrics there in Prometheus' text format
(changes and refusals by action, requests by route and status, streams, MCP sessions, wakes,
the alert queue, the store's round trips, group commits; docs/metrics.md), without a token;
--log json writes one JSON line per request on stderr (time, method, route, status,
duration_ms, bytes), never a token, a body, a query or a path.

Examples:
  baton --as alice serve
  baton --as alice serve --listen 0.0.0.0:7878 --allow-host hub.lan
  baton --as alice serve --metrics 127.0.0.1:9187 --log json")]
pub struct ServeArgs {
    /// The address to listen on. Loopback by default; another address reaches beyond this
    /// machine with plain HTTP, tokens included (put a TLS proxy in front). Port 0 picks a
    /// free one; the printed URL says which
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
    /// Also answer requests that name this host (repeat for several): the name agents on
    /// other machines, or a TLS proxy in front, reach the hub by. Other names are refused
    /// (403), against DNS rebinding
    #[arg(long = "allow-host", value_name = "NAME", value_parser = parse_host_name)]
    pub allow_host: Vec<String>,
    /// How long the printed login lasts unused: a number and a unit (90s, 30m, 12h, 7d).
    /// Every request of the page counts as use, so an open tab stays logged in; a browser
    /// away for longer logs in again with the URL of a serve started since
    #[arg(long = "login-ttl", value_name = "TIME", default_value = "12h", value_parser = tokens::parse_login_ttl)]
    pub login_ttl: chrono::Duration,
    /// Keep the hub's state in this PostgreSQL database (`postgres://USER@HOST:PORT/DB?
    /// sslmode=…`) rather than where BATON_STORE says (the files of the home when unset).
    /// Several servers on several machines may share one database
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Also answer `GET /metrics` (Prometheus' text format) on this address, apart from the
    /// hub's, without a token. Beyond loopback it says so, as --listen does; its `Host` rules
    /// are --listen's (its address, localhost, --allow-host names)
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<SocketAddr>,
    /// Also write one line per request on stderr, in this format: `json` (time, method,
    /// route template, status, duration_ms, bytes; never a token, a body or a query)
    #[arg(long, value_name = "FORMAT", value_parser = parse_log)]
    pub log: Option<RequestLog>,
    #[command(flatten)]
    pub wake: super::NoWake,
}

/// A request log's format as `--log` takes it.
fn parse_log(text: &str) -> Result<RequestLog, String> {
    match text {
        "json" => Ok(RequestLog::Json),
        _ => Err(format!(
            "`{}` is not a log format: the one there is is `json`",
            baton::text::inline(text)
        )),
    }
}

/// A host name as `--allow-host` takes it: a DNS name, without a port or a scheme.
fn parse_host_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if baton::names::is_host_name(name) {
        Ok(name.to_ascii_lowercase())
    } else {
        Err(format!(
            "`{}` is not a host name: give the name alone, e.g. --allow-host buildbox.lan",
            baton::text::inline(name)
        ))
    }
}

pub fn run(context: &Context, args: ServeArgs) -> Result<i32, Error> {
    // The page acts as whoever runs the server: without an identity there is nobody to log
    // in as.
    let Some(human) = context.agent() else {
        return Err(Error::invalid_with_hint(
            "no identity: the web board acts as whoever runs `baton serve`",
            "e.g. `baton serve --as alice`, or BATON_AGENT=alice",
        ));
    };
    names::check(NameKind::Agent, &human)?;
    let listener = std::net::TcpListener::bind(args.listen).map_err(|error| {
        Error::invalid_with_hint(
            format!("cannot listen on {}: {error}", args.listen),
            "pick another with --listen 127.0.0.1:PORT (port 0 picks a free one)",
        )
    })?;
    let cannot_listen = |error: std::io::Error| {
        Error::invalid(format!("cannot listen on {}: {error}", args.listen))
    };
    listener.set_nonblocking(true).map_err(cannot_listen)?;
    let address = listener.local_addr().map_err(cannot_listen)?;
    let metrics = args.metrics.map(listen_for_metrics).transpose()?;
    let hub = match &args.store {
        Some(url) if baton::store::postgres::url::may_hold_password(url) => {
            return Err(Error::invalid_with_hint(
                format!(
                    "--store {} holds a password, which every user of this machine can read \
                     in the process list",
                    baton::store::postgres::url::shown_form(url)
                ),
                "give it in PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass), or the \
                 whole URL in BATON_STORE",
            ));
        }
        Some(url) => {
            // What this server starts (a wake supervisor, the alert sender) keeps its state
            // in the same database.
            baton::process::pass_store_to_children(url);
            baton::session::Hub {
                store: baton::store::open(url, &context.hub.home, context.hub.lock)?,
                ..context.hub.clone()
            }
        }
        None => context.hub.clone(),
    };
    let start_project = start_project(context, &hub)?;
    // Expired logins go as this one is made; those of servers before it that are still good
    // stay, so their tabs stay logged in.
    let login = tokens::add_login(&*hub.store, &human, args.login_ttl, time::now())?;
    if serve::is_beyond_loopback(&address) {
        eprintln!(
            "warning: listening on {address}, beyond this machine: the traffic, tokens \
             included, is plain HTTP unless a TLS proxy is in front"
        );
    }
    let metrics_address = match &metrics {
        Some(listener) => Some(listener.local_addr().map_err(cannot_listen)?),
        None => None,
    };
    if let Some(metrics_address) = metrics_address
        && serve::is_beyond_loopback(&metrics_address)
    {
        eprintln!(
            "warning: metrics on {metrics_address}, beyond this machine: anyone who reaches it \
             may read them, with no token"
        );
    }
    let url = base_url(address);
    // Written, not printed through the CLI's output: a closed stdout is no reason to stop
    // serving, nor to exit with the login token still stored.
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{url}/#token={login}");
        let _ = stdout.flush();
    }
    eprintln!(
        "baton serve: the board of {} for {human} at {url}; MCP at {url}/mcp; Ctrl-C stops",
        hub.store.location(),
    );
    if let Some(metrics_address) = metrics_address {
        eprintln!(
            "baton serve: metrics at {}/metrics",
            base_url(metrics_address)
        );
    }
    let settings = Settings {
        hub: hub.clone(),
        report_wake: |outcome| eprintln!("{}", super::wake::describe(outcome)),
        allowed_hosts: args.allow_host.clone(),
        start_project,
        metrics,
        log: args.log.unwrap_or_default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| Error::invalid(format!("cannot start the server: {error}")))?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        serve::serve(listener, settings, stop_signal()).await
    });
    // The login stays: the next start of the server takes it up (SPEC section 13).
    served.map_err(|error| Error::invalid(format!("the server stopped: {error}")))?;
    eprintln!("baton serve: stopped");
    Ok(0)
}

/// The listener of `--metrics`, bound before the server starts so that a taken address is
/// told at once.
fn listen_for_metrics(address: SocketAddr) -> Result<std::net::TcpListener, Error> {
    let cannot = |error: std::io::Error| {
        Error::invalid_with_hint(
            format!("cannot listen on {address} for metrics: {error}"),
            "pick another with --metrics 127.0.0.1:PORT",
        )
    };
    let listener = std::net::TcpListener::bind(address).map_err(cannot)?;
    listener.set_nonblocking(true).map_err(cannot)?;
    Ok(listener)
}

/// The project the page opens on: the one `--project` names, else the one the directory
/// the server runs in belongs to, as a command run there would resolve it. A directory
/// outside every bound workspace gives `default`; one the server cannot read, nothing (the
/// page then opens on the first project).
fn start_project(context: &Context, hub: &baton::session::Hub) -> Result<Option<String>, Error> {
    if let Some(id) = context.global.project.as_deref() {
        baton::project::check_exists(&*hub.store, id)?;
        return Ok(Some(id.to_string()));
    }
    let Ok(cwd) = baton::project::current_dir() else {
        return Ok(None);
    };
    Ok(
        baton::project::resolve(&*hub.store, None, &cwd, time::now())
            .ok()
            .map(|project| project.id),
    )
}

/// The URL of a server at `address`: a server on every address is reached at loopback.
fn base_url(address: SocketAddr) -> String {
    let host = match address.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_string(),
        ip if ip.is_unspecified() => "[::1]".to_string(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    format!("http://{host}:{}", address.port())
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(terminate) => terminate,
                Err(_) => {
                    let _ = interrupt.await;
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
