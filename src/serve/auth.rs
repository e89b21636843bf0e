//! Who may talk to the server: the `Host` check against DNS rebinding, and the bearer token
//! that is the request's identity (SPEC section 12).
//!
//! A token is looked up on every request (so `baton token rm` takes effect on the next one)
//! and never written anywhere: not in a log, not in an error. What lasts beyond one request
//! (an event stream, an MCP session) keeps the token's [`TokenId`], never the token, and asks
//! again while it lasts.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use axum::extract::{FromRequestParts, RawPathParams};

use super::api::ApiError;
use crate::names::{self, NameKind};
use crate::session::Standing;
use crate::session::blocking::{Caller, ReadAhead, off_thread};
use crate::store::{Document, Store};
use crate::time;
use crate::tokens::{self, Authentication, KeptTokens};

/// The `Host` values a server answers: its own address, and `localhost` at its port. A
/// server listening on every address (`0.0.0.0`, `::`) answers any address literal at its
/// port, never a name: a rebinding attack needs a name of its own to point at it.
#[derive(Debug, Clone)]
pub struct Hosts {
    port: u16,
    address: IpAddr,
    /// Names answered at any port, as `--allow-host` gave them (lowercase).
    names: Vec<String>,
}

impl Hosts {
    pub fn for_listener(address: SocketAddr) -> Self {
        Hosts {
            port: address.port(),
            address: address.ip(),
            names: Vec::new(),
        }
    }

    /// The same, answering `names` too, at any port: a TLS proxy in front listens on a port
    /// of its own. Naming a host is the operator's word that it points here.
    pub fn allowing(mut self, names: Vec<String>) -> Self {
        self.names = names
            .into_iter()
            .map(|name| name.trim().to_ascii_lowercase())
            .filter(|name| !name.is_empty())
            .collect();
        self
    }

    /// Whether a request whose `Host` header is `host` is for this server.
    pub fn allows(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        if self
            .names
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(name))
        {
            return true;
        }
        if port != self.port {
            return false;
        }
        if name.eq_ignore_ascii_case("localhost") {
            return true;
        }
        let Ok(literal) = name.parse::<IpAddr>() else {
            return false;
        };
        !literal.is_unspecified() && (literal == self.address || self.address.is_unspecified())
    }
}

/// `name:port`, `[v6]:port` or a bare name (port 80) into its name and port.
fn split_host(host: &str) -> Option<(&str, u16)> {
    if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        let port = match after {
            "" => 80,
            port => port.strip_prefix(':')?.parse().ok()?,
        };
        return Some((name, port));
    }
    // Without brackets a name holds no colon: `::1:9000` is no host.
    match host.split_once(':') {
        Some((name, port)) => Some((name, port.parse().ok()?)),
        None => Some((host, 80)),
    }
}

/// Refuses, with 403, a request whose `Host` is not this server's.
pub async fn check_host(
    State(state): State<super::State>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|host| host.to_str().ok());
    if !host.is_some_and(|host| state.hosts.allows(host)) {
        return host_refusal(host).into_response();
    }
    next.run(request).await
}

/// The refusal of a request for `host` (the `Host` header, if it was readable), saying how
/// the operator lets the server answer it. The name is repeated only when it is one
/// `--allow-host` takes (letters, digits, `-` and `.`): anything else in a header is the
/// sender's and is not echoed.
pub(super) fn host_refusal(host: Option<&str>) -> ApiError {
    let name = host
        .and_then(split_host)
        .map(|(name, _)| name)
        .filter(|name| names::is_host_name(name));
    match name {
        Some(name) => ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "this server does not answer the name `{name}` (it answers its own address \
                 and localhost; other names are refused against DNS rebinding)"
            ),
        )
        .with_hint(format!(
            "if `{name}` is this server's name, start it with `baton serve --allow-host {name}`"
        )),
        None => ApiError::new(
            StatusCode::FORBIDDEN,
            "this server answers only its own address or localhost (the Host header names \
             another)",
        )
        .with_hint("to answer a name of its own, start it with `baton serve --allow-host NAME`"),
    }
}

/// How to log in again, for the page to show beside a refused login (an agent's token is
/// made again with `baton token add`, which the hint of `token rm` says).
const NEW_LOGIN: &str = "a browser logs in with the URL `baton serve` prints when it starts \
                         (restart it for a new one); an agent, with `baton token add NAME`";

