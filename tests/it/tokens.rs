//! `baton token add|list|rm` through the real binary, and `tokens::authenticate` (what
//! `baton serve` asks of every request) reading the home the binary wrote.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use baton::file::lock::LockPolicy;
use baton::home::Home;
use baton::store::files::FileStore;
use baton::time::Timestamp;
use baton::tokens::{self, Authentication};
use sha2::{Digest, Sha256};

use crate::common::{Run, TestEnv, files_only};

const CREATED: &str = "2026-12-02T01:00:00.000Z";
const USED: &str = "2026-12-02T01:02:00.000Z";
const LISTED: &str = "2026-12-02T01:05:00.000Z";

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn lock() -> LockPolicy {
    LockPolicy {
        timeout: Duration::from_secs(20),
        on_wait: |_| {},
    }
}

/// The test hub's store: its files, or its database.
fn home(env: &TestEnv) -> std::sync::Arc<dyn baton::store::Store> {
    match &env.store_url {
        Some(url) => baton::store::open(url, &Home::new(env.home()), lock()).unwrap(),
        None => std::sync::Arc::new(FileStore::new(Home::new(env.home()), lock())),
    }
}

/// `baton token ARGS…` at `now`, with no identity.
fn token(env: &TestEnv, now: &str, args: &[&str]) -> Run {
    let mut all = vec!["token"];
    all.extend_from_slice(args);
    env.run_env("", &all, &[("BATON_NOW", now)])
}

/// `baton token add NAME`: the token it printed, alone on its line.
fn add(env: &TestEnv, name: &str) -> String {
    let run = token(env, CREATED, &["add", name]);
    let stdout = run.ok();
    let token = stdout.strip_suffix('\n').expect("one line");
    assert!(!token.contains('\n'), "the token alone: {stdout:?}");
    token.to_string()
}

