use std::fs;

use chrono::TimeZone;

use super::*;
use crate::board::reservation::Reservation;
use crate::board::task::TaskId;
use crate::time::Timestamp;

fn edit(client: Client, text: &str) -> EditCall {
    match read_call(client.edit_guard(), text) {
        ReadCall::Edit(call) => call,
        other => panic!("{client}: {other:?} for {text}"),
    }
}

#[test]
fn each_client_s_edit_names_its_paths() {
    let claude = edit(
        Client::Claude,
        r#"{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Write",
            "tool_input":{"file_path":"/w/src/date.rs","content":"x"}}"#,
    );
    assert_eq!(claude.paths, ["/w/src/date.rs"]);
    assert_eq!(claude.cwd, Some(PathBuf::from("/w")));
    assert_eq!(claude.session.as_deref(), Some("s1"));
    let notebook = edit(
        Client::Claude,
        r#"{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/w/a.ipynb"}}"#,
    );
    assert_eq!(notebook.paths, ["/w/a.ipynb"]);
    let gemini = edit(
        Client::Gemini,
        r#"{"cwd":"/w","tool_name":"replace","tool_input":{"file_path":"src/lib.rs",
            "old_string":"a","new_string":"b"}}"#,
    );
    assert_eq!(gemini.paths, ["src/lib.rs"]);
    let opencode = edit(
        Client::Opencode,
        r#"{"cwd":"/w","tool_name":"edit","tool_input":{"filePath":"/w/x.rs"}}"#,
    );
    assert_eq!(opencode.paths, ["/w/x.rs"]);
    let patch = "*** Begin Patch\n*** Add File: new.rs\n+fn main() {}\n\
                 *** Update File: src/old.rs\n*** Move to: src/renamed.rs\n@@\n-a\n+b\n\
                 *** Delete File: gone.rs\n*** End Patch\n";
    let codex = edit(
        Client::Codex,
        &json!({"cwd": "/w", "tool_name": "apply_patch", "tool_input": {"command": patch}})
            .to_string(),
    );
    assert_eq!(
        codex.paths,
        ["new.rs", "src/old.rs", "src/renamed.rs", "gone.rs"]
    );
    let opencode_patch = edit(
        Client::Opencode,
        &json!({"tool_name": "apply_patch", "tool_input": {"patchText": patch}}).to_string(),
    );
    assert_eq!(opencode_patch.paths, codex.paths);
}

#[test]
fn other_tools_and_bad_input_are_let_through() {
    let guard = Client::Claude.edit_guard();
    assert_eq!(
        read_call(
            guard,
            r#"{"tool_name":"Bash","tool_input":{"command":"sed -i x f"}}"#
        ),
        ReadCall::NotAnEdit
    );
    assert_eq!(
        read_call(
            guard,
            r#"{"tool_name":"Write","tool_input":{"file_path":7}}"#
        ),
        ReadCall::NotAnEdit
    );
    assert_eq!(
        read_call(guard, r#"{"tool_name":"Write"}"#),
        ReadCall::NotAnEdit
    );
    assert_eq!(read_call(guard, "[1, 2]"), ReadCall::NotAnEdit);
    for garbled in [
        "",
        "not json {",
        "{\"tool_name\": \"Write\", \"tool_input\": {",
    ] {
        assert!(
            matches!(read_call(guard, garbled), ReadCall::Unreadable(_)),
            "{garbled:?}"
        );
    }
    // A Codex patch with no file header changes nothing baton can name.
    let codex = json!({"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch\n"}});
    assert_eq!(
        read_call(Client::Codex.edit_guard(), &codex.to_string()),
        ReadCall::NotAnEdit
    );
}

#[test]
fn a_large_call_is_read_whole() {
    let content = "x".repeat(10 * 1024 * 1024);
    let text = json!({"tool_name": "Write", "tool_input": {"content": content, "file_path": "/w/big.txt"}})
        .to_string();
    assert_eq!(edit(Client::Claude, &text).paths, ["/w/big.txt"]);
}

fn call(cwd: &Path, paths: &[&str]) -> EditCall {
    EditCall {
        cwd: Some(cwd.to_path_buf()),
        session: None,
        paths: paths.iter().map(|path| path.to_string()).collect(),
    }
}

