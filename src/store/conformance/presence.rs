//! Presences: a session or a listener is live while announced, a duty has one holder, a
//! mark is made once; and an MCP session is known until forgotten.

use super::{Hub, eventually, on_each_store};
use crate::file::lock::LockPolicy;
use crate::store::{Duty, KeptMcpSession, at_once};

on_each_store!(
    a_presence_is_seen_by_another_store_while_it_is_held,
    a_duty_has_one_holder_until_it_lets_go,
    a_mark_is_made_once_whoever_makes_it,
    an_mcp_session_is_known_until_forgotten,
    an_mcp_sessions_events_are_appended_once_per_key_and_read_after_a_position,
);

fn a_presence_is_seen_by_another_store_while_it_is_held(hub: &Hub) {
    let (here, there) = (hub.store(), hub.store());
    assert!(there.live_clients("p", "codex").is_empty());
    assert!(!there.is_listened("codex"));
    let session = here.announce_session("p", "codex", "opencode").unwrap();
    let other = here.announce_session("p", "codex", "claude").unwrap();
    let listener = here.announce_listener("codex").unwrap();
    assert_eq!(there.live_clients("p", "codex"), ["claude", "opencode"]);
    assert!(
        there.live_clients("q", "codex").is_empty(),
        "another project"
    );
    assert!(
        there.live_clients("p", "gemini").is_empty(),
        "another agent"
    );
    assert!(there.is_listened("codex"));
    assert!(!there.is_listened("claude"), "another agent");
    drop(session);
    eventually("the session taken back", || {
        there.live_clients("p", "codex") == ["claude"]
    });
    assert!(there.is_listened("codex"), "the listener is still held");
    drop(listener);
    eventually("the listener taken back", || !there.is_listened("codex"));
    drop(other);
    eventually("every session taken back", || {
        there.live_clients("p", "codex").is_empty()
    });
}

fn a_duty_has_one_holder_until_it_lets_go(hub: &Hub) {
    let (one, other) = (hub.store(), hub.store());
    for duty in [Duty::AlertSender, Duty::Wake("codex".to_string())] {
        assert!(!other.is_held(&duty), "{duty:?}: nobody holds it yet");
        let held = one
            .try_hold(&duty)
            .unwrap()
            .expect("a free duty is taken up");
        assert!(
            other.is_held(&duty),
            "{duty:?}: seen held from another store"
        );
        assert!(
            other.try_hold(&duty).unwrap().is_none(),
            "{duty:?}: a second holder is refused"
        );
        assert!(
            one.try_hold(&duty).unwrap().is_none(),
            "{duty:?}: and so is the holder's own store, asked again"
        );
        let another = other
            .try_hold(&Duty::Wake("gemini".to_string()))
            .unwrap()
            .expect("another duty is free");
        drop(another);
        drop(held);
        eventually("the duty let go when dropped", || !other.is_held(&duty));
        let taken = other.try_hold(&duty).unwrap().expect("free again");
        assert!(one.is_held(&duty), "{duty:?}: held by the other now");
        drop(taken);
        eventually("the duty let go again", || !one.is_held(&duty));
    }
    // Of many at once, one holds it.
    let stores = [hub.store(), hub.store(), hub.store()];
    let holders = at_once(9, |n| stores[n % 3].try_hold(&Duty::AlertSender).unwrap());
    assert_eq!(holders.iter().filter(|held| held.is_some()).count(), 1);
}

fn a_mark_is_made_once_whoever_makes_it(hub: &Hub) {
    let (one, other) = (hub.store(), hub.store());
    assert!(one.mark_once("stalled-1").unwrap());
    assert!(!one.mark_once("stalled-1").unwrap());
    assert!(!other.mark_once("stalled-1").unwrap());
    assert!(other.mark_once("stalled-2").unwrap(), "another mark");
    let stores = [hub.store(), hub.store(), hub.store()];
    let first = at_once(12, |n| stores[n % 3].mark_once("stalled-3").unwrap());
    assert_eq!(first.iter().filter(|first| **first).count(), 1, "{first:?}");
}

