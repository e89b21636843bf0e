//! A store's URL split once, by the rules of the PostgreSQL client library that connects
//! with it, so that what baton shows, writes into other programs' files or refuses on a
//! command line is cut where the library cuts: a password is hidden exactly where the
//! library would read one.
//!
//! The library (tokio-postgres' `UrlParser`) reads, after `scheme://`: everything up to the
//! *first* `@` anywhere as the user information (the user up to its first `:`, the password
//! after it, so a password may hold `/`, `?`, `#` or `:` unencoded), then the hosts up to a
//! `/` or `?`, the database up to a `?`, and `key=value` parameters split at `&`, a
//! `password` among them. Two readings it would make that nobody means are refused rather
//! than guessed at: a second unencoded `@` (a password's `@` not written `%40`: the library
//! would take the rest of the password for the host), and a first `@` in the database or a
//! parameter (a user name holding `/` or `?`, or user information holding `password=`: the
//! "user" is the address itself, and the "host" the rest of a `password` parameter).

/// A URL as the client library reads it; each part as written (still percent-encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreUrl<'a> {
    /// `postgres`, `postgresql`, or another scheme (which the store refuses).
    pub scheme: &'a str,
    pub user: Option<&'a str>,
    /// The password of the user information; a `password` parameter is among `parameters`.
    password: Option<&'a str>,
    pub hosts: &'a str,
    pub database: Option<&'a str>,
    /// `(key, value)` pairs, as written.
    pub parameters: Vec<(&'a str, &'a str)>,
}

/// Why a URL is not read at all (so nothing of it is shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("not a URL (SCHEME://…)")]
    NotUrl,
    #[error(
        "it holds an `@` past the user information (an unencoded `@` in the password or a \
         parameter): write each such `@` as %40"
    )]
    StrayAt,
    #[error("a parameter without `=`")]
    UnterminatedParameter,
}

impl<'a> StoreUrl<'a> {
    /// `url` split as the client library splits it, or refused (see the module's comment).
    pub fn parse(url: &'a str) -> Result<StoreUrl<'a>, UrlError> {
        let (scheme, rest) = url.split_once("://").ok_or(UrlError::NotUrl)?;
        let (user_information, rest) = match rest.split_once('@') {
            Some((user_information, rest)) => (Some(user_information), rest),
            None => (None, rest),
        };
        if rest.contains('@') {
            return Err(UrlError::StrayAt);
        }
        let (user, password) = match user_information {
            Some(information) => match information.split_once(':') {
                Some((user, password)) => (Some(user), Some(password)),
                None => (Some(information), None),
            },
            None => (None, None),
        };
        // The first `@` in the database or a parameter: what the library takes for the user
        // information is the address, and for a `password` parameter, the host it reads is
        // the rest of the password.
        let misread = user.is_some_and(|user| user.contains(['/', '?']))
            || user_information.is_some_and(|text| percent_decode(text).contains("password="));
        if misread {
            return Err(UrlError::StrayAt);
        }
        let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (hosts, rest) = rest.split_at(host_end);
        let (database, rest) = match rest.strip_prefix('/') {
            Some(path) => {
                let end = path.find('?').unwrap_or(path.len());
                (Some(&path[..end]), &path[end..])
            }
            None => (None, rest),
        };
        let mut parameters = Vec::new();
        let mut rest = rest.strip_prefix('?').unwrap_or(rest);
        while !rest.is_empty() {
            // As the library does: the key runs to the next `=` (an `&` in it included), the
            // value to the next `&`.
            let (key, after) = rest
                .split_once('=')
                .ok_or(UrlError::UnterminatedParameter)?;
            let (value, after) = after.split_once('&').unwrap_or((after, ""));
            parameters.push((key, value));
            rest = after;
        }
        Ok(StoreUrl {
            scheme,
            user,
            password,
            hosts,
            database,
            parameters,
        })
    }

    /// Whether the URL carries a password itself (in its user information, or as a
    /// `password` parameter), rather than leaving it to `PGPASSWORD` or the password file.
    pub fn holds_password(&self) -> bool {
        self.password.is_some() || self.parameters.iter().any(|(key, _)| is_password(key))
    }

    /// The password of the user information, as written.
    pub fn password(&self) -> Option<&'a str> {
        self.password
    }

