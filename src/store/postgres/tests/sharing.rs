//! What hubs sharing one database see of each other: their connections (a password shown
//! nowhere, a cut connection replaced, TLS), presences, feeds, duties and MCP sessions.

use super::*;

#[test]
fn the_password_is_in_no_error() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let password = cluster::password();
    let closed = closed_port();
    let unreachable = fixture
        .store_at(&format!(
            "postgres://postgres:{password}@127.0.0.1:{closed}/nothing?sslmode=disable"
        ))
        .board("p")
        .unwrap_err();
    let words = unreachable.to_string();
    assert!(
        words.starts_with(&format!(
            "store postgres://postgres@127.0.0.1:{closed}/nothing unreachable: "
        )),
        "{words}"
    );
    assert_eq!(crate::error::Error::from(unreachable).exit_code(), 6);
    let wrong_password = cluster::with_database(&fixture.url, "postgres")
        .replace(password, &format!("{password}-wrong"));
    let refused = fixture.store_at(&wrong_password).board("p").unwrap_err();
    let mut errors = vec![words, refused.to_string()];
    errors.push(format!("{:?}", fixture.store()));
    errors.push(
        Address::parse(&format!(
            "postgres://postgres:{password}@127.0.0.1:{closed}/x?sslmode=bogus"
        ))
        .unwrap_err()
        .to_string(),
    );
    // A lock timeout names the store too.
    let store = fixture.store();
    let held = fixture.store();
    let mut connection = held.begin().unwrap();
    held.take_lock(
        &mut connection,
        BOARD_LOCKS,
        "p",
        "the board lock",
        Wait::AsTheStoreDoes,
    )
    .unwrap();
    let impatient = PgStore {
        lock: LockPolicy::silent(Duration::from_millis(100)),
        ..store
    };
    let timed_out = change_board(&impatient, "p", now(), |_| Ok::<_, StoreError>(())).unwrap_err();
    assert!(
        matches!(timed_out, StoreError::LockTimeout { .. }),
        "{timed_out}"
    );
    errors.push(timed_out.to_string());
    drop(connection);
    for words in errors {
        assert!(!words.contains(password), "the password shows in: {words}");
    }
}

#[test]
fn what_keeps_baton_out_for_good_is_told_from_an_outage() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    // The password of the database's URL: this process's cluster's, or the one of the
    // cluster BATON_TEST_STORE names.
    let password = fixture
        .url
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(login, _)| login.split_once(':'))
        .map(|(_, password)| password.to_string())
        .expect("the test database's URL has a password");
    let password = password.as_str();
    let closed = closed_port();
    let lasting = |url: &str| {
        let error = fixture.store_at(url).board("p").unwrap_err();
        assert!(
            matches!(error, StoreError::Unreachable { .. }),
            "{url}: {error}"
        );
        error.is_lasting()
    };
    // No server there: an outage, which may pass.
    assert!(!lasting(&format!(
        "postgres://postgres:{password}@127.0.0.1:{closed}/nothing?sslmode=disable"
    )));
    // The server's own refusals, which hold until someone changes it.
    let no_database = cluster::with_database(&fixture.url, &format!("{}_gone", fixture.database()));
    assert!(lasting(&no_database), "3D000");
    let wrong_password = fixture
        .url
        .replace(&format!(":{password}@"), &format!(":{password}-wrong@"));
    assert!(lasting(&wrong_password), "28P01");
    // A role that may not log in: made where the test's login may make roles (the suite's
    // own cluster; a given cluster's role may only make databases).
    let role = format!("{}_nologin", fixture.database());
    let mut admin = fixture.client();
    let made = admin.batch_execute(&format!("CREATE ROLE {role} NOLOGIN PASSWORD '{password}'"));
    if made.is_ok() {
        let (scheme, rest) = fixture.url.split_once("://").unwrap();
        let (_, from_password) = rest.split_once(':').unwrap();
        let as_role = format!("{scheme}://{role}:{from_password}");
        let not_allowed = lasting(&as_role);
        // Allowed to log in, but not to connect to this database.
        admin
            .batch_execute(&format!(
                "ALTER ROLE {role} LOGIN; REVOKE CONNECT ON DATABASE {} FROM PUBLIC",
                fixture.database()
            ))
            .unwrap();
        let not_this_database = lasting(&as_role);
        admin.batch_execute(&format!("DROP ROLE {role}")).unwrap();
        assert!(not_allowed, "28000");
        assert!(not_this_database, "42501");
    } else {
        eprintln!("not checked: a role that may not log in (this login may not make roles)");
    }
    // The database dropped under a connected store: the cut connection may first read as an
    // outage; the next call, connecting anew, is told the database is gone.
    let store = fixture.store();
    store.board("p").unwrap();
    drop(admin);
    cluster::drop_database(&fixture.url);
    let first = store.board("p").unwrap_err();
    let error = match first.is_lasting() {
        true => first,
        false => store.board("p").unwrap_err(),
    };
    assert!(error.is_lasting(), "{error}");
}

