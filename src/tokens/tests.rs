//! The tokens' unit tests: hashes, last uses, logins and their time to live, the file.

use std::fs;

use super::*;
use crate::error::Error;
use crate::secret::SECRET_BYTES;

use crate::file::lock::{FileLock, LockPolicy};
use crate::home::Home;
use crate::store::files::FileStore;

fn quiet() -> LockPolicy {
    LockPolicy::silent(std::time::Duration::from_secs(5))
}

fn store_at(root: &std::path::Path) -> FileStore {
    FileStore::new(Home::new(root.to_path_buf()), quiet())
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn new_home() -> (tempfile::TempDir, FileStore) {
    let root = tempfile::tempdir().unwrap();
    let home = store_at(root.path());
    (root, home)
}

/// The agent `presented` acts as at `now`, if it is accepted.
fn who(home: &dyn Store, presented: &str, now: Timestamp) -> Option<String> {
    match authenticate(home, &KeptTokens::default(), presented, now).unwrap() {
        Authentication::Accepted(bearer) => Some(bearer.agent),
        Authentication::Unknown | Authentication::Expired { .. } => None,
    }
}

/// [`who`] for a use the test needs recorded (it keeps a login alive). A use is recorded only
/// when the tokens' lock is free at once, and in a test process it may not be for a moment
/// after it was let go: a child that another test's thread forks holds a copy of the lock
/// file's descriptor (and so its lock) until it runs its program. So the lock is waited for
/// before each try, and the use tried again until the file changed.
fn who_recorded(home: &FileStore, presented: &str, now: Timestamp) -> Option<String> {
    let file = home.home().tokens_file();
    let before = fs::read(&file).unwrap();
    for _ in 0..50 {
        drop(FileLock::acquire(&home.home().tokens_lock(), "the tokens lock", quiet()).unwrap());
        let agent = who(home, presented, now);
        if fs::read(&file).unwrap() != before {
            return agent;
        }
    }
    panic!("the use of a token at {now} was never recorded");
}

#[test]
fn kept_tokens_follow_every_change_of_the_file() {
    let root = tempfile::tempdir().unwrap();
    let home = store_at(root.path());
    let now = at("2026-12-02T01:00:00Z");
    let kept = KeptTokens::default();
    let first = add(&home, "codex", now).unwrap();
    let Authentication::Accepted(bearer) = authenticate(&home, &kept, &first, now).unwrap() else {
        panic!("a token just made is accepted");
    };
    assert!(is_current(&home, &kept, &bearer.token).unwrap());
    remove(&home, "codex").unwrap();
    assert!(matches!(
        authenticate(&home, &kept, &first, now).unwrap(),
        Authentication::Unknown
    ));
    assert!(!is_current(&home, &kept, &bearer.token).unwrap());
    let second = add(&home, "codex", now).unwrap();
    assert!(matches!(
        authenticate(&home, &kept, &second, now).unwrap(),
        Authentication::Accepted(_)
    ));
}

#[test]
fn hashes_are_sha256_in_lowercase_hex_and_decode_back() {
    // FIPS 180-2's first example.
    let abc = hex(&Sha256::digest(b"abc"));
    assert_eq!(
        abc,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let decoded = decode_digest(&abc).unwrap();
    assert_eq!(hex(&decoded), abc);
    for bad in [
        "",
        &abc[..62],
        &abc.to_uppercase(),
        &format!("{}zz", &abc[..62]),
    ] {
        assert_eq!(decode_digest(bad), None, "{bad}");
    }
}

#[test]
fn digests_are_equal_only_when_every_byte_is() {
    let digest: [u8; 32] = Sha256::digest(b"abc").into();
    assert!(is_same_digest(&digest, &digest.clone()));
    for position in [0, 15, 31] {
        let mut other = digest;
        other[position] ^= 1;
        assert!(!is_same_digest(&digest, &other), "differs at {position}");
    }
}

#[test]
fn tokens_carry_256_random_bits_after_the_prefix() {
    let (first, first_hash) = mint().unwrap();
    let (second, _) = mint().unwrap();
    assert_ne!(first, second);
    let random = first.strip_prefix(TOKEN_PREFIX).unwrap();
    assert_eq!(random.len(), 2 * SECRET_BYTES);
    assert!(decode_digest(random).is_some(), "{random} is hex");
    assert_eq!(first_hash, hex(&Sha256::digest(first.as_bytes())));
}

#[test]
fn a_match_records_its_last_use_at_most_once_a_minute_and_never_back() {
    let (_root, home) = new_home();
    let start = at("2026-12-02T01:00:00Z");
    let token = add(&home, "alice", start).unwrap();
    let last_used = |home: &dyn Store| list(home).unwrap()[0].last_used_at;
    assert_eq!(last_used(&home), None);
    let check = |now: &str| who(&home, &token, at(now));
    assert_eq!(check("2026-12-02T01:00:10Z").as_deref(), Some("alice"));
    assert_eq!(last_used(&home), Some(at("2026-12-02T01:00:10Z")));
    check("2026-12-02T01:01:09Z");
    assert_eq!(
        last_used(&home),
        Some(at("2026-12-02T01:00:10Z")),
        "not due"
    );
    check("2026-12-02T01:01:10Z");
    assert_eq!(last_used(&home), Some(at("2026-12-02T01:01:10Z")));
    check("2026-12-02T00:00:00Z");
    assert_eq!(last_used(&home), Some(at("2026-12-02T01:01:10Z")), "older");
}

#[test]
fn a_busy_lock_skips_the_record_but_not_the_answer() {
    let (_root, home) = new_home();
    let now = at("2026-12-02T01:00:00Z");
    let token = add(&home, "alice", now).unwrap();
    let before = fs::read(home.home().tokens_file()).unwrap();
    let held = FileLock::acquire(&home.home().tokens_lock(), "the tokens lock", quiet()).unwrap();
    let later = at("2026-12-02T02:00:00Z");
    assert_eq!(who(&home, &token, later).as_deref(), Some("alice"));
    assert_eq!(fs::read(home.home().tokens_file()).unwrap(), before);
    drop(held);
    who(&home, &token, later);
    assert_eq!(list(&home).unwrap()[0].last_used_at, Some(later));
}

#[test]
fn a_login_token_lasts_its_time_unused_and_each_use_moves_the_end() {
    let (_root, home) = new_home();
    let start = at("2026-12-02T01:00:00Z");
    let login = add_login(&home, "lead", Duration::hours(12), start).unwrap();
    let check = |now: &str| authenticate(&home, &KeptTokens::default(), &login, at(now)).unwrap();
    let accepted = |now: &str| matches!(check(now), Authentication::Accepted(_));
    assert!(accepted("2026-12-02T12:59:59Z"), "just within 12 hours");
    // That use moved the end to 12 hours after it.
    assert!(accepted("2026-12-03T00:59:00Z"));
    assert_eq!(
        check("2026-12-03T12:59:00Z"),
        Authentication::Expired {
            ttl: Some(Duration::hours(12))
        }
    );
    let Authentication::Accepted(bearer) = check("2026-12-03T00:59:30Z") else {
        panic!("still good");
    };
    let kept = KeptTokens::default();
    assert!(is_current_at(&home, &kept, &bearer.token, at("2026-12-03T12:00:00Z")).unwrap());
    assert!(!is_current_at(&home, &kept, &bearer.token, at("2026-12-03T13:00:00Z")).unwrap());
    assert_eq!(
        expired_logins(&home, at("2026-12-03T13:00:00Z")).unwrap(),
        [ExpiredLogin {
            name: "lead".into(),
            created_at: start,
            // The use at 00:59:30 came within a minute of the one recorded: not written.
            expired_at: at("2026-12-03T12:59:00Z"),
        }]
    );
    assert_eq!(
        remove_expired_logins(&home, at("2026-12-03T13:00:00Z")).unwrap(),
        1
    );
    assert_eq!(list(&home).unwrap(), []);
}

#[test]
fn a_short_lived_login_records_its_use_often_enough_to_stay_alive() {
    let (_root, home) = new_home();
    let start = at("2026-12-02T01:00:00Z");
    let login = add_login(&home, "lead", Duration::seconds(10), start).unwrap();
    // Used every 4 seconds for a minute: never 10 seconds unused, so never refused,
    // though a minute passes (the plain tokens' record interval).
    for second in (4..=60).step_by(4) {
        let now = start.plus(Duration::seconds(second));
        assert!(
            matches!(
                authenticate(&home, &KeptTokens::default(), &login, now).unwrap(),
                Authentication::Accepted(_)
            ),
            "refused {second}s in"
        );
    }
    let unused = start.plus(Duration::seconds(60 + 11));
    assert!(matches!(
        authenticate(&home, &KeptTokens::default(), &login, unused).unwrap(),
        Authentication::Expired { .. }
    ));
}

#[test]
fn logins_outlive_the_next_one_but_not_their_time_and_only_ten_are_kept() {
    let (_root, home) = new_home();
    let start = at("2026-12-02T01:00:00Z");
    let ttl = Duration::hours(12);
    let plain = add(&home, "lead", start).unwrap();
    let first = add_login(&home, "lead", ttl, start).unwrap();
    let other = add_login(&home, "ann", ttl, start).unwrap();
    // Another start of the server an hour later: the first login stays good.
    let hour = start.plus(Duration::hours(1));
    let second = add_login(&home, "lead", ttl, hour).unwrap();
    for token in [&first, &second, &plain] {
        assert_eq!(who(&home, token, hour).as_deref(), Some("lead"));
    }
    // The second is used again later; the first is not.
    let six = start.plus(Duration::hours(6));
    assert_eq!(who_recorded(&home, &second, six).as_deref(), Some("lead"));
    // A start after the first expired drops it from the file.
    let later = start.plus(Duration::minutes(13 * 60 + 30));
    add_login(&home, "lead", ttl, later).unwrap();
    assert_eq!(
        list(&home).unwrap().iter().filter(|row| row.login).count(),
        2,
        "the first login and ann's are gone, the second and the new one stay"
    );
    assert_eq!(who(&home, &other, later), None);
    assert_eq!(who(&home, &second, later).as_deref(), Some("lead"));

    // Restarts without end keep ten logins of lead, the ones used last.
    let mut made = Vec::new();
    for minute in 0..15 {
        let now = later.plus(Duration::minutes(minute));
        made.push(add_login(&home, "lead", ttl, now).unwrap());
    }
    let rows = list(&home).unwrap();
    assert_eq!(rows.iter().filter(|row| row.login).count(), LOGINS_KEPT);
    let now = later.plus(Duration::minutes(20));
    assert_eq!(who(&home, &made[4], now), None, "used longest ago");
    assert_eq!(who(&home, &made[5], now).as_deref(), Some("lead"));
    assert_eq!(who(&home, &plain, now).as_deref(), Some("lead"));
    // `rm` takes them all, the plain token too.
    assert_eq!(remove(&home, "lead").unwrap(), LOGINS_KEPT + 1);
}

#[test]
fn logging_out_removes_that_login_alone() {
    let (_root, home) = new_home();
    let now = at("2026-12-02T01:00:00Z");
    let plain = add(&home, "lead", now).unwrap();
    let first = add_login(&home, "lead", LOGIN_TTL, now).unwrap();
    let second = add_login(&home, "lead", LOGIN_TTL, now).unwrap();
    let bearer =
        |token: &str| match authenticate(&home, &KeptTokens::default(), token, now).unwrap() {
            Authentication::Accepted(bearer) => bearer,
            other => panic!("{other:?}"),
        };
    let (first_id, plain_id) = (bearer(&first).token, bearer(&plain).token);
    assert!(remove_login(&home, &first_id).unwrap());
    assert!(!remove_login(&home, &first_id).unwrap(), "gone already");
    assert!(!remove_login(&home, &plain_id).unwrap(), "not a login");
    assert_eq!(who(&home, &first, now), None);
    assert_eq!(who(&home, &second, now).as_deref(), Some("lead"));
    assert_eq!(who(&home, &plain, now).as_deref(), Some("lead"));
}

#[test]
fn a_login_from_a_baton_whose_logins_died_with_their_server_is_expired() {
    let (_root, home) = new_home();
    let token = "baton_from-an-older-serve";
    let hash = hex(&Sha256::digest(token.as_bytes()));
    let text = serde_json::json!({
        "schema": 1,
        "tokens": [{
            "name": "alice", "hash": hash, "created_at": "2026-12-02T01:00:00.000Z",
            "last_used_at": null, "login": true, "server_pid": 4242
        }]
    });
    fs::write(home.home().tokens_file(), text.to_string()).unwrap();
    let now = at("2026-12-02T01:00:01Z");
    assert_eq!(
        authenticate(&home, &KeptTokens::default(), token, now).unwrap(),
        Authentication::Expired { ttl: None }
    );
    assert_eq!(expired_logins(&home, now).unwrap().len(), 1);
    assert_eq!(remove_expired_logins(&home, now).unwrap(), 1);
}

#[test]
fn a_time_to_live_is_a_number_and_a_unit_within_bounds() {
    for (text, seconds) in [
        ("90s", 90),
        ("30m", 1_800),
        ("12h", 43_200),
        ("7d", 604_800),
        (" 1s ", 1),
        ("365d", 31_536_000),
    ] {
        assert_eq!(
            parse_login_ttl(text),
            Ok(Duration::seconds(seconds)),
            "{text}"
        );
    }
    for text in [
        "",
        "12",
        "h",
        "12 h",
        "1.5h",
        "-1h",
        "12H",
        "0s",
        "366d",
        "9999999999999999999d",
        "1h30m",
    ] {
        assert!(parse_login_ttl(text).is_err(), "{text}");
    }
    for (seconds, words) in [
        (43_200, "12h"),
        (90, "90s"),
        (1_800, "30m"),
        (604_800, "7d"),
        (0, "0s"),
    ] {
        assert_eq!(describe_ttl(Duration::seconds(seconds)), words);
        if seconds > 0 {
            assert_eq!(parse_login_ttl(words), Ok(Duration::seconds(seconds)));
        }
    }
}

#[test]
fn a_token_replaced_under_the_same_name_is_another_token() {
    let (_root, home) = new_home();
    let now = at("2026-12-02T01:00:00Z");
    let first = add(&home, "dev", now).unwrap();
    let Authentication::Accepted(old) =
        authenticate(&home, &KeptTokens::default(), &first, now).unwrap()
    else {
        panic!("accepted");
    };
    remove(&home, "dev").unwrap();
    let second = add(&home, "dev", now).unwrap();
    let Authentication::Accepted(new) =
        authenticate(&home, &KeptTokens::default(), &second, now).unwrap()
    else {
        panic!("accepted");
    };
    assert_eq!(old.agent, new.agent);
    assert_ne!(old.token, new.token);
    assert!(!is_current(&home, &KeptTokens::default(), &old.token).unwrap());
    assert!(is_current(&home, &KeptTokens::default(), &new.token).unwrap());
}

#[test]
fn list_sorts_by_name_then_login_last() {
    let (_root, home) = new_home();
    let now = at("2026-12-02T01:00:00Z");
    add_login(&home, "bob", LOGIN_TTL, now).unwrap();
    add(&home, "carol", now).unwrap();
    add(&home, "bob", now).unwrap();
    add_login(&home, "alice", LOGIN_TTL, now).unwrap();
    let order: Vec<(String, bool)> = list(&home)
        .unwrap()
        .into_iter()
        .map(|row| (row.name, row.login))
        .collect();
    let expected = [
        ("alice", true),
        ("bob", false),
        ("bob", true),
        ("carol", false),
    ];
    let expected: Vec<(String, bool)> = expected
        .iter()
        .map(|(name, login)| (name.to_string(), *login))
        .collect();
    assert_eq!(order, expected);
}

#[test]
fn fields_a_newer_baton_wrote_are_kept() {
    let (_root, home) = new_home();
    let token = "baton_written-by-a-newer-baton";
    let hash = hex(&Sha256::digest(token.as_bytes()));
    let text = serde_json::json!({
        "schema": 1,
        "issuer": "hub-7",
        "tokens": [{
            "name": "alice", "hash": hash, "created_at": "2026-12-02T01:00:00.000Z",
            "last_used_at": null, "login": false, "scopes": ["read"]
        }]
    });
    fs::write(home.home().tokens_file(), text.to_string()).unwrap();
    add(&home, "bob", at("2026-12-02T01:00:00Z")).unwrap();
    let now = at("2026-12-02T02:00:00Z");
    assert_eq!(who(&home, token, now).as_deref(), Some("alice"));
    let stored: serde_json::Value =
        serde_json::from_slice(&fs::read(home.home().tokens_file()).unwrap()).unwrap();
    assert_eq!(stored["issuer"], "hub-7");
    assert_eq!(stored["tokens"][0]["scopes"], serde_json::json!(["read"]));
    assert_eq!(
        stored["tokens"][0]["last_used_at"],
        "2026-12-02T02:00:00.000Z"
    );
    assert_eq!(stored["tokens"][1]["name"], "bob");
}

#[test]
fn an_entry_that_is_no_agent_or_no_digest_is_refused_by_file() {
    let (_root, home) = new_home();
    let token = "baton_x";
    let hash = hex(&Sha256::digest(token.as_bytes()));
    for (name, hash) in [("../etc", hash.as_str()), ("alice", "abc")] {
        let text = serde_json::json!({
            "schema": 1,
            "tokens": [{"name": name, "hash": hash, "created_at": "2026-12-02T01:00:00.000Z"}]
        });
        fs::write(home.home().tokens_file(), text.to_string()).unwrap();
        let error = authenticate(
            &home,
            &KeptTokens::default(),
            token,
            at("2026-12-02T01:00:00Z"),
        )
        .unwrap_err();
        assert!(
            matches!(&error, Error::Store(StoreError::Corrupt { origin, .. }) if origin.path() == Some(&*home.home().tokens_file())),
            "{error}"
        );
        assert!(add(&home, "bob", at("2026-12-02T01:00:00Z")).is_err());
    }
}
