//! The client side of a hub on another machine (SPEC section 13): with `BATON_URL` and
//! `BATON_TOKEN` set, commands, hooks, `wait`, `watch`, `listen` and `baton mcp` act on the
//! hub through its HTTP API as the token's agent, instead of on this machine's files.
//!
//! [`HubClient`] is the connection: one blocking HTTP client, the token sent as a bearer header
//! on every request, the hub's `{error, hint, code}` refusals turned back into
//! [`Error::Hub`] with the exit code the command has on the hub's own machine, and every
//! failure to reach it into [`Error::Unreachable`] (exit 6). The token never appears in an
//! error, a log line or an argv of baton's.

pub mod desk;
pub mod events;
pub mod listen;
pub mod map;

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result, Unanswered};

/// How long a command waits to connect to the hub before it says the hub is unreachable.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);
/// How long one request may take in all. A board of 10,000 tasks is a few megabytes.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);
/// How long the hub may take to open its event stream (the head of its answer, which it
/// sends at once): a hub that takes a connection and never answers is unreachable, not a
/// stream that has yet to say something.
pub const OPEN_WITHIN: Duration = Duration::from_secs(10);
/// The most of a listing's answer a client reads (a board, the log, an inbox, the messages,
/// the agents, a task and its thread): a board of 10,000 tasks is a few megabytes, and this
/// leaves room for boards ten times that, far below running out of memory.
pub const LIST_ANSWER_LIMIT: u64 = 64 * 1024 * 1024;
/// The most of any other answer read: one record (who the token is, a project, an agent, a
/// change's result, a wake).
pub const RECORD_ANSWER_LIMIT: u64 = 4 * 1024 * 1024;
/// The most of a hook's answer read: the hub keeps the answer's text under 16 KiB as the
/// client receives it (SPEC section 10); the JSON around it, and escapes that grow in
/// transit, stay well under this.
pub const HOOK_ANSWER_LIMIT: u64 = 64 * 1024;
/// The header that says who the caller means to be, so that `--as` naming anyone but the
/// token's agent is refused by the hub rather than silently ignored.
pub const CLAIMED_AGENT_HEADER: &str = "baton-as";
/// The header by which a request says it comes from a process acting for the token's agent
/// while the agent may be away (`listen`, a remote `watch`), not from the agent itself: the
/// hub then renews none of the agent's leases for it (SPEC section 3). Its value names the
/// process ([`Observer`]); on the event stream, `listen` announces the agent's listener.
pub const OBSERVER_HEADER: &str = "baton-observer";

/// A process that looks on the hub for the token's agent, as [`OBSERVER_HEADER`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observer {
    /// `baton listen`: wakes the agent on its machine when work arrives.
    Listen,
    /// `baton watch`: a board on a screen.
    Watch,
}

impl Observer {
    /// The header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Observer::Listen => "listen",
            Observer::Watch => "watch",
        }
    }
}

/// The hubs `BATON_URL` names, in its order, and the one in use: the first that answered,
/// kept until it stops answering (SPEC section 16). Shared by every copy of a [`HubClient`], so
/// that a request made through one (a look of `wait`) and a stream opened through another
/// go to the same hub.
#[derive(Debug)]
struct Hubs {
    urls: Vec<String>,
    current: AtomicUsize,
}

impl Hubs {
    fn current(&self) -> usize {
        self.current.load(Ordering::SeqCst)
    }

    /// The hub at `index` answered: it is the one used from now on.
    fn answered(&self, index: usize) {
        self.current.store(index, Ordering::SeqCst);
    }

    /// The hub at `index` stopped answering (a stream broke, a change got no answer): the
    /// next request tries the one after it first, unless another has been moved to meanwhile.
    fn failed(&self, index: usize) {
        let next = (index + 1) % self.urls.len();
        let _ = self
            .current
            .compare_exchange(index, next, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The order to try them in for the next request: the one in use, then the rest after
    /// it, round the list.
    fn in_turn(&self) -> impl Iterator<Item = usize> + '_ {
        let first = self.current();
        (0..self.urls.len()).map(move |step| (first + step) % self.urls.len())
    }
}

/// Where the hubs are and the token that is the caller's identity there.
#[derive(Clone)]
pub struct HubClient {
    hubs: Arc<Hubs>,
    token: String,
    /// The identity the caller named (`--as`, `BATON_AGENT`), checked by the hub.
    claimed: Option<String>,
    /// Set for a process looking on the agent's behalf: sent as [`OBSERVER_HEADER`].
    observer: Option<Observer>,
    agent: ureq::Agent,
    /// How long a request may take in all, whichever hubs it is tried on.
    within: Duration,
}

/// Never prints the token.
impl std::fmt::Debug for HubClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("HubClient")
            .field("urls", &self.hubs.urls)
            .field("current", &self.hubs.current())
            .field("claimed", &self.claimed)
            .field("observer", &self.observer)
            .finish_non_exhaustive()
    }
}

/// How a request that got no answer from one hub may go on to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Replay {
    /// A read: asked again of the next hub whatever happened to it.
    Safe,
    /// A change: asked of the next hub only when it never reached this one (the connection
    /// was refused or never made). Once sent, the hub may have made it before it went
    /// silent, and a second hub would make it twice (a task sent twice, a claim refused as
    /// already made).
    OnlyUnsent,
}

