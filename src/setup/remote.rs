//! A hub on another machine, as `baton setup --url URL --token-env VAR` wires a client to
//! it: the hub's base URL, and the name of the variable that holds the bearer token when the
//! client runs. The token itself is never written into a client's files: each client reads
//! it from that variable at run time, in its own syntax for a variable ([`TokenSyntax`]).

use crate::error::{Result, SetupError};

/// A hub served by `baton serve` elsewhere, reached over HTTP as the agent of a token that
/// the client finds in the environment variable [`RemoteHub::token_env`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHub {
    /// `http://host:port` or `https://host/prefix`, without a final `/`.
    base_url: String,
    token_env: String,
}

/// A token's value, as setup read it from the hub's variable to write the listen service's
/// token file. Its `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenValue(String);

impl TokenValue {
    pub fn new(value: String) -> TokenValue {
        TokenValue(value)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for TokenValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenValue(…)")
    }
}

/// How a client's configuration names an environment variable in a string it expands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenSyntax {
    /// `${VAR}`: Claude Code (in `url`, `headers`, `env`, `args`) and Gemini CLI (in every
    /// string of its settings).
    Braces,
    /// `{env:VAR}`: opencode, in any string of its configuration.
    OpencodeEnv,
}

impl TokenSyntax {
    /// `VAR` as this syntax writes it.
    pub fn variable(self, name: &str) -> String {
        match self {
            TokenSyntax::Braces => format!("${{{name}}}"),
            TokenSyntax::OpencodeEnv => format!("{{env:{name}}}"),
        }
    }

    /// The variable named in `text` written in this syntax, if `text` is exactly that.
    fn name_in(self, text: &str) -> Option<&str> {
        let name = match self {
            TokenSyntax::Braces => text.strip_prefix("${")?.strip_suffix('}')?,
            TokenSyntax::OpencodeEnv => text.strip_prefix("{env:")?.strip_suffix('}')?,
        };
        is_variable_name(name).then_some(name)
    }
}

/// The path under the hub's URL where `baton serve` answers MCP.
const MCP_PATH: &str = "/mcp";

impl RemoteHub {
    /// The hub at `url` (its base URL, with or without a final `/`, or its MCP endpoint
    /// ending in `/mcp`), its token in the variable `token_env`. Refuses anything but an
    /// `http` or `https` URL with a host, and a variable name that is not
    /// `[A-Za-z_][A-Za-z0-9_]*`.
    pub fn new(url: &str, token_env: &str) -> Result<RemoteHub> {
        let base_url = base_url(url).ok_or_else(|| SetupError::NotHubUrl {
            url: url.to_string(),
        })?;
        if !is_variable_name(token_env) {
            return Err(SetupError::NotVariableName {
                variable: token_env.to_string(),
            }
            .into());
        }
        Ok(RemoteHub {
            base_url,
            token_env: token_env.to_string(),
        })
    }

    /// The hub's base URL, what `BATON_URL` holds.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Where the hub serves MCP.
    pub fn mcp_url(&self) -> String {
        format!("{}{MCP_PATH}", self.base_url)
    }

    /// The variable the token is read from when the client runs.
    pub fn token_env(&self) -> &str {
        &self.token_env
    }

    /// The `Authorization` header's value with the token as `syntax` names the variable.
    pub fn bearer_header(&self, syntax: TokenSyntax) -> String {
        format!("Bearer {}", syntax.variable(&self.token_env))
    }
}

/// The hub's base URL for an MCP endpoint a client's configuration holds (setup's own, or
/// one written by hand that ends in `/mcp`).
pub fn hub_of_mcp_url(url: &str) -> String {
    let url = url.trim_end_matches('/');
    url.strip_suffix(MCP_PATH).unwrap_or(url).to_string()
}

/// The variable an `Authorization` header of setup's takes its token from, in any of the
/// clients' syntaxes.
pub fn token_env_in_header(header: &str) -> Option<String> {
    let variable = header.strip_prefix("Bearer ")?;
    [TokenSyntax::Braces, TokenSyntax::OpencodeEnv]
        .into_iter()
        .find_map(|syntax| syntax.name_in(variable))
        .map(str::to_string)
}

