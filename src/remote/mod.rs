//! The client side of a hub on another machine (SPEC section 13): with `BATON_URL` and
//! `BATON_TOKEN` set, commands, hooks, `wait`, `watch`, `listen` and `baton mcp` act on the
//! hub through its HTTP API as the token's agent, instead of on this machine's files.
//!
//! [`Hub`] is the connection: one blocking HTTP client, the token sent as a bearer header
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
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

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

/// Where the hub is and the token that is the caller's identity there.
#[derive(Clone)]
pub struct Hub {
    url: String,
    token: String,
    /// The identity the caller named (`--as`, `BATON_AGENT`), checked by the hub.
    claimed: Option<String>,
    /// Set for a process looking on the agent's behalf: sent as [`OBSERVER_HEADER`].
    observer: Option<Observer>,
    agent: ureq::Agent,
    /// How long a request may take in all, for the words of a request that took longer.
    within: Duration,
}

/// Never prints the token.
impl std::fmt::Debug for Hub {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Hub")
            .field("url", &self.url)
            .field("claimed", &self.claimed)
            .field("observer", &self.observer)
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// The hub `BATON_URL` names, with the token of `BATON_TOKEN` (or of the variable
    /// `BATON_TOKEN_ENV` names, or of the file `BATON_TOKEN_FILE` names); `None` when
    /// `BATON_URL` is unset or empty.
    pub fn from_environment() -> Result<Option<Hub>> {
        let Some(url) = non_empty_var("BATON_URL") else {
            return Ok(None);
        };
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
        Hub::new(&url, token).map(Some)
    }

    /// A connection to the hub at `url` (http or https; a trailing `/` is dropped).
    pub fn new(url: &str, token: String) -> Result<Hub> {
        let url = base_url(url)?;
        if token.chars().any(|c| c.is_control() || c == ' ') {
            return Err(Error::invalid(
                "the token holds a space or a control character: it is not one `baton token \
                 add` printed",
            ));
        }
        Ok(Hub {
            url,
            token,
            claimed: None,
            observer: None,
            agent: client(Some(ANSWER_WITHIN), CONNECT_WITHIN),
            within: ANSWER_WITHIN,
        })
    }

    /// The same hub, with the identity the caller named sent along for the hub to check.
    pub fn claiming(mut self, agent: Option<String>) -> Hub {
        self.claimed = agent;
        self
    }

    /// The same hub, its requests made by `observer` on the agent's behalf: the hub renews
    /// no lease and records no heartbeat for them (SPEC section 3).
    pub fn observing(mut self, observer: Observer) -> Hub {
        self.observer = Some(observer);
        self
    }

    /// The same hub, giving up on a request after `within` in all: what a hook, which must
    /// answer its client within 2 seconds, uses.
    pub fn within(mut self, within: Duration) -> Hub {
        self.agent = client(Some(within), within.min(CONNECT_WITHIN));
        self.within = within;
        self
    }