/// An answer read whole: its status, its head and its body.
struct Reply {
    status: u16,
    headers: ureq::http::HeaderMap,
    body: Vec<u8>,
}

impl HubClient {
    /// The hubs `BATON_URL` names, with the token of `BATON_TOKEN` (or of the variable
    /// `BATON_TOKEN_ENV` names, or of the file `BATON_TOKEN_FILE` names); `None` when
    /// `BATON_URL` is unset or empty.
    pub fn from_environment() -> Result<Option<HubClient>> {
        let Some(url) = non_empty_var("BATON_URL") else {
            return Ok(None);
        };
        // Checked before the token is looked for: a list that is wrong is said as such.
        hub_urls(&url)?;
        let named = non_empty_var("BATON_TOKEN_ENV");
        let token = match (non_empty_var("BATON_TOKEN"), named) {
            (Some(token), _) => token,
            (None, Some(variable)) => token_of_variable(&variable)?,
            (None, None) => match non_empty_var("BATON_TOKEN_FILE") {
                Some(path) => read_token_file(&PathBuf::from(path))?,
                None => {
                    return Err(Error::invalid_with_hint(
                        format!(
                            "BATON_URL is set ({}) but no token: the token is your identity \
                             on the hub",
                            crate::text::inline(&url)
                        ),
                        "on the hub's machine `baton token add NAME` prints one; set \
                         BATON_TOKEN to it (or BATON_TOKEN_FILE to a file holding it)",
                    ));
                }
            },
        };
        HubClient::new(&url, token).map(Some)
    }

    /// A connection to the hubs `urls` names ([`hub_urls`]: one URL, or several
    /// comma-separated, http or https, a trailing `/` dropped), the token the same on each.
    pub fn new(urls: &str, token: String) -> Result<HubClient> {
        let urls = hub_urls(urls)?;
        if token.chars().any(|c| c.is_control() || c == ' ') {
            return Err(Error::invalid(
                "the token holds a space or a control character: it is not one `baton token \
                 add` printed",
            ));
        }
        Ok(HubClient {
            hubs: Arc::new(Hubs {
                urls,
                current: AtomicUsize::new(0),
            }),
            token,
            claimed: None,
            observer: None,
            agent: client(),
            within: ANSWER_WITHIN,
        })
    }

    /// The same hub, with the identity the caller named sent along for the hub to check.
    pub fn claiming(mut self, agent: Option<String>) -> HubClient {
        self.claimed = agent;
        self
    }

    /// The same hub, its requests made by `observer` on the agent's behalf: the hub renews
    /// no lease and records no heartbeat for them (SPEC section 3).
    pub fn observing(mut self, observer: Observer) -> HubClient {
        self.observer = Some(observer);
        self
    }

    /// The same hub, giving up on a request after `within` in all, every hub tried
    /// included: what a hook, which must answer its client within 2 seconds, uses.
    pub fn within(mut self, within: Duration) -> HubClient {
        self.within = within;
        self
    }

    /// The base URL of the hub in use, as shown to people (it holds no secret).
    pub fn url(&self) -> &str {
        &self.hubs.urls[self.hubs.current()]
    }

    /// "the hub at URL", or "the hubs at URL, URL" when there are several: for words about
    /// all of them.
    pub fn described(&self) -> String {
        match self.hubs.urls.as_slice() {
            [one] => format!("the hub at {one}"),
            several => format!("the hubs at {}", several.join(", ")),
        }
    }