fn plain(asked: &[Asked]) -> Vec<&str> {
    asked.iter().map(|asked| asked.path.as_str()).collect()
}

#[test]
fn paths_become_relative_to_the_workspace_and_outside_ones_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let workspace = root.join("work");
    fs::create_dir_all(workspace.join("src/date")).unwrap();
    let absolute = workspace.join("src/date.rs").display().to_string();
    let outside = root.join("elsewhere/x.rs").display().to_string();
    let asked = asked_paths(
        &call(
            &workspace.join("src"),
            &[
                &absolute,
                "date/parse.rs",
                "../Cargo.toml",
                "../../elsewhere/y.rs",
                &outside,
                "./new/../kept.rs",
                "..",
            ],
        ),
        &workspace,
        None,
        Path::new("/"),
    );
    assert_eq!(
        plain(&asked),
        [
            "Cargo.toml",
            "src/date.rs",
            "src/date/parse.rs",
            "src/kept.rs"
        ]
    );
    // Without the client's cwd, the hook's own.
    let without = EditCall {
        cwd: None,
        ..call(&workspace, &["lib.rs"])
    };
    assert_eq!(
        plain(&asked_paths(
            &without,
            &workspace,
            None,
            &workspace.join("src")
        )),
        ["src/lib.rs"]
    );
}

#[test]
fn in_a_task_s_worktree_paths_are_relative_to_its_root_which_stands_for_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    // As baton spells it (no `\\?\` on Windows).
    let root = crate::project::canonical(dir.path());
    let workspace = root.join("work");
    let worktrees = root.join("home/worktrees");
    let worktree = worktrees.join("app/T-3");
    fs::create_dir_all(workspace.join("src")).unwrap();
    fs::create_dir_all(worktree.join("src/date")).unwrap();
    let found = crate::worktree::root_of(&worktrees, &worktree.join("src/date"));
    assert_eq!(found.as_deref(), Some(worktree.as_path()));
    assert_eq!(crate::worktree::root_of(&worktrees, &workspace), None);
    assert_eq!(
        crate::worktree::root_of(&worktrees, &worktrees.join("app")),
        None
    );
    let absolute = worktree.join("src/date.rs").display().to_string();
    let in_workspace = workspace.join("README.md").display().to_string();
    let asked = asked_paths(
        &call(
            &worktree.join("src"),
            &[
                &absolute,
                "date/parse.rs",
                "../Cargo.toml",
                &in_workspace,
                "../../T-4/x.rs",
            ],
        ),
        &workspace,
        Some(&worktree),
        Path::new("/"),
    );
    assert_eq!(
        plain(&asked),
        [
            "Cargo.toml",
            "README.md",
            "src/date.rs",
            "src/date/parse.rs"
        ]
    );
    // Without the worktree, its paths are none of the workspace's.
    let asked = asked_paths(
        &call(&worktree, &[&absolute]),
        &workspace,
        None,
        Path::new("/"),
    );
    assert!(asked.is_empty(), "{asked:?}");
}

#[cfg(unix)]
#[test]
fn a_path_through_a_link_is_the_workspace_s_own() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let workspace = root.join("work");
    fs::create_dir_all(workspace.join("src")).unwrap();
    std::os::unix::fs::symlink(&workspace, root.join("link")).unwrap();
    let asked = asked_paths(
        &call(&root.join("link"), &["src/new.rs"]),
        &workspace,
        None,
        Path::new("/"),
    );
    assert_eq!(plain(&asked), ["src/new.rs"]);
    // A workspace named through the link (a remote agent's mapped directory may be).
    let asked = asked_paths(
        &call(&workspace, &["src/new.rs"]),
        &root.join("link"),
        None,
        Path::new("/"),
    );
    assert_eq!(plain(&asked), ["src/new.rs"]);
}

