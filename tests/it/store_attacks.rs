//! A database that accepts TCP and then never answers (SPEC section 16: the store
//! unreachable): a hung server, a proxy whose backend is gone. Nothing of baton may wait for
//! it for ever: a command exits 6 naming the store, a hook leaves its client's turn alone
//! within its budget (section 10), a hub answers 503 and `/healthz` says so.
//!
//! The server here is [`Relay`]: a loopback port that accepts and says nothing, or that
//! passes bytes to a real PostgreSQL until told to go silent.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use crate::common::http::Served;
use crate::common::{Run, TestEnv, cluster, eventually_within, finish_within, spawn};

/// Far past every bound baton keeps while waiting for a store (5 s for a connection's
/// start), short of the test suite's patience: a run still going then hangs.
const HANG: Duration = Duration::from_secs(20);

/// The password the tests' store URLs carry, which no output may show.
const PASSWORD: &str = "hunter2-in-the-url";

/// A loopback port that accepts connections and either relays them to `upstream` or, once
/// silent (or from the start when there is none), holds them open and answers nothing.
struct Relay {
    port: u16,
    silent: Arc<AtomicBool>,
    /// Set when the relay is dropped: its threads let their sockets go and end.
    over: Arc<AtomicBool>,
}

impl Relay {
    /// A port that accepts and never answers.
    fn black_hole() -> Relay {
        Relay::start(None)
    }

    /// A port that relays to `upstream` (`HOST:PORT`) until [`Relay::go_silent`].
    fn to(upstream: &str) -> Relay {
        Relay::start(Some(upstream.to_string()))
    }

    fn start(upstream: Option<String>) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = Arc::new(AtomicBool::new(upstream.is_none()));
        let over = Arc::new(AtomicBool::new(false));
        let (is_silent, is_over) = (silent.clone(), over.clone());
        thread::spawn(move || {
            let mut held = Vec::new();
            while !is_over.load(Ordering::SeqCst) {
                let client = match listener.accept() {
                    Ok((client, _)) => client,
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(20));
                        continue;
                    }
                    Err(_) => return,
                };
                client.set_nonblocking(false).unwrap();
                match (&upstream, is_silent.load(Ordering::SeqCst)) {
                    (Some(upstream), false) => {
                        let Ok(server) = TcpStream::connect(upstream) else {
                            continue;
                        };
                        pipe(&client, &server, &is_silent, &is_over);
                        pipe(&server, &client, &is_silent, &is_over);
                    }
                    // Accepted, and never a byte back.
                    _ => held.push(client),
                }
            }
        });
        Relay { port, silent, over }
    }

    /// From now on nothing is passed on either way, on the connections open (which stay
    /// open) and on new ones.
    fn go_silent(&self) {
        self.silent.store(true, Ordering::SeqCst);
    }

    /// New connections are relayed again (those open while silent stay silent).
    fn speak_again(&self) {
        self.silent.store(false, Ordering::SeqCst);
    }

    /// A store URL naming this port, with `password` in it.
    fn url(&self, user: &str, password: &str, database: &str, parameters: &str) -> String {
        let port = self.port;
        format!("postgres://{user}:{password}@127.0.0.1:{port}/{database}{parameters}")
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.over.store(true, Ordering::SeqCst);
    }
}

/// Copies what `from` says to `to` on a thread of its own, while the relay speaks; once it is
/// silent, reads nothing more and keeps both open.
fn pipe(from: &TcpStream, to: &TcpStream, silent: &Arc<AtomicBool>, over: &Arc<AtomicBool>) {
    let (mut from, mut to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
    let (silent, over) = (silent.clone(), over.clone());
    from.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    thread::spawn(move || {
        let mut buffer = [0; 16 * 1024];
        while !over.load(Ordering::SeqCst) {
            if silent.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(50));
                continue;
            }
            match from.read(&mut buffer) {
                Ok(0) => return,
                // Read as the relay went silent: swallowed, as a black hole would.
                Ok(_) if silent.load(Ordering::SeqCst) => {}
                Ok(read) => {
                    if to.write_all(&buffer[..read]).is_err() {
                        return;
                    }
                }
                Err(error)
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => return,
            }
        }
    });
}

/// `baton --as AGENT ARGS…` in `env` with `BATON_STORE=store`, `stdin` written to it, under
/// [`HANG`].
fn run_on(env: &TestEnv, store: &str, agent: &str, args: &[&str], stdin: &str) -> Run {
    let mut command: Command = env.command(&env.work());
    command
        .args(["--as", agent])
        .args(args)
        .env("BATON_STORE", store)
        .stdin(Stdio::piped());
    let mut child = spawn(command);
    // A command that exits without reading it closes the pipe early: not an error.
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    finish_within(child, HANG, &args.join(" "))
}

