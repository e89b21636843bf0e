//! Where a PostgreSQL store is, from `BATON_STORE` (`postgres://USER@HOST:PORT/DB?sslmode=…`,
//! or `postgresql://`): the connection settings, how TLS is checked, and the address as it
//! may be shown. The password (from the URL, `PGPASSWORD` or a password file) goes into the
//! settings only: every word baton says of the store names [`Address::shown`], which has
//! none. The URL is split once, by the client library's own rules ([`StoreUrl`]), and every
//! form of it baton shows or writes is made from that split.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use super::super::SettingError;
use super::url::{StoreUrl, UrlError, percent_decode, shown_form};

/// How the server's certificate is checked (`sslmode`, as libpq spells it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, the certificate unchecked; plain otherwise (libpq's
    /// default).
    Prefer,
    /// TLS or nothing, the certificate unchecked (libpq's `require`: encryption, trusting the
    /// network to reach the right server).
    Require,
    /// TLS or nothing, the certificate checked against the roots (`sslrootcert`, else the
    /// web's roots) and the host name.
    VerifyFull,
}

/// A PostgreSQL store's address, parsed.
#[derive(Clone)]
pub struct Address {
    /// The connection settings, password included (never shown: its `Debug` hides it).
    pub config: tokio_postgres::Config,
    pub tls: TlsMode,
    /// The roots `verify-full` trusts (`sslrootcert`), PEM; the web's roots when none.
    pub root_certificates: Option<PathBuf>,
    /// The address as it may be shown: scheme, user, host, port and database, no password
    /// and no parameters.
    shown: String,
}

impl std::fmt::Debug for Address {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Address")
            .field("store", &self.shown)
            .field("tls", &self.tls)
            .finish()
    }
}

/// How long a connection attempt waits for the server before the store is unreachable,
/// unless the URL says otherwise (`connect_timeout=SECONDS`, libpq's parameter). As libpq
/// means it, it bounds the whole start on each host: the TCP connect, TLS, the startup and
/// the login ([`Address::start_within`]). A server that takes more than 5 seconds to let a
/// client in is not one a command can wait for; on a slow link, the URL may give more.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `value` names a PostgreSQL store (rather than the files).
pub fn is_postgres_url(value: &str) -> bool {
    value.starts_with("postgres://") || value.starts_with("postgresql://")
}

impl Address {
    /// The store at `url`, with the password taken from the URL, else `PGPASSWORD`, else the
    /// password file (`PGPASSFILE`, or `~/.pgpass`), as libpq does.
    pub fn parse(url: &str) -> Result<Address, SettingError> {
        Address::parse_with(url, &|name| std::env::var(name).ok())
    }

    /// [`Address::parse`] with the environment read through `environment`.
    pub fn parse_with(
        url: &str,
        environment: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Address, SettingError> {
        let refuse = |shown: String, why: String| {
            SettingError::new(
                format!("store {shown}: {why}"),
                Some(
                    "the form is postgres://USER@HOST:PORT/DATABASE?sslmode=disable|prefer|\
                     require|verify-full"
                        .to_string(),
                ),
            )
        };
        let parts = match StoreUrl::parse(url) {
            Ok(parts) if is_postgres_url(url) => parts,
            Ok(_) | Err(UrlError::NotUrl) => {
                return Err(refuse(shown_form(url), "not a postgres:// URL".to_string()));
            }
            Err(error) => return Err(refuse(shown_form(url), error.to_string())),
        };
        let shown = match parts.parameter("host").map(percent_decode) {
            // A Unix socket's directory, named as a parameter (`postgres:///baton?host=
            // /var/run/postgresql`), is where the store is: shown, as a host is.
            Some(host) if parts.hosts.is_empty() && host.starts_with('/') => {
                format!("{}?host={host}", parts.shown())
            }
            _ => parts.shown(),
        };
        // `sslmode` and `sslrootcert` are baton's to read (the client library knows no
        // `verify-full`); every other parameter is the client library's.
        let tls = match parts.parameter("sslmode").map(percent_decode).as_deref() {
            None | Some("prefer") => TlsMode::Prefer,
            Some("disable") => TlsMode::Disable,
            Some("require") => TlsMode::Require,
            Some("verify-full") => TlsMode::VerifyFull,
            Some(other) => {
                return Err(refuse(
                    shown,
                    format!(
                        "sslmode `{}` is not one of disable, prefer, require, verify-full",
                        other.escape_debug()
                    ),
                ));
            }
        };
        let root_certificates = parts
            .parameter("sslrootcert")
            .map(|value| PathBuf::from(percent_decode(value)));
        let passed = parts.with_parameters(|key| !matches!(key, "sslmode" | "sslrootcert"));
        let mut config = tokio_postgres::Config::from_str(&passed).map_err(|error| {
            // The client library's words name the part it could not read, never its value.
            refuse(shown.clone(), error.to_string())
        })?;
        config.ssl_mode(match tls {
            TlsMode::Disable => tokio_postgres::config::SslMode::Disable,
            TlsMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            TlsMode::Require | TlsMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        });
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("baton");
        }
        // As libpq: `PGUSER`, else the name of the user the process runs as (what peer
        // authentication on a Unix socket lets in).
        if config.get_user().is_none()
            && let Some(user) = ["PGUSER", "USER", "LOGNAME", "USERNAME"]
                .into_iter()
                .find_map(|name| environment(name).filter(|user| !user.is_empty()))
        {
            config.user(user);
        }
        if config.get_password().is_none() {
            if let Some(password) = environment("PGPASSWORD").filter(|word| !word.is_empty()) {
                config.password(password);
            } else if let Some(password) = from_password_file(&config, environment) {
                config.password(password);
            }
        }
        Ok(Address {
            config,
            tls,
            root_certificates,
            shown,
        })
    }