    /// What `BATON_URL` says for a process that acts on these hubs in the caller's name (a
    /// wake command started by `listen`): every hub, the one in use first, so that it
    /// starts where this process found an answer.
    pub fn urls_for_environment(&self) -> String {
        self.hubs
            .in_turn()
            .map(|index| self.hubs.urls[index].as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Each hub alone, in `BATON_URL`'s order, with this one's token and settings: for a
    /// look at every hub (`doctor`).
    pub fn each(&self) -> Vec<HubClient> {
        self.hubs
            .urls
            .iter()
            .map(|url| HubClient {
                hubs: Arc::new(Hubs {
                    urls: vec![url.clone()],
                    current: AtomicUsize::new(0),
                }),
                ..self.clone()
            })
            .collect()
    }

    /// `GET /api/v1{path}`, its JSON answer decoded.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let reply = self.exchange(path, Replay::Safe, answer_limit(path), |base, within| {
            let request = self.agent.get(self.api(base, path));
            self.prepare(request, within).call()
        })?;
        self.decode(path, &reply)
    }

    /// The hub's A2A Agent Card (`/.well-known/agent-card.json`, beside the API), which
    /// lists the hub's agents as its skills.
    pub fn agent_card(&self) -> Result<serde_json::Value> {
        let path = "/.well-known/agent-card.json";
        let reply = self.exchange(path, Replay::Safe, LIST_ANSWER_LIMIT, |base, within| {
            let request = self.agent.get(format!("{base}{path}"));
            self.prepare(request, within).call()
        })?;
        self.decode(path, &reply)
    }

    /// `POST /api/v1{path}` with `body` as JSON, its JSON answer decoded.
    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T> {
        let json = serde_json::to_vec(body)
            .map_err(|error| Error::invalid(format!("cannot encode the request: {error}")))?;
        let reply = self.exchange(
            path,
            Replay::OnlyUnsent,
            answer_limit(path),
            |base, within| {
                let request = self
                    .agent
                    .post(self.api(base, path))
                    .content_type("application/json");
                self.prepare(request, within).send(&json[..])
            },
        )?;
        self.decode(path, &reply)
    }

    /// The full URL of an API path on the hub at `base`.
    fn api(&self, base: &str, path: &str) -> String {
        format!("{base}{}{path}", crate::json_api::API)
    }

    /// Adds the bearer token and the claimed identity to a request: every request to a
    /// hub, whatever it asks for, goes through here.
    fn authorize<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let mut request = request.header("authorization", format!("Bearer {}", self.token));
        if let Some(agent) = &self.claimed {
            request = request.header(CLAIMED_AGENT_HEADER, agent);
        }
        if let Some(observer) = self.observer {
            request = request.header(OBSERVER_HEADER, observer.as_str());
        }
        request
    }

    /// [`HubClient::authorize`] for a request of the JSON API that may take `within` (its
    /// connection [`Within::connect`] of it).
    fn prepare<B>(
        &self,
        request: ureq::RequestBuilder<B>,
        within: Within,
    ) -> ureq::RequestBuilder<B> {
        within.on(
            self.authorize(request).header("accept", "application/json"),
            true,
        )
    }

    /// Makes a request with `attempt` on the hub in use and, while it gets no answer, on
    /// the next (as `replay` allows), all within [`HubClient::within`]; reads the answer's body
    /// up to `limit`. The hub that answered is the one in use from then on. None answering
    /// is [`Error::Unreachable`], naming each hub tried and why.
    fn exchange(
        &self,
        path: &str,
        replay: Replay,
        limit: u64,
        attempt: impl Fn(
            &str,
            Within,
        ) -> std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Reply> {
        let deadline = Instant::now() + self.within;
        let order: Vec<usize> = self.hubs.in_turn().collect();
        let mut tried = Vec::new();
        for (step, &index) in order.iter().enumerate() {
            let url = &self.hubs.urls[index];
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tried.push(Unanswered {
                    url: url.clone(),
                    cause: "not tried: the request's time was up".into(),
                });
                continue;
            }
            let within = Within::sharing(left, order.len() - step);
            let answer = attempt(url, within).and_then(|mut response| {
                let body = response
                    .body_mut()
                    .with_config()
                    .limit(limit)
                    .read_to_vec()?;
                Ok(Reply {
                    status: response.status().as_u16(),
                    headers: response.headers().clone(),
                    body,
                })
            });
            let error = match answer {
                Ok(reply) => {
                    self.hubs.answered(index);
                    return Ok(reply);
                }
                Err(error) => error,
            };
            if let ureq::Error::BodyExceedsLimit(limit) = error {
                return Err(too_large(url, path, limit));
            }
            let cause = why_unreachable(&error, within.all);
            if replay == Replay::OnlyUnsent && !never_sent(&error) {
                // The change may have been made: asked again elsewhere it could be made
                // twice. The next request starts at the next hub.
                self.hubs.failed(index);
                let cause = match self.hubs.urls.len() {
                    1 => cause,
                    _ => format!(
                        "{cause}, after the request was sent: it was not sent to another hub, \
                         since this one may have made the change (look before doing it again)"
                    ),
                };
                tried.push(Unanswered {
                    url: url.clone(),
                    cause,
                });
                return Err(Error::Unreachable { tried });
            }
            tried.push(Unanswered {
                url: url.clone(),
                cause,
            });
        }
        Err(Error::Unreachable { tried })
    }

    /// A request's answer: its JSON decoded, or the hub's refusal.
    fn decode<T: DeserializeOwned>(&self, path: &str, reply: &Reply) -> Result<T> {
        if (200..300).contains(&reply.status) {
            return serde_json::from_slice(&reply.body).map_err(|error| Error::Hub {
                message: format!(
                    "the hub at {} answered {path} with what this baton cannot read \
                     ({error}); is it the same version?",
                    self.url()
                ),
                hint: None,
                code: 1,
            });
        }
        Err(refusal(self.url(), reply.status, &reply.body))
    }

    /// Opens the event stream (`/api/v1/events`) of the hub in use, else of the next that
    /// opens it: one [`events::Change`] per change on the hubs, for as long as the
    /// connection holds. A hub that does not open it within [`OPEN_WITHIN`] is unreachable.
    pub fn events(&self) -> Result<events::Events> {
        self.open_events(None)
    }

    /// [`HubClient::events`], giving up once `within` has passed without a stream open, however
    /// many hubs were tried: what `wait --timeout` uses, so that its timeout holds however
    /// the hubs behave.
    pub fn events_within(&self, within: Duration) -> Result<events::Events> {
        self.open_events(Some(Instant::now() + within))
    }

    fn open_events(&self, deadline: Option<Instant>) -> Result<events::Events> {
        let order: Vec<usize> = self.hubs.in_turn().collect();
        let mut tried = Vec::new();
        for (step, &index) in order.iter().enumerate() {
            let url = &self.hubs.urls[index];
            // Each hub may take OPEN_WITHIN to open it, within the caller's time if any.
            let left = deadline.map_or(OPEN_WITHIN, |deadline| {
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(OPEN_WITHIN)
            });
            if left.is_zero() {
                tried.push(Unanswered {
                    url: url.clone(),
                    cause: "not tried: the time given was up".into(),
                });
                continue;
            }
            let within = match deadline {
                Some(_) => Within::sharing(left, order.len() - step),
                None => Within::sharing(left, 1),
            };
            // No limit on the whole answer: the stream lasts as long as the caller wants
            // it; a silent connection is noticed by the keep-alives that stop coming. Its
            // opening (the connection, then the head of the answer) is bounded: a hub that
            // takes the connection and never answers would otherwise hold the caller for
            // ever.
            let request = within.on(
                self.authorize(
                    self.agent
                        .get(self.api(url, crate::json_api::route::EVENTS.pattern())),
                )
                .header("accept", "text/event-stream"),
                false,
            );
            let mut response = match request.call() {
                Ok(response) => response,
                Err(error) => {
                    tried.push(Unanswered {
                        url: url.clone(),
                        cause: why_unreachable(&error, within.all),
                    });
                    continue;
                }
            };
            let status = response.status();
            if !status.is_success() {
                let mut body = Vec::new();
                let _ = response
                    .body_mut()
                    .as_reader()
                    .take(64 * 1024)
                    .read_to_end(&mut body);
                return Err(refusal(url, status.as_u16(), &body));
            }
            self.hubs.answered(index);
            let hubs = Arc::clone(&self.hubs);
            return Ok(
                events::Events::new(response.into_body().into_reader(), url.clone())
                    .on_broken(move || hubs.failed(index)),
            );
        }
        Err(Error::Unreachable { tried })
    }

    /// Sends one JSON-RPC message to the MCP endpoint (`/mcp`, Streamable HTTP) of the hub
    /// in use as the bridge of `baton mcp` does, and returns the answer as it came: its
    /// status, its session id, and the JSON-RPC messages it carried (one JSON body, or the
    /// `data` of each server-sent event), and which hub answered (a session is one hub's).
    pub fn mcp(&self, message: &[u8], session: Option<&str>) -> Result<McpAnswer> {
        let reply = self.exchange(
            "/mcp",
            Replay::OnlyUnsent,
            LIST_ANSWER_LIMIT,
            |base, within| {
                let mut request = self
                    .authorize(self.agent.post(format!("{base}/mcp")))
                    .header("accept", "application/json, text/event-stream")
                    .content_type("application/json");
                if let Some(session) = session {
                    request = request.header("mcp-session-id", session);
                }
                within.on(request, true).send(message)
            },
        )?;
        let header = |name: &str| {
            reply
                .headers
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)
        };
        let session = header("mcp-session-id");
        let is_stream =
            header("content-type").is_some_and(|kind| kind.starts_with("text/event-stream"));
        let text = String::from_utf8_lossy(&reply.body);
        let messages = if is_stream {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .filter(|data| serde_json::from_str::<serde_json::Value>(data).is_ok())
                .map(str::to_string)
                .collect()
        } else if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
            vec![text.trim().to_string()]
        } else {
            Vec::new()
        };
        let status = reply.status;
        Ok(McpAnswer {
            status,
            session,
            messages,
            refusal: (!(200..300).contains(&status))
                .then(|| refusal(self.url(), status, &reply.body)),
            hub: self.url().to_string(),
        })
    }

    /// Ends the MCP session `session` on the hub in use (best-effort: the hub forgets idle
    /// ones).
    pub fn end_mcp(&self, session: &str) {
        let within = Within::sharing(self.within.min(CONNECT_WITHIN), 1);
        let request = self
            .authorize(self.agent.delete(format!("{}/mcp", self.url())))
            .header("mcp-session-id", session);
        let _ = within.on(request, true).call();
    }

    /// The token, for the environment of a process that acts on the hub in the caller's
    /// name (a wake command started by `listen`).
    pub fn token(&self) -> &str {
        &self.token
    }
}