/// Whom `presented` acts as, asked as `baton serve` asks.
fn who(env: &TestEnv, presented: &str, now: &str) -> Option<String> {
    match tokens::authenticate(
        &*home(env),
        &tokens::KeptTokens::default(),
        presented,
        at(now),
    )
    .unwrap()
    {
        Authentication::Accepted(bearer) => Some(bearer.agent),
        Authentication::Unknown | Authentication::Expired { .. } => None,
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Asserts that no file under the home holds `secret`.
#[track_caller]
fn in_no_file(env: &TestEnv, secret: &str) {
    for path in files_under(&env.home()) {
        let bytes = fs::read(&path).unwrap();
        assert!(
            !bytes
                .windows(secret.len())
                .any(|window| window == secret.as_bytes()),
            "{} holds the token",
            path.display()
        );
    }
}

#[test]
fn add_prints_a_token_once_and_stores_only_its_hash() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let run = token(&env, CREATED, &["add", "alice"]);
    let alice = run.ok().trim_end().to_string();
    assert!(alice.starts_with("baton_"), "{alice}");
    assert!(alice.len() >= "baton_".len() + 43, "256 bits: {alice}");
    assert!(run.stderr.contains("shown this once"), "{}", run.stderr);
    assert!(run.stderr.contains("only its hash"), "{}", run.stderr);
    assert!(!run.stderr.contains(&alice), "{}", run.stderr);

    let value = token(&env, CREATED, &["--json", "add", "bob"]).json();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["created_at", "name", "token"]);
    assert_eq!(value["name"], "bob");
    assert_eq!(value["created_at"], CREATED);
    let bob = value["token"].as_str().unwrap().to_string();
    assert!(bob.starts_with("baton_") && bob != alice, "{bob}");

    let stored: serde_json::Value =
        serde_json::from_str(&env.hub_text("tokens.json").unwrap()).unwrap();
    assert_eq!(stored["schema"], 1);
    let entries = stored["tokens"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = entries
        .iter()
        .map(|entry| {
            (
                entry["name"].as_str().unwrap(),
                entry["hash"].as_str().unwrap(),
            )
        })
        .collect();
    let (alice_hash, bob_hash) = (sha256_hex(&alice), sha256_hex(&bob));
    assert_eq!(
        pairs,
        [("alice", alice_hash.as_str()), ("bob", bob_hash.as_str())]
    );
    assert_eq!(entries[0]["login"], false);
    assert_eq!(entries[0]["last_used_at"], serde_json::Value::Null);
    let stored_text = env.hub_text("tokens.json").unwrap();
    for secret in [&alice, &bob] {
        in_no_file(&env, secret);
        in_no_file(&env, secret.strip_prefix("baton_").unwrap());
        assert!(!stored_text.contains(secret.strip_prefix("baton_").unwrap()));
    }
    // On the files, the tokens' file is the user's alone.
    #[cfg(unix)]
    if crate::common::test_store() == crate::common::TestStore::Files {
        use std::os::unix::fs::PermissionsExt;
        let path = env.home().join("tokens.json");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
}

#[test]
fn a_token_authenticates_as_its_agent_until_it_is_removed() {
    let env = TestEnv::new();
    let alice = add(&env, "alice");
    let bob = add(&env, "bob");
    assert_eq!(who(&env, &alice, USED).as_deref(), Some("alice"));
    assert_eq!(who(&env, &bob, USED).as_deref(), Some("bob"));
    let wrong = format!("baton_{}", "0".repeat(64));
    let prefix = &alice[..alice.len() - 1];
    let longer = format!("{alice}0");
    let hash = sha256_hex(&alice);
    for presented in ["", "baton_", wrong.as_str(), prefix, &longer, &hash] {
        assert_eq!(who(&env, presented, USED), None, "{presented:?}");
    }

    let removed = token(&env, USED, &["rm", "alice"]);
    assert_eq!(removed.ok(), "removed 1 token(s) of alice\n");
    assert_eq!(who(&env, &alice, USED), None, "removed");
    assert_eq!(who(&env, &bob, USED).as_deref(), Some("bob"));
}

#[test]
fn list_shows_when_each_token_was_made_and_last_used_and_never_its_hash() {
    let env = TestEnv::new();
    let alice = add(&env, "alice");
    add(&env, "bob");
    // As `baton serve` makes a login.
    tokens::add_login(&*home(&env), "alice", tokens::LOGIN_TTL, at(CREATED)).unwrap();
    let before = token(&env, LISTED, &["list"]);
    assert!(before.ok().contains("never"), "{}", before.stdout);

    assert_eq!(who(&env, &alice, USED).as_deref(), Some("alice"));
    let listed = token(&env, LISTED, &["list"]);
    insta::assert_snapshot!("token_list", listed.ok());

    let value = token(&env, LISTED, &["--json", "list"]).json();
    assert_eq!(
        value,
        serde_json::json!([
            {"name": "alice", "created_at": CREATED, "last_used_at": USED, "login": false},
            {"name": "alice", "created_at": CREATED, "last_used_at": null, "login": true},
            {"name": "bob", "created_at": CREATED, "last_used_at": null, "login": false},
        ])
    );
    let hash = sha256_hex(&alice);
    for run in [&listed, &token(&env, LISTED, &["--json", "list"])] {
        assert!(!run.stdout.contains(&hash) && !run.stdout.contains(&alice));
    }

    let empty = TestEnv::new();
    assert!(
        token(&empty, LISTED, &["list"])
            .ok()
            .contains("no tokens yet")
    );
    assert_eq!(
        token(&empty, LISTED, &["--json", "list"]).json(),
        serde_json::json!([])
    );
}

#[test]
fn wrong_requests_are_refused_and_change_nothing() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let alice = add(&env, "alice");
    let path = env.home().join("tokens.json");
    let stored = fs::read(&path).unwrap();

    let again = token(&env, CREATED, &["add", "alice"]);
    let stderr = again.fails(1);
    assert!(
        stderr.contains("error: agent alice already has a token"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: `baton token rm alice` first"),
        "{stderr}"
    );
    assert_eq!(again.stdout, "");

    let unknown = token(&env, CREATED, &["rm", "carol"]);
    let stderr = unknown.fails(1);
    assert!(
        stderr.contains("agent carol has no token; agents with tokens: alice"),
        "{stderr}"
    );
    for name in ["Alice", "../alice", ""] {
        for verb in ["add", "rm"] {
            let stderr = token(&env, CREATED, &[verb, name]).fails(1).to_string();
            assert!(
                stderr.contains("invalid agent name"),
                "{verb} {name:?}: {stderr}"
            );
        }
    }
    assert_eq!(fs::read(&path).unwrap(), stored);
    assert_eq!(who(&env, &alice, USED).as_deref(), Some("alice"));
}

#[test]
fn a_corrupt_tokens_file_is_named_and_never_overwritten() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let alice = add(&env, "alice");
    let path = env.home().join("tokens.json");
    let garbage = b"{\"schema\": 1, \"tokens\": [{\"name\": \"ali";
    fs::write(&path, garbage).unwrap();
    for args in [&["add", "bob"][..], &["list"], &["rm", "alice"]] {
        let run = token(&env, CREATED, args);
        let stderr = run.fails(4);
        assert!(
            stderr.contains(path.to_str().unwrap()),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("will not overwrite it"),
            "{args:?}: {stderr}"
        );
        assert_eq!(run.stdout, "");
    }
    assert!(
        tokens::authenticate(
            &*home(&env),
            &tokens::KeptTokens::default(),
            &alice,
            at(USED)
        )
        .is_err()
    );
    assert_eq!(fs::read(&path).unwrap(), garbage);
}

#[test]
fn eight_processes_adding_at_once_lose_no_token() {
    let env = TestEnv::new();
    let names: Vec<String> = (1..=8).map(|n| format!("agent-{n}")).collect();
    let children: Vec<_> = names
        .iter()
        .map(|name| {
            env.command(&env.work())
                .args(["token", "add", name])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the baton binary runs")
        })
        .collect();
    let mut issued = Vec::new();
    for (name, child) in names.iter().zip(children) {
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{name}: {stderr}");
        let token = String::from_utf8(output.stdout)
            .unwrap()
            .trim_end()
            .to_string();
        issued.push((name, token));
    }
    let listed = token(&env, LISTED, &["--json", "list"]).json();
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names);
    for (name, token) in issued {
        assert_eq!(who(&env, &token, USED).as_deref(), Some(name.as_str()));
    }
}

