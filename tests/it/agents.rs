//! The agent registry, the capability matrix and skill routing (SPEC sections 1 and 5).

use std::fs;
use std::process::{Child, Stdio};

use serde_json::{Value, json};

use crate::common::{TestEnv, files_only};

const T0: &str = "2026-11-29T12:00:00Z";

fn record(env: &TestEnv, name: &str) -> Value {
    let text = env.hub_text(&format!("agents/{name}.json"));
    serde_json::from_str(&text.expect("the record exists")).expect("the record parses")
}

fn at(env: &TestEnv, agent: &str, now: &str, args: &[&str]) -> crate::common::Run {
    env.run_with(&env.work(), agent, args, &[("BATON_NOW", now)])
}

#[test]
fn agent_add_keeps_the_wake_command_word_for_word_and_merges_fields() {
    let env = TestEnv::new();
    let added = env
        .run(
            "",
            &[
                "--json",
                "agent",
                "add",
                "codex",
                "--strengths",
                " careful Rust ",
                "--skills",
                "Rust, parsers,,rust",
                "--wake",
                "--",
                "codex",
                "exec",
                "--skip-git-repo-check",
                "-c",
                "two words",
            ],
        )
        .json();
    assert_eq!(added["name"], "codex");
    assert_eq!(added["strengths"], "careful Rust");
    assert_eq!(added["skills"], json!(["rust", "parsers"]));
    assert_eq!(
        added["wake"],
        json!(["codex", "exec", "--skip-git-repo-check", "-c", "two words"])
    );
    for field in ["created_at", "last_seen", "clients"] {
        assert!(added.get(field).is_some(), "{field} in {added}");
    }

    // Changing one field keeps the others.
    env.run("", &["agent", "add", "codex", "--strengths", "parsers"])
        .ok();
    let merged = record(&env, "codex");
    assert_eq!(merged["strengths"], "parsers");
    assert_eq!(merged["skills"], json!(["rust", "parsers"]));
    assert_eq!(merged["wake"][0], "codex");
    assert_eq!(merged["created_at"], added["created_at"]);

    let shown = env.run("", &["agent", "show", "codex"]).ok().to_string();
    assert!(
        shown.contains(r#"["codex", "exec", "--skip-git-repo-check", "-c", "two words"]"#),
        "{shown}"
    );

    // --wake needs a command after `--`, and a command needs --wake.
    env.run("", &["agent", "add", "codex", "--wake"]).fails(1);
    env.run("", &["agent", "add", "codex", "--", "claude", "-p"])
        .fails(1);
    env.run("", &["agent", "add", "codex", "--wake", "--", ""])
        .fails(1);
    assert_eq!(record(&env, "codex")["wake"][0], "codex", "left alone");

    env.run("", &["agent", "add", "codex", "--no-wake-command"])
        .ok();
    assert_eq!(record(&env, "codex")["wake"], Value::Null);

    env.run("", &["agent", "add", "Bad/Name"]).fails(1);
    env.run("", &["agent", "rm", "codex"]).ok();
    let stderr = env
        .run("", &["agent", "show", "codex"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("unknown agent `codex`"), "{stderr}");
    env.run("", &["agent", "rm", "codex"]).fails(1);
}

#[test]
fn last_seen_is_written_at_most_once_a_minute() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let path = env.home().join("agents/codex.json");
    at(&env, "codex", T0, &["whoami"]).ok();
    assert_eq!(
        record(&env, "codex")["last_seen"],
        "2026-11-29T12:00:00.000Z"
    );
    let before = fs::read(&path).unwrap();
    let modified = fs::metadata(&path).unwrap().modified().unwrap();
    for now in ["2026-11-29T12:00:20Z", "2026-11-29T12:00:59Z"] {
        at(&env, "codex", now, &["inbox"]).ok();
    }
    assert_eq!(
        fs::read(&path).unwrap(),
        before,
        "no write within the minute"
    );
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), modified);
    at(&env, "codex", "2026-11-29T12:01:00Z", &["inbox"]).ok();
    assert_eq!(
        record(&env, "codex")["last_seen"],
        "2026-11-29T12:01:00.000Z"
    );
}