/// The time one attempt on one hub may take: `all` of it, its connection `connect`, and
/// the head of its answer `head` (from the request sent).
#[derive(Debug, Clone, Copy)]
struct Within {
    all: Duration,
    connect: Duration,
    head: Duration,
}

impl Within {
    /// `left` for one attempt, with `hubs` still to try: its connection may take at most
    /// [`CONNECT_WITHIN`] and its share of what is left, and the head of its answer its
    /// share, so that a hub that takes no connection, or takes one and never answers,
    /// leaves time for the next. With one hub to try, it has all that is left.
    fn sharing(left: Duration, hubs: usize) -> Within {
        let share = left / u32::try_from(hubs.max(1)).unwrap_or(u32::MAX);
        Within {
            all: left,
            connect: share.min(CONNECT_WITHIN),
            head: share,
        }
    }

    /// Sets these limits on `request`; `whole` bounds the whole exchange, body included
    /// (not for an event stream, which lasts as long as its reader wants).
    fn on<B>(self, request: ureq::RequestBuilder<B>, whole: bool) -> ureq::RequestBuilder<B> {
        request
            .config()
            .timeout_global(whole.then_some(self.all))
            .timeout_connect(Some(self.connect))
            .timeout_send_request(Some(self.all))
            .timeout_recv_response(Some(self.head))
            .build()
    }
}

/// Whether a request that failed so never reached the hub: its name did not resolve, or no
/// connection was made. Anything later (the connection dropped, no answer in time) may
/// have come after the hub read the request.
fn never_sent(error: &ureq::Error) -> bool {
    use std::io::ErrorKind;
    match error {
        ureq::Error::Timeout(ureq::Timeout::Connect | ureq::Timeout::Resolve)
        | ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::BadUri(_)
        | ureq::Error::Tls(_)
        | ureq::Error::Rustls(_) => true,
        ureq::Error::Io(io) => matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::NetworkUnreachable
                | ErrorKind::HostUnreachable
                | ErrorKind::AddrNotAvailable
                | ErrorKind::NetworkDown
        ),
        _ => false,
    }
}