#[test]
fn a_cut_connection_is_replaced_on_the_next_call() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    send(&store, "before");
    // Every connection of the database cut, as a restart of the server cuts them.
    fixture.terminate(CLIENTS);
    // The next read and the next change go through on new connections.
    assert_eq!(store.board("p").unwrap().len(), 1);
    fixture.terminate(CLIENTS);
    send(&store, "after");
    assert_eq!(store.board("p").unwrap().len(), 2);
}

#[test]
fn tls_require_and_verify_full_connect_and_an_unknown_authority_is_refused() {
    if !cluster::runs_here() {
        return;
    }
    if std::env::var("BATON_TEST_STORE").is_ok_and(|value| address::is_postgres_url(&value)) {
        // The given cluster's certificates are not this test's to know; the throwaway
        // cluster of this process has TLS set up.
    }
    let cluster = cluster::shared();
    let name = {
        let url = cluster::fresh_database(None);
        url.split('/')
            .next_back()
            .unwrap()
            .split('?')
            .next()
            .unwrap()
            .to_string()
    };
    let home = tempfile::tempdir().unwrap();
    let store = |parameters: &str| {
        PgStore::new(
            Address::parse(&cluster.url(&name, parameters)).unwrap(),
            Home::new(home.path().to_path_buf()),
            LockPolicy::silent(Duration::from_secs(5)),
        )
    };
    let ca = cluster.ca_file.display().to_string();
    for parameters in [
        "sslmode=require".to_string(),
        "sslmode=prefer".to_string(),
        format!("sslmode=verify-full&sslrootcert={ca}"),
    ] {
        let store = store(&parameters);
        assert_eq!(store.board("p").unwrap().len(), 0, "{parameters}");
        let encrypted: bool = store
            .run(|client| {
                Ok(client
                    .query_one(
                        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                        &[],
                    )?
                    .get(0))
            })
            .unwrap();
        assert!(encrypted, "{parameters}: the connection is not encrypted");
    }
    // The web's roots do not know the test authority.
    let refused = store("sslmode=verify-full").board("p").unwrap_err();
    assert!(
        matches!(refused, StoreError::Unreachable { .. }),
        "{refused}"
    );
    assert!(!refused.to_string().contains(cluster::password()));
    cluster::drop_database(&cluster.url(&name, ""));
}

