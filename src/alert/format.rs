//! An alert's request in each format, made from an [`Event`]. Every field an agent wrote
//! passes SPEC section 10's escaping first (control characters and bidirectional overrides
//! as `\u{…}`); then each format's own rules: Slack's `&`, `<`, `>` as entities so nothing
//! becomes a mention or a link, and ntfy's headers as one line of ASCII.

use serde::Serialize;

use super::{Alert, Event, Format, Kind};
use crate::secret::hmac;
use crate::text;

/// The header that carries a JSON alert's signature: `sha256=` and the HMAC-SHA256 of the
/// body under the alert's secret, in lowercase hex.
pub const SIGNATURE_HEADER: &str = "X-Baton-Signature";

/// One request, ready to post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// The JSON format's body.
#[derive(Serialize)]
struct JsonBody<'a> {
    project: &'a str,
    task: Option<&'a str>,
    kind: Kind,
    subject: String,
    from: &'a str,
    to: &'a str,
    url: Option<String>,
}

/// The request `alert` makes of `event`.
pub fn request(alert: &Alert, event: &Event) -> Outgoing {
    let url = link(alert, event);
    match alert.format {
        Format::Json => {
            let body = JsonBody {
                project: &event.project,
                task: event.task.as_deref(),
                kind: event.kind,
                subject: text::inline(&event.subject).to_string(),
                from: &event.from,
                to: &event.to,
                url,
            };
            // A struct of strings always serializes.
            let body = serde_json::to_vec(&body).unwrap_or_default();
            let signature = crate::secret::hex(&hmac::hmac_sha256(alert.secret.as_bytes(), &body));
            Outgoing {
                content_type: "application/json",
                headers: vec![(SIGNATURE_HEADER, format!("sha256={signature}"))],
                body,
            }
        }
        Format::Ntfy => {
            let mut headers = vec![
                ("Title", header_value(&title(event))),
                ("Priority", priority(event.kind).to_string()),
                ("Tags", format!("{},baton", tag(event.kind))),
            ];
            if let Some(url) = url {
                headers.push(("Click", header_value(&url)));
            }
            // ntfy shows a body as plain text unless told `Markdown: yes`, which it is not.
            let body = format!(
                "{}\n{} for {} in {}, from {}",
                text::inline(&event.subject),
                what(event),
                text::inline(&event.to),
                text::inline(&event.project),
                text::inline(&event.from)
            );
            Outgoing {
                content_type: "text/plain; charset=utf-8",
                headers,
                body: body.into_bytes(),
            }
        }
        Format::Slack => {
            let mut line = format!(
                "baton: {} for {} in {}, from {}: {}",
                what(event),
                event.to,
                event.project,
                event.from,
                text::inline(&event.subject)
            );
            if let Some(url) = url {
                line.push(' ');
                line.push_str(&url);
            }
            let body = serde_json::json!({ "text": slack_escape(&line) });
            Outgoing {
                content_type: "application/json",
                headers: Vec::new(),
                body: serde_json::to_vec(&body).unwrap_or_default(),
            }
        }
    }
}

/// The link to the event's task on the web board: known when the alert was given the
/// board's address (`--board-url`); the fragment names the project and task.
fn link(alert: &Alert, event: &Event) -> Option<String> {
    let board = alert.board_url.as_deref()?.trim_end_matches('/');
    Some(match &event.task {
        Some(task) => format!("{board}/#project={}&task={task}", event.project),
        None => format!("{board}/#project={}", event.project),
    })
}

/// "question on T-3", "message": what reached them, in a few words.
fn what(event: &Event) -> String {
    let words = match event.kind {
        Kind::Task => "task",
        Kind::Question => "question on",
        Kind::Review => "review requested on",
        Kind::Failed => "failed:",
        Kind::Stalled => "stalled:",
        Kind::Message => "message",
    };
    match &event.task {
        Some(task) => format!("{words} {task}"),
        None => words.to_string(),
    }
}

/// The title a phone shows: what, and the subject.
fn title(event: &Event) -> String {
    format!("baton {}: {}", what(event), text::inline(&event.subject))
}

/// ntfy's priority (1 to 5): a question, a review, a failure or a stall waits on the human.
fn priority(kind: Kind) -> u8 {
    match kind {
        Kind::Question | Kind::Review | Kind::Failed | Kind::Stalled => 4,
        Kind::Task | Kind::Message => 3,
    }
}

/// The ntfy tag of each kind, which it shows as an emoji.
fn tag(kind: Kind) -> &'static str {
    match kind {
        Kind::Task => "inbox_tray",
        Kind::Question => "question",
        Kind::Review => "eyes",
        Kind::Failed => "x",
        Kind::Stalled => "hourglass",
        Kind::Message => "speech_balloon",
    }
}

