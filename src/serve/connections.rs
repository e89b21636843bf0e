//! The connections of `baton serve`: how many it keeps open, how long it waits for a
//! request's head, and what it does when full, so that no number of idle or stalled sockets
//! keeps it from answering `/healthz` and every other client (issue 40).
//!
//! Each connection is served by hyper's HTTP/1.1 server, which waits at most
//! [`HEADER_TIMEOUT`] for a request's head (a kept-alive connection waiting for its next
//! request included) and then closes it. At most [`Limits::connections`] are open at once. A
//! connection that arrives when all are open takes the place of the one idle the longest (no
//! request under way: a socket that has sent no whole head yet, or a kept-alive one between
//! requests), which is closed; only when every open connection is busy with a request is the
//! new one refused, with a 503 written at once, and closed. Nothing waits in a queue: an
//! attacker's idle sockets make room for the next client instead of holding it out.
//! Long-lived requests (streams) are capped apart and below this ([`super::streams`]), so
//! that room always remains for the requests that end.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::json_api::ErrorBody;

/// How long a connection may take to send a whole request head, and how long a kept-alive
/// one may wait for its next request, before it is closed. A head is a few hundred bytes: a
/// client that has not sent one in 10 s is stalled or hostile (servers ask 5 to 60 s; hyper
/// says 30 s, nginx 60 s), and a client whose kept connection closes opens another.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections open at once, whatever the system allows: ample for a team's agents
/// (a stream and a few requests each) and its browsers (at most six connections a tab).
const MOST_CONNECTIONS: usize = 512;

/// How long the accept loop rests after an error that is not one connection's (out of
/// descriptors or memory), so as not to spin on it.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// What the server bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most connections open at once.
    pub connections: usize,
    /// The most streams open at once, of all tokens ([`super::streams`]).
    pub streams: usize,
    /// The most streams one token may have open at once.
    pub streams_per_token: usize,
}

impl Limits {
    /// The limits for this process: [`MOST_CONNECTIONS`], or half the descriptors it may
    /// open if that is fewer (the other half for the store's files and database, the event
    /// feed and the processes it starts). Past the descriptors, accepting fails and every
    /// client waits, `/healthz` too: the cap must come first. Streams take at most half the
    /// connections, so that requests that end always have room; one token at most 32 of
    /// them (an agent's `listen`, its MCP sessions and the A2A tasks it follows at once).
    pub fn for_this_process() -> Limits {
        Limits::for_descriptors(open_file_limit())
    }

    fn for_descriptors(descriptors: Option<u64>) -> Limits {
        let half = descriptors
            .map(|limit| usize::try_from(limit / 2).unwrap_or(usize::MAX))
            .unwrap_or(MOST_CONNECTIONS);
        // Fewer than this serves nobody well; a system that allows so few is told by its
        // accept errors, which close idle connections too.
        let connections = half.clamp(16, MOST_CONNECTIONS);
        let streams = connections / 2;
        Limits {
            connections,
            streams,
            streams_per_token: streams.min(32),
        }
    }
}

