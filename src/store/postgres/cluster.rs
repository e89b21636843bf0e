//! A throwaway PostgreSQL cluster for tests, shared by the unit tests of the store and (by
//! `#[path]`) the integration suite: `initdb` in a temporary directory, the server on a free
//! loopback port, once per test process. A watchdog beside the server stops it and removes
//! the directory when the test process exits, however it exits. As root, the cluster runs
//! as the `postgres` user (the server refuses root).
//!
//! The cluster speaks TLS too (a certificate authority and a server certificate for
//! 127.0.0.1 made with `openssl`), and asks for a password over TCP, so the tests go
//! through what a real deployment does.
//!
//! `BATON_TEST_STORE=postgres://…` names a cluster started elsewhere (CI's) instead: its
//! user needs CREATEDB. Each test gets a database of its own either way ([`fresh_database`]).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The password of the throwaway cluster's superuser: made up per run, and what the tests
/// look for in every output, log and error, which must never show it.
pub fn password() -> &'static str {
    static PASSWORD: OnceLock<String> = OnceLock::new();
    PASSWORD.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or(0);
        format!("pw{:x}x{:x}secret", std::process::id(), nanos)
    })
}

/// A running cluster.
#[derive(Debug)]
pub struct Cluster {
    /// Where its data, socket, logs and certificates are.
    pub dir: PathBuf,
    pub port: u16,
    /// The certificate authority the server's certificate is signed by (PEM).
    pub ca_file: PathBuf,
    /// `postgres://postgres:PASSWORD@127.0.0.1:PORT`, without a database.
    base: String,
    /// The server's watchdog, which outlives this process to stop the server after it.
    _watchdog: std::process::Child,
}

impl Cluster {
    /// The URL of `database` on this cluster, with the password and `parameters` (e.g.
    /// `sslmode=disable`).
    pub fn url(&self, database: &str, parameters: &str) -> String {
        match parameters.is_empty() {
            true => format!("{}/{database}", self.base),
            false => format!("{}/{database}?{parameters}", self.base),
        }
    }