/// The error for an answer larger than any a hub gives.
fn too_large(url: &str, path: &str, limit: u64) -> Error {
    Error::Hub {
        message: format!(
            "the hub at {url} answered {} with more than {}: no answer of a baton hub is that \
             large",
            crate::text::inline(path),
            size(limit)
        ),
        hint: Some(
            "is BATON_URL the address `baton serve` printed? A board that large can be read in \
             parts (`baton board --status S`, `--mine`)"
                .into(),
        ),
        code: 1,
    }
}

/// What the hub's MCP endpoint answered one message with.
#[derive(Debug)]
pub struct McpAnswer {
    pub status: u16,
    /// The session the hub opened (on `initialize`) or kept.
    pub session: Option<String>,
    /// The JSON-RPC messages of the answer, each one line of JSON.
    pub messages: Vec<String>,
    /// The hub's refusal, for an answer that is not a success.
    pub refusal: Option<Error>,
    /// The hub that answered: an MCP session is kept by the hub that opened it.
    pub hub: String,
}

/// What `baton doctor` adds on a machine whose hub is elsewhere: whether each hub
/// `BATON_URL` names answers and as whom, and whether the project this directory acts on
/// is there.
pub fn hub_checks(hub: &HubClient, project: &str) -> Vec<crate::doctor::Check> {
    use crate::doctor::Check;
    let mut checks = Vec::new();
    let mut answers = false;
    for one in hub.each() {
        match listen::agent_of(&one) {
            Ok(agent) => {
                answers = true;
                checks.push(Check::ok(
                    "hub",
                    format!(
                        "the hub at {} answers; the token acts as {agent}",
                        one.url()
                    ),
                ));
            }
            Err(error) => checks.push(Check::fail(
                "hub",
                crate::text::inline(&error.to_string()).to_string(),
            )),
        }
    }
    if !answers {
        return checks;
    }
    checks.push(
        match hub.get::<crate::project::Project>(&crate::json_api::route::PROJECT.path(&[project]))
        {
            Ok(_) => Check::ok("hub project", format!("project {project} is on the hub")),
            Err(error) => Check::fail(
                "hub project",
                format!(
                    "project {project}: {}",
                    crate::text::inline(&error.to_string())
                ),
            ),
        },
    );
    checks
}

/// How much of an answer to `path` a client reads: a listing may be large, a hook's answer
/// is small by contract, anything else is one record.
fn answer_limit(path: &str) -> u64 {
    let path = path.split('?').next().unwrap_or(path);
    let mut parts = path.trim_start_matches('/').split('/');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("projects"), Some(_), Some("hook"), _) => HOOK_ANSWER_LIMIT,
        (Some("projects"), None, ..) => LIST_ANSWER_LIMIT,
        (
            Some("projects"),
            Some(_),
            Some("board" | "log" | "inbox" | "messages" | "agents" | "tasks"),
            _,
        ) => LIST_ANSWER_LIMIT,
        // A project's record carries its shared notes, which grow.
        (Some("projects"), Some(_), None, _) => LIST_ANSWER_LIMIT,
        _ => RECORD_ANSWER_LIMIT,
    }
}

/// `bytes` as people read a size: `64 MiB`, `512 KiB`.
fn size(bytes: u64) -> String {
    match bytes {
        bytes if bytes >= 1024 * 1024 => format!("{} MiB", bytes / (1024 * 1024)),
        bytes if bytes >= 1024 => format!("{} KiB", bytes / 1024),
        bytes => format!("{bytes} bytes"),
    }
}

/// Why a request got no answer, in baton's words rather than the HTTP client's (whose
/// `timeout: global` says nothing to a user); `within` is how long it was given.
fn why_unreachable(error: &ureq::Error, within: Duration) -> String {
    use std::io::ErrorKind;
    use ureq::Timeout;
    // To a tenth of a second, and whole seconds as such: a deadline of 3 s has a moment
    // less than that left by the time it is given, and is said as the 3s the user asked.
    let seconds = |duration: Duration| {
        let tenths = (duration.as_secs_f64() * 10.0).round();
        if tenths % 10.0 == 0.0 {
            format!("{:.0}s", tenths / 10.0)
        } else {
            format!("{:.1}s", tenths / 10.0)
        }
    };
    match error {
        ureq::Error::Timeout(Timeout::Connect) => format!(
            "it took no connection within {}",
            seconds(within.min(CONNECT_WITHIN))
        ),
        ureq::Error::Timeout(Timeout::Resolve) | ureq::Error::HostNotFound => {
            "its host name does not resolve".to_string()
        }
        ureq::Error::Timeout(_) => format!("it gave no answer within {}", seconds(within)),
        ureq::Error::Io(io) => match io.kind() {
            ErrorKind::ConnectionRefused => "nothing listens there (connection refused)".into(),
            ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
                "it dropped the connection".into()
            }
            ErrorKind::UnexpectedEof => "it closed the connection before answering".into(),
            ErrorKind::TimedOut => format!("it gave no answer within {}", seconds(within)),
            _ => format!("the connection failed ({io})"),
        },
        ureq::Error::ConnectionFailed => "the connection failed".into(),
        ureq::Error::Tls(why) => format!("TLS failed ({why})"),
        ureq::Error::Protocol(why) => {
            format!("what answered is not HTTP as a baton hub speaks it ({why})")
        }
        other => other.to_string(),
    }
}