    /// The base URL, as shown to people (it holds no secret).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `GET /api/v1{path}`, its JSON answer decoded.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let request = self.agent.get(self.api(path));
        let response = self.prepare(request).call();
        self.decode(path, response)
    }

    /// `POST /api/v1{path}` with `body` as JSON, its JSON answer decoded.
    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T> {
        let json = serde_json::to_vec(body)
            .map_err(|error| Error::invalid(format!("cannot encode the request: {error}")))?;
        let request = self
            .agent
            .post(self.api(path))
            .content_type("application/json");
        let response = self.prepare(request).send(&json[..]);
        self.decode(path, response)
    }

    /// `DELETE /api/v1{path}`, its JSON answer decoded.
    pub fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        let request = self.agent.delete(self.api(path));
        let response = self.prepare(request).call();
        self.decode(path, response)
    }

    /// The full URL of an API path.
    fn api(&self, path: &str) -> String {
        format!("{}{}{path}", self.url, crate::wire::API)
    }

    /// Adds the bearer token and the claimed identity to a request: every request to the
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

    /// [`Hub::authorize`] for a request of the JSON API.
    fn prepare<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        self.authorize(request).header("accept", "application/json")
    }

    /// A request's answer: its JSON decoded, or the hub's refusal, or why it never came.
    fn decode<T: DeserializeOwned>(
        &self,
        path: &str,
        response: std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<T> {
        let mut response = response.map_err(|error| self.failed(&error, path))?;
        let status = response.status();
        let body = self.read_body(&mut response, path, answer_limit(path))?;
        if status.is_success() {
            return serde_json::from_slice(&body).map_err(|error| Error::Hub {
                message: format!(
                    "the hub at {} answered {path} with what this baton cannot read \
                     ({error}); is it the same version?",
                    self.url
                ),
                hint: None,
                code: 1,
            });
        }
        Err(refusal(&self.url, status.as_u16(), &body))
    }

    /// A whole answer's body, up to `limit` bytes; more is refused as no answer of a hub's,
    /// and a connection lost while it comes is the hub unreachable.
    fn read_body(
        &self,
        response: &mut ureq::http::Response<ureq::Body>,
        path: &str,
        limit: u64,
    ) -> Result<Vec<u8>> {
        response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|error| self.failed(&error, path))
    }

    /// The error for a request that got no whole answer, in baton's words: the hub
    /// unreachable (exit 6) and why, or an answer too large to be one a hub gives.
    fn failed(&self, error: &ureq::Error, path: &str) -> Error {
        if let ureq::Error::BodyExceedsLimit(limit) = error {
            return Error::Hub {
                message: format!(
                    "the hub at {} answered {} with more than {}: no answer of a baton hub is \
                     that large",
                    self.url,
                    crate::text::inline(path),
                    size(*limit)
                ),
                hint: Some(
                    "is BATON_URL the address `baton serve` printed? A board that large can be \
                     read in parts (`baton board --status S`, `--mine`)"
                        .into(),
                ),
                code: 1,
            };
        }
        self.unreachable_because(why_unreachable(error, self.within))
    }

    /// The error for a hub that could not be reached, naming the URL and the cause.
    pub fn unreachable(&self, error: &dyn std::fmt::Display) -> Error {
        self.unreachable_because(error.to_string())
    }

    fn unreachable_because(&self, cause: String) -> Error {
        Error::Unreachable {
            url: self.url.clone(),
            cause,
        }
    }

    /// Opens the hub's event stream (`/api/v1/events`): one [`events::Change`] per change
    /// on the hub, for as long as the connection holds. A hub that does not open it within
    /// [`OPEN_WITHIN`] is unreachable.
    pub fn events(&self) -> Result<events::Events> {
        self.events_within(OPEN_WITHIN)
    }

    /// [`Hub::events`], giving up once `within` has passed without the stream open: what
    /// `wait --timeout` uses, so that its timeout holds however the hub behaves.
    pub fn events_within(&self, within: Duration) -> Result<events::Events> {
        let within = within.min(OPEN_WITHIN);
        // No limit on the whole answer: the stream lasts as long as the caller wants it;
        // a silent connection is noticed by the keep-alives that stop coming. Its opening
        // (the connection, then the head of the answer) is bounded: a hub that takes the
        // connection and never answers would otherwise hold the caller for ever.
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(within.min(CONNECT_WITHIN)))
            .timeout_send_request(Some(within))
            .timeout_recv_response(Some(within))
            .user_agent(concat!("baton/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let request = self
            .authorize(agent.get(self.api(crate::wire::route::EVENTS.pattern())))
            .header("accept", "text/event-stream");
        let mut response = request
            .call()
            .map_err(|error| self.unreachable_because(why_unreachable(&error, within)))?;
        let status = response.status();
        if !status.is_success() {
            let mut body = Vec::new();
            let _ = response
                .body_mut()
                .as_reader()
                .take(64 * 1024)
                .read_to_end(&mut body);
            return Err(refusal(&self.url, status.as_u16(), &body));
        }
        Ok(events::Events::new(
            response.into_body().into_reader(),
            self.url.clone(),
        ))
    }

    /// Sends one JSON-RPC message to the hub's MCP endpoint (`/mcp`, Streamable HTTP) as
    /// the bridge of `baton mcp` does, and returns the answer as it came: its status, its
    /// session id, and the JSON-RPC messages it carried (one JSON body, or the `data` of each
    /// server-sent event).
    pub fn mcp(&self, message: &[u8], session: Option<&str>) -> Result<McpAnswer> {
        let mut request = self
            .authorize(self.agent.post(format!("{}/mcp", self.url)))
            .header("accept", "application/json, text/event-stream")
            .content_type("application/json");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let mut response = request
            .send(message)
            .map_err(|error| self.failed(&error, "/mcp"))?;
        let status = response.status().as_u16();
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_string)
        };
        let session = header("mcp-session-id");
        let is_stream =
            header("content-type").is_some_and(|kind| kind.starts_with("text/event-stream"));
        let body = self.read_body(&mut response, "/mcp", LIST_ANSWER_LIMIT)?;
        let text = String::from_utf8_lossy(&body);
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
        Ok(McpAnswer {
            status,
            session,
            messages,
            refusal: (!(200..300).contains(&status)).then(|| refusal(&self.url, status, &body)),
        })
    }

    /// Ends the MCP session `session` on the hub (best-effort: the hub forgets idle ones).
    pub fn end_mcp(&self, session: &str) {
        let _ = self
            .authorize(self.agent.delete(format!("{}/mcp", self.url)))
            .header("mcp-session-id", session)
            .call();
    }

    /// The token, for the environment of a process that acts on the hub in the caller's
    /// name (a wake command started by `listen`).
    pub fn token(&self) -> &str {
        &self.token
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
}

/// What `baton doctor` adds on a machine whose hub is elsewhere: whether the hub answers
/// and as whom, and whether the project this directory acts on is there.
pub fn hub_checks(hub: &Hub, project: &str) -> Vec<crate::doctor::Check> {
    use crate::doctor::Check;
    let mut checks = Vec::new();
    match listen::agent_of(hub) {
        Ok(agent) => checks.push(Check::ok(
            "hub",
            format!(
                "the hub at {} answers; the token acts as {agent}",
                hub.url()
            ),
        )),
        Err(error) => {
            checks.push(Check::fail(
                "hub",
                crate::text::inline(&error.to_string()).to_string(),
            ));
            return checks;
        }
    }
    checks.push(
        match hub.get::<crate::project::Project>(&crate::wire::route::PROJECT.path(&[project])) {
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
fn client(within: Option<Duration>, connect: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(within)
        .timeout_connect(Some(connect))
        .user_agent(concat!("baton/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// The hub's refusal (`{error, hint, code}`), as the error the same refusal is locally.
fn refusal(url: &str, status: u16, body: &[u8]) -> Error {
    match serde_json::from_slice::<crate::wire::ErrorBody>(body) {
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

/// `url` checked and without a trailing `/`.
pub fn base_url(url: &str) -> Result<String> {
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
    let bytes = crate::store::regular::read(path).map_err(|error| {
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
        let hub = Hub::new("http://hub:1", "baton_secret".into()).unwrap();
        assert!(!format!("{hub:?}").contains("secret"));
    }
}