/// `url` as a hub's base URL, or `None` when it is not an `http`/`https` URL with a host.
///
/// Beyond the scheme, what is refused is what a URL needs no more than a hub does and what
/// a client or a shell would act on: white space, quotes, a query, a fragment, credentials
/// before the host, and the `$`, `{`, `}` and backslash of the clients' variable syntaxes.
fn base_url(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let is_allowed = |c: char| c.is_ascii_graphic() && !"\"'`<>\\^{}|$?#@".contains(c);
    if !rest.chars().all(is_allowed) {
        return None;
    }
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, ""),
    };
    let host = match authority.rsplit_once(':') {
        // A port is digits; an IPv6 address in brackets has colons of its own.
        Some((host, port)) if !port.contains(']') => {
            if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            host
        }
        _ => authority,
    };
    if host.is_empty() {
        return None;
    }
    let path = path.trim_end_matches('/');
    let path = path
        .strip_suffix(MCP_PATH)
        .unwrap_or(path)
        .trim_end_matches('/');
    Some(format!("{scheme}://{authority}{path}"))
}

/// Whether `name` can name an environment variable in every shell and client setup writes
/// for: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hub_url_is_its_base_however_it_was_given() {
        for given in [
            "http://10.0.0.5:7878",
            "http://10.0.0.5:7878/",
            "http://10.0.0.5:7878/mcp",
            "http://10.0.0.5:7878/mcp/",
            "HTTP://10.0.0.5:7878",
        ] {
            let hub = RemoteHub::new(given, "HUB_TOKEN").unwrap();
            assert_eq!(hub.base_url(), "http://10.0.0.5:7878", "{given}");
            assert_eq!(hub.mcp_url(), "http://10.0.0.5:7878/mcp", "{given}");
        }
        let behind_a_proxy = RemoteHub::new("https://tools.example.com/baton/", "T").unwrap();
        assert_eq!(
            behind_a_proxy.mcp_url(),
            "https://tools.example.com/baton/mcp"
        );
        let ipv6 = RemoteHub::new("http://[::1]:7878", "T").unwrap();
        assert_eq!(ipv6.base_url(), "http://[::1]:7878");
    }

    #[test]
    fn anything_but_an_http_url_with_a_host_is_refused() {
        for bad in [
            "",
            "10.0.0.5:7878",
            "ftp://hub",
            "file:///tmp/hub",
            "http://",
            "http://:7878",
            "http://hub:",
            "http://hub:port",
            "http://hub/x?token=1",
            "http://hub/#x",
            "http://user:secret@hub",
            "http://hub/a b",
            "http://hub/${HOME}",
            "http://hub/{env:HOME}",
            "http://hub/'x'",
            "http://hub/\nx",
        ] {
            let error = RemoteHub::new(bad, "T").unwrap_err().to_string();
            assert!(error.starts_with("--url "), "{bad:?}: {error}");
            assert!(!error.contains('\n'), "one line: {error}");
        }
    }

    #[test]
    fn the_token_variable_is_a_plain_name() {
        for good in ["T", "_x", "BATON_HUB_TOKEN", "a1"] {
            assert!(RemoteHub::new("http://hub", good).is_ok(), "{good}");
        }
        for bad in ["", "1A", "A-B", "A B", "$A", "${A}", "A=B", "Ä"] {
            let error = RemoteHub::new("http://hub", bad).unwrap_err().to_string();
            assert!(error.starts_with("--token-env "), "{bad:?}: {error}");
        }
    }

    #[test]
    fn headers_name_the_variable_in_each_syntax_and_read_back() {
        let hub = RemoteHub::new("http://hub:1", "HUB_TOKEN").unwrap();
        let braces = hub.bearer_header(TokenSyntax::Braces);
        assert_eq!(braces, "Bearer ${HUB_TOKEN}");
        let opencode = hub.bearer_header(TokenSyntax::OpencodeEnv);
        assert_eq!(opencode, "Bearer {env:HUB_TOKEN}");
        for header in [braces, opencode] {
            assert_eq!(token_env_in_header(&header).as_deref(), Some("HUB_TOKEN"));
        }
        assert_eq!(token_env_in_header("Bearer baton_0123"), None);
        assert_eq!(hub_of_mcp_url("http://hub:1/mcp"), "http://hub:1");
        assert_eq!(hub_of_mcp_url("http://hub:1/"), "http://hub:1");
    }
}