#[test]
fn a_presence_lapses_with_its_keeper_s_connection_and_is_taken_back() {
    if !cluster::runs_here() {
        return;
    }
    // How a presence is seen and let go is the conformance suite's (`store::conformance`).
    let fixture = Fixture::new();
    let here = fixture.store();
    let there = fixture.store();
    let listener = here.announce_listener("codex").unwrap();
    assert!(there.is_listened("codex"));
    // The keeper's connection cut (its process killed would cut it): the presence lapses at
    // once, and comes back when the keeper has connected again.
    fixture.terminate(
        "pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1)",
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !there.is_listened("codex") {
        assert!(
            std::time::Instant::now() < deadline,
            "the listener was not taken back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(listener);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while there.is_listened("codex") {
        assert!(std::time::Instant::now() < deadline, "the listener stayed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_presence_whose_holder_is_gone_counts_for_nothing_and_is_removed() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let store = fixture.store();
    let _live = store.announce_session("p", "codex", "opencode").unwrap();
    let mut client = fixture.client();
    client
        .execute(
            "INSERT INTO presence (id, kind, project, agent, client) \
             VALUES (nextval('presence_ids'), 'session', 'p', 'codex', 'claude')",
            &[],
        )
        .unwrap();
    assert_eq!(count(&mut client, "presence"), 2);
    assert_eq!(store.live_clients("p", "codex"), ["opencode"]);
    assert_eq!(count(&mut client, "presence"), 1, "the leftover is removed");
}

#[test]
fn a_change_on_one_hub_reaches_the_feeds_of_another_once_it_commits_and_never_if_not() {
    if !cluster::runs_here() {
        return;
    }
    use crate::store::{Change, What};
    let fixture = Fixture::new();
    let (here, there) = (fixture.store(), fixture.store());
    let mut hub = there.changes(&Scope::Hub).unwrap();
    let mut project = there.changes(&Scope::Project("p".into())).unwrap();
    let mut other = there.changes(&Scope::Project("q".into())).unwrap();
    let id = send(&here, "told");
    let refused: Result<(), crate::error::Error> = change_board(&here, "p", now(), |tx| {
        tx.record(record("alice", "never", 1));
        Err(crate::error::Error::invalid("no"))
    });
    assert!(refused.is_err());
    change_mail(&here, "p", now(), |mailbox| {
        mailbox.add(
            now(),
            vec![Draft {
                from: "alice".into(),
                to: "codex".into(),
                kind: MessageType::Text,
                summary: "hi".into(),
                body: String::new(),
                payload: serde_json::Value::Null,
            }],
        );
        Ok::<_, StoreError>(())
    })
    .unwrap();
    here.save_document(&Document::Tokens, Edit::Write(b"{}".to_vec()))
        .unwrap();
    here.forget_mcp_sessions(&["s1".to_string()]).unwrap();
    let mut told = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while told.len() < 4 && std::time::Instant::now() < deadline {
        told.extend(hub.next(Duration::from_millis(200)).unwrap());
    }
    assert_eq!(
        told,
        [
            Change::in_project(
                "p",
                What::Logged {
                    action: "send".into(),
                    task: Some(id.0)
                }
            ),
            Change::in_project("p", What::Message { seq: 1 }),
            Change {
                project: None,
                what: What::Tokens
            },
            Change {
                project: None,
                what: What::McpSessionEnded { id: "s1".into() }
            },
        ],
        "each change as itself, in commit order, the refused one not at all"
    );
    assert!(hub.next(Duration::from_millis(300)).unwrap().is_empty());
    let of_project = project.next(Duration::from_secs(5)).unwrap();
    assert_eq!(of_project, [Change::in_project("p", What::Project)]);
    assert!(other.next(Duration::from_millis(300)).unwrap().is_empty());
    // A waker ends a wait with nothing.
    let waker = other.waker();
    let woken = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        waker.wake();
    });
    assert!(other.next(Duration::from_secs(30)).unwrap().is_empty());
    woken.join().unwrap();
}

#[test]
fn a_feed_whose_connection_is_cut_says_so_and_then_that_it_may_have_missed_changes() {
    if !cluster::runs_here() {
        return;
    }
    use crate::store::What;
    let fixture = Fixture::new();
    let store = fixture.store();
    let mut feed = store.changes(&Scope::Hub).unwrap();
    fixture.terminate("query LIKE 'LISTEN%'");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut told = Vec::new();
    while !told
        .iter()
        .any(|change: &crate::store::Change| change.what == What::Everything)
    {
        assert!(std::time::Instant::now() < deadline, "never told: {told:?}");
        if let Ok(changes) = feed.next(Duration::from_millis(200)) {
            told.extend(changes);
        }
    }
    // And it goes on telling changes.
    send(&store, "after");
    let changes = feed.next(Duration::from_secs(10)).unwrap();
    assert!(
        changes
            .iter()
            .any(|change| matches!(change.what, What::Logged { .. })),
        "{changes:?}"
    );
}

#[test]
fn an_mcp_session_is_known_to_every_hub() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let (one, two) = (fixture.store(), fixture.store());
    let kept = crate::store::KeptMcpSession {
        token: "hash-a".to_string(),
        state: r#"{"initialize_params":{}}"#.to_string(),
    };
    one.record_mcp_session("session-1", &kept).unwrap();
    assert_eq!(two.mcp_session("session-1").unwrap(), Some(kept));
    two.forget_mcp_sessions(&["session-1".to_string()]).unwrap();
    assert!(one.mcp_session("session-1").unwrap().is_none());
}

/// A session an older schema kept (its owner alone) is known once migrated, without what its
/// client said (it cannot be revived elsewhere); a session unused for longer than
/// [`MCP_SESSION_IDLE`] is unknown, and forgotten when the next is recorded; a session in
/// use has its use noted, at most once a minute.
///
/// [`MCP_SESSION_IDLE`]: crate::store::mcp_sessions::MCP_SESSION_IDLE
#[test]
fn an_mcp_session_unused_for_long_ends_and_one_kept_before_its_state_is_known() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let mut client = fixture.client_at_schema(4);
    client
        .execute(
            "INSERT INTO mcp_sessions (session, token) VALUES ('old', 'hash-a')",
            &[],
        )
        .unwrap();
    let store = fixture.store();
    let kept = |token: &str, state: &str| crate::store::KeptMcpSession {
        token: token.to_string(),
        state: state.to_string(),
    };
    assert_eq!(store.mcp_session("old").unwrap(), Some(kept("hash-a", "")));

    client
        .execute(
            "UPDATE mcp_sessions SET used_at = now() - interval '13 hours' \
             WHERE session = 'old'",
            &[],
        )
        .unwrap();
    assert_eq!(store.mcp_session("old").unwrap(), None, "unused too long");
    store
        .record_mcp_session("new", &kept("hash-b", "{}"))
        .unwrap();
    let count = |client: &mut Client, session: &str| -> i64 {
        client
            .query_one(
                "SELECT count(*) FROM mcp_sessions WHERE session = $1",
                &[&session],
            )
            .unwrap()
            .get(0)
    };
    assert_eq!(count(&mut client, "old"), 0, "forgotten");
    assert_eq!(count(&mut client, "new"), 1);

    let age = |client: &mut Client| -> f64 {
        client
            .query_one(
                "SELECT extract(epoch FROM now() - used_at)::float8 FROM mcp_sessions \
                 WHERE session = 'new'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    client
        .execute(
            "UPDATE mcp_sessions SET used_at = now() - interval '30 seconds'",
            &[],
        )
        .unwrap();
    store.mcp_session("new").unwrap();
    assert!(
        age(&mut client) >= 30.0,
        "a fresh note is not written again"
    );
    client
        .execute(
            "UPDATE mcp_sessions SET used_at = now() - interval '5 minutes'",
            &[],
        )
        .unwrap();
    assert_eq!(
        store.mcp_session("new").unwrap(),
        Some(kept("hash-b", "{}"))
    );
    assert!(age(&mut client) < 60.0, "a stale note is written again");
}

/// A session a schema 5 database kept is migrated with an empty event log that takes
/// events from position 1; the log goes with its session when it is forgotten as idle.
#[test]
fn a_session_kept_before_event_logs_has_one_once_migrated_and_it_goes_with_the_session() {
    if !cluster::runs_here() {
        return;
    }
    let fixture = Fixture::new();
    let mut client = fixture.client_at_schema(5);
    client
        .execute(
            "INSERT INTO mcp_sessions (session, token, state) VALUES ('old', 'hash-a', '{}')",
            &[],
        )
        .unwrap();
    let store = fixture.store();
    assert_eq!(store.mcp_events_end("old").unwrap(), 0);
    store
        .append_mcp_event("old", "default/T-1@t", "one")
        .unwrap();
    let events = store.mcp_events_after("old", 0).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].position, events[0].data.as_str()), (1, "one"));

    client
        .execute(
            "UPDATE mcp_sessions SET used_at = now() - interval '13 hours' \
             WHERE session = 'old'",
            &[],
        )
        .unwrap();
    let kept = crate::store::KeptMcpSession {
        token: "hash-b".to_string(),
        state: "{}".to_string(),
    };
    store.record_mcp_session("new", &kept).unwrap();
    let left: i64 = client
        .query_one("SELECT count(*) FROM mcp_events", &[])
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "the idle session's log went with it");
}

/// A port of this machine nothing listens on (it was free a moment ago).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