/// `value` as one line of printable ASCII for an HTTP header. Controls are escaped as SPEC
/// section 10 says; text beyond ASCII (or that could pass for an encoded word) goes as RFC
/// 2047 encoded words (`=?UTF-8?B?…?=`), which ntfy decodes for its Title.
pub fn header_value(value: &str) -> String {
    let line = text::inline(value).to_string();
    if line.bytes().all(|byte| (0x20..0x7f).contains(&byte)) && !line.contains("=?") {
        return line;
    }
    // Each encoded word holds whole characters, at most 45 bytes of them (60 of base64),
    // under RFC 2047's 75 characters a word.
    let mut words = Vec::new();
    let mut chunk = String::new();
    for c in line.chars() {
        if chunk.len() + c.len_utf8() > 45 {
            words.push(encoded_word(&chunk));
            chunk.clear();
        }
        chunk.push(c);
    }
    if !chunk.is_empty() {
        words.push(encoded_word(&chunk));
    }
    words.join(" ")
}

fn encoded_word(text: &str) -> String {
    format!("=?UTF-8?B?{}?=", base64(text.as_bytes()))
}

/// Standard base64 with padding (RFC 4648).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let value = group.iter().enumerate().fold(0u32, |value, (at, byte)| {
            value | u32::from(*byte) << (16 - 8 * at)
        });
        for at in 0..4 {
            if at <= group.len() {
                let index = (value >> (18 - 6 * at)) & 0x3f;
                out.push(char::from(ALPHABET[index as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `text` as Slack reads it literally: `&`, `<` and `>` as the entities its formatting
/// asks for, so `<!channel>` or `<http://x|y>` stays text.
pub fn slack_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    const HOSTILE: &str = "<b>x</b> <!channel> <http://evil|click> \u{1b}[31m \u{202e} é";

    fn alert(format: Format) -> Alert {
        Alert {
            name: "phone".into(),
            url: "http://127.0.0.1:9/".into(),
            format,
            for_agent: None,
            on: Kind::ALL.to_vec(),
            board_url: Some("https://board.example/".into()),
            secret: "baton_alert_key".into(),
            created_at: "2026-12-03T12:00:00Z".parse::<Timestamp>().unwrap(),
            other: serde_json::Map::new(),
        }
    }

    fn event(subject: &str) -> Event {
        Event {
            project: "api".into(),
            task: Some("T-3".into()),
            kind: Kind::Question,
            subject: subject.into(),
            from: "codex".into(),
            to: "ann".into(),
        }
    }

    #[test]
    fn base64_matches_rfc_4648() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }

    #[test]
    fn a_header_value_is_one_line_of_ascii() {
        assert_eq!(header_value("plain words"), "plain words");
        assert_eq!(header_value("a\r\nX-Evil: 1"), "a\\u{d}\\u{a}X-Evil: 1");
        assert_eq!(header_value("Grüße"), "=?UTF-8?B?R3LDvMOfZQ==?=");
        // Words an agent wrote that ntfy would decode are encoded themselves.
        assert!(header_value("=?UTF-8?B?Gw==?=").starts_with("=?UTF-8?B?PT9"));
        let long = header_value(&"é".repeat(100));
        assert!(long.split(' ').all(|word| word.len() <= 75), "{long}");
        assert!(long.bytes().all(|byte| (0x20..0x7f).contains(&byte)));
    }

    #[test]
    fn the_json_body_is_signed_and_escaped() {
        let out = request(&alert(Format::Json), &event(HOSTILE));
        let body: serde_json::Value = serde_json::from_slice(&out.body).unwrap();
        assert_eq!(body["kind"], "question");
        assert_eq!(body["task"], "T-3");
        assert_eq!(body["url"], "https://board.example/#project=api&task=T-3");
        let subject = body["subject"].as_str().unwrap();
        assert!(!subject.contains(['\u{1b}', '\u{202e}']), "{subject}");
        assert!(subject.contains("\\u{1b}[31m \\u{202e}"));
        let expected = crate::secret::hex(&hmac::hmac_sha256(b"baton_alert_key", &out.body));
        assert_eq!(
            out.headers,
            vec![(SIGNATURE_HEADER, format!("sha256={expected}"))]
        );
    }

    #[test]
    fn slack_text_holds_no_markup() {
        let out = request(&alert(Format::Slack), &event(HOSTILE));
        let body: serde_json::Value = serde_json::from_slice(&out.body).unwrap();
        let text = body["text"].as_str().unwrap();
        assert!(!text.contains(['<', '>', '\u{1b}', '\u{202e}']), "{text}");
        assert!(text.contains("&lt;!channel&gt; &lt;http://evil|click&gt;"));
    }

    #[test]
    fn ntfy_headers_are_safe_and_the_body_is_escaped() {
        let out = request(&alert(Format::Ntfy), &event(HOSTILE));
        for (name, value) in &out.headers {
            assert!(
                value.bytes().all(|byte| (0x20..0x7f).contains(&byte)),
                "{name}: {value}"
            );
        }
        let body = String::from_utf8(out.body).unwrap();
        assert!(!body.contains(['\u{1b}', '\u{202e}']), "{body}");
        assert!(out.headers.contains(&("Priority", "4".into())));
        assert!(out.headers.contains(&(
            "Click",
            "https://board.example/#project=api&task=T-3".into()
        )));
    }
}
