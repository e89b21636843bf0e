//! The client side of a hub on another machine (SPEC section 13): with `BATON_URL` and
//! `BATON_TOKEN` set, commands, hooks, `wait`, `watch`, `listen` and `baton mcp` act on the
//! hub through its HTTP API as the token's agent, instead of on this machine's files.
//!
//! [`HubClient`] is the connection: one blocking HTTP client, the token sent as a bearer header
//! on every request, the hub's `{error, hint, code}` refusals turned back into
//! [`Error::Hub`] with the exit code the command has on the hub's own machine, and every
//! failure to reach it into [`Error::Unreachable`] (exit 6). The token never appears in an
//! error, a log line or an argv of baton's.

mod answers;
pub mod desk;
pub mod events;
pub mod listen;
pub mod map;
mod settings;
#[cfg(test)]
mod tests;
pub mod worktrees;

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, RemoteError, Result, Unanswered};
pub use crate::json_api::endpoint::{HOOK_ANSWER_LIMIT, LIST_ANSWER_LIMIT, RECORD_ANSWER_LIMIT};
use crate::json_api::{Endpoint, Method, NoBody, endpoint};
use answers::{never_sent, refusal, too_large, why_unreachable};
pub use settings::hub_urls;
use settings::{non_empty_var, read_token_file, token_of_variable};

/// How long a command waits to connect to the hub before it says the hub is unreachable.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);
/// How long one request may take in all. A board of 10,000 tasks is a few megabytes.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);
/// How long the hub may take to open its event stream (the head of its answer, which it
/// sends at once): a hub that takes a connection and never answers is unreachable, not a
/// stream that has yet to say something.
pub const OPEN_WITHIN: Duration = Duration::from_secs(10);
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
                    return Err(RemoteError::NoToken { url }.into());
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
            return Err(RemoteError::BadToken.into());
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

    /// Calls the endpoint `E` at the path `parameters` fill in (each checked by the caller
    /// before it becomes part of a path), sending `body` (as the query of a `GET`), and
    /// decodes its answer, read up to the endpoint's limit.
    pub fn call<E: Endpoint>(&self, parameters: &[&str], body: &E::Body) -> Result<E::Answer> {
        match E::METHOD {
            Method::Get => self.get(&E::ROUTE.path_with(parameters, body), E::ANSWER_LIMIT),
            Method::Post => self.post(&E::ROUTE.path(parameters), body, E::ANSWER_LIMIT),
        }
    }

    /// `GET /api/v1{path}`, its JSON answer decoded.
    fn get<T: DeserializeOwned>(&self, path: &str, limit: u64) -> Result<T> {
        let reply = self.exchange(path, Replay::Safe, limit, |base, within| {
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
    fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
        limit: u64,
    ) -> Result<T> {
        let json = serde_json::to_vec(body).map_err(|error| RemoteError::Encode {
            cause: error.to_string(),
        })?;
        let reply = self.exchange(path, Replay::OnlyUnsent, limit, |base, within| {
            let request = self
                .agent
                .post(self.api(base, path))
                .content_type("application/json");
            self.prepare(request, within).send(&json[..])
        })?;
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
                // A draining hub's 503 left the request untouched: the next hub may take
                // it, a change too.
                Ok(reply)
                    if reply.status == 503
                        && reply.headers.contains_key(crate::json_api::DRAINING_HEADER)
                        && step + 1 < order.len() =>
                {
                    self.hubs.failed(index);
                    tried.push(Unanswered {
                        url: url.clone(),
                        cause: "it is stopping (draining)".into(),
                    });
                    continue;
                }
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
        match hub.call::<endpoint::ProjectShow>(&[project], &NoBody {}) {
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
