//! No SSE priming event to an MCP session whose protocol version lacks it.
//!
//! rmcp opens each event stream of `/mcp` with a priming event (an `id`, a `retry` and an
//! empty `data`), which MCP has only since 2025-11-25 (SEP-1699). A client of an earlier
//! version may take it for a message and fail on it: Gemini CLI 0.61.0, which negotiates
//! 2025-06-18, parses the empty data, fails and drops the server. rmcp sends it whatever the
//! session negotiated, so this layer takes it out of the streams of sessions on an older
//! version, and leaves the streams of 2025-11-25 and later as rmcp writes them.
//!
//! The version is the request's `MCP-Protocol-Version` header, which every request after
//! `initialize` carries since 2025-06-18. A request without it is either `initialize` (its
//! answer, the stream's first message, names the version negotiated: the events before it
//! wait for it) or one of a 2025-03-26 client, which the header's absence means.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use tokio_stream::StreamExt;

/// The first version with priming events.
const PRIMING_SINCE: &str = "2025-11-25";

/// Whether the protocol `version` (a `YYYY-MM-DD` date) has priming events.
fn has_priming(version: &str) -> bool {
    version >= PRIMING_SINCE
}

/// Passes the event streams of `/mcp` on without the priming events their session's
/// version lacks.
pub async fn for_the_version(request: Request, next: Next) -> Response {
    let version = request
        .headers()
        .get("mcp-protocol-version")
        .and_then(|value| value.to_str().ok())
        .map(|value| value.trim().to_string());
    let response = next.run(request).await;
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"));
    if !is_stream {
        return response;
    }
    let mut filter = match version {
        Some(version) if has_priming(&version) => return response,
        Some(_) => Filter::new(Decision::Drop),
        None => Filter::new(Decision::Pending),
    };
    let (parts, body) = response.into_parts();
    let filtered = body.into_data_stream().map(move |chunk| {
        chunk.map(|chunk| {
            let mut out = Vec::new();
            filter.push(&chunk, &mut out);
            Bytes::from(out)
        })
    });
    Response::from_parts(parts, Body::from_stream(filtered))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// The version has priming events: everything passes.
    Keep,
    /// It has not: events without data are dropped.
    Drop,
    /// Not known until the first message (the answer to `initialize`) says it.
    Pending,
}

/// The events of one stream, each passed on whole or not at all.
struct Filter {
    decision: Decision,
    /// What has come of an event not yet ended.
    partial: Vec<u8>,
    /// Priming events held while the decision is pending.
    held: Vec<u8>,
}

impl Filter {
    fn new(decision: Decision) -> Self {
        Filter {
            decision,
            partial: Vec::new(),
            held: Vec::new(),
        }
    }

    /// Takes `chunk` of the stream and writes to `out` what is to be sent of it.
    fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.decision == Decision::Keep {
            out.append(&mut self.partial);
            out.extend_from_slice(chunk);
            return;
        }
        self.partial.extend_from_slice(chunk);
        while let Some(end) = event_end(&self.partial) {
            let event: Vec<u8> = self.partial.drain(..end).collect();
            self.pass(event, out);
        }
    }

    fn pass(&mut self, event: Vec<u8>, out: &mut Vec<u8>) {
        let Some(data) = data_of(&event) else {
            // A comment (a keep-alive) is in every version.
            out.extend_from_slice(&event);
            return;
        };
        if self.decision == Decision::Keep {
            out.extend_from_slice(&event);
            return;
        }
        if data.is_empty() {
            if self.decision == Decision::Pending {
                self.held.extend_from_slice(&event);
            }
            return;
        }
        if self.decision == Decision::Pending {
            self.decision = if negotiated(&data).is_some_and(|version| has_priming(&version)) {
                out.append(&mut self.held);
                Decision::Keep
            } else {
                self.held.clear();
                Decision::Drop
            };
        }
        out.extend_from_slice(&event);
    }
}

/// Where the first event in `bytes` ends (after its blank line), if it has.
fn event_end(bytes: &[u8]) -> Option<usize> {
    let lf = bytes
        .windows(2)
        .position(|pair| pair == b"\n\n")
        .map(|at| at + 2);
    let crlf = bytes
        .windows(4)
        .position(|four| four == b"\r\n\r\n")
        .map(|at| at + 4);
    match (lf, crlf) {
        (Some(lf), Some(crlf)) => Some(lf.min(crlf)),
        (lf, crlf) => lf.or(crlf),
    }
}

/// The data of an event, its `data` lines joined as SSE joins them; `None` for an event of
/// comments alone. An event of fields without data (`id`, `retry`) has empty data.
fn data_of(event: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(event);
    let mut data: Option<String> = None;
    let mut any_field = false;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with(':') {
            continue;
        }
        any_field = true;
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field == "data" {
            let value = value.strip_prefix(' ').unwrap_or(value);
            let joined = data.get_or_insert_with(String::new);
            if !joined.is_empty() {
                joined.push('\n');
            }
            joined.push_str(value);
        }
    }
    any_field.then(|| data.unwrap_or_default())
}

/// The protocol version the answer to `initialize` in `data` names, if it is one.
fn negotiated(data: &str) -> Option<String> {
    let message: serde_json::Value = serde_json::from_str(data).ok()?;
    message["result"]["protocolVersion"]
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRIMING: &str = "data: \nid: 0\nretry: 3000\n\n";

    fn through(decision: Decision, chunks: &[&str]) -> String {
        let mut filter = Filter::new(decision);
        let mut out = Vec::new();
        for chunk in chunks {
            filter.push(chunk.as_bytes(), &mut out);
        }
        String::from_utf8(out).unwrap()
    }

    fn answer(version: &str) -> String {
        format!(
            "data: {{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{\"protocolVersion\":\"{version}\"}}}}\nid: 0/1\n\n"
        )
    }

    #[test]
    fn an_older_session_gets_every_message_and_comment_but_no_priming() {
        let message = "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\nid: 0/2\n\n";
        let out = through(
            Decision::Drop,
            &[PRIMING, ":\n\n", &message[..9], &message[9..]],
        );
        assert_eq!(out, format!(":\n\n{message}"));
        assert_eq!(through(Decision::Drop, &["retry: 3000\n\n"]), "");
    }

    #[test]
    fn the_answer_to_initialize_decides_a_stream_without_the_header() {
        let old = answer("2025-06-18");
        assert_eq!(through(Decision::Pending, &[PRIMING, &old]), old);
        let new = answer("2025-11-25");
        let later = "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n";
        let all = format!("{PRIMING}{new}{later}");
        // Cut inside the event after the answer: nothing of it is lost.
        let cut = PRIMING.len() + new.len() + 7;
        assert_eq!(through(Decision::Pending, &[&all[..cut], &all[cut..]]), all);
        // A 2025-03-26 client's other requests carry no header and name no version.
        let plain = "data: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n\n";
        assert_eq!(
            through(Decision::Pending, &[PRIMING, plain, PRIMING]),
            plain
        );
    }

    #[test]
    fn versions_compare_as_dates() {
        assert!(!has_priming("2025-03-26"));
        assert!(!has_priming("2025-06-18"));
        assert!(has_priming("2025-11-25"));
        assert!(has_priming("2026-07-28"));
    }
}
