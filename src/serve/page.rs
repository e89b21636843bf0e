//! The web board's files (SPEC section 12.1), built into the binary: the page works offline
//! and fetches nothing from elsewhere. Its only script and style are these, which the
//! Content-Security-Policy on every answer allows and nothing else. The buttons of the
//! actions on a task are made here from the table of actions, each carrying what the script
//! needs to take it (its words, its confirmation), so the script holds no list of actions.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::board::action::{ACTIONS, Row};

const INDEX: &str = include_str!("assets/index.html");

/// Where the page's buttons go: those of the actions taken with words (or none), and those
/// of the actions that name a new assignee, beside the picker of names.
const BUTTONS: &str = "<!-- actions -->";
const PICKED_BUTTONS: &str = "<!-- actions naming an assignee -->";

/// The page with its buttons, made once.
static PAGE: LazyLock<String> = LazyLock::new(|| page(ACTIONS));
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// Only the page's own script, style and API; no frame, no form posting elsewhere, no base.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                          connect-src 'self'; img-src 'self'; base-uri 'none'; \
                          form-action 'none'; frame-ancestors 'none'";

pub fn routes() -> Router<super::State> {
    Router::new()
        .route(
            "/",
            get(|| asset("text/html; charset=utf-8", PAGE.as_str())),
        )
        .route(
            "/assets/app.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/assets/app.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
}

async fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The page with a button for each of `rows`, in their order.
fn page(rows: &[Row]) -> String {
    let buttons = |picked: bool| -> String {
        rows.iter()
            .filter(|row| row.takes_to() == picked)
            .map(button)
            .collect()
    };
    INDEX
        .replace(BUTTONS, &buttons(false))
        .replace(PICKED_BUTTONS, &buttons(true))
}

/// The button of `row`: its label; the action's name and command; what its words are for;
/// for an action nothing undoes, the question asked first (`{id}` standing for the task)
/// and the words of the button that says yes; and for one that names a new assignee,
/// disabled until a name is picked.
fn button(row: &Row) -> String {
    let mut attributes = format!(
        r#"type="button" id="{}" data-action="{}" data-command="{}""#,
        row.command, row.name, row.command
    );
    if let Some(words) = row.button.words {
        attributes.push_str(&format!(r#" data-words="{}""#, escaped(words)));
    }
    if row.confirms {
        let verb = row.name.replace('_', " ");
        let question = format!(
            "{}{} {{id}}? A {} task never moves again.",
            verb[..1].to_uppercase(),
            &verb[1..],
            row.to
        );
        let yes = format!("Yes, {verb} it");
        attributes.push_str(&format!(
            r#" class="danger" data-confirm="{}" data-yes="{}""#,
            escaped(&question),
            escaped(&yes)
        ));
    }
    if row.takes_to() {
        attributes.push_str(" disabled");
    }
    format!(
        "<button {attributes}>{}</button>",
        escaped(row.button.label)
    )
}

/// `text` as HTML text or an attribute's value.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The headers every answer carries: the policy, and no guessing of content types.
pub async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::action::{ActionKind, Button, Key, Role, Words};
    use crate::board::task::Status;

    #[test]
    fn the_page_has_one_button_per_row_of_the_table_in_its_order_and_no_other() {
        let page = page(ACTIONS);
        assert!(!page.contains(BUTTONS) && !page.contains(PICKED_BUTTONS));
        let mut at = 0;
        for row in ACTIONS {
            let found = page[at..]
                .find(&format!(r#"data-action="{}""#, row.name))
                .unwrap_or_else(|| panic!("no button for {}", row.name));
            at += found;
        }
        assert_eq!(page.matches("data-action=").count(), ACTIONS.len());
        assert!(page.contains(
            r#"class="danger" data-confirm="Cancel {id}? A canceled task never moves again." data-yes="Yes, cancel it">Cancel task</button>"#
        ));
    }

    #[test]
    fn a_new_row_is_a_new_button_with_its_words_and_confirmation() {
        let row = Row {
            kind: ActionKind::Claim,
            name: "hand_back",
            command: "hand-back",
            entry: "hand_back",
            is_conversation: false,
            role: Role::Assignee,
            from: &[Status::Working],
            to: Status::Failed,
            words: Words::Required,
            word: "reason",
            argument: None,
            assignee: None,
            phrase: "hand it back",
            help: "",
            example: "",
            tool: "",
            key: Key {
                keys: &[],
                label: "",
                what: "",
                prompt: "",
            },
            button: Button {
                label: "Hand <back>",
                words: Some("why \"back\""),
            },
            confirms: true,
            hands_over: true,
        };
        let page = page(std::slice::from_ref(&row));
        assert!(page.contains(
            r#"<button type="button" id="hand-back" data-action="hand_back" data-command="hand-back" data-words="why &quot;back&quot;" class="danger" data-confirm="Hand back {id}? A failed task never moves again." data-yes="Yes, hand back it">Hand &lt;back&gt;</button>"#
        ), "{page}");
    }
}