/// Lets a request through as its token's agent ([`Caller`]), with the token's
/// [`tokens::TokenId`] beside it, or answers 401.
pub async fn require_token(
    State(state): State<super::State>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(request.headers()) else {
        return unauthorized(
            "a token is needed: send `Authorization: Bearer TOKEN`",
            Some("`baton token add NAME` makes one"),
        );
    };
    let standing = super::api::standing(request.headers());
    let project = project_of(&mut request).await;
    let (store, kept) = (state.hub.store.clone(), state.tokens.clone());
    let found = off_thread(move || {
        check_reading_ahead(&*store, &kept, &token, project, standing, time::now())
    })
    .await;
    match found {
        Ok(Ok((Authentication::Accepted(bearer), read))) => {
            if let Some(refusal) = claimed_another(request.headers(), &bearer.agent) {
                return refusal;
            }
            request
                .extensions_mut()
                .insert(Caller(bearer.agent, standing));
            request.extensions_mut().insert(bearer.token);
            request.extensions_mut().insert(read);
            next.run(request).await
        }
        Ok(Ok((Authentication::Unknown, _))) => unauthorized(
            "the token is not known: it was removed (`baton token rm`), or never made",
            Some(NEW_LOGIN),
        ),
        Ok(Ok((Authentication::Expired { ttl }, _))) => {
            let why = match ttl {
                Some(ttl) => format!(
                    "this web login expired: it went unused for more than {}",
                    tokens::describe_ttl(ttl)
                ),
                None => "this web login was made by an older `baton serve` and ended with it"
                    .to_string(),
            };
            unauthorized(&why, Some(NEW_LOGIN))
        }
        Ok(Err(error)) => ApiError::from(error).into_response(),
        Err(_) => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the token check stopped")
            .into_response(),
    }
}

/// The project the request's path names (`/projects/{project}/…`), if it is a name a
/// project may have.
async fn project_of(request: &mut Request) -> Option<String> {
    let (mut parts, body) = std::mem::take(request).into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, &())
        .await
        .ok();
    *request = Request::from_parts(parts, body);
    let params = params?;
    let (_, id) = params.iter().find(|(name, _)| *name == "project")?;
    names::check(NameKind::Project, id)
        .is_ok()
        .then(|| id.to_string())
}

/// The token `presented` checked ([`tokens::authenticate_at`]), and what the session its
/// request opens will read ([`ReadAhead`]): the record of the project its path names and
/// that of the agent the token acted as when the tokens were last read (when the request
/// stands as the agent: only its heartbeat reads it), read in the same round trip as the
/// tokens' version. A token that turns out to act as another agent (the tokens changed
/// since) leaves that record unused.
fn check_reading_ahead(
    store: &dyn Store,
    kept: &KeptTokens,
    presented: &str,
    project: Option<String>,
    standing: Standing,
    now: time::Timestamp,
) -> crate::error::Result<(Authentication, ReadAhead)> {
    let agent = project
        .as_ref()
        .filter(|_| standing.renews_leases())
        .and_then(|_| kept.last_agent_of(presented));
    let mut documents = Vec::new();
    documents.extend(project.clone().map(Document::Project));
    documents.extend(agent.clone().map(Document::Agent));
    let (version, texts) = store.version_and_texts(&Document::Tokens, &documents)?;
    let found = tokens::authenticate_at(store, kept, presented, now, version)?;
    let mut texts = texts.into_iter();
    let read = ReadAhead {
        project: project.map(|id| (id, texts.next().flatten())),
        agent: agent.map(|name| (name, texts.next().flatten())),
    };
    Ok((found, read))
}

/// A remote command that names who it acts as (`--as`, `BATON_AGENT`; the `baton-as`
/// header) is refused when that is not the token's agent: the token is the identity, and a
/// name that says otherwise is a mistake to point out, never a way to act as another.
fn claimed_another(headers: &HeaderMap, agent: &str) -> Option<Response> {
    let claimed = headers.get(crate::remote::CLAIMED_AGENT_HEADER)?;
    let claimed = String::from_utf8_lossy(claimed.as_bytes());
    (claimed != agent).then(|| {
        ApiError::from(crate::error::Error::invalid_with_hint(
            format!(
                "this token acts as {agent}, not {}: on a hub the token is the identity",
                crate::text::inline(&claimed)
            ),
            format!(
                "drop --as (and BATON_AGENT), or use {}'s own token",
                crate::text::inline(&claimed)
            ),
        ))
        .into_response()
    })
}