/// The soft limit of open descriptors, where the system says one.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    #[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, not everywhere.
    u64::try_from(soft).ok()
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// Accepts and serves connections on `listener` with `router` until `stopping` is
/// cancelled; then asks every connection to close once its request is answered, and
/// returns when all have (the caller bounds that wait).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    stopping: CancellationToken,
) {
    let table = Arc::new(Table::new(limits.connections));
    // Each connection holds a receiver: the sender is closed once all are gone.
    let (all_gone, open) = watch::channel(());
    loop {
        let accepted = tokio::select! {
            () = stopping.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let socket = match accepted {
            Ok((socket, _)) => socket,
            Err(error) if is_one_connections(&error) => continue,
            Err(_) => {
                // Out of descriptors after all (the store, or processes started, took more
                // than foreseen): one freed is one more client answered.
                table.close_idlest();
                tokio::select! {
                    () = stopping.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                }
            }
        };
        match table.admit(&stopping) {
            Some(admission) => {
                tokio::spawn(serve_connection(
                    socket,
                    admission,
                    router.clone(),
                    open.clone(),
                ));
            }
            None => refuse(&socket, limits.connections),
        }
    }
    drop(listener);
    drop(open);
    all_gone.closed().await;
}

/// Whether an accept error concerns that one connection alone (gone before it was taken).
fn is_one_connections(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it closes, or until it is asked to (the server stops, or a
/// newer connection takes its place while it is idle): an idle one closes at once, a busy
/// one once its answer is sent.
async fn serve_connection(
    socket: TcpStream,
    admission: Admission,
    router: Router,
    _open: watch::Receiver<()>,
) {
    // hyper writes an answer's head and body in separate small writes: with Nagle's
    // algorithm on, a client that keeps its connection waits out its delayed ACK (some
    // 40 ms) on every request.
    let _ = socket.set_nodelay(true);
    let handler = Handler {
        router,
        connection: admission.connection.clone(),
        epoch: admission.table.epoch,
    };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(socket), handler);
    tokio::pin!(connection);
    let close = admission.connection.close.clone();
    tokio::select! {
        // An error here is the client's (gone, too slow, not HTTP): nobody to tell.
        _ = connection.as_mut() => return,
        () = close.cancelled() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// The answer to a connection beyond the limit when none can make room, written without
/// reading its request: a 503 in the API's JSON, then the connection closes.
fn refuse(socket: &TcpStream, limit: usize) {
    let body = ErrorBody {
        error: format!(
            "the server is at its limit of {limit} open connections, each busy with a request"
        ),
        hint: Some("try again in a moment".to_string()),
        code: None,
    };
    let body = serde_json::to_string(&body).unwrap_or_default();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // A new connection's send buffer takes a few hundred bytes at once; if not, the client
    // is told by the close alone. Never waited for: that is what the limit is against.
    let _ = socket.try_write(answer.as_bytes());
}

/// The open connections.
struct Table {
    limit: usize,
    /// What [`Connection::idle_since`] counts from.
    epoch: Instant,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    next: u64,
    connections: HashMap<u64, Arc<Connection>>,
}

/// One open connection, as the table sees it.
struct Connection {
    /// Requests under way: from a head read to the end of its answer's body.
    busy: AtomicUsize,
    /// When it was last busy (or opened), in milliseconds from the table's epoch.
    idle_since: AtomicU64,
    /// Cancelled to ask it to close: when it makes room, or when the server stops.
    close: CancellationToken,
}

impl Table {
    fn new(limit: usize) -> Table {
        Table {
            limit,
            epoch: Instant::now(),
            open: Mutex::new(Open::default()),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // Every change under the lock is one insert or one remove: whole whatever panicked.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for a new connection: a free one, or that of the connection idle the longest,
    /// which is asked to close; none when every open connection is busy.
    fn admit(self: &Arc<Self>, stopping: &CancellationToken) -> Option<Admission> {
        let mut open = self.open();
        if open.connections.len() >= self.limit && !close_idlest(&mut open) {
            return None;
        }
        let id = open.next;
        open.next += 1;
        let connection = Arc::new(Connection {
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(millis_since(self.epoch)),
            close: stopping.child_token(),
        });
        open.connections.insert(id, connection.clone());
        Some(Admission {
            table: self.clone(),
            id,
            connection,
        })
    }

    /// Closes the connection idle the longest, if one is.
    fn close_idlest(&self) {
        close_idlest(&mut self.open());
    }
}

/// Asks the connection idle the longest to close, and forgets it at once: it closes as soon
/// as its task runs, and a request that arrived on it meanwhile is answered first. False
/// when every connection is busy.
fn close_idlest(open: &mut Open) -> bool {
    let idlest = open
        .connections
        .iter()
        .filter(|(_, connection)| connection.busy.load(Ordering::Acquire) == 0)
        // Of two idle since the same moment, the older.
        .min_by_key(|(id, connection)| (connection.idle_since.load(Ordering::Acquire), **id))
        .map(|(id, _)| *id);
    let Some(connection) = idlest.and_then(|id| open.connections.remove(&id)) else {
        return false;
    };
    connection.close.cancel();
    true
}

fn millis_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A connection's place in the table, given up when its task ends.
struct Admission {
    table: Arc<Table>,
    id: u64,
    connection: Arc<Connection>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.table.open().connections.remove(&self.id);
    }
}

/// Marks its connection busy for as long as it lives: a request, from its head to the end
/// of its answer's body.
struct Busy {
    connection: Arc<Connection>,
    epoch: Instant,
}

impl Busy {
    fn of(connection: &Arc<Connection>, epoch: Instant) -> Busy {
        connection.busy.fetch_add(1, Ordering::AcqRel);
        Busy {
            connection: connection.clone(),
            epoch,
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let connection = &self.connection;
        connection
            .idle_since
            .store(millis_since(self.epoch), Ordering::Release);
        connection.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// hyper's service for one connection: the router, each request marked busy on the
/// connection until its answer's body is sent.
#[derive(Clone)]
struct Handler {
    router: Router,
    connection: Arc<Connection>,
    epoch: Instant,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Handler {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let busy = Busy::of(&self.connection, self.epoch);
        let mut router = self.router.clone();
        Box::pin(async move {
            let request: Request = request.map(Body::new);
            std::future::poll_fn(|context| {
                tower_service::Service::<Request>::poll_ready(&mut router, context)
            })
            .await?;
            let response = tower_service::Service::call(&mut router, request).await?;
            Ok(response.map(|body| Body::new(Held::new(body, busy))))
        })
    }
}

/// A body that keeps `guard` until it is sent or dropped: what lasts as long as an answer
/// (a connection's busy mark, a stream's slot) ends with it, however it ends.
pub struct Held<Guard> {
    body: Body,
    _guard: Guard,
}

impl<Guard> Held<Guard> {
    pub fn new(body: Body, guard: Guard) -> Held<Guard> {
        Held {
            body,
            _guard: guard,
        }
    }
}

impl<Guard: Send + Unpin + 'static> HttpBody for Held<Guard> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A body that ends, cleanly, once `ended` is cancelled: a stream that is not to outlive a
/// drain (its client opens it again, on another hub).
pub struct Until {
    body: Body,
    ended: Pin<Box<tokio_util::sync::WaitForCancellationFutureOwned>>,
}

impl Until {
    pub fn new(body: Body, ended: CancellationToken) -> Until {
        Until {
            body,
            ended: Box::pin(ended.cancelled_owned()),
        }
    }
}

impl HttpBody for Until {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        if self.ended.as_mut().poll(context).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(context)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_stay_below_the_descriptors_and_streams_below_the_connections() {
        let common = Limits::for_descriptors(Some(1024));
        assert_eq!(
            common,
            Limits {
                connections: 512,
                streams: 256,
                streams_per_token: 32
            }
        );
        // macOS's default.
        let small = Limits::for_descriptors(Some(256));
        assert_eq!((small.connections, small.streams), (128, 64));
        assert_eq!(Limits::for_descriptors(Some(1 << 20)).connections, 512);
        assert_eq!(Limits::for_descriptors(None).connections, 512);
        assert_eq!(Limits::for_descriptors(Some(10)).streams_per_token, 8);
    }

    #[test]
    fn a_full_table_makes_room_by_closing_the_idlest_and_refuses_when_all_are_busy() {
        let stopping = CancellationToken::new();
        let table = Arc::new(Table::new(2));
        let first = table.admit(&stopping).unwrap();
        let second = table.admit(&stopping).unwrap();
        let busy_second = Busy::of(&second.connection, table.epoch);
        let third = table.admit(&stopping).expect("the idle first makes room");
        assert!(first.connection.close.is_cancelled());
        assert!(!second.connection.close.is_cancelled());
        let busy_third = Busy::of(&third.connection, table.epoch);
        assert!(table.admit(&stopping).is_none(), "both busy");
        drop(busy_second);
        let _fourth = table.admit(&stopping).expect("the second is idle again");
        assert!(second.connection.close.is_cancelled());
        drop(busy_third);
        drop(first);
        assert_eq!(table.open().connections.len(), 2);
    }
}
