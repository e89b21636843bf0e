//! The cap on long-lived requests: event streams (`/api/v1/events`), MCP's GET streams, A2A's
//! streams and blocking sends. Each holds a connection for as long as it lasts, so without a
//! cap one token could take every connection the server has (issue 40). A token may have
//! [`Limits::streams_per_token`] open at once and all tokens together [`Limits::streams`],
//! fewer than the connections, so that requests that end always find room. A stream beyond
//! either is refused before it starts, in the words of its protocol; one that ends, however
//! it ends, gives its place back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::a2a::protocol::{RpcError, code};
use super::api::ApiError;
use super::connections::{Held, Limits};
use crate::tokens::TokenId;

/// The streams open, by token.
#[derive(Debug)]
pub struct Streams {
    per_token: usize,
    in_all: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    in_all: usize,
    by_token: HashMap<TokenId, usize>,
}

/// A stream refused for the streams already open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TooManyStreams {
    #[error(
        "this token has {limit} streams open already, the most one token may have at once \
         (event streams, MCP GET streams, A2A streams and blocking sends)"
    )]
    OfToken { limit: usize },
    #[error("the server has {limit} streams open already, the most it keeps at once")]
    OfServer { limit: usize },
}

impl TooManyStreams {
    pub fn hint(&self) -> &'static str {
        match self {
            TooManyStreams::OfToken { .. } => {
                "close a stream this token no longer reads; other tokens are not held up"
            }
            TooManyStreams::OfServer { .. } => "try again once some streams have closed",
        }
    }
}

impl From<TooManyStreams> for ApiError {
    /// 429 for the token's own streams; 503 for the server's, which the caller did not fill
    /// alone.
    fn from(refused: TooManyStreams) -> Self {
        let status = match refused {
            TooManyStreams::OfToken { .. } => StatusCode::TOO_MANY_REQUESTS,
            TooManyStreams::OfServer { .. } => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, refused.to_string()).with_hint(refused.hint())
    }
}

impl From<TooManyStreams> for RpcError {
    /// A2A has no code for it: one of the implementation's own
    /// ([`code::RESOURCE_EXHAUSTED`]).
    fn from(refused: TooManyStreams) -> Self {
        RpcError::new(
            code::RESOURCE_EXHAUSTED,
            "RESOURCE_EXHAUSTED",
            refused.to_string(),
        )
        .with_hint(refused.hint())
    }
}

impl Streams {
    pub fn new(limits: Limits) -> Streams {
        Streams {
            per_token: limits.streams_per_token,
            in_all: limits.streams,
            open: Mutex::new(Open::default()),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        // Every change under the lock is whole: counts up or down together.
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many streams are open, of all tokens.
    pub fn open_in_all(&self) -> usize {
        self.open().in_all
    }

    /// A place for one more stream of `token`, kept until the [`Slot`] is dropped.
    pub fn try_open(self: &Arc<Self>, token: &TokenId) -> Result<Slot, TooManyStreams> {
        let mut open = self.open();
        let of_token = open.by_token.get(token).copied().unwrap_or(0);
        if of_token >= self.per_token {
            return Err(TooManyStreams::OfToken {
                limit: self.per_token,
            });
        }
        if open.in_all >= self.in_all {
            return Err(TooManyStreams::OfServer { limit: self.in_all });
        }
        open.in_all += 1;
        *open.by_token.entry(token.clone()).or_default() += 1;
        Ok(Slot {
            streams: self.clone(),
            token: token.clone(),
        })
    }
}

/// One open stream's place.
#[derive(Debug)]
pub struct Slot {
    streams: Arc<Streams>,
    token: TokenId,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.streams.open();
        open.in_all = open.in_all.saturating_sub(1);
        if let Some(count) = open.by_token.get_mut(&self.token) {
            *count -= 1;
            if *count == 0 {
                open.by_token.remove(&self.token);
            }
        }
    }
}

/// Counts an MCP GET (the stream of a session's messages from the server) among its
/// token's streams, for as long as its answer lasts; refused with 429 beyond the cap. It
/// runs after the token check, which names the token.
pub async fn hold_mcp_stream(
    State(streams): State<Arc<Streams>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET {
        return next.run(request).await;
    }
    let Some(token) = request.extensions().get::<TokenId>().cloned() else {
        return next.run(request).await;
    };
    let slot = match streams.try_open(&token) {
        Ok(slot) => slot,
        Err(refused) => return refusal(refused),
    };
    next.run(request)
        .await
        .map(|body| axum::body::Body::new(Held::new(body, slot)))
}

/// The API's refusal of a stream, with `Retry-After` when waiting helps.
pub fn refusal(refused: TooManyStreams) -> Response {
    let retry = matches!(refused, TooManyStreams::OfServer { .. });
    let mut response = ApiError::from(refused).into_response();
    if retry {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(name: &str) -> TokenId {
        TokenId::from_stored(name.to_string())
    }

    #[test]
    fn a_token_at_its_cap_is_refused_while_others_open_until_all_are_taken() {
        let streams = Arc::new(Streams::new(Limits {
            connections: 8,
            streams: 3,
            streams_per_token: 2,
        }));
        let (a, b) = (token("a"), token("b"));
        let first = streams.try_open(&a).unwrap();
        let _second = streams.try_open(&a).unwrap();
        assert_eq!(
            streams.try_open(&a).unwrap_err(),
            TooManyStreams::OfToken { limit: 2 }
        );
        let _of_b = streams.try_open(&b).unwrap();
        assert_eq!(
            streams.try_open(&b).unwrap_err(),
            TooManyStreams::OfServer { limit: 3 }
        );
        drop(first);
        let _again = streams
            .try_open(&b)
            .expect("a closed stream gives its place back");
        assert_eq!(streams.open().by_token.len(), 2);
    }
}
