//! What the client of a hub on another machine refuses before it asks the hub anything: a
//! `BATON_URL` or a token it cannot use, a directory it cannot map.

use std::path::PathBuf;

use crate::text;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    #[error(
        "BATON_URL is set ({}) but no token: the token is your identity on the hub",
        text::inline(url)
    )]
    NoToken { url: String },
    #[error(
        "the token holds a space or a control character: it is not one `baton token add` \
         printed"
    )]
    BadToken,
    #[error("cannot encode the request: {cause}")]
    Encode { cause: String },
    /// An empty item of the list `BATON_URL` holds, at `place` (from 1) of `count`.
    #[error(
        "BATON_URL `{}` has an empty item (hub {place} of {count}): hubs are separated by \
         single commas",
        text::inline(value)
    )]
    EmptyItem {
        value: String,
        place: usize,
        count: usize,
    },
    /// What is wrong with one hub of the list `BATON_URL` holds, at `place` (from 1) of
    /// `count`.
    #[error("{refused} (hub {place} of {count})")]
    InList {
        refused: Box<RemoteError>,
        place: usize,
        count: usize,
    },
    #[error(
        "BATON_URL names {} twice: each hub once, in the order to try them",
        text::inline(url)
    )]
    Twice { url: String },
    #[error("BATON_URL {} is not a URL", text::inline(url))]
    NotUrl { url: String },
    #[error("BATON_URL {} is not http or https", text::inline(url))]
    NotHttp { url: String },
    /// A URL with no host, or with more than a hub's address (a query, a fragment).
    #[error("BATON_URL {} is not a hub's address", text::inline(url))]
    NotHubAddress { url: String },
    #[error(
        "BATON_TOKEN_ENV must name a variable ([A-Za-z_][A-Za-z0-9_]*), not `{}`",
        text::inline(variable)
    )]
    NotVariableName { variable: String },
    #[error("BATON_TOKEN_ENV names {variable}, which is not set: no token for the hub")]
    VariableUnset { variable: String },
    #[error(
        "cannot read the token file {} (BATON_TOKEN_FILE): {cause}",
        path.display()
    )]
    TokenFileUnreadable { path: PathBuf, cause: String },
    #[error("the token file {} (BATON_TOKEN_FILE) is empty", path.display())]
    TokenFileEmpty { path: PathBuf },
    /// `project map` to what is no directory here.
    #[error("{} is not a directory of this machine", dir.display())]
    NotLocalDirectory { dir: PathBuf },
    #[error("{} is mapped to project {project} already", dir.display())]
    MappedAlready { dir: PathBuf, project: String },
    #[error("project {project} is not mapped on this machine")]
    NotMapped { project: String },
}

impl RemoteError {
    /// How to get past it.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            RemoteError::NoToken { .. } => "on the hub's machine `baton token add NAME` prints \
                 one; set BATON_TOKEN to it (or BATON_TOKEN_FILE to a file holding it)"
                .to_string(),
            RemoteError::EmptyItem { .. } => {
                "e.g. BATON_URL=http://hub-a:7878,http://hub-b:7878".to_string()
            }
            RemoteError::InList { refused, .. } => return refused.hint(),
            RemoteError::NotUrl { .. } => "e.g. BATON_URL=http://buildbox:7878 (what `baton \
                 serve` printed, without the #token)"
                .to_string(),
            RemoteError::NotHubAddress { .. } => "give the address alone, e.g. \
                 http://buildbox:7878 (a login token in a #fragment is for browsers; set \
                 BATON_TOKEN instead)"
                .to_string(),
            RemoteError::VariableUnset { variable } => {
                format!("set {variable} to the token `baton token add NAME` printed on the hub")
            }
            RemoteError::MappedAlready { project, .. } => {
                format!("`baton project unmap {project}` first")
            }
            RemoteError::BadToken
            | RemoteError::Encode { .. }
            | RemoteError::Twice { .. }
            | RemoteError::NotHttp { .. }
            | RemoteError::NotVariableName { .. }
            | RemoteError::TokenFileUnreadable { .. }
            | RemoteError::TokenFileEmpty { .. }
            | RemoteError::NotLocalDirectory { .. }
            | RemoteError::NotMapped { .. } => return None,
        })
    }
}
