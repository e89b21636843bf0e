//! Projects: workspaces, resolution by directory, isolation, the coordinator and the shared
//! context notes (SPEC sections 5 and 7).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{TestEnv, files_only};

/// Makes `relative` under the test's root and returns it.
fn dir(env: &TestEnv, relative: &str) -> PathBuf {
    let path = env.root.path().join(relative);
    fs::create_dir_all(&path).unwrap();
    path
}

/// `project init` run in `workspace`; returns the new project's id.
fn init_here(env: &TestEnv, workspace: &Path, extra: &[&str]) -> String {
    let mut args = vec!["--json", "project", "init"];
    args.extend_from_slice(extra);
    let value = env.run_in(workspace, "", &args).json();
    value["id"].as_str().expect("an id").to_string()
}

/// The project a command run in `cwd` resolves to.
fn project_of(env: &TestEnv, cwd: &Path) -> String {
    let value = env.run_in(cwd, "claude", &["--json", "whoami"]).json();
    value["project"].as_str().unwrap().to_string()
}

fn subjects(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list of tasks")
        .iter()
        .map(|task| task["subject"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_workspaces_with_one_name_are_two_projects_that_never_see_each_other() {
    let env = TestEnv::new();
    let first = dir(&env, "one/api");
    let second = dir(&env, "two/api");
    assert_eq!(init_here(&env, &first, &[]), "api");
    assert_eq!(init_here(&env, &second, &[]), "api-2");
    env.run_in(&first, "codex", &["whoami"]).ok();

    let sent = env
        .run_in(
            &first,
            "claude",
            &[
                "--json",
                "send",
                "--to",
                "codex",
                "--subject",
                "only in one",
            ],
        )
        .json();
    assert_eq!(sent["project"], "api");
    assert_eq!(sent["task"]["id"], 1);

    // Invisible from the other workspace, whose board is its own.
    let other_board = env.run_in(&second, "claude", &["--json", "board"]).json();
    assert!(subjects(&other_board).is_empty(), "{other_board}");
    let other_inbox = env
        .run_in(&second, "codex", &["--json", "inbox", "--peek"])
        .json();
    assert_eq!(other_inbox["project"], "api-2");
    assert_eq!(other_inbox["tasks"], Value::Array(Vec::new()));
    env.run_in(&second, "claude", &["show", "1"]).fails(1);
    let own_board = env.run_in(&first, "claude", &["--json", "board"]).json();
    assert_eq!(subjects(&own_board), vec!["only in one"]);

    // Naming the first project from the second workspace is refused, reads and writes alike,
    // to an agent that is neither a human of it nor its coordinator.
    let refused: [&[&str]; 7] = [
        &["--project", "api", "board"],
        &["--project", "api", "show", "1"],
        &["--project", "api", "inbox", "--peek"],
        &["--project", "api", "project", "show"],
        &["--project", "api", "agents"],
        &[
            "--project",
            "api",
            "send",
            "--to",
            "codex",
            "--subject",
            "sneak",
        ],
        &["--project", "api", "claim", "1"],
    ];
    for args in refused {
        let agent = if args.contains(&"claim") {
            "codex"
        } else {
            "gemini"
        };
        let stderr = env.run_in(&second, agent, args).fails(2).to_string();
        assert!(
            stderr.contains("project api is bound to") && stderr.contains("you are in"),
            "{args:?}: {stderr}"
        );
    }
    let board = env.board("api");
    assert_eq!(board["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(
        board["tasks"][0]["status"], "pending",
        "the claim was refused"
    );

    // Outside both workspaces, the default project: the task is not there either.
    assert_eq!(project_of(&env, &env.work()), "default");
    let default_board = env.run("claude", &["--json", "board"]).json();
    assert!(subjects(&default_board).is_empty());
}

#[test]
fn nested_workspaces_pick_the_longest_and_prefixes_compare_whole_names() {
    let env = TestEnv::new();
    let outer = dir(&env, "src");
    let inner = dir(&env, "src/api");
    let deep = dir(&env, "src/api/crates/core");
    let sibling = dir(&env, "src/api2");
    assert_eq!(init_here(&env, &outer, &["--name", "outer"]), "outer");
    assert_eq!(init_here(&env, &inner, &[]), "api");

    assert_eq!(project_of(&env, &deep), "api");
    assert_eq!(project_of(&env, &inner), "api");
    assert_eq!(project_of(&env, &outer), "outer");
    assert_eq!(
        project_of(&env, &sibling),
        "outer",
        "api2 is not inside api"
    );

    // The outer workspace contains the inner one, so naming it from inside is allowed;
    // the other way round is refused.
    env.run_in(&deep, "claude", &["--project", "outer", "board"])
        .ok();
    env.run_in(&outer, "claude", &["--project", "api", "board"])
        .fails(2);
}

#[cfg(unix)]
#[test]
fn a_symlink_to_a_workspace_is_the_same_workspace() {
    let env = TestEnv::new();
    let real = dir(&env, "real/web");
    let link = env.root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(init_here(&env, &link, &[]), "web");
    let shown = env.run_in(&real, "", &["--json", "project", "show"]).json();
    assert_eq!(
        shown["workspace"],
        real.canonicalize().unwrap().to_str().unwrap()
    );
    let inside_link = dir(&env, "link/src");
    assert_eq!(project_of(&env, &inside_link), "web");
    let stderr = env
        .run_in(&real, "", &["project", "init", "--name", "again"])
        .fails(1)
        .to_string();
    assert!(
        stderr.contains("already the workspace of project web"),
        "{stderr}"
    );
}

#[test]
fn naming_a_project_that_does_not_exist_is_an_error_not_a_new_board() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    let stderr = env
        .run("claude", &["--project", "nope", "board"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("project nope does not exist"), "{stderr}");
    env.run(
        "claude",
        &["--project", "nope", "send", "--to", "claude", "-s", "x"],
    )
    .fails(1);
    assert!(!env.project_dir("nope").exists());
    let stderr = env
        .run("", &["project", "init", "--name", "default"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("`default`"), "{stderr}");
}

#[test]
fn project_init_list_and_show() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    let workspace = dir(&env, "apps/Shop Front");
    let created = env
        .run_in(
            &workspace,
            "",
            &[
                "--json",
                "project",
                "init",
                "--goal",
                "sell things",
                "--human",
                "ana",
            ],
        )
        .json();
    assert_eq!(created["id"], "shop-front");
    assert_eq!(created["goal"], "sell things");
    assert_eq!(created["settings"]["humans"], serde_json::json!(["ana"]));
    let on_disk: Value = serde_json::from_str(
        &fs::read_to_string(env.project_dir("shop-front").join("project.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["workspace"], created["workspace"]);

    env.run("claude", &["whoami"]).ok();
    let listed = env.run("", &["--json", "project", "list"]).json();
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|project| project["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["default", "shop-front"]);
    let text = env.run("", &["project", "list"]).ok().to_string();
    assert!(
        text.contains("shop-front") && text.contains("Shop Front"),
        "{text}"
    );

    let shown = env
        .run_in(&workspace, "", &["project", "show"])
        .ok()
        .to_string();
    assert!(
        shown.contains("shop-front") && shown.contains("goal: sell things"),
        "{shown}"
    );
}

#[test]
fn the_first_sender_coordinates_and_only_they_or_a_human_hand_it_on() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    let workspace = dir(&env, "api");
    init_here(&env, &workspace, &["--human", "ana"]);
    for agent in ["claude", "codex", "gemini", "ana"] {
        env.run_in(&workspace, agent, &["whoami"]).ok();
    }
    let run = |agent: &str, args: &[&str]| env.run_in(&workspace, agent, args);
    assert_eq!(
        run("codex", &["--json", "coordinator"]).json()["coordinator"],
        Value::Null
    );
    run("claude", &["send", "--to", "codex", "-s", "first"]).ok();
    run("codex", &["send", "--to", "claude", "-s", "second"]).ok();
    assert_eq!(
        run("codex", &["--json", "coordinator"]).json()["coordinator"],
        "claude"
    );

    let stderr = run("codex", &["coordinator", "--set", "codex"])
        .fails(1)
        .to_string();
    assert!(
        stderr.contains("only claude (the coordinator) or ana"),
        "{stderr}"
    );
    run("codex", &["coordinator", "--human", "codex"]).fails(1);
    run("claude", &["coordinator", "--set", "nobody-here"]).fails(1);

    let handed = run("claude", &["--json", "coordinator", "--set", "gemini"]).json();
    assert_eq!(handed["coordinator"], "gemini");
    run("claude", &["coordinator", "--set", "claude"]).fails(1);
    // The human named at init may change it, though never the coordinator.
    let by_human = run("ana", &["--json", "coordinator", "--set", "codex"]).json();
    assert_eq!(by_human["coordinator"], "codex");
    // The coordinator can name more humans, and they can act too.
    let named = run("codex", &["--json", "coordinator", "--human", "gemini"]).json();
    assert_eq!(named["humans"], serde_json::json!(["ana", "gemini"]));
    run("gemini", &["coordinator", "--set", "claude"]).ok();
    run("claude", &["coordinator", "--not-human", "gemini"]).ok();
    run("gemini", &["coordinator", "--set", "gemini"]).fails(1);
    let project: Value = serde_json::from_str(
        &fs::read_to_string(env.project_dir("api").join("project.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(project["coordinator"], "claude");
    assert_eq!(project["settings"]["humans"], serde_json::json!(["ana"]));
}

#[test]
fn context_notes_keep_who_wrote_them_and_when() {
    let env = TestEnv::new();
    let workspace = dir(&env, "api");
    init_here(&env, &workspace, &[]);
    let empty = env
        .run_in(&workspace, "codex", &["context"])
        .ok()
        .to_string();
    assert!(empty.contains("no shared notes yet"), "{empty}");
    env.run_with(
        &workspace,
        "claude",
        &["context", "--add", "  we ship on Friday "],
        &[("BATON_NOW", "2026-11-29T10:00:00Z")],
    )
    .ok();
    let notes = env
        .run_with(
            &workspace,
            "codex",
            &["--json", "context", "--add", "tests run with cargo nextest"],
            &[("BATON_NOW", "2026-11-29T11:00:00Z")],
        )
        .json();
    assert_eq!(
        notes,
        serde_json::json!([
            {"at": "2026-11-29T10:00:00.000Z", "by": "claude", "text": "we ship on Friday"},
            {"at": "2026-11-29T11:00:00.000Z", "by": "codex", "text": "tests run with cargo nextest"},
        ])
    );
    let text = env
        .run_in(&workspace, "gemini", &["context"])
        .ok()
        .to_string();
    assert!(text.contains("claude: we ship on Friday"), "{text}");
    // Notes belong to the project: the default project has none.
    let elsewhere = env.run("gemini", &["--json", "context"]).json();
    assert_eq!(elsewhere, serde_json::json!([]));
    env.run_in(&workspace, "claude", &["context", "--add", "  "])
        .fails(1);
}

/// `project set --lease` (SPEC 3): the coordinator or a human of the project sets how long a
/// claim holds; a claim made after it gets that lease; bad input is one line and changes
/// nothing.
#[test]
fn the_lease_is_set_by_the_coordinator_or_a_human_and_bad_input_changes_nothing() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    let workspace = dir(&env, "api");
    init_here(&env, &workspace, &["--human", "ana"]);
    for agent in ["claude", "codex", "ana"] {
        env.run_in(&workspace, agent, &["whoami"]).ok();
    }
    let run = |agent: &str, args: &[&str]| env.run_in(&workspace, agent, args);
    let lease_minutes = || -> Value {
        let project: Value = serde_json::from_str(
            &fs::read_to_string(env.project_dir("api").join("project.json")).unwrap(),
        )
        .unwrap();
        project["settings"]["lease_minutes"].clone()
    };
    run("claude", &["send", "--to", "codex", "-s", "first"]).ok();
    let said = run("claude", &["project", "set", "--lease", "45m"])
        .ok()
        .to_string();
    assert_eq!(said.trim(), "project api: lease 45m (was 30m)");
    assert_eq!(lease_minutes(), 45);
    let shown = run("codex", &["project", "show"]).ok().to_string();
    assert!(shown.contains("lease: 45 minutes"), "{shown}");

    // A claim made now holds for 45 minutes.
    let claimed = run("codex", &["--json", "claim", "1"]).json();
    let task = &claimed["task"];
    let at = chrono::DateTime::parse_from_rfc3339(task["claimed_at"].as_str().unwrap()).unwrap();
    let until =
        chrono::DateTime::parse_from_rfc3339(task["lease_expires_at"].as_str().unwrap()).unwrap();
    assert_eq!((until - at).num_minutes(), 45, "{task}");

    // The human of the project may set it too; another agent may not.
    let by_human = run("ana", &["--json", "project", "set", "--lease", "2h"]).json();
    assert_eq!(by_human["settings"]["lease_minutes"], 120);
    let refused = run("codex", &["project", "set", "--lease", "1d"])
        .fails(1)
        .to_string();
    assert!(
        refused.contains("can change the lease of project api"),
        "{refused}"
    );
    for bad in [
        "45",
        "90s",
        "0m",
        "8d",
        "soon",
        "99999999999999999999m",
        "-5m",
    ] {
        let stderr = run("claude", &["project", "set", "--lease", bad])
            .fails(1)
            .to_string();
        assert_eq!(
            stderr
                .lines()
                .filter(|line| line.starts_with("error:"))
                .count(),
            1,
            "{bad}: {stderr}"
        );
        assert_eq!(lease_minutes(), 120, "{bad} changed the lease");
    }
    let stderr = run("claude", &["project", "set"]).fails(1).to_string();
    assert!(stderr.contains("--lease"), "{stderr}");
}

/// SPEC 7: a project's humans and its coordinator may name it with `--project` from any
/// directory; every other agent stays inside the workspace, and the hint it gets is true.
#[test]
fn humans_and_the_coordinator_reach_a_bound_project_from_anywhere_and_agents_do_not() {
    let env = TestEnv::new();
    let workspace = dir(&env, "api");
    let elsewhere = dir(&env, "web");
    init_here(&env, &workspace, &["--human", "ana"]);
    for agent in ["claude", "codex", "ana"] {
        env.run_in(&workspace, agent, &["whoami"]).ok();
    }
    env.run_in(
        &workspace,
        "claude",
        &["send", "--to", "codex", "-s", "in api"],
    )
    .ok();
    // claude sent first: the coordinator. ana is the human. codex is an agent at work there.
    for (who, args) in [
        ("ana", &["--json", "--project", "api", "board"][..]),
        ("claude", &["--json", "--project", "api", "board"][..]),
    ] {
        let board = env.run_in(&elsewhere, who, args).json();
        assert_eq!(subjects(&board), ["in api"], "{who}");
    }
    let sent = env
        .run_in(
            &elsewhere,
            "ana",
            &[
                "--json",
                "--project",
                "api",
                "send",
                "--to",
                "codex",
                "-s",
                "from afar",
            ],
        )
        .json();
    assert_eq!(sent["project"], "api");
    // Without --project, a human elsewhere is where they are: the default project.
    assert_eq!(
        env.run_in(&elsewhere, "ana", &["--json", "whoami"]).json()["project"],
        "default"
    );

    let run = env.run_in(&elsewhere, "codex", &["--project", "api", "inbox"]);
    let stderr = run.fails(2).to_string();
    let hint = stderr
        .lines()
        .find(|line| line.starts_with("hint:"))
        .unwrap_or_else(|| panic!("no hint: {stderr}"));
    assert!(
        !hint.contains("pass --project"),
        "the hint tells codex to pass the flag it passed: {hint}"
    );
    assert!(
        hint.contains(&format!("run it from inside {}", workspace.display()))
            && hint.contains("humans and its coordinator"),
        "{hint}"
    );
    // Once ana is no longer a human of it, ana is refused too.
    env.run_in(&workspace, "claude", &["coordinator", "--not-human", "ana"])
        .ok();
    env.run_in(&elsewhere, "ana", &["--project", "api", "board"])
        .fails(2);
}