#[test]
fn a_pattern_matches_the_path_alone_whatever_it_holds() {
    use crate::board::scope::{Pattern, literal};
    let cases = [
        ("src/date.rs", "src/date.rs"),
        ("app/[id].tsx", r"app/\[id\].tsx"),
        ("a*b?.rs", r"a\*b\?.rs"),
        ("port:3000", r"port\:3000"),
        ("back\\slash", r"back\\slash"),
        ("line\nbreak\u{202e}.rs", "line?break?.rs"),
    ];
    for (path, expected) in cases {
        assert_eq!(literal(path), expected, "{path:?}");
        let pattern = Pattern::parse(&literal(path)).unwrap();
        assert!(crate::text::check_line(crate::text::LineField::Pattern, pattern.as_str()).is_ok());
    }
    let id = Pattern::parse(&literal("app/[id].tsx")).unwrap();
    assert!(id.overlaps(&Pattern::parse("app/**").unwrap()));
    assert!(!id.overlaps(&Pattern::parse("app/i.tsx").unwrap()));
    assert!(
        !Pattern::parse(&literal("port:3000"))
            .unwrap()
            .overlaps(&Pattern::parse("port:3000").unwrap())
    );
    // Too long for a pattern: the directory that holds it.
    let deep = format!("{}/{}/file.rs", "d".repeat(600), "e".repeat(600));
    assert_eq!(literal(&deep), format!("{}/", "d".repeat(600)));
}

fn holding(path: &str, agent: &str, task: Option<u64>, until: Option<Timestamp>) -> Holding {
    Holding {
        path: path.to_string(),
        reservation: Reservation {
            id: 1,
            pattern: path.to_string(),
            agent: agent.to_string(),
            task: task.map(TaskId),
            exclusive: true,
            reason: None,
            created_at: Timestamp::from_datetime(chrono::Utc.timestamp_opt(0, 0).unwrap()),
            expires_at: until,
        },
        subject: task.map(|_| "Fix the date parser".to_string()),
    }
}

#[test]
fn the_refusal_names_holder_task_and_how_long_to_wait() {
    let asked = [Asked {
        path: "src/date.rs".into(),
        pattern: "src/date.rs".into(),
    }];
    assert_eq!(
        refusal(&[holding("src/date.rs", "codex", Some(3), None)], &asked),
        "src/date.rs is reserved by codex for T-3 \"Fix the date parser\"; message codex, or \
         wait: it will be in your inbox when T-3 is done"
    );
    let until =
        Timestamp::from_datetime(chrono::Utc.with_ymd_and_hms(2026, 12, 7, 1, 30, 0).unwrap());
    assert_eq!(
        refusal(
            &[holding("src/date.rs", "gemini", None, Some(until))],
            &asked
        ),
        "src/date.rs is reserved by gemini; message gemini, or wait: the reservation ends at \
         2026-12-07 01:30 UTC"
    );
    // The plain path, not the pattern it was asked as; an agent's name shown escaped.
    let asked = [Asked {
        path: "app/[id].tsx".into(),
        pattern: r"app/\[id\].tsx".into(),
    }];
    let mut odd = holding(r"app/\[id\].tsx", "ev\u{1b}il", Some(4), None);
    odd.reservation.pattern = "app/**".into();
    let words = refusal(&[odd], &asked);
    assert!(
        words.starts_with("app/[id].tsx is reserved by ev"),
        "{words}"
    );
    assert!(!words.contains('\u{1b}'), "{words}");
}

#[test]
fn answers_take_each_clients_shape() {
    let deny = EditAnswer::Deny("held".into());
    let parsed = |client, answer: &EditAnswer| -> Value {
        let line = render(client, answer);
        assert!(
            line.ends_with('\n') && line.lines().count() == 1,
            "{line:?}"
        );
        serde_json::from_str(&line).unwrap()
    };
    for client in [Client::Claude, Client::Codex] {
        assert_eq!(
            parsed(client, &deny),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "held"}})
        );
        assert_eq!(render(client, &EditAnswer::Allow), "");
    }
    assert_eq!(
        parsed(Client::Gemini, &deny),
        json!({"decision": "deny", "reason": "held"})
    );
    assert_eq!(render(Client::Gemini, &EditAnswer::Allow), "{}\n");
    assert_eq!(parsed(Client::Opencode, &deny), json!({"deny": "held"}));
    assert_eq!(render(Client::Opencode, &EditAnswer::Allow), "");
    let note = EditAnswer::AllowWithNote("away".into());
    assert_eq!(
        parsed(Client::Claude, &note),
        json!({"systemMessage": "away"})
    );
    assert_eq!(parsed(Client::Opencode, &note), json!({"note": "away"}));
}