    /// Stops the server (`pg_ctl stop -m fast`), waiting until it has; for a test of a
    /// restart.
    pub fn stop(&self) {
        let data = self.dir.join("data");
        let _ = as_server_user(&format!(
            "{}/pg_ctl -D {} -m fast -w stop",
            bin_dir().display(),
            data.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    }

    /// Starts the stopped server again on the same port, waiting until it answers.
    pub fn start(&self) {
        let data = self.dir.join("data");
        let started = as_server_user(&format!(
            "{}/pg_ctl -D {} -l {}/server.log -w start",
            bin_dir().display(),
            data.display(),
            self.dir.display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
        assert!(
            started.is_ok_and(|status| status.success()),
            "the test cluster did not start again"
        );
    }
}

/// The cluster of this test process: started on first use.
pub fn shared() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    CLUSTER.get_or_init(|| apart(start))
}

/// A cluster of the caller's own, for a test that stops and starts it; stopped and removed
/// when dropped (or when this process exits).
pub fn private() -> PrivateCluster {
    PrivateCluster(apart(start))
}

/// A cluster of one test's own ([`private`]).
#[derive(Debug)]
pub struct PrivateCluster(Cluster);

impl std::ops::Deref for PrivateCluster {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.0
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        self.0.stop();
        let _ = as_server_user(&format!("rm -rf {}", self.0.dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Whether PostgreSQL's tests can run here: a cluster is named (`BATON_TEST_STORE` is a
/// URL), or the server's programs are installed. Where they are not, a test says NOT RUN and
/// passes, as the browser's and the agent clients' do; under CI (which installs Debian's
/// `postgresql`) it fails instead.
pub fn runs_here() -> bool {
    let named = std::env::var("BATON_TEST_STORE")
        .is_ok_and(|value| value.starts_with("postgres://") || value.starts_with("postgresql://"));
    let installed = std::env::var_os("BATON_TEST_PG_BIN").is_some()
        || std::fs::read_dir("/usr/lib/postgresql").is_ok_and(|versions| {
            versions
                .flatten()
                .any(|version| version.path().join("bin/initdb").exists())
        })
        || Command::new("pg_config")
            .arg("--bindir")
            .output()
            .is_ok_and(|output| output.status.success());
    if named || installed {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but PostgreSQL is not installed: .ci/run must install Debian's postgresql"
    );
    eprintln!(
        "NOT RUN: PostgreSQL's tests need its server (Debian: apt-get install postgresql), or \
         BATON_TEST_PG_BIN=<its bin directory>, or BATON_TEST_STORE=postgres://… naming a cluster"
    );
    false
}

/// The `bin` directory of PostgreSQL's programs: `BATON_TEST_PG_BIN`, else Debian's newest
/// (`/usr/lib/postgresql/N/bin`), else `pg_config --bindir`.
fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("BATON_TEST_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return bin;
    }
    let output = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .expect("PostgreSQL's programs: install postgresql, or set BATON_TEST_PG_BIN");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0")
}

/// `script` run by `sh` as the user the server runs as: `postgres` when this is root.
fn as_server_user(script: &str) -> Command {
    match is_root() {
        true => {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--", "sh", "-c", script]);
            command
        }
        false => {
            let mut command = Command::new("sh");
            command.args(["-c", script]);
            command
        }
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("its address").port()
}

fn run(mut command: Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn start() -> Cluster {
    let bin = bin_dir();
    let dir = std::env::temp_dir().join(format!(
        "baton-test-pg-{}-{}",
        std::process::id(),
        free_port()
    ));
    let data = dir.join("data");
    let script = format!(
        "set -e; umask 077; mkdir -p {dir}; printf '%s\\n' '{password}' > {dir}/pwfile; \
         {bin}/initdb -D {data} -U postgres --pwfile={dir}/pwfile --auth-local=trust \
             --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync > {dir}/initdb.log; \
         rm {dir}/pwfile",
        dir = dir.display(),
        data = data.display(),
        bin = bin.display(),
        password = password(),
    );
    run(as_server_user(&script), "initdb of the test cluster");
    // The certificates: an authority, and the server's for 127.0.0.1 and localhost.
    let certificates = format!(
        "set -e; cd {dir}; \
         openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=baton-test-ca \
             -keyout ca.key -out ca.pem 2>/dev/null; \
         openssl req -newkey rsa:2048 -nodes -subj /CN=localhost \
             -keyout server.key -out server.csr 2>/dev/null; \
         printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext; \
         openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
             -extfile server.ext -out server.pem 2>/dev/null; \
         chmod 600 server.key; chmod 644 ca.pem",
        dir = dir.display()
    );
    run(
        as_server_user(&certificates),
        "the test cluster's certificates",
    );
    let port = free_port();
    // The server's settings are the cluster's own (a restart by `pg_ctl` keeps them); the
    // server, and a watchdog that stops it and removes the directory once this process is
    // gone (looked for in /proc: a process of another user cannot be signalled).
    let settings = format!(
        "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{dir}'\n\
         fsync = off\nfull_page_writes = off\nmax_connections = 400\n\
         ssl = on\nssl_cert_file = '{dir}/server.pem'\nssl_key_file = '{dir}/server.key'\n",
        dir = dir.display()
    );
    // (Appended by this process: as root it may, and the file stays the server's.)
    std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("postgresql.conf"))
        .and_then(|mut file| std::io::Write::write_all(&mut file, settings.as_bytes()))
        .expect("the test cluster's settings");
    let parent = std::process::id();
    let server = format!(
        "{bin}/pg_ctl -D {data} -l {dir}/server.log -w start > /dev/null 2>&1; \
         while [ -d /proc/{parent} ]; do sleep 0.5; done; \
         {bin}/pg_ctl -D {data} -m immediate -w stop > /dev/null 2>&1; rm -rf {dir}",
        bin = bin.display(),
        data = data.display(),
        dir = dir.display(),
    );
    let mut watchdog = as_server_user(&server);
    // A group of its own: a test run stopped by a signal to its whole process group (a
    // timeout, Ctrl-C) leaves the watchdog to stop the server after it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut watchdog, 0);
    let watchdog = watchdog
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test cluster's server starts");
    let cluster = Cluster {
        ca_file: dir.join("ca.pem"),
        base: format!("postgres://postgres:{}@127.0.0.1:{port}", password()),
        _watchdog: watchdog,
        dir,
        port,
    };
    wait_until_ready(&cluster.url("postgres", "sslmode=disable"));
    cluster
}

/// Waits (at most a minute) until the server at `url` answers.
fn wait_until_ready(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match postgres::Client::connect(url, postgres::NoTls) {
            Ok(_) => return,
            Err(error) if Instant::now() > deadline => {
                panic!("the test cluster did not come up: {error}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// `work` on a thread of its own: the blocking client may not run on an async runtime's
/// thread, which an async test's setup is on.
pub fn apart<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(work)
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// A new, empty database for one test, and the URL of it: on the cluster
/// `BATON_TEST_STORE` names (a `postgres://` URL), else on this process's throwaway one.
pub fn fresh_database(given: Option<&str>) -> String {
    apart(|| make_database(given))
}

fn make_database(given: Option<&str>) -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "baton_test_{}_{}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    );
    let (admin, url) = match given {
        Some(url) => (url.to_string(), with_database(url, &name)),
        None => {
            let cluster = shared();
            (
                cluster.url("postgres", "sslmode=disable"),
                cluster.url(&name, "sslmode=disable"),
            )
        }
    };
    let mut client = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|error| panic!("the test cluster: {error}"));
    client
        .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE template0"))
        .unwrap_or_else(|error| panic!("CREATE DATABASE {name}: {error}"));
    url
}

/// Drops the database of `url` (made by [`fresh_database`]), whoever is still connected.
pub fn drop_database(url: &str) {
    let Some(name) = database_of(url) else {
        return;
    };
    let admin = with_database(url, "postgres");
    apart(|| {
        if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    });
}

/// `url` naming `database` instead of its own.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let (scheme, rest) = base.split_once("://").unwrap_or(("postgres", base));
    let authority = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{authority}/{database}{query}")
}

fn database_of(url: &str) -> Option<&str> {
    let base = url.split('?').next()?;
    let (_, rest) = base.split_once("://")?;
    let (_, database) = rest.split_once('/')?;
    (!database.is_empty()).then_some(database)
}