/// Starts `baton ARGS…` without waiting for it.
fn spawn(env: &TestEnv, args: &[&str], now: Option<&str>) -> Child {
    let mut command = env.command(&env.work());
    command
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(now) = now {
        command.env("BATON_NOW", now);
    }
    command.spawn().expect("baton starts")
}

#[test]
fn heartbeats_racing_with_agent_add_lose_no_field() {
    let env = TestEnv::new();
    env.run(
        "",
        &["agent", "add", "racer", "--wake", "--", "sh", "-c", "true"],
    )
    .ok();
    let created_at = record(&env, "racer")["created_at"].clone();
    let mut children = Vec::new();
    let rounds = 8;
    for round in 0..rounds {
        let strengths = format!("strength {round}");
        let skills = format!("skill-{round},shared");
        children.push(spawn(
            &env,
            &["agent", "add", "racer", "--strengths", &strengths],
            None,
        ));
        children.push(spawn(
            &env,
            &["agent", "add", "racer", "--skills", &skills],
            None,
        ));
        // Each a minute and more later than the last, so every one of them is due to write.
        let now = format!("2099-01-01T00:{:02}:00Z", round * 2 + 1);
        children.push(spawn(&env, &["--as", "racer", "whoami"], Some(&now)));
    }
    crate::common::all_succeed(children);
    let racer = record(&env, "racer");
    let strengths = racer["strengths"].as_str().unwrap();
    assert!(strengths.starts_with("strength "), "{racer}");
    let skills = racer["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2, "{racer}");
    assert_eq!(skills[1], "shared");
    assert_eq!(racer["wake"], json!(["sh", "-c", "true"]));
    assert_eq!(racer["created_at"], created_at);
    assert_eq!(
        racer["last_seen"],
        format!("2099-01-01T00:{:02}:00.000Z", (rounds - 1) * 2 + 1),
        "the latest heartbeat wins whatever order they ran in"
    );
}

#[test]
fn a_record_that_does_not_parse_is_named_and_never_rewritten() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    env.register(&["claude"]);
    let path = env.home().join("agents/codex.json");
    let garbage = b"{\"name\": \"codex\", \"skills\": [\"ru";
    fs::write(&path, garbage).unwrap();

    for (agent, args) in [
        ("codex", &["inbox"][..]),
        ("", &["agent", "add", "codex", "--strengths", "x"][..]),
        ("claude", &["send", "--to", "codex", "--subject", "x"][..]),
    ] {
        let stderr = env.run(agent, args).fails(4).to_string();
        assert!(stderr.contains("agents/codex.json"), "{args:?}: {stderr}");
    }
    assert_eq!(fs::read(&path).unwrap(), garbage, "never rewritten");

    // The matrix still shows everyone else and names the bad record.
    let matrix = env.run("claude", &["--json", "agents"]).json();
    let names: Vec<&str> = matrix["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["claude"]);
    assert_eq!(matrix["problems"][0]["agent"], "codex");
    let run = env.run("claude", &["agents"]);
    assert!(run.ok().contains("claude"));
    assert!(
        run.stderr.contains("agent codex left out") && run.stderr.contains("codex.json"),
        "{}",
        run.stderr
    );
    // Removing it is the way out.
    env.run("", &["agent", "rm", "codex"]).ok();
    env.run("codex", &["inbox"]).ok();
}

#[test]
fn the_matrix_shows_skills_load_last_seen_and_wake() {
    let env = TestEnv::new();
    at(
        &env,
        "",
        "2026-11-29T11:00:00Z",
        &[
            "agent",
            "add",
            "codex",
            "--skills",
            "rust",
            "--strengths",
            "parsers",
            "--wake",
            "--",
            "codex",
            "exec",
        ],
    )
    .ok();
    at(&env, "claude", T0, &["whoami"]).ok();
    for subject in ["one", "two", "three"] {
        at(
            &env,
            "claude",
            T0,
            &["send", "--to", "codex", "--subject", subject],
        )
        .ok();
    }
    at(&env, "codex", T0, &["claim", "2"]).ok();
    at(&env, "codex", T0, &["done", "3", "--result", "did it"]).ok();
    let matrix = at(
        &env,
        "claude",
        "2026-11-29T12:30:00Z",
        &["--json", "agents"],
    )
    .json();
    assert_eq!(matrix["project"], "default");
    assert_eq!(matrix["problems"], json!([]));
    let codex = matrix["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == "codex")
        .unwrap()
        .clone();
    assert_eq!(codex["skills"], json!(["rust"]));
    assert_eq!(codex["strengths"], "parsers");
    assert_eq!(codex["open"], 2);
    assert_eq!(codex["working"], 1);
    assert_eq!(codex["inbox"], 1);
    assert_eq!(codex["wake"], true);
    assert_eq!(codex["last_seen"], "2026-11-29T12:00:00.000Z");
    assert_eq!(codex["seen_seconds_ago"], 1800);
    let claude = &matrix["agents"][0];
    assert_eq!(
        (claude["name"].as_str(), claude["open"].as_u64()),
        (Some("claude"), Some(0))
    );
    assert_eq!(claude["wake"], false);

    let text = at(&env, "claude", "2026-11-29T12:30:00Z", &["agents"])
        .ok()
        .to_string();
    let codex_line = text.lines().find(|line| line.starts_with("codex")).unwrap();
    assert!(
        codex_line.contains("30m ago") && codex_line.contains("yes") && codex_line.contains("rust"),
        "{text}"
    );
}

#[test]
fn skill_routing_picks_the_least_busy_then_the_freshest_and_never_the_sender() {
    let env = TestEnv::new();
    for (name, skills, seen) in [
        ("busy", "rust,review", "2026-11-29T11:59:00Z"),
        ("stale", "rust", "2026-11-29T09:00:00Z"),
        ("fresh", "Rust", "2026-11-29T11:58:00Z"),
        ("lead", "planning", "2026-11-29T11:00:00Z"),
    ] {
        at(&env, "", seen, &["agent", "add", name, "--skills", skills]).ok();
    }
    env.run("lead", &["send", "--to", "busy", "--subject", "keep busy"])
        .ok();

    let route = |from: &str, subject: &str| -> String {
        let sent = env
            .run(
                from,
                &["--json", "send", "--skill", "rust", "--subject", subject],
            )
            .json();
        assert_eq!(sent["routed_by_skill"], "rust");
        assert_eq!(sent["task"]["skill"], "rust");
        sent["task"]["to"].as_str().unwrap().to_string()
    };
    // busy has an open task; of the two idle ones, fresh was seen last.
    assert_eq!(route("lead", "a"), "fresh");
    // Now fresh has one too: stale is the only one with none.
    assert_eq!(route("lead", "b"), "stale");
    // All have one: the most recently seen wins.
    assert_eq!(route("lead", "c"), "busy");
    // The sender is never chosen, however idle.
    at(
        &env,
        "stale",
        "2026-11-29T09:00:30Z",
        &["done", "3", "--result", "ok"],
    )
    .ok();
    assert_eq!(route("stale", "d"), "fresh");

    let text = env
        .run("lead", &["send", "--skill", "review", "--subject", "e"])
        .ok()
        .to_string();
    assert!(
        text.contains("chose busy for skill `review`") && text.contains("--to NAME"),
        "{text}"
    );

    let stderr = env
        .run("lead", &["send", "--skill", "go", "--subject", "f"])
        .fails(1)
        .to_string();
    assert!(
        stderr.contains("skill `go`") && stderr.contains("skills on offer: review, rust"),
        "{stderr}"
    );
    // Only the sender has it: nobody to choose.
    let stderr = env
        .run("lead", &["send", "--skill", "planning", "--subject", "g"])
        .fails(1)
        .to_string();
    assert!(
        stderr.contains("no agent but you has the skill `planning`"),
        "{stderr}"
    );
}

#[test]
fn a_relative_wake_program_is_refused_with_its_absolute_path_as_the_hint() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    env.run(
        "",
        &["agent", "add", "codex", "--wake", "--", "codex", "exec"],
    )
    .ok();
    for relative in ["./x.sh", "bin/wake.sh", "../x.sh"] {
        let run = env.run(
            "",
            &["agent", "add", "codex", "--wake", "--", relative, "go"],
        );
        let stderr = run.fails(1);
        assert!(
            stderr.starts_with(&format!(
                "error: the wake program `{relative}` is a relative path"
            )),
            "{stderr}"
        );
        let absolute = std::path::absolute(env.work().join(relative)).unwrap();
        assert!(
            stderr.contains(&format!(
                "hint: give its absolute path (`--wake -- {}`)",
                absolute.display()
            )),
            "{stderr}"
        );
        assert_eq!(
            record(&env, "codex")["wake"],
            json!(["codex", "exec"]),
            "left alone"
        );
    }
    env.run("", &["agent", "add", "gemini", "--wake", "--", "./x.sh"])
        .fails(1);
    // The refusal shows the path it was given, escapes and all, without acting on them.
    let stderr = env
        .run(
            "",
            &["agent", "add", "gemini", "--wake", "--", "./x\u{1b}[2J.sh"],
        )
        .fails(1)
        .to_string();
    assert!(
        stderr.contains("`./x\\u{1b}[2J.sh`") && !stderr.contains('\u{1b}'),
        "{stderr:?}"
    );
    assert!(
        !env.home().join("agents/gemini.json").exists(),
        "no record made"
    );
    // A name on PATH and an absolute path are fine.
    env.run(
        "",
        &["agent", "add", "codex", "--wake", "--", "/bin/sh", "./x.sh"],
    )
    .ok();
    assert_eq!(record(&env, "codex")["wake"], json!(["/bin/sh", "./x.sh"]));
}

#[test]
fn an_agent_with_open_tasks_cannot_be_removed_and_nothing_is_lost() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    let api = env.root.path().join("api");
    fs::create_dir(&api).unwrap();
    env.init_project("", "api", &api);
    env.register(&["lead", "worker"]);
    // default: T-1 assigned to worker. api: T-1 asks lead a question.
    env.send("lead", "worker", "Fix the parser", &[]);
    env.run_in(
        &api,
        "lead",
        &["send", "--to", "worker", "--subject", "Pick a name"],
    )
    .ok();
    env.run_in(&api, "worker", &["ask", "1", "--body", "Which one?"])
        .ok();
    let boards = (env.board("default"), env.board("api"));

    let stderr = env.run("", &["agent", "rm", "worker"]).fails(1).to_string();
    assert!(
        stderr.starts_with(
            "error: worker has open tasks, which would be left with nobody: \
             T-1 in api (assigned to it), T-1 in default (assigned to it)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: hand each on first: `baton reassign ID --to NAME`"),
        "{stderr}"
    );
    let stderr = env.run("", &["agent", "rm", "lead"]).fails(1).to_string();
    assert!(
        stderr.contains("lead has open tasks, which would be left with nobody: T-1 in api (its question to answer)"),
        "{stderr}"
    );
    assert_eq!(
        (env.board("default"), env.board("api")),
        boards,
        "nothing changed"
    );
    assert_eq!(record(&env, "worker")["name"], "worker", "still registered");
    assert_eq!(record(&env, "lead")["name"], "lead");

    // Once the work is handed on or finished, both can go.
    env.run("lead", &["cancel", "1"]).ok();
    env.run_in(&api, "lead", &["answer", "1", "--body", "baton"])
        .ok();
    env.run_in(&api, "worker", &["done", "1", "--result", "named"])
        .ok();
    env.run("", &["agent", "rm", "worker"]).ok();
    env.run("", &["agent", "rm", "lead"]).ok();
    assert!(!env.home().join("agents/worker.json").exists());
}