/// A blocking HTTP client that reads refusals as answers (the hub explains them in JSON).
/// Every request sets its own time limits ([`Within`]).
fn client() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(ANSWER_WITHIN))
        .timeout_connect(Some(CONNECT_WITHIN))
        .user_agent(concat!("baton/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// The hub's refusal (`{error, hint, code}`), as the error the same refusal is locally.
fn refusal(url: &str, status: u16, body: &[u8]) -> Error {
    match serde_json::from_slice::<crate::json_api::ErrorBody>(body) {
        // A 403 with no exit code of the CLI's is the hub's `Host` check (a bound project's
        // refusal is exit 2): the name in BATON_URL is not one the hub answers.
        Ok(refusal) if status == 403 && refusal.code.is_none() => {
            let name = url_host(url).filter(|name| crate::names::is_host_name(name));
            Error::Hub {
                message: format!(
                    "the hub at {url} refused the name it was reached by: {}",
                    refusal.error
                ),
                hint: Some(format!(
                    "on the hub's machine, start it with `baton serve --allow-host {}` (or use \
                     the address `baton serve` printed)",
                    name.unwrap_or("NAME")
                )),
                code: 1,
            }
        }
        Ok(refusal) => Error::Hub {
            hint: refusal.hint.or_else(|| match status {
                401 => Some(
                    "on the hub's machine, `baton token list` shows the tokens and `baton \
                     token add NAME` makes a new one; set BATON_TOKEN to it"
                        .into(),
                ),
                _ => None,
            }),
            message: match status {
                401 => format!("the hub at {url} refused the token: {}", refusal.error),
                _ => refusal.error,
            },
            code: refusal.code.unwrap_or(1),
        },
        // Not the hub's own words: something else answers at that address (a proxy, another
        // server), and what it said is not shown as if baton said it.
        Err(_) => Error::Hub {
            message: format!("{url} answered HTTP {status}, and not as a baton hub does"),
            hint: Some("is BATON_URL the address `baton serve` printed?".into()),
            code: 1,
        },
    }
}

/// The host name of an http(s) URL, without its port (and without the brackets of an IPv6
/// address).
fn url_host(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if let Some(bracketed) = host.strip_prefix('[') {
        return bracketed.split_once(']').map(|(address, _)| address);
    }
    host.split(':').next().filter(|name| !name.is_empty())
}

/// The hubs `BATON_URL` names (SPEC section 16): one URL, or several separated by commas,
/// each checked ([`base_url`]) and without its trailing `/`, in the order given: the one
/// place the variable is read. An empty item, a URL that is not a hub's or one named twice
/// is refused in one line that names it.
pub fn hub_urls(value: &str) -> Result<Vec<String>> {
    let items: Vec<&str> = value.split(',').map(str::trim).collect();
    let several = items.len() > 1;
    let mut urls: Vec<String> = Vec::with_capacity(items.len());
    for (place, item) in items.iter().enumerate() {
        if item.is_empty() {
            return Err(Error::invalid_with_hint(
                format!(
                    "BATON_URL `{}` has an empty item (hub {} of {}): hubs are separated by \
                     single commas",
                    crate::text::inline(value.trim()),
                    place + 1,
                    items.len()
                ),
                "e.g. BATON_URL=http://hub-a:7878,http://hub-b:7878",
            ));
        }
        let url = base_url(item).map_err(|error| match (several, error) {
            // Which of the list it is, when there is a list.
            (true, Error::Invalid { message, hint }) => Error::Invalid {
                message: format!("{message} (hub {} of {})", place + 1, items.len()),
                hint,
            },
            (_, error) => error,
        })?;
        if urls.iter().any(|seen| seen.eq_ignore_ascii_case(&url)) {
            return Err(Error::invalid(format!(
                "BATON_URL names {} twice: each hub once, in the order to try them",
                crate::text::inline(&url)
            )));
        }
        urls.push(url);
    }
    Ok(urls)
}

/// `url` checked and without a trailing `/`.
fn base_url(url: &str) -> Result<String> {
    let url = url.trim();
    let shown = crate::text::inline(url).to_string();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(Error::invalid_with_hint(
            format!("BATON_URL {shown} is not a URL"),
            "e.g. BATON_URL=http://buildbox:7878 (what `baton serve` printed, without the #token)",
        ));
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(Error::invalid(format!(
            "BATON_URL {shown} is not http or https"
        )));
    }
    if rest.is_empty()
        || url_host(url).is_none()
        || url.contains('#')
        || url.contains('?')
        || url.chars().any(char::is_whitespace)
    {
        return Err(Error::invalid_with_hint(
            format!("BATON_URL {shown} is not a hub's address"),
            "give the address alone, e.g. http://buildbox:7878 (a login token in a #fragment \
             is for browsers; set BATON_TOKEN instead)",
        ));
    }
    Ok(url.trim_end_matches('/').to_string())
}

fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
}

