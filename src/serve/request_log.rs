//! Every request the hub answers, counted and timed by its route ([`crate::metrics`]) and,
//! with `serve --log json`, one JSON line on stderr once its answer is sent:
//!
//! ```text
//! {"time":"2026-12-07T11:46:03.123Z","method":"POST","route":"/api/v1/projects/{project}/tasks","status":200,"duration_ms":3.25,"bytes":1024}
//! ```
//!
//! A request is named by the template of the route that answered it, never by its path or
//! its query: no project, task, agent or token, nor anything a client put in a URL, reaches
//! a label or a log line. A method outside HTTP's own is `OTHER`, a path no route answers
//! `unmatched`. Bodies and headers are never read here.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;

use crate::metrics::{REQUEST_SECONDS, REQUESTS};
use crate::time::{self, Timestamp};

/// How `serve` logs each request, besides counting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequestLog {
    /// No line per request: what serve says on stderr is its start, its wakes, its stop.
    #[default]
    Off,
    /// One JSON line per request on stderr.
    Json,
}

/// The label of a request no route answered.
const UNMATCHED: &str = "unmatched";

/// Counts and times each request by its route template, and logs it as `log` says.
pub async fn measure(State(log): State<RequestLog>, request: Request, next: Next) -> Response {
    let arrived = Instant::now();
    let time = time::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_string();
    let method = method_label(request.method());
    let response = next.run(request).await;
    let status = response.status().as_u16();
    REQUEST_SECONDS.observe(route.clone(), arrived.elapsed().as_secs_f64());
    REQUESTS.add((route.clone(), method, status));
    match log {
        RequestLog::Off => response,
        RequestLog::Json => response.map(|body| {
            Body::new(Logged {
                body,
                line: Line {
                    time,
                    method,
                    route,
                    status,
                    arrived,
                },
                bytes: 0,
            })
        }),
    }
}

/// A method as a label: HTTP's own by name, any other `OTHER` (a method is a client's word,
/// and could carry anything).
fn method_label(method: &Method) -> &'static str {
    match method.as_str() {
        "GET" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "DELETE" => "DELETE",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        "PATCH" => "PATCH",
        "CONNECT" => "CONNECT",
        "TRACE" => "TRACE",
        _ => "OTHER",
    }
}

/// What a request's log line says, but for the bytes sent.
struct Line {
    time: Timestamp,
    method: &'static str,
    route: String,
    status: u16,
    arrived: Instant,
}

/// An answer's body that counts the bytes it sends and writes the request's line when it
/// ends (sent whole, or dropped when the client went away): a stream's line comes when the
/// stream closes, with its whole length.
struct Logged {
    body: Body,
    line: Line,
    bytes: u64,
}

impl HttpBody for Logged {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(context);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.bytes += data.len() as u64;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let line = &self.line;
        let json = serde_json::json!({
            "time": line.time.to_string(),
            "method": line.method,
            "route": line.route,
            "status": line.status,
            "duration_ms": (line.arrived.elapsed().as_secs_f64() * 1e6).round() / 1e3,
            "bytes": self.bytes,
        });
        // One write a line, so that lines of requests answered at once never interleave.
        use std::io::Write;
        let _ = std::io::stderr()
            .lock()
            .write_all(format!("{json}\n").as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_outside_https_own_is_other() {
        assert_eq!(method_label(&Method::POST), "POST");
        assert_eq!(
            method_label(&Method::from_bytes(b"SECRET").unwrap()),
            "OTHER"
        );
    }
}
