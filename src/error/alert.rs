//! What the alerts refuse: a kind, a name or an address they cannot use, an alert that is
//! there already or is not there.

use crate::text::{self, Face};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlertError {
    /// A word of `--on` that names no kind; `kinds` are the kinds there are.
    #[error("no alert kind is called {word}")]
    UnknownKind {
        word: String,
        kinds: Vec<&'static str>,
    },
    /// `--on` with no kind in it.
    #[error("{}", self.words(Face::Cli))]
    NoKind { kinds: Vec<&'static str> },
    #[error("{} is no name for an alert", text::inline(name))]
    BadName { name: String },
    #[error("there is an alert called {name} already")]
    Exists { name: String },
    #[error("there is no alert called {}", text::inline(name))]
    NoSuchAlert { name: String },
    /// An address with no `://`.
    #[error("{}", self.words(Face::Cli))]
    NotUrl { field: AlertUrl, url: String },
    #[error("{}", self.words(Face::Cli))]
    NotHttp { field: AlertUrl, url: String },
    #[error("{}", self.words(Face::Cli))]
    NoHost { field: AlertUrl, url: String },
}

/// Which of an alert's addresses: where it posts, or the board its alerts link to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertUrl {
    Url,
    BoardUrl,
}

impl AlertUrl {
    /// The argument that gives it, as `face` spells it.
    fn argument(self, face: Face) -> String {
        face.argument(match self {
            AlertUrl::Url => "url",
            AlertUrl::BoardUrl => "board-url",
        })
    }
}

impl AlertError {
    /// The refusal as `face` tells it, naming its arguments as `face` spells them.
    pub fn words(&self, face: Face) -> String {
        match self {
            AlertError::NoKind { .. } => format!("{} names no kind", face.argument("on")),
            AlertError::NotUrl { field, url } => format!(
                "{} {} is not an http(s) URL",
                field.argument(face),
                text::inline(url)
            ),
            AlertError::NotHttp { field, url } => format!(
                "{} {} is not http(s): baton posts alerts over http and https only",
                field.argument(face),
                text::inline(url)
            ),
            AlertError::NoHost { field, url } => format!(
                "{} {} names no host",
                field.argument(face),
                text::inline(url)
            ),
            other => other.to_string(),
        }
    }

    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> Option<String> {
        Some(match self {
            AlertError::UnknownKind { kinds, .. } | AlertError::NoKind { kinds } => format!(
                "{} takes some of {}, between commas",
                face.argument("on"),
                kinds.join(",")
            ),
            AlertError::BadName { .. } => "an alert's name is written like an agent's: lowercase \
                 letters, digits, `.`, `-` and `_`"
                .to_string(),
            AlertError::Exists { name } => {
                format!("`baton alert rm {name}` first, or pick another name")
            }
            AlertError::NoSuchAlert { .. } => "`baton alert list` shows them".to_string(),
            AlertError::NotUrl { field, .. }
            | AlertError::NotHttp { field, .. }
            | AlertError::NoHost { field, .. } => format!(
                "{} takes an http:// or https:// address, such as https://ntfy.sh/TOPIC",
                field.argument(face)
            ),
        })
    }
}