/// The token in the variable `variable` (what `BATON_TOKEN_ENV` names): how a client that
/// puts the values of variables into its hook lines before it runs them (Gemini CLI) is
/// given the token's variable by name, so that the token is in no command line.
fn token_of_variable(variable: &str) -> Result<String> {
    let is_name = variable
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && variable
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_name {
        return Err(Error::invalid(format!(
            "BATON_TOKEN_ENV must name a variable ([A-Za-z_][A-Za-z0-9_]*), not `{}`",
            crate::text::inline(variable)
        )));
    }
    non_empty_var(variable).ok_or_else(|| {
        Error::invalid_with_hint(
            format!("BATON_TOKEN_ENV names {variable}, which is not set: no token for the hub"),
            format!("set {variable} to the token `baton token add NAME` printed on the hub"),
        )
    })
}

/// The token kept in `path`: its first line, trimmed. Only a regular file is read.
fn read_token_file(path: &std::path::Path) -> Result<String> {
    let bytes = crate::file::regular::read(path).map_err(|error| {
        Error::invalid(format!(
            "cannot read the token file {} (BATON_TOKEN_FILE): {error}",
            path.display()
        ))
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(Error::invalid(format!(
            "the token file {} (BATON_TOKEN_FILE) is empty",
            path.display()
        )));
    }
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hub_url_is_http_or_https_without_its_trailing_slash() {
        assert_eq!(base_url("http://hub:7878/").unwrap(), "http://hub:7878");
        assert_eq!(
            base_url("https://hub.example/baton").unwrap(),
            "https://hub.example/baton"
        );
        for bad in [
            "hub:7878",
            "ftp://hub",
            "http://",
            "http://127.0.0.1:7878/#token=baton_x",
            "file:///etc/passwd",
            "http://a b",
        ] {
            assert!(base_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_refusal_keeps_the_hubs_words_and_exit_code_and_never_passes_others_for_them() {
        let error = refusal(
            "http://hub",
            400,
            br#"{"error":"T-4 is working","hint":"ask codex","code":1}"#,
        );
        assert_eq!(error.to_string(), "T-4 is working");
        assert_eq!(error.hint().as_deref(), Some("ask codex"));
        assert_eq!(error.exit_code(), 1);
        let outside = refusal("http://hub", 403, br#"{"error":"bound","code":2}"#);
        assert_eq!(outside.exit_code(), 2);
        let proxy = refusal("http://hub", 502, b"<html>Bad gateway</html>");
        assert!(!proxy.to_string().contains("html"), "{proxy}");
        assert_eq!(proxy.exit_code(), 1);
        let odd = refusal("http://hub", 400, br#"{"error":"x","code":77}"#);
        assert_eq!(
            odd.exit_code(),
            1,
            "a code outside the contract is not passed on"
        );
    }

    #[test]
    fn a_refused_host_is_told_how_the_hub_allows_the_name_of_the_url() {
        let body = br#"{"error":"this server does not answer the name `buildbox`"}"#;
        let error = refusal("http://buildbox:7878", 403, body);
        assert!(
            error
                .to_string()
                .starts_with("the hub at http://buildbox:7878 refused the name")
        );
        assert_eq!(
            error.hint().as_deref(),
            Some(
                "on the hub's machine, start it with `baton serve --allow-host buildbox` (or \
                 use the address `baton serve` printed)"
            )
        );
        for (url, host) in [
            ("https://user@Box.lan/", Some("Box.lan")),
            ("http://[fe80::1]:80", Some("fe80::1")),
            ("http://10.0.0.5", Some("10.0.0.5")),
            ("http://", None),
        ] {
            assert_eq!(url_host(url), host, "{url}");
        }
        let v6 = refusal("http://[fe80::1]:7878", 403, body);
        assert!(v6.hint().unwrap().contains("--allow-host NAME"));
    }

    #[test]
    fn a_listing_may_be_large_a_hook_answer_never() {
        for (path, limit) in [
            ("/projects", LIST_ANSWER_LIMIT),
            ("/projects/api", LIST_ANSWER_LIMIT),
            ("/projects/api/board?mine=false&all=true", LIST_ANSWER_LIMIT),
            ("/projects/api/log?n=20", LIST_ANSWER_LIMIT),
            ("/projects/api/inbox?peek=true", LIST_ANSWER_LIMIT),
            ("/projects/api/tasks/4", LIST_ANSWER_LIMIT),
            ("/projects/api/hook/prompt", HOOK_ANSWER_LIMIT),
            ("/whoami", RECORD_ANSWER_LIMIT),
            ("/agents/codex", RECORD_ANSWER_LIMIT),
            ("/projects/api/woken", RECORD_ANSWER_LIMIT),
            ("/projects/api/wake/codex", RECORD_ANSWER_LIMIT),
        ] {
            assert_eq!(answer_limit(path), limit, "{path}");
        }
    }

    #[test]
    fn a_request_that_got_no_answer_is_said_in_batons_words() {
        let within = Duration::from_millis(1300);
        let said = |error: ureq::Error| why_unreachable(&error, within);
        assert_eq!(
            said(ureq::Error::Timeout(ureq::Timeout::Global)),
            "it gave no answer within 1.3s"
        );
        assert_eq!(
            said(ureq::Error::Timeout(ureq::Timeout::Connect)),
            "it took no connection within 1.3s"
        );
        assert_eq!(
            said(ureq::Error::Io(
                std::io::ErrorKind::ConnectionRefused.into()
            )),
            "nothing listens there (connection refused)"
        );
        assert_eq!(
            why_unreachable(
                &ureq::Error::Timeout(ureq::Timeout::RecvResponse),
                Duration::from_millis(2_960)
            ),
            "it gave no answer within 3s",
            "a deadline a moment short of what was asked is said as asked"
        );
    }

    #[test]
    fn the_token_is_not_in_the_debug_form() {
        let hub = HubClient::new("http://hub:1", "baton_secret".into()).unwrap();
        assert!(!format!("{hub:?}").contains("secret"));
        let hubs = HubClient::new("http://a:1,http://b:2", "baton_secret".into()).unwrap();
        assert!(!format!("{hubs:?}").contains("secret"));
    }

    #[test]
    fn several_hubs_are_read_once_in_order_and_a_wrong_list_is_said_in_one_line() {
        assert_eq!(
            hub_urls(" http://a:7878/ , https://b.example/baton ").unwrap(),
            ["http://a:7878", "https://b.example/baton"]
        );
        assert_eq!(hub_urls("http://a:7878").unwrap(), ["http://a:7878"]);
        for (bad, said) in [
            ("http://a:1,,http://b:2", "has an empty item (hub 2 of 3)"),
            ("http://a:1,", "has an empty item (hub 2 of 2)"),
            (",http://a:1", "has an empty item (hub 1 of 2)"),
            ("http://a:1, b:2", "BATON_URL b:2 is not a URL (hub 2 of 2)"),
            ("http://a:1,ftp://b", "is not http or https (hub 2 of 2)"),
            (
                "http://a:1,http://:2",
                "is not a hub's address (hub 2 of 2)",
            ),
            ("http://a:1,http://A:1/", "names http://A:1 twice"),
        ] {
            let error = hub_urls(bad).unwrap_err().to_string();
            assert!(error.contains(said), "{bad}: {error}");
            assert!(!error.contains('\n'), "{bad}: {error}");
        }
    }

    #[test]
    fn the_hub_in_use_stays_until_it_fails_and_a_wake_is_given_it_first() {
        let hub = HubClient::new("http://a:1,http://b:2,http://c:3", "t".into()).unwrap();
        assert_eq!(hub.url(), "http://a:1");
        hub.hubs.answered(1);
        let copy = hub.clone().observing(Observer::Listen);
        assert_eq!(copy.url(), "http://b:2", "copies share the hub in use");
        assert_eq!(
            hub.urls_for_environment(),
            "http://b:2,http://c:3,http://a:1"
        );
        // A failure told late, of a hub no longer in use, moves nothing.
        hub.hubs.failed(0);
        assert_eq!(hub.url(), "http://b:2");
        hub.hubs.failed(1);
        assert_eq!(copy.url(), "http://c:3");
        hub.hubs.failed(2);
        assert_eq!(hub.url(), "http://a:1", "round the list");
        assert_eq!(
            hub.described(),
            "the hubs at http://a:1, http://b:2, http://c:3"
        );
        let each: Vec<String> = hub.each().iter().map(|one| one.described()).collect();
        assert_eq!(each[1], "the hub at http://b:2");
    }

    #[test]
    fn no_hub_answering_names_each_with_why() {
        let one = Error::unreachable("http://a:1", "nothing listens there");
        assert_eq!(
            one.to_string(),
            "hub http://a:1 unreachable: nothing listens there"
        );
        let several = Error::Unreachable {
            tried: vec![
                Unanswered {
                    url: "http://a:1".into(),
                    cause: "nothing listens there (connection refused)".into(),
                },
                Unanswered {
                    url: "http://b:2".into(),
                    cause: "it gave no answer within 5s".into(),
                },
            ],
        };
        assert_eq!(
            several.to_string(),
            "no hub answers: hub http://a:1 unreachable: nothing listens there (connection \
             refused); hub http://b:2 unreachable: it gave no answer within 5s"
        );
        assert_eq!(several.exit_code(), 6);
    }

    #[test]
    fn a_change_goes_to_another_hub_only_when_it_never_reached_the_first() {
        use std::io::ErrorKind;
        assert!(never_sent(&ureq::Error::Io(
            ErrorKind::ConnectionRefused.into()
        )));
        assert!(never_sent(&ureq::Error::Timeout(ureq::Timeout::Connect)));
        assert!(never_sent(&ureq::Error::HostNotFound));
        assert!(!never_sent(&ureq::Error::Io(
            ErrorKind::ConnectionReset.into()
        )));
        assert!(!never_sent(&ureq::Error::Io(
            ErrorKind::UnexpectedEof.into()
        )));
        assert!(!never_sent(&ureq::Error::Timeout(
            ureq::Timeout::RecvResponse
        )));
        assert!(!never_sent(&ureq::Error::Timeout(ureq::Timeout::Global)));
    }

    #[test]
    fn each_hub_tried_leaves_time_for_the_next() {
        let first = Within::sharing(Duration::from_millis(1300), 2);
        assert_eq!(first.connect, Duration::from_millis(650));
        assert_eq!(first.head, Duration::from_millis(650));
        assert_eq!(first.all, Duration::from_millis(1300));
        let alone = Within::sharing(Duration::from_secs(60), 1);
        assert_eq!(alone.connect, CONNECT_WITHIN);
        assert_eq!(alone.head, Duration::from_secs(60));
    }
}