    /// The parameter `name` (its key decoded as the library decodes it), as written.
    pub fn parameter(&self, name: &str) -> Option<&'a str> {
        self.parameters
            .iter()
            .find(|(key, _)| percent_decode(key) == name)
            .map(|(_, value)| *value)
    }

    /// The URL as it may be shown: `scheme://user@hosts/database`, without the password
    /// and without the parameters (which may carry one).
    pub fn shown(&self) -> String {
        let mut shown = format!("{}://", self.scheme);
        if let Some(user) = self.user.filter(|user| !user.is_empty()) {
            shown.push_str(user);
            shown.push('@');
        }
        shown.push_str(self.hosts);
        if let Some(database) = self.database {
            shown.push('/');
            shown.push_str(database);
        }
        shown
    }

    /// The URL with its password taken out and everything else kept, `sslmode` and the other
    /// parameters included: what may be written into a file another program reads (a
    /// client's MCP configuration), which then takes the password from `PGPASSWORD` or the
    /// password file as any other command does.
    pub fn without_password(&self) -> String {
        self.written(false, |key| !is_password(key))
    }

    /// The URL, password included, with only the parameters whose key (decoded) `keep`
    /// accepts: what the client library is given once baton has read its own parameters.
    pub fn with_parameters(&self, keep: impl Fn(&str) -> bool) -> String {
        self.written(true, keep)
    }

    /// `scheme://user[:password]@hosts/database?parameters`, with the password of the user
    /// information when `with_password`, and only the parameters whose key `keep` accepts.
    fn written(&self, with_password: bool, keep: impl Fn(&str) -> bool) -> String {
        let mut url = format!("{}://", self.scheme);
        if let Some(user) = self.user {
            url.push_str(user);
            if let Some(password) = self.password.filter(|_| with_password) {
                url.push(':');
                url.push_str(password);
            }
            url.push('@');
        }
        url.push_str(self.hosts);
        if let Some(database) = self.database {
            url.push('/');
            url.push_str(database);
        }
        let kept: Vec<String> = self
            .parameters
            .iter()
            .filter(|(key, _)| keep(&percent_decode(key)))
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        if !kept.is_empty() {
            url.push('?');
            url.push_str(&kept.join("&"));
        }
        url
    }
}

/// `url` as it may be shown, for words about a URL that may not even be one: its
/// [`StoreUrl::shown`] form, or only its scheme when it cannot be read safely. What only
/// splits like a URL because a `://` comes somewhere in it, a libpq connection string of
/// `key=value` words above all (`host=db password=… sslrootcert=file:///…`), is no URL:
/// what stands before its `://` may hold the password, so none of it is shown.
pub fn shown_form(url: &str) -> String {
    match StoreUrl::parse(url) {
        Ok(parts) if is_scheme(parts.scheme) => parts.shown(),
        Ok(_) => "(an address that is not shown)".to_string(),
        Err(UrlError::NotUrl) => "(an address that is not a URL)".to_string(),
        Err(_) => match url.split_once("://") {
            Some((scheme, _)) if is_scheme(scheme) => format!("{scheme}://(not shown)"),
            _ => "(an address that is not shown)".to_string(),
        },
    }
}

/// Whether `url` may carry a password of its own, for refusing one on a command line, which
/// every user of the machine can read: one the library would misread counts as carrying one.
pub fn may_hold_password(url: &str) -> bool {
    match StoreUrl::parse(url) {
        Ok(parts) => parts.holds_password(),
        Err(UrlError::NotUrl) => false,
        Err(UrlError::StrayAt | UrlError::UnterminatedParameter) => true,
    }
}

/// Whether `key`, decoded, names the password.
fn is_password(key: &str) -> bool {
    percent_decode(key) == "password"
}