#[test]
fn a_new_login_token_keeps_the_last_and_the_other_until_rm() {
    let env = TestEnv::new();
    let plain = add(&env, "lead");
    let ttl = tokens::LOGIN_TTL;
    let first = tokens::add_login(&*home(&env), "lead", ttl, at(CREATED)).unwrap();
    assert_eq!(who(&env, &first, USED).as_deref(), Some("lead"));
    // The next start of `baton serve` logs nobody out.
    let second = tokens::add_login(&*home(&env), "lead", ttl, at(USED)).unwrap();
    assert_eq!(who(&env, &first, USED).as_deref(), Some("lead"));
    assert_eq!(who(&env, &second, USED).as_deref(), Some("lead"));
    assert_eq!(who(&env, &plain, USED).as_deref(), Some("lead"));
    in_no_file(&env, &first);
    in_no_file(&env, &second);
    let listed = token(&env, LISTED, &["list"]);
    assert_eq!(
        listed.ok().matches("web login").count(),
        2,
        "{}",
        listed.stdout
    );

    // `rm` takes the login tokens too.
    assert_eq!(
        token(&env, LISTED, &["rm", "lead"]).ok(),
        "removed 3 token(s) of lead\n"
    );
    for token in [&first, &second, &plain] {
        assert_eq!(who(&env, token, USED), None);
    }
}
