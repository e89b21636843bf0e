//! What the environment says of the hub: the hubs `BATON_URL` names, and the token from
//! `BATON_TOKEN`, the variable `BATON_TOKEN_ENV` names or the file `BATON_TOKEN_FILE` names.

use super::answers::url_host;
use crate::error::{RemoteError, Result};

/// The hubs `BATON_URL` names (SPEC section 16): one URL, or several separated by commas,
/// each checked ([`base_url`]) and without its trailing `/`, in the order given: the one
/// place the variable is read. An empty item, a URL that is not a hub's or one named twice
/// is refused in one line that names it.
pub fn hub_urls(value: &str) -> Result<Vec<String>> {
    let items: Vec<&str> = value.split(',').map(str::trim).collect();
    let several = items.len() > 1;
    let mut urls: Vec<String> = Vec::with_capacity(items.len());
    for (place, item) in items.iter().enumerate() {
        if item.is_empty() {
            return Err(RemoteError::EmptyItem {
                value: value.trim().to_string(),
                place: place + 1,
                count: items.len(),
            }
            .into());
        }
        let url = base_url(item).map_err(|refused| match several {
            // Which of the list it is, when there is a list.
            true => RemoteError::InList {
                refused: Box::new(refused),
                place: place + 1,
                count: items.len(),
            },
            false => refused,
        })?;
        if urls.iter().any(|seen| seen.eq_ignore_ascii_case(&url)) {
            return Err(RemoteError::Twice { url }.into());
        }
        urls.push(url);
    }
    Ok(urls)
}

/// `url` checked and without a trailing `/`.
pub(super) fn base_url(url: &str) -> Result<String, RemoteError> {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(RemoteError::NotUrl { url: url.into() });
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(RemoteError::NotHttp { url: url.into() });
    }
    if rest.is_empty()
        || url_host(url).is_none()
        || url.contains('#')
        || url.contains('?')
        || url.chars().any(char::is_whitespace)
    {
        return Err(RemoteError::NotHubAddress { url: url.into() });
    }
    Ok(url.trim_end_matches('/').to_string())
}

pub(super) fn non_empty_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
}

/// The token in the variable `variable` (what `BATON_TOKEN_ENV` names): how a client that
/// puts the values of variables into its hook lines before it runs them (Gemini CLI) is
/// given the token's variable by name, so that the token is in no command line.
pub(super) fn token_of_variable(variable: &str) -> Result<String> {
    let is_name = variable
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && variable
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_name {
        return Err(RemoteError::NotVariableName {
            variable: variable.to_string(),
        }
        .into());
    }
    non_empty_var(variable).ok_or_else(|| {
        RemoteError::VariableUnset {
            variable: variable.to_string(),
        }
        .into()
    })
}

/// The token kept in `path`: its first line, trimmed. Only a regular file is read.
pub(super) fn read_token_file(path: &std::path::Path) -> Result<String> {
    let bytes =
        crate::file::regular::read(path).map_err(|error| RemoteError::TokenFileUnreadable {
            path: path.to_path_buf(),
            cause: error.to_string(),
        })?;
    let text = String::from_utf8_lossy(&bytes);
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(RemoteError::TokenFileEmpty {
            path: path.to_path_buf(),
        }
        .into());
    }
    Ok(token)
}