/// The files keep sessions in the memory of the serving process, a database for every hub:
/// either way the store that recorded a session (whatever lock policy it is asked with)
/// knows its owner and what its client said at `initialize` until it is forgotten.
fn an_mcp_session_is_known_until_forgotten(hub: &Hub) {
    let store = hub.store().resident();
    let waiting_briefly =
        store.with_lock(LockPolicy::silent(std::time::Duration::from_millis(100)));
    let kept = |token: &str, state: &str| KeptMcpSession {
        token: token.to_string(),
        state: state.to_string(),
    };
    assert_eq!(store.mcp_session("s1").unwrap(), None);
    store
        .record_mcp_session("s1", &kept("hash-a", r#"{"initialize_params":{}}"#))
        .unwrap();
    store.record_mcp_session("s2", &kept("hash-b", "")).unwrap();
    assert_eq!(
        waiting_briefly.mcp_session("s1").unwrap(),
        Some(kept("hash-a", r#"{"initialize_params":{}}"#)),
        "the same store with another lock policy knows it, and what its client said"
    );
    assert_eq!(
        store.mcp_session("s1").unwrap(),
        Some(kept("hash-a", r#"{"initialize_params":{}}"#)),
        "looking a session up keeps it"
    );
    waiting_briefly
        .forget_mcp_sessions(&["s1".to_string(), "s9".to_string()])
        .unwrap();
    assert_eq!(store.mcp_session("s1").unwrap(), None);
    assert_eq!(store.mcp_session("s2").unwrap(), Some(kept("hash-b", "")));
    store.forget_mcp_sessions(&[]).unwrap();
    assert_eq!(store.mcp_session("s2").unwrap(), Some(kept("hash-b", "")));
}

/// A session's event log: positions the same through any store of the hub (another lock
/// policy; on a database, another hub), an event appended once per key whoever appends it
/// again, read strictly after a position, and gone with its session.
fn an_mcp_sessions_events_are_appended_once_per_key_and_read_after_a_position(hub: &Hub) {
    let store = hub.store().resident();
    let other = store.with_lock(LockPolicy::silent(std::time::Duration::from_millis(100)));
    let kept = KeptMcpSession {
        token: "hash-a".to_string(),
        state: String::new(),
    };
    store.append_mcp_event("s1", "T-1", "lost").unwrap();
    assert_eq!(store.mcp_events_end("s1").unwrap(), 0, "no session, no log");
    store.record_mcp_session("s1", &kept).unwrap();
    store.record_mcp_session("s2", &kept).unwrap();
    assert_eq!(store.mcp_events_end("s1").unwrap(), 0);
    assert!(store.mcp_events_after("s1", 0).unwrap().is_empty());
    store.append_mcp_event("s1", "T-1@1", "one").unwrap();
    other.append_mcp_event("s1", "T-1@1", "one again").unwrap();
    other.append_mcp_event("s1", "T-2@1", "two").unwrap();
    store.append_mcp_event("s2", "T-1@1", "of s2").unwrap();
    let data = |events: Vec<crate::store::McpEvent>| -> Vec<(u64, String)> {
        events.into_iter().map(|e| (e.position, e.data)).collect()
    };
    let all = data(other.mcp_events_after("s1", 0).unwrap());
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!((all[0].1.as_str(), all[1].1.as_str()), ("one", "two"));
    assert!(all[0].0 < all[1].0);
    assert_eq!(store.mcp_events_end("s1").unwrap(), all[1].0);
    assert_eq!(
        data(store.mcp_events_after("s1", all[0].0).unwrap()),
        vec![all[1].clone()],
        "strictly after the position"
    );
    assert!(store.mcp_events_after("s1", all[1].0).unwrap().is_empty());
    assert_eq!(data(store.mcp_events_after("s2", 0).unwrap()).len(), 1);
    store.forget_mcp_sessions(&["s1".to_string()]).unwrap();
    assert!(store.mcp_events_after("s1", 0).unwrap().is_empty());
    assert_eq!(store.mcp_events_end("s1").unwrap(), 0);
}