fn assert_no_password(password: &str, said: &[&str]) {
    for said in said {
        assert!(!said.contains(password), "the password shows in: {said}");
    }
}

#[test]
fn a_command_on_a_store_that_never_answers_exits_6_naming_it() {
    let env = TestEnv::new();
    let hole = Relay::black_hole();
    let store = hole.url("baton", PASSWORD, "baton", "");
    let shown = format!("postgres://baton@127.0.0.1:{}/baton", hole.port);
    for args in [
        &["status"][..],
        &["send", "--to", "codex", "--subject", "into the void"][..],
    ] {
        let run = run_on(&env, &store, "lead", args, "");
        let stderr = run.fails(6);
        assert!(
            stderr.starts_with(&format!("error: store {shown} unreachable: ")),
            "{stderr}"
        );
        assert_no_password(PASSWORD, &[&run.stdout, &run.stderr]);
    }
}

/// The hook's budget is its own: even a store URL that gives the connection a minute
/// (`connect_timeout=60`) leaves the client's turn alone in time, with nothing on stdout
/// and a line for the client's log on stderr.
#[test]
fn hooks_on_a_store_that_never_answers_stay_silent_within_their_budget() {
    let env = TestEnv::new();
    let hole = Relay::black_hole();
    let store = hole.url("baton", PASSWORD, "baton", "?connect_timeout=60");
    let input = format!(r#"{{"cwd": "{}"}}"#, env.work().display());
    for event in ["session-start", "prompt"] {
        for client in ["claude", "codex", "gemini"] {
            let run = run_on(
                &env,
                &store,
                "codex",
                &["hook", event, "--client", client],
                &input,
            );
            assert_eq!(run.code, 0, "{run:?}");
            let nothing = match client {
                "gemini" => "{}\n",
                _ => "",
            };
            assert_eq!(run.stdout, nothing, "{event} {client}: {run:?}");
            let lines: Vec<&str> = run.stderr.lines().collect();
            assert!(
                lines.len() == 1 && lines[0].starts_with("baton hook: "),
                "{event} {client}: {}",
                run.stderr
            );
            assert!(
                !run.stderr.chars().any(|c| c.is_control() && c != '\n'),
                "{:?}",
                run.stderr
            );
            assert_no_password(PASSWORD, &[&run.stdout, &run.stderr]);
        }
    }
}

/// A hub whose database stops answering mid-way (its connections open and silent, new ones
/// accepted and never answered): `/healthz` says 503 rather than `ok`, an API request is
/// answered 503 with the API's JSON error naming the store (no password); once the
/// database answers again, the hub carries on by itself.
#[test]
fn a_hub_whose_store_stops_answering_says_503_and_healthz_says_so() {
    let env = TestEnv::new();
    let database = match &env.store_url {
        Some(url) => url.clone(),
        None if cluster::runs_here() => cluster::fresh_database(None),
        None => return,
    };
    // The test database's address and name, reached through the relay instead.
    let base = database.split('?').next().unwrap();
    let (_, rest) = base.split_once("://").unwrap();
    let (authority, name) = rest.split_once('/').unwrap();
    let (user_info, upstream) = authority.rsplit_once('@').unwrap();
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let relay = Relay::to(upstream);
    let store = relay.url(user, password, name, "?sslmode=disable");
    let shown = format!("postgres://{user}@127.0.0.1:{}/{name}", relay.port);
    let vars = [("BATON_STORE", store.as_str())];
    let token = env
        .run_env("", &["token", "add", "codex"], &vars)
        .ok()
        .trim()
        .to_string();
    let served = Served::start_with_vars(&env, "lead", &[], &vars);
    let board = "/api/v1/projects/default/board";
    served.get(board, &token).ok();
    let health = served.get("/healthz", "");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));

    relay.go_silent();
    // Each request below fails the test if no answer comes within a minute. The first
    // meets the connection the hub kept, open and now silent: its statement's bound.
    let refused = served.get(board, &token);
    assert_eq!(refused.status, 503, "{}", refused.body);
    let error = refused.json();
    let words = error["error"].as_str().unwrap();
    assert!(
        words.starts_with(&format!("store {shown} unreachable: ")),
        "{words}"
    );
    assert_eq!(error["code"], 6);
    let health = served.get("/healthz", "");
    assert_eq!(health.status, 503, "{}", health.body);
    assert!(health.json()["error"].is_string(), "{}", health.body);
    assert!(!health.body.contains("postgres"), "{}", health.body);

    relay.speak_again();
    eventually_within(Duration::from_secs(90), "the hub answers again", || {
        (served.get(board, &token).status == 200).then_some(())
    });
    let health = served.get("/healthz", "");
    assert_eq!((health.status, health.body.as_str()), (200, "ok"));
    let (_, stderr) = served.stop();
    if !password.is_empty() {
        assert_no_password(password, &[&refused.body, &stderr]);
    }
}
