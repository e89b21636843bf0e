//! What a hub answered, or why it did not: its refusals turned back into the error they are
//! locally, the limits on an answer's size, and a failure to reach it in baton's words.

use std::time::Duration;

use super::CONNECT_WITHIN;
use crate::error::Error;

/// Whether a request that failed so never reached the hub: its name did not resolve, or no
/// connection was made. Anything later (the connection dropped, no answer in time) may
/// have come after the hub read the request.
pub(super) fn never_sent(error: &ureq::Error) -> bool {
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
pub(super) fn too_large(url: &str, path: &str, limit: u64) -> Error {
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
pub(super) fn why_unreachable(error: &ureq::Error, within: Duration) -> String {
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

/// The hub's refusal (`{error, hint, code}`), as the error the same refusal is locally.
pub(super) fn refusal(url: &str, status: u16, body: &[u8]) -> Error {
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
pub(super) fn url_host(url: &str) -> Option<&str> {
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