    /// The address as it may be shown: no password, no parameters.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// How long a connection's whole start may take: `connect_timeout` for each host the
    /// URL names (the client library applies it to the TCP connect alone, and would then
    /// wait for ever on a server that accepts and never answers).
    pub fn start_within(&self) -> Duration {
        let each = self
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT);
        let hosts = u32::try_from(self.config.get_hosts().len()).unwrap_or(u32::MAX);
        each.saturating_mul(hosts.max(1))
    }

    /// The host name TLS checks the certificate against: the first host's.
    pub fn host_name(&self) -> String {
        match self.config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
            _ => "localhost".to_string(),
        }
    }
}

/// The password the password file gives for `config`'s first host, port, database and user
/// (`hostname:port:database:username:password`, each of the first four may be `*`; `\:` and
/// `\\` escape), as libpq reads it. A file others may read is ignored, as libpq ignores it.
fn from_password_file(
    config: &tokio_postgres::Config,
    environment: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let path = match environment("PGPASSFILE").filter(|path| !path.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(environment("HOME")?).join(".pgpass"),
    };
    if !is_private(&path) {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(_)) => "localhost".to_string(),
        None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config
        .get_user()
        .map(str::to_string)
        .or_else(|| environment("USER"))
        .unwrap_or_default();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    let wanted = [
        host.as_str(),
        port.as_str(),
        database.as_str(),
        user.as_str(),
    ];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .map(password_fields)
        .filter(|fields| fields.len() == 5)
        .find(|fields| {
            fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want)
        })
        .map(|mut fields| fields.remove(4))
}

/// The fields of a password file's line, unescaped.
fn password_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(escaped) = chars.next()
                    && let Some(field) = fields.last_mut()
                {
                    field.push(escaped);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => {
                if let Some(field) = fields.last_mut() {
                    field.push(c);
                }
            }
        }
    }
    fields
}

#[cfg(unix)]
fn is_private(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).is_ok_and(|metadata| metadata.is_file() && metadata.mode() & 0o077 == 0)
}