/// Whether `scheme` looks like one (letters, digits, `+`, `-`, `.`): safe to show.
fn is_scheme(scheme: &str) -> bool {
    !scheme.is_empty()
        && scheme.len() <= 20
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `%XX` decoded, as the client library decodes a URL's parts (an invalid escape kept as
/// written).
pub fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let decoded = (bytes[at] == b'%')
            .then(|| value.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match decoded {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passwords a generator makes, each written as is and percent-encoded.
    const PASSWORDS: [(&str, &str); 7] = [
        ("s3/cr:et", "s3%2Fcr%3Aet"),
        ("s3?cret", "s3%3Fcret"),
        ("s3#cret", "s3%23cret"),
        ("s3%cret", "s3%25cret"),
        ("s3:cret", "s3%3Acret"),
        ("/s3cret/", "%2Fs3cret%2F"),
        ("s3cr&t=1", "s3cr%26t%3D1"),
    ];

    /// The password the client library itself reads from `url`.
    fn library_password(url: &str) -> Option<Vec<u8>> {
        use std::str::FromStr;
        tokio_postgres::Config::from_str(url)
            .ok()
            .and_then(|config| config.get_password().map(<[u8]>::to_vec))
    }

    #[test]
    fn the_split_finds_the_password_where_the_library_reads_it() {
        for (raw, encoded) in PASSWORDS {
            for written in [raw, encoded] {
                let url = format!("postgres://app:{written}@db:5433/baton?sslmode=require");
                let parts = StoreUrl::parse(&url).unwrap();
                assert!(parts.holds_password(), "{url}");
                assert_eq!(parts.user, Some("app"), "{url}");
                assert_eq!(parts.hosts, "db:5433", "{url}");
                assert_eq!(parts.database, Some("baton"), "{url}");
                assert_eq!(parts.parameter("sslmode"), Some("require"), "{url}");
                // What baton hides is what the library uses.
                assert_eq!(
                    library_password(&url).as_deref(),
                    Some(percent_decode(written).as_bytes()),
                    "{url}"
                );
                for form in [parts.shown(), parts.without_password(), shown_form(&url)] {
                    assert!(!form.contains("s3"), "{url} -> {form}");
                    assert!(form.starts_with("postgres://app@db:5433/baton"), "{form}");
                }
                assert_eq!(
                    parts.without_password(),
                    "postgres://app@db:5433/baton?sslmode=require"
                );
                let without = parts.without_password();
                assert!(
                    !StoreUrl::parse(&without).unwrap().holds_password(),
                    "{url}"
                );
                assert_eq!(library_password(&parts.without_password()), None);
            }
        }
    }

    #[test]
    fn a_password_parameter_is_found_however_its_key_is_written() {
        for url in [
            "postgresql://app@db/baton?password=s3cret&sslmode=require",
            "postgresql://app@db/baton?sslmode=require&pass%77ord=s3cret",
        ] {
            let parts = StoreUrl::parse(url).unwrap();
            assert!(parts.holds_password(), "{url}");
            assert!(library_password(url).is_some(), "{url}");
            assert_eq!(parts.shown(), "postgresql://app@db/baton");
            assert_eq!(
                parts.without_password(),
                "postgresql://app@db/baton?sslmode=require"
            );
        }
        for url in [
            "postgres://app@db:5433/baton?sslmode=require",
            "postgres://db/baton",
        ] {
            assert!(!StoreUrl::parse(url).unwrap().holds_password(), "{url}");
            assert_eq!(library_password(url), None, "{url}");
        }
    }

    #[test]
    fn an_at_the_library_would_misread_is_refused_and_never_shown() {
        for url in [
            // An unencoded `@` in the password: the library would connect to `cret@db`.
            "postgres://app:s3@cret@db/baton",
            "postgres://app:s3@cr/et@db/baton",
            // The only `@` in a parameter: the library takes the address for the user.
            "postgres://db/baton?password=s3@cret",
            "postgres://db/baton?x=1&password=s3%2F@cret",
            "postgres://127.0.0.1:1/baton?password=s3@cret",
            "postgres://db:1?sslmode=disable&password=s3@cret",
        ] {
            assert_eq!(StoreUrl::parse(url), Err(UrlError::StrayAt), "{url}");
            let shown = shown_form(url);
            assert_eq!(shown, "postgres://(not shown)", "{url}");
        }
        let encoded = StoreUrl::parse("postgres://app:s3%40cret@db/baton").unwrap();
        assert_eq!(encoded.shown(), "postgres://app@db/baton");
    }

    #[test]
    fn the_shown_form_keeps_user_hosts_and_database_only() {
        for (url, shown) in [
            ("postgres://app:s3cret@db/baton", "postgres://app@db/baton"),
            ("postgres://db/baton", "postgres://db/baton"),
            ("postgres://:s3cret@db/baton", "postgres://db/baton"),
            (
                "postgres://app@h1:1,h2:2/baton?x=y",
                "postgres://app@h1:1,h2:2/baton",
            ),
            ("postgres://app@db?dbname=baton", "postgres://app@db"),
            ("mysql://u:s3cret@db/x", "mysql://u@db/x"),
            ("just words", "(an address that is not a URL)"),
            ("po$t://u:s3@c@db", "(an address that is not shown)"),
            (
                "host=db password=s3://cret dbname=baton",
                "(an address that is not shown)",
            ),
            (
                "password=s3cret host=db application_name=https://x",
                "(an address that is not shown)",
            ),
        ] {
            assert_eq!(shown_form(url), shown, "{url}");
        }
    }

    #[test]
    fn baton_s_own_parameters_are_taken_out_for_the_library() {
        let parts = StoreUrl::parse(
            "postgres://app:s3/cret@db/baton?sslmode=verify-full&sslrootcert=%2Fca.pem&connect_timeout=2",
        )
        .unwrap();
        assert_eq!(
            parts.with_parameters(|key| !matches!(key, "sslmode" | "sslrootcert")),
            "postgres://app:s3/cret@db/baton?connect_timeout=2"
        );
    }
}
