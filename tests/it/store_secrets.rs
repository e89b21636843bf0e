//! A database password as password generators make them, holding `/`, `@`, `:`, `%`, `?`,
//! `#`, `&` and `=`, written into `BATON_STORE` as is and percent-encoded (SPEC 16): the
//! store works with it, and no word baton says (errors, exit 6, doctor, the serve banner,
//! hooks' answers) and no file setup writes shows any of it. An unencoded `@`, which the
//! client library would misread, is refused without being shown. On a cluster of this test
//! process's own, whatever store the rest of the suite runs on.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::http::Served;
use crate::common::machine::Machine;
use crate::common::{Run, TestEnv, cluster};

/// Every piece of every password below holds this, and nothing else baton says does.
const MARK: &str = "s3cr";

/// The password, and how each URL below writes it: as is (an `@` must be encoded: see
/// [`an_unencoded_at_is_refused_and_never_shown`]) and fully percent-encoded.
const PASSWORD: &str = "s3crA/s3crB:s3crC?s3crD#s3crE%s3crF&s3crG=s3crH@s3crI";
const WRITTEN: [&str; 2] = [
    "s3crA/s3crB:s3crC?s3crD#s3crE%s3crF&s3crG=s3crH%40s3crI",
    "s3crA%2Fs3crB%3As3crC%3Fs3crD%23s3crE%25s3crF%26s3crG%3Ds3crH%40s3crI",
];

#[track_caller]
fn assert_hidden(what: &str, words: &str) {
    assert!(
        !words.contains(MARK),
        "the password shows in {what}: {words}"
    );
}

#[track_caller]
fn assert_run_hidden(what: &str, run: &Run) {
    assert_hidden(what, &run.stdout);
    assert_hidden(what, &run.stderr);
}

/// A database of its own on this process's cluster, owned by a role of its own whose
/// password is [`PASSWORD`].
struct Secured {
    /// The URL with the password `written` as given.
    url: String,
    /// The URL as baton may show it: `postgres://ROLE@127.0.0.1:PORT/DATABASE`.
    shown: String,
}

/// A [`Secured`] database for each way [`WRITTEN`] writes the password.
fn secured_databases() -> Vec<Secured> {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let admin = cluster::shared().url("postgres", "sslmode=disable");
    let port = cluster::shared().port;
    WRITTEN
        .iter()
        .map(|written| {
            let n = COUNT.fetch_add(1, Ordering::Relaxed);
            let role = format!("secret_{}_{n}", std::process::id());
            let database = format!("secret_db_{}_{n}", std::process::id());
            cluster::apart(|| {
                let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
                for statement in [
                    format!("CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'"),
                    format!("CREATE DATABASE {database} OWNER {role} TEMPLATE template0"),
                ] {
                    client.batch_execute(&statement).unwrap();
                }
            });
            Secured {
                url: format!(
                    "postgres://{role}:{written}@127.0.0.1:{port}/{database}?sslmode=disable"
                ),
                shown: format!("postgres://{role}@127.0.0.1:{port}/{database}"),
            }
        })
        .collect()
}

/// A loopback port nobody listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_password_with_url_characters_works_and_shows_nowhere() {
    if !cluster::runs_here() {
        return;
    }
    for Secured { url, shown } in secured_databases() {
        let store = [("BATON_STORE", url.as_str())];
        let env = TestEnv::new();

        // The client library reads the password where baton hides it: the store works.
        assert_run_hidden("status", &env.run_env("codex", &["status"], &store));
        let sent = env.run_env(
            "lead",
            &["--json", "send", "--to", "codex", "--subject", "x"],
            &store,
        );
        assert_run_hidden("send", &sent);
        assert_eq!(sent.json()["task"]["id"], 1, "{shown}");

        let doctor = env.run_env("lead", &["doctor"], &store);
        assert_run_hidden("doctor", &doctor);
        assert!(doctor.stdout.contains(&shown), "{}", doctor.stdout);

        // A hook's answer goes into the agent's transcript.
        let hook = env.run_env(
            "codex",
            &["hook", "session-start", "--client", "claude"],
            &store,
        );
        assert_run_hidden("the session-start hook", &hook);
        assert!(hook.ok().contains("T-1 [normal] to do: x"), "{hook:?}");

        // The serve banner names the store.
        let served = Served::start_with_vars(&env, "lead", &[], &store);
        // Answered once it serves, which is after the banner.
        assert_eq!(served.get("/healthz", "").status, 200);
        let (_, stderr) = served.stop();
        assert_hidden("the serve banner", &stderr);
        assert!(stderr.contains(&shown), "{stderr}");

        // Unreachable: exit 6, naming the store without its password, in a command and a hook.
        let port = format!(":{}/", cluster::shared().port);
        let closed = format!(":{}/", closed_port());
        let away = url.replace(&port, &closed);
        let away_shown = shown.replace(&port, &closed);
        let vars = [("BATON_STORE", away.as_str())];
        let status = env.run_env("codex", &["status"], &vars);
        let stderr = status.fails(6);
        assert!(
            stderr.starts_with(&format!("error: store {away_shown} unreachable: ")),
            "{stderr}"
        );
        assert_run_hidden("exit 6", &status);
        let hook = env.run_env("codex", &["hook", "prompt", "--client", "claude"], &vars);
        // Silent to the agent (SPEC 13); one line for whoever reads the client's log.
        assert_run_hidden("a hook on an unreachable store", &hook);
        assert_eq!(hook.ok(), "", "{hook:?}");
        assert!(
            hook.stderr
                .contains(&format!("store {away_shown} unreachable")),
            "{hook:?}"
        );

        // On a command line, which every user of the machine can read: refused, not shown.
        let argv = env.run(
            "lead",
            &["serve", "--listen", "127.0.0.1:0", "--store", &url],
        );
        assert_eq!(argv.code, 1, "{argv:?}");
        assert!(argv.stderr.contains("holds a password"), "{}", argv.stderr);
        assert_run_hidden("serve --store", &argv);
        let backup = env.root.path().join("backup");
        let copy = env.run(
            "lead",
            &[
                "store",
                "copy",
                "--from",
                &url,
                "--to",
                backup.to_str().unwrap(),
            ],
        );
        assert_eq!(copy.code, 1, "{copy:?}");
        assert!(copy.stderr.contains("holds a password"), "{}", copy.stderr);
        assert_run_hidden("store copy --from", &copy);
    }
}