/// The token of an `Authorization: Bearer …` header.
fn bearer(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then(|| token.to_string())
}

fn unauthorized(message: &str, hint: Option<&str>) -> Response {
    let mut refusal = ApiError::new(StatusCode::UNAUTHORIZED, message);
    if let Some(hint) = hint {
        refusal = refusal.with_hint(hint);
    }
    let mut response = refusal.into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_host_is_told_how_to_allow_its_name_and_a_hostile_one_is_not_echoed() {
        let refusal = |host| host_refusal(host).body_json();
        let named = refusal(Some("BuildBox.lan:7878"));
        assert!(
            named["error"].as_str().unwrap().contains("`BuildBox.lan`"),
            "{named}"
        );
        assert_eq!(
            named["hint"],
            "if `BuildBox.lan` is this server's name, start it with `baton serve --allow-host \
             BuildBox.lan`"
        );
        for hostile in [
            Some("evil\u{1b}[2J.lan:80"),
            Some("a b"),
            Some("[::1]:80"),
            None,
        ] {
            let body = refusal(hostile);
            assert!(
                body["hint"]
                    .as_str()
                    .unwrap()
                    .ends_with("`baton serve --allow-host NAME`"),
                "{body}"
            );
            assert!(!body.to_string().contains("evil"), "{body}");
        }
    }

    #[test]
    fn a_host_name_is_answered_only_when_allowed() {
        let hosts = Hosts::for_listener("0.0.0.0:7878".parse().unwrap());
        assert!(!hosts.allows("buildbox:7878"));
        let hosts = hosts.allowing(vec!["BuildBox".into(), " ".into()]);
        assert!(hosts.allows("buildbox:7878"));
        assert!(hosts.allows("buildbox"), "behind a proxy on port 80");
        assert!(hosts.allows("buildbox:443"));
        assert!(!hosts.allows("evil.example:7878"));
        assert!(!hosts.allows(":7878"));
    }

    #[test]
    fn a_loopback_server_answers_its_address_and_localhost_at_its_port() {
        let hosts = Hosts::for_listener("127.0.0.1:7878".parse().unwrap());
        for host in ["127.0.0.1:7878", "localhost:7878", "LOCALHOST:7878"] {
            assert!(hosts.allows(host), "{host}");
        }
        for host in [
            "127.0.0.1:7879",
            "localhost",
            "evil.example:7878",
            "127.0.0.1.evil.example:7878",
            "10.0.0.1:7878",
            "[::1]:7878",
            "",
            ":7878",
            "127.0.0.1:",
            "127.0.0.1:7878:1",
        ] {
            assert!(!hosts.allows(host), "{host}");
        }
    }

    #[test]
    fn a_server_on_every_address_answers_any_literal_but_no_name() {
        let hosts = Hosts::for_listener("0.0.0.0:80".parse().unwrap());
        for host in ["10.1.2.3", "192.168.0.4:80", "[fe80::1]", "localhost:80"] {
            assert!(hosts.allows(host), "{host}");
        }
        for host in [
            "rebound.example",
            "rebound.example:80",
            "0.0.0.0",
            "10.1.2.3:81",
        ] {
            assert!(!hosts.allows(host), "{host}");
        }
    }

    #[test]
    fn a_v6_server_answers_its_bracketed_address() {
        let hosts = Hosts::for_listener("[::1]:9000".parse().unwrap());
        assert!(hosts.allows("[::1]:9000"));
        assert!(hosts.allows("localhost:9000"));
        assert!(!hosts.allows("::1:9000"));
        assert!(!hosts.allows("[::1]"));
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        let header = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            headers
        };
        assert_eq!(bearer(&header("Bearer abc")).as_deref(), Some("abc"));
        assert_eq!(bearer(&header("bearer  abc ")).as_deref(), Some("abc"));
        assert_eq!(bearer(&header("Basic abc")), None);
        assert_eq!(bearer(&header("Bearer ")), None);
        assert_eq!(bearer(&header("Bearerabc")), None);
        assert_eq!(bearer(&HeaderMap::new()), None);
    }
}