#[cfg(not(unix))]
fn is_private(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str, environment: &[(&str, &str)]) -> Result<Address, SettingError> {
        let environment: Vec<(String, String)> = environment
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        Address::parse_with(url, &move |name| {
            environment
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        })
    }

    #[test]
    fn the_address_shows_no_password_however_it_is_written() {
        for url in [
            "postgres://app:s3cret@db/baton",
            "postgresql://app:s3cret@db:5433/baton?sslmode=require&password=s3cret",
            "postgres://app:s3/cret@db/baton",
            "postgres://app:s3c?ret#x@db/baton",
            "postgres://app@db/baton?pass%77ord=s3cret",
        ] {
            let address = parse(url, &[]).unwrap();
            assert!(
                !address.shown().contains("s3"),
                "{url}: {}",
                address.shown()
            );
            assert!(!format!("{address:?}").contains("s3"), "{address:?}");
            assert!(address.config.get_password().is_some(), "{url}");
        }
        let slashed = parse("postgres://app:s3/cret@db:5433/baton", &[]).unwrap();
        assert_eq!(slashed.config.get_password(), Some(&b"s3/cret"[..]));
        assert_eq!(slashed.config.get_dbname(), Some("baton"));
        assert_eq!(slashed.shown(), "postgres://app@db:5433/baton");
    }

    #[test]
    fn an_address_the_library_would_misread_is_refused_without_showing_it() {
        for url in [
            "postgres://app:s3@cret@db/baton",
            "postgres://db/baton?password=s3@cret",
            "postgres://app:s3@cr/et@db/baton",
        ] {
            let refused = parse(url, &[]).unwrap_err();
            assert!(!refused.to_string().contains("s3"), "{url}: {refused}");
            assert!(!refused.to_string().contains("cret"), "{url}: {refused}");
            assert!(refused.message.contains("%40"), "{refused}");
        }
        let encoded = parse("postgres://app:s3%40cret@db/baton", &[]).unwrap();
        assert_eq!(encoded.config.get_password(), Some(&b"s3@cret"[..]));
    }

    #[test]
    fn sslmode_is_read_and_a_bad_one_refused_without_the_password() {
        let modes = [
            ("disable", TlsMode::Disable),
            ("prefer", TlsMode::Prefer),
            ("require", TlsMode::Require),
            ("verify-full", TlsMode::VerifyFull),
        ];
        for (word, mode) in modes {
            let url = format!("postgres://app:s3cret@db/baton?sslmode={word}");
            assert_eq!(parse(&url, &[]).unwrap().tls, mode, "{word}");
        }
        assert_eq!(
            parse("postgres://app@db/baton", &[]).unwrap().tls,
            TlsMode::Prefer
        );
        let refused = parse("postgres://app:s3cret@db/baton?sslmode=sometimes", &[]).unwrap_err();
        assert!(refused.message.contains("sslmode `sometimes`"), "{refused}");
        assert!(!refused.message.contains("s3cret"), "{refused}");
        let refused = parse("postgres://app:s3cret@db:notaport/baton", &[]).unwrap_err();
        assert!(!refused.to_string().contains("s3cret"), "{refused}");
    }

    #[test]
    fn the_password_comes_from_the_url_then_pgpassword_then_the_password_file() {
        let from_url = parse("postgres://app:one@db/baton", &[("PGPASSWORD", "two")]).unwrap();
        assert_eq!(from_url.config.get_password(), Some(&b"one"[..]));
        let from_variable = parse("postgres://app@db/baton", &[("PGPASSWORD", "two")]).unwrap();
        assert_eq!(from_variable.config.get_password(), Some(&b"two"[..]));

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:baton:app:wrong\ndb:*:baton:app:thr\\:ee\n*:*:*:*:any\n",
        )
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let passfile = file.to_str().unwrap();
        let from_file = parse("postgres://app@db/baton", &[("PGPASSFILE", passfile)]).unwrap();
        assert_eq!(from_file.config.get_password(), Some(&b"thr:ee"[..]));
        let wildcard = parse("postgres://bob@elsewhere/x", &[("PGPASSFILE", passfile)]).unwrap();
        assert_eq!(wildcard.config.get_password(), Some(&b"any"[..]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            let ignored = parse("postgres://app@db/baton", &[("PGPASSFILE", passfile)]).unwrap();
            assert_eq!(
                ignored.config.get_password(),
                None,
                "a file others may read"
            );
        }
    }

    #[test]
    fn sslrootcert_is_baton_s_and_other_parameters_pass_through() {
        let address = parse(
            "postgres://app@db/baton?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=2",
            &[],
        )
        .unwrap();
        assert_eq!(
            address.root_certificates,
            Some(PathBuf::from("/etc/ca.pem"))
        );
        assert_eq!(
            address.config.get_connect_timeout(),
            Some(&Duration::from_secs(2))
        );
        assert_eq!(address.host_name(), "db");
    }

    #[cfg(unix)]
    #[test]
    fn a_unix_socket_is_an_address_shown_with_its_directory_and_the_user_s_own_name() {
        for url in [
            "postgres:///baton?host=/var/run/postgresql",
            "postgres:///baton?host=%2Fvar%2Frun%2Fpostgresql",
        ] {
            let address = parse(url, &[("USER", "alice")]).unwrap();
            assert_eq!(
                address.config.get_hosts(),
                [tokio_postgres::config::Host::Unix(PathBuf::from(
                    "/var/run/postgresql"
                ))],
                "{url}"
            );
            assert_eq!(
                address.shown(),
                "postgres:///baton?host=/var/run/postgresql"
            );
            assert_eq!(address.config.get_user(), Some("alice"), "peer's name");
        }
        let named = parse(
            "postgres://bob@/baton?host=/run/pg&port=5433",
            &[("USER", "alice")],
        )
        .unwrap();
        assert_eq!(named.config.get_user(), Some("bob"));
        assert_eq!(named.config.get_ports(), [5433]);
        assert_eq!(named.shown(), "postgres://bob@/baton?host=/run/pg");
    }
}