/// setup writes the store's URL into every client's files and hook lines: without the
/// password, however it was written (the user keeps it in ~/.pgpass).
#[test]
fn setup_writes_the_store_without_a_password_written_any_way() {
    if !cluster::runs_here() {
        return;
    }
    for Secured { url, shown } in secured_databases() {
        let machine = Machine::new();
        let run = machine.setup_env(
            &["--client", "claude,codex,gemini,opencode"],
            &[("BATON_STORE", Path::new(&url))],
        );
        assert_eq!(run.code, 0, "{run:?}");
        assert_run_hidden("setup", &run);
        let without = format!("{shown}?sslmode=disable");
        let mut files = machine.files();
        let mut home = std::collections::BTreeMap::new();
        collect(&machine.env.home(), &mut home);
        files.extend(home);
        assert!(
            files
                .values()
                .any(|bytes| String::from_utf8_lossy(bytes).contains(&without)),
            "no file names the store"
        );
        for (path, bytes) in files {
            assert_hidden(
                &path.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}

fn collect(dir: &Path, files: &mut std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else if let Ok(bytes) = std::fs::read(&path) {
            files.insert(path, bytes);
        }
    }
}

/// An `@` of the password not written `%40`: the client library would take the rest of the
/// password for the host (or, when the `@` is in a parameter, the address for the user), so
/// the URL is refused, with the fix, and nothing of it is shown.
#[test]
fn an_unencoded_at_is_refused_and_never_shown() {
    let env = TestEnv::new();
    for url in [
        "postgres://app:s3crA@s3crB@127.0.0.1:1/baton",
        "postgres://app:s3crA@s3crB/s3crC@127.0.0.1:1/baton",
        "postgres://127.0.0.1:1/baton?password=s3crA@s3crB",
    ] {
        let vars = [("BATON_STORE", url)];
        let run = env.run_env("lead", &["status"], &vars);
        assert_ne!(run.code, 0, "{run:?}");
        assert!(run.stderr.contains("%40"), "{}", run.stderr);
        assert_run_hidden("a refused URL", &run);
        let hook = env.run_env("lead", &["hook", "prompt", "--client", "claude"], &vars);
        assert_run_hidden("a hook on a refused URL", &hook);
        let argv = env.run(
            "lead",
            &["serve", "--listen", "127.0.0.1:0", "--store", url],
        );
        assert_ne!(argv.code, 0, "{argv:?}");
        assert_run_hidden("serve --store", &argv);
    }
}

/// A libpq connection string of `key=value` words, no URL, though a `://` comes somewhere in
/// it (in the password, or in another word's value): it is refused, as every form but a
/// `postgres://` URL is, and none of it is shown, where what stands before its `://` was
/// shown as a URL's scheme, password included.
#[test]
fn a_connection_string_with_a_scheme_like_word_is_refused_and_never_shown() {
    let env = TestEnv::new();
    for words in [
        "host=127.0.0.1 port=1 password=s3crA://s3crB dbname=baton",
        "password=s3crA host=127.0.0.1 port=1 application_name=https://example.com",
    ] {
        let vars = [("BATON_STORE", words)];
        let run = env.run_env("lead", &["status"], &vars);
        assert_ne!(run.code, 0, "{run:?}");
        assert_run_hidden("a connection string in BATON_STORE", &run);
        let hook = env.run_env("lead", &["hook", "prompt", "--client", "claude"], &vars);
        assert_run_hidden("a hook on a connection string", &hook);
        let copy = env.run(
            "lead",
            &["store", "copy", "--from", words, "--to", "/nonexistent"],
        );
        assert_ne!(copy.code, 0, "{copy:?}");
        assert_run_hidden("store copy --from", &copy);
    }
}
