//! Documents: versioned, changed under a lock, listed; this machine's own stay files.

use std::sync::mpsc;

use super::{Hub, on_each_store};
use crate::store::{Collection, Document, Edit, GaveUp, Wait};

on_each_store!(documents_are_versioned_locked_and_listed);

fn documents_are_versioned_locked_and_listed(hub: &Hub) {
    let store = hub.store();
    let agent = Document::Agent("codex".into());
    assert!(store.load_document(&agent).unwrap().is_none());
    assert!(store.document_version(&agent).is_none());
    assert!(
        store
            .update_document(&agent, Wait::AsTheStoreDoes, &mut |text| {
                assert!(text.is_none());
                Ok(Edit::Write(b"{\"schema\":1}".to_vec()))
            })
            .unwrap()
    );
    let first = store.document_version(&agent).unwrap();
    store
        .update_document(&agent, Wait::AsTheStoreDoes, &mut |text| {
            assert_eq!(text, Some(&b"{\"schema\":1}"[..]));
            Ok(Edit::WriteUnsynced(b"{\"schema\":1,\"x\":1}".to_vec()))
        })
        .unwrap();
    let second = store.document_version(&agent).unwrap();
    assert_ne!(second, first);
    let other = hub.store();
    assert_eq!(
        other.load_document(&agent).unwrap().as_deref(),
        Some(&b"{\"schema\":1,\"x\":1}"[..])
    );
    // A change that gives up writes nothing.
    store
        .update_document(&agent, Wait::AsTheStoreDoes, &mut |_| Err(GaveUp))
        .unwrap();
    assert_eq!(
        other.load_document(&agent).unwrap().as_deref(),
        Some(&b"{\"schema\":1,\"x\":1}"[..])
    );
    assert_eq!(other.document_version(&agent), Some(second));
    // A change that must not wait finds the lock another store holds busy, and does nothing.
    let (holding, held) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let (holder, document) = (&other, &agent);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            holder
                .update_document(document, Wait::AsTheStoreDoes, &mut |_| {
                    holding.send(()).unwrap();
                    released.recv().unwrap();
                    Ok(Edit::Keep)
                })
                .unwrap();
        });
        held.recv().unwrap();
        assert!(
            !store
                .update_document(&agent, Wait::Never, &mut |_| Ok(Edit::Remove))
                .unwrap()
        );
        release.send(()).unwrap();
    });
    assert!(store.load_document(&agent).unwrap().is_some());
    store
        .save_document(
            &Document::Agent("claude".into()),
            Edit::Write(b"{}".to_vec()),
        )
        .unwrap();
    store
        .save_document(
            &Document::Agent("bad name!".into()),
            Edit::Write(b"{}".to_vec()),
        )
        .unwrap();
    assert_eq!(
        other.list_documents(Collection::Agents).unwrap(),
        ["claude", "codex"],
        "sorted, the names no agent can have left out"
    );
    let loaded = other.load_collection(Collection::Agents).unwrap();
    let names: Vec<&str> = loaded.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        ["claude", "codex"],
        "the names listed, each with its text"
    );
    assert_eq!(loaded[0].1, b"{}");
    assert_eq!(
        Some(&loaded[1].1),
        other.load_document(&agent).unwrap().as_ref()
    );
    assert!(store.remove_document(&agent).unwrap());
    assert!(!store.remove_document(&agent).unwrap());
    assert!(other.load_document(&agent).unwrap().is_none());
    // This machine's own documents stay files under its home.
    store
        .save_document(&Document::ProjectMap, Edit::Write(b"{}".to_vec()))
        .unwrap();
    assert!(hub.home().root().join("project-map.json").exists());
}
