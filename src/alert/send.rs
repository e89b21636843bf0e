//! Posting one alert: the only part of alerts that touches the network, run by the
//! detached sender and by `alert test`.

use std::time::Duration;

use super::Alert;
use super::format::Outgoing;
use crate::text;

/// How long one attempt may take, connecting included: a receiver slower than this is
/// tried again later.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a receiver's answer `alert test` shows.
const ANSWER_CHARS: usize = 200;

/// What the receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// The start of its body, escaped (SPEC section 10): a receiver's words are nobody's
    /// to trust.
    pub body: String,
}

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Posts `outgoing` to the alert's URL. An error says what went wrong without the URL,
/// whose path can be a secret of its own (a Slack webhook's).
pub fn post(alert: &Alert, outgoing: &Outgoing) -> Result<Reply, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(ATTEMPT_TIMEOUT))
        // A redirect would carry the body and its signature somewhere not configured.
        .max_redirects(0)
        .user_agent(concat!("baton/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut request = agent
        .post(&alert.url)
        .header("Content-Type", outgoing.content_type);
    for (name, value) in &outgoing.headers {
        request = request.header(*name, value);
    }
    let mut response = request
        .send(outgoing.body.as_slice())
        .map_err(|error| describe(&error))?;
    let status = response.status().as_u16();
    let body = response
        .body_mut()
        .with_config()
        .limit(64 * 1024)
        .read_to_string()
        .unwrap_or_default();
    let (kept, left) = text::cut(body.trim(), ANSWER_CHARS);
    Ok(Reply {
        status,
        body: format!("{}{}", text::inline(kept), if left > 0 { "…" } else { "" }),
    })
}

/// A failed request in words that name no URL.
fn describe(error: &ureq::Error) -> String {
    match error {
        ureq::Error::Io(error) => error.to_string(),
        ureq::Error::Timeout(_) => format!("no answer within {}s", ATTEMPT_TIMEOUT.as_secs()),
        ureq::Error::HostNotFound => "host not found".into(),
        ureq::Error::ConnectionFailed => "cannot connect".into(),
        ureq::Error::StatusCode(status) => format!("HTTP {status}"),
        ureq::Error::Tls(what) => format!("TLS failed: {what}"),
        ureq::Error::Rustls(error) => format!("TLS failed: {error}"),
        ureq::Error::TooManyRedirects | ureq::Error::RedirectFailed => {
            "the receiver redirected elsewhere".into()
        }
        _ => "the request failed".into(),
    }
}
