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
use crate::board::edit::{Field, FieldValue};
use crate::board::task::Priority;

const INDEX: &str = include_str!("assets/index.html");

/// Where the page's buttons go: those of the actions taken with words (or none), and those
/// of the actions that name a new assignee, beside the picker of names.
const BUTTONS: &str = "<!-- actions -->";
const PICKED_BUTTONS: &str = "<!-- actions naming an assignee -->";
/// Where the buttons of the actions that change a task's fields go (an edit's), below the
/// inputs of those fields.
const FIELD_BUTTONS: &str = "<!-- actions changing fields -->";
const FIELD_INPUTS: &str = "<!-- fields an action changes -->";

/// The page with its buttons, made once.
static PAGE: LazyLock<String> = LazyLock::new(|| page(ACTIONS));
/// The page's scripts, in the order it loads them: each of the first defines functions the
/// last, app.js, calls (they share the page's scope, as one script would).
const SCRIPTS: &[(&str, &str)] = &[
    ("/assets/text.js", include_str!("assets/text.js")),
    ("/assets/board.js", include_str!("assets/board.js")),
    ("/assets/login.js", include_str!("assets/login.js")),
    ("/assets/diff.js", include_str!("assets/diff.js")),
    ("/assets/stats.js", include_str!("assets/stats.js")),
    ("/assets/app.js", include_str!("assets/app.js")),
];
const STYLE: &str = include_str!("assets/app.css");

/// Only the page's own script, style and API; no frame, no form posting elsewhere, no base.
pub const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                          connect-src 'self'; img-src 'self'; base-uri 'none'; \
                          form-action 'none'; frame-ancestors 'none'";

pub fn routes() -> Router<super::State> {
    let mut router = Router::new()
        .route(
            "/",
            get(|| asset("text/html; charset=utf-8", PAGE.as_str())),
        )
        .route(
            "/assets/app.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        );
    for &(path, script) in SCRIPTS {
        router = router.route(
            path,
            get(move || asset("text/javascript; charset=utf-8", script)),
        );
    }
    router
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

/// The page with a button for each of `rows`, in their order, and an input for each field
/// an action changes.
fn page(rows: &[Row]) -> String {
    let buttons = |picked: bool, changes: bool| -> String {
        rows.iter()
            .filter(|row| row.takes_to() == picked && row.fields.is_empty() != changes)
            .map(button)
            .collect()
    };
    let inputs: String = rows.iter().flat_map(|row| row.fields).map(input).collect();
    INDEX
        .replace(BUTTONS, &buttons(false, false))
        .replace(PICKED_BUTTONS, &buttons(true, false))
        .replace(FIELD_BUTTONS, &buttons(false, true))
        .replace(FIELD_INPUTS, &inputs)
}

/// The input of a field an action changes: named for it (`data-name`), saying the kind of
/// its value (`data-value`: words, text, list, ids, priority), which the script reads.
fn input(field: &Field) -> String {
    let name = field.argument.name;
    let kind = match field.value {
        FieldValue::Words => "words",
        FieldValue::Text => "text",
        FieldValue::List => "list",
        FieldValue::Ids => "ids",
        FieldValue::Priority => "priority",
    };
    let named = format!(
        r#"data-name="{name}" data-value="{kind}" title="{}""#,
        escaped(field.argument.help)
    );
    let control = match field.value {
        FieldValue::Text => format!(r#"<textarea rows="3" {named}></textarea>"#),
        FieldValue::Priority => {
            let options: String = Priority::NAMES
                .iter()
                .map(|priority| format!(r#"<option value="{priority}">{priority}</option>"#))
                .collect();
            format!("<select {named}>{options}</select>")
        }
        _ => format!(r#"<input autocomplete="off" {named}>"#),
    };
    format!("<label>{name} {control}</label>")
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
            row.to.map_or("", |to| to.as_str())
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
        for place in [BUTTONS, PICKED_BUTTONS, FIELD_BUTTONS, FIELD_INPUTS] {
            assert!(!page.contains(place), "{place}");
        }
        // An input for each field an edit changes, beside its button.
        for field in ActionKind::Edit.row().fields {
            assert!(page.contains(&format!(r#"data-name="{}""#, field.argument.name)));
        }
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
            to: Some(Status::Failed),
            words: Words::Required,
            word: "reason",
            argument: None,
            assignee: None,
            fields: &[],
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
