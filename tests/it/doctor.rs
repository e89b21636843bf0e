//! `baton doctor`: passes on a healthy home, finds each planted problem, and restores a
//! board from its backup only when told to.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use baton::file::lock::{FileLock, LockPolicy};
use serde_json::Value;

use crate::common::{Run, TestEnv, TestStore, files_only, test_store};

const T0: &str = "2026-11-29T12:00:00Z";

/// A pid above Linux's highest possible (2^22), so never a running process.
const DEAD_PID: &str = "4194305";

/// Runs at the pinned time `T0`.
fn run(env: &TestEnv, cwd: &Path, agent: &str, args: &[&str]) -> Run {
    env.run_with(cwd, agent, args, &[("BATON_NOW", T0)])
}

/// A home as everyday use leaves it: a bound project with a few changes (so a backup
/// exists), the default project, agents with and without a wake command on PATH.
fn healthy_home(env: &TestEnv) -> PathBuf {
    // The harness makes the home itself with the umask's mode; baton makes it 0700.
    fs::set_permissions(env.home(), fs::Permissions::from_mode(0o700)).unwrap();
    let workspace = env.root.path().join("api");
    fs::create_dir_all(&workspace).unwrap();
    run(env, &workspace, "", &["project", "init"]).ok();
    // Work is handed to codex without waking it: a wake supervisor still running when a
    // test runs the doctor would hold a lock the doctor counts.
    run(
        env,
        &workspace,
        "",
        &[
            "agent", "add", "codex", "--skills", "rust", "--wake", "--", "sh", "-c", "true",
        ],
    )
    .ok();
    run(
        env,
        &workspace,
        "claude",
        &["--no-wake", "send", "--to", "codex", "-s", "one"],
    )
    .ok();
    run(
        env,
        &workspace,
        "claude",
        &["--no-wake", "send", "--to", "codex", "-s", "two"],
    )
    .ok();
    run(env, &workspace, "codex", &["--no-wake", "claim", "1"]).ok();
    run(
        env,
        &workspace,
        "claude",
        &["--no-wake", "send", "--to", "codex", "-s", "three"],
    )
    .ok();
    run(
        env,
        &env.work(),
        "claude",
        &["note", "hello from elsewhere"],
    )
    .ok();
    workspace
}

struct Report {
    code: i32,
    checks: Vec<(String, String, String)>,
}

impl Report {
    /// The details of the findings of check `name` with `status`.
    fn details(&self, name: &str, status: &str) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|(check, verdict, _)| check == name && verdict == status)
            .map(|(_, _, detail)| detail.as_str())
            .collect()
    }

    /// Asserts one finding of `name` with `status` mentions every one of `words`.
    #[track_caller]
    fn has(&self, name: &str, status: &str, words: &[&str]) {
        let found = self
            .details(name, status)
            .into_iter()
            .any(|detail| words.iter().all(|word| detail.contains(word)));
        assert!(
            found,
            "no {status} {name} finding with {words:?} in {:#?}",
            self.checks
        );
    }

    fn statuses(&self) -> Vec<&str> {
        self.checks
            .iter()
            .map(|(_, status, _)| status.as_str())
            .collect()
    }
}

fn doctor_at(env: &TestEnv, now: &str) -> Report {
    let run = env.run_with(
        &env.work(),
        "",
        &["--json", "doctor"],
        &[("BATON_NOW", now)],
    );
    let value: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|error| panic!("doctor --json ({error}): {run:?}"));
    assert_eq!(value["healthy"], run.code == 0, "{value}");
    let checks = value["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|check| {
            (
                check["name"].as_str().unwrap().to_string(),
                check["status"].as_str().unwrap().to_string(),
                check["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    Report {
        code: run.code,
        checks,
    }
}

fn doctor(env: &TestEnv) -> Report {
    doctor_at(env, T0)
}

fn set_age(path: &Path, age: Duration) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

#[test]
fn a_healthy_home_passes_every_check() {
    let env = TestEnv::new();
    healthy_home(&env);
    let report = doctor(&env);
    assert_eq!(report.code, 0, "{:#?}", report.checks);
    assert!(
        report.statuses().iter().all(|status| *status == "ok"),
        "{:#?}",
        report.checks
    );
    let names: Vec<&str> = report
        .checks
        .iter()
        .map(|(name, _, _)| name.as_str())
        .collect();
    for name in [
        "home",
        "permissions",
        "projects",
        "boards",
        "waits",
        "names",
        "logs",
        "agents",
        "last-seen",
        "wake",
        "locks",
        "leftovers",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    report.has("wake", "ok", &["1 wake program found"]);
    report.has("boards", "ok", &["2 boards parse", "3 tasks"]);
    report.has("waits", "ok", &["no tasks wait on each other"]);
    report.has("names", "ok", &["every agent name in 3 tasks"]);

    let text = run(&env, &env.work(), "", &["doctor"]).ok().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[..lines.len() - 1]
            .iter()
            .all(|line| line.starts_with("ok ")),
        "{text}"
    );
    assert_eq!(lines.last(), Some(&"doctor: all is well"));
}

#[test]
fn a_home_not_made_yet_is_a_warning() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    fs::remove_dir(env.home()).unwrap();
    let report = doctor(&env);
    assert_eq!(report.code, 0);
    report.has("home", "warn", &["does not exist yet"]);
    assert!(!env.home().exists(), "doctor creates nothing");
}

#[test]
fn loosened_permissions_are_reported() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    let board = env.board_path("api");
    fs::set_permissions(&board, fs::Permissions::from_mode(0o644)).unwrap();
    let report = doctor(&env);
    report.has(
        "permissions",
        "warn",
        &["readable by others", "projects/api/board.json 0644"],
    );
    assert_eq!(report.code, 0, "readable is a warning");

    let agents = env.home().join("agents");
    fs::set_permissions(&agents, fs::Permissions::from_mode(0o777)).unwrap();
    let report = doctor(&env);
    report.has(
        "permissions",
        "fail",
        &["writable by others", "agents 0777", "chmod -R go-rwx"],
    );
    assert_eq!(report.code, 1);
}

#[test]
fn files_that_do_not_parse_or_are_too_new_are_named() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let workspace = healthy_home(&env);
    let web = env.root.path().join("web");
    fs::create_dir_all(&web).unwrap();
    run(&env, &web, "", &["project", "init"]).ok();
    // Without waking codex: its supervisor records `woken` on its boards, a write that could
    // land between the hand edits below.
    run(
        &env,
        &web,
        "claude",
        &["--no-wake", "send", "--to", "codex", "-s", "x"],
    )
    .ok();
    run(&env, &workspace, "", &["agent", "add", "gemini"]).ok();

    fs::write(
        env.board_path("api"),
        b"{\"schema\": 1, \"project\": \"api\", \"tas",
    )
    .unwrap();
    let newer = fs::read_to_string(env.board_path("web"))
        .unwrap()
        .replace("\"schema\": 1", "\"schema\": 7");
    fs::write(env.board_path("web"), newer).unwrap();
    fs::write(env.home().join("agents/codex.json"), b"not json").unwrap();
    let gemini = env.home().join("agents/gemini.json");
    let newer = fs::read_to_string(&gemini)
        .unwrap()
        .replace("\"schema\": 1", "\"schema\": 3");
    fs::write(&gemini, newer).unwrap();
    fs::write(env.project_dir("default").join("project.json"), b"{}").unwrap();

    let report = doctor(&env);
    assert_eq!(report.code, 1);
    report.has(
        "boards",
        "fail",
        &["projects/api/board.json", "--restore api"],
    );
    report.has(
        "boards",
        "fail",
        &["projects/web/board.json", "schema 7", "upgrade baton"],
    );
    report.has(
        "agents",
        "fail",
        &["agent codex", "agents/codex.json", "will not overwrite"],
    );
    report.has("agents", "fail", &["agent gemini", "schema 3"]);
    report.has("projects", "fail", &["projects/default/project.json"]);
    report.has("projects", "ok", &["2 projects readable: api, web"]);
}

#[test]
fn a_torn_last_line_warns_and_garbage_fails() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    let activity = env.project_dir("api").join("activity.jsonl");
    let mut bytes = fs::read(&activity).unwrap();
    bytes.extend_from_slice(b"{\"at\": \"2026-11-29T12:00:00.000Z\", \"proj");
    fs::write(&activity, &bytes).unwrap();
    let report = doctor(&env);
    assert_eq!(report.code, 0, "{:#?}", report.checks);
    report.has(
        "logs",
        "warn",
        &["projects/api/activity.jsonl", "cut short", "line 5"],
    );

    let mail = env.project_dir("api").join("mail.jsonl");
    fs::write(&mail, b"{\"seq\": 1}\nthis is not json\n{\"seq\": 2}\n").unwrap();
    let report = doctor(&env);
    assert_eq!(report.code, 1);
    report.has("logs", "fail", &["projects/api/mail.jsonl", "line 2"]);
    report.has("logs", "warn", &["projects/api/activity.jsonl"]);
}

#[test]
fn locks_held_by_a_gone_process_or_for_long_are_reported() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    let lock_path = env.project_dir("api").join("board.lock");
    let policy = LockPolicy {
        timeout: Duration::from_secs(5),
        on_wait: |_| {},
    };
    let held = FileLock::acquire(&lock_path, "the board lock", policy).unwrap();
    let report = doctor(&env);
    assert_eq!(
        report.code, 0,
        "a lock just taken is normal: {:#?}",
        report.checks
    );
    report.has("locks", "ok", &["1 held now"]);

    set_age(&lock_path, Duration::from_secs(3600));
    let report = doctor(&env);
    let me = format!("pid {}", std::process::id());
    report.has(
        "locks",
        "warn",
        &["projects/api/board.lock", &me, "1h", "exit 3"],
    );

    // The pid recorded in it is gone, yet the lock is held: a child inherited it.
    fs::write(&lock_path, DEAD_PID).unwrap();
    let report = doctor(&env);
    assert_eq!(report.code, 1);
    report.has(
        "locks",
        "fail",
        &["projects/api/board.lock", DEAD_PID, "gone"],
    );

    drop(held);
    let report = doctor(&env);
    assert_eq!(report.code, 0, "released: {:#?}", report.checks);
    report.has("locks", "ok", &["0 held now"]);
}

/// A live session (a Claude Code session's `baton mcp`, an opencode plugin's follower) and a
/// listener's stream hold their locks for as long as they run, hours on end: that is normal,
/// as a wake supervisor's is, and no command waits on them.
#[test]
fn locks_of_live_sessions_and_listeners_held_for_hours_are_normal() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    let policy = LockPolicy {
        timeout: Duration::from_secs(5),
        on_wait: |_| {},
    };
    let live = env.home().join("live/api/codex/claude-4242.lock");
    let listener = env.home().join("listeners/codex/4242-1.lock");
    let mut held = Vec::new();
    for path in [&live, &listener] {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        held.push(FileLock::acquire(path, "a presence", policy).unwrap());
        set_age(path, Duration::from_secs(5 * 3600));
    }
    let report = doctor(&env);
    assert_eq!(report.code, 0, "{:#?}", report.checks);
    report.has("locks", "ok", &["2 held now"]);
    assert_eq!(report.details("locks", "warn"), Vec::<&str>::new());
}

#[test]
fn files_left_half_written_by_a_killed_writer_are_reported() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    let temp = env.project_dir("api").join("board.json.tmp");
    fs::write(&temp, b"{\"schema\": 1, \"proj").unwrap();
    fs::set_permissions(&temp, fs::Permissions::from_mode(0o600)).unwrap();
    let report = doctor(&env);
    report.has("leftovers", "ok", &["no half-written files"]);

    set_age(&temp, Duration::from_secs(2 * 3600));
    let report = doctor(&env);
    assert_eq!(report.code, 0);
    report.has(
        "leftovers",
        "warn",
        &["projects/api/board.json.tmp", "2h", "never finished"],
    );
}

#[test]
fn agents_long_unseen_and_wake_programs_not_on_path_are_reported() {
    let env = TestEnv::new();
    let workspace = healthy_home(&env);
    env.run_with(
        &workspace,
        "oldtimer",
        &["whoami"],
        &[("BATON_NOW", "2026-11-19T12:00:00Z")],
    )
    .ok();
    run(
        &env,
        &workspace,
        "",
        &[
            "agent",
            "add",
            "ghost",
            "--wake",
            "--",
            "baton-test-no-such-program",
            "-p",
        ],
    )
    .ok();
    run(
        &env,
        &workspace,
        "",
        &[
            "agent",
            "add",
            "lost",
            "--wake",
            "--",
            "/nonexistent/bin/agent",
        ],
    )
    .ok();
    let report = doctor(&env);
    assert_eq!(report.code, 1);
    report.has(
        "last-seen",
        "warn",
        &["oldtimer", "10d ago", "agent rm oldtimer"],
    );
    assert_eq!(
        report.details("last-seen", "warn").len(),
        1,
        "only oldtimer"
    );
    report.has(
        "wake",
        "fail",
        &["ghost", "`baton-test-no-such-program`", "not on PATH"],
    );
    report.has(
        "wake",
        "fail",
        &["lost", "/nonexistent/bin/agent", "not an executable file"],
    );
    assert!(
        report
            .details("wake", "fail")
            .iter()
            .all(|detail| !detail.contains("codex")),
        "codex's `sh` is on PATH"
    );

    // A week later everyone is stale.
    let report = doctor_at(&env, "2026-12-07T12:00:00Z");
    report.has("last-seen", "warn", &["codex", "8d ago"]);
}

fn tasks(board: &Value) -> Vec<(u64, String)> {
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["id"].as_u64().unwrap(),
                task["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn restore_shows_what_is_lost_and_needs_yes() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let workspace = healthy_home(&env);
    let board_before = fs::read(env.board_path("api")).unwrap();

    let preview = run(&env, &workspace, "", &["doctor", "--restore", "api"]);
    assert_eq!(preview.code, 1, "{preview:?}");
    assert!(
        preview
            .stdout
            .contains("T-3 three: vanishes (it is pending now)"),
        "{}",
        preview.stdout
    );
    assert!(
        preview.stderr.contains("--restore api --yes"),
        "{}",
        preview.stderr
    );
    assert_eq!(
        fs::read(env.board_path("api")).unwrap(),
        board_before,
        "nothing changed"
    );

    let restored = run(
        &env,
        &workspace,
        "",
        &["--json", "doctor", "--restore", "api", "--yes"],
    )
    .json();
    assert_eq!(restored["restored"], true);
    assert_eq!(restored["changes"][0]["task"], 3);
    assert_eq!(restored["changes"][0]["restored"], Value::Null);
    let board = env.board("api");
    assert_eq!(
        tasks(&board),
        vec![(1, "working".into()), (2, "pending".into())]
    );
    assert_eq!(board["next_id"], 4, "T-3's number is not handed out again");
    let last = env.activity("api").pop().unwrap();
    assert_eq!(last["action"], "restore");

    // The replaced board is the backup now: the same command shows how to undo it.
    let undo = run(&env, &workspace, "", &["doctor", "--restore", "api"]);
    assert!(
        undo.stdout.contains("T-3 three: comes back as pending"),
        "{}",
        undo.stdout
    );
    let sent = run(
        &env,
        &workspace,
        "claude",
        &["--json", "send", "--to", "codex", "-s", "four"],
    )
    .json();
    assert_eq!(sent["task"]["id"], 4);
}

#[test]
fn restore_works_when_the_board_does_not_parse() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let workspace = healthy_home(&env);
    fs::write(
        env.board_path("api"),
        b"{\"schema\": 1, \"tasks\": [{\"id\": 3,",
    )
    .unwrap();
    run(&env, &workspace, "claude", &["board"]).fails(4);

    let preview = run(&env, &workspace, "", &["doctor", "--restore", "api"]);
    assert_eq!(preview.code, 1);
    assert!(
        preview.stdout.contains("board.json cannot be read")
            && preview.stdout.contains("claude send T-3"),
        "{}",
        preview.stdout
    );
    run(
        &env,
        &workspace,
        "",
        &["doctor", "--restore", "api", "--yes"],
    )
    .ok();
    let board = env.board("api");
    assert_eq!(
        tasks(&board),
        vec![(1, "working".into()), (2, "pending".into())]
    );
    assert_eq!(board["next_id"], 4, "the log shows T-3 was handed out");
    run(&env, &workspace, "claude", &["board"]).ok();
}

#[test]
fn restore_is_refused_outside_the_workspace_without_a_backup_or_project() {
    let env = TestEnv::new();
    healthy_home(&env);
    let stderr = run(
        &env,
        &env.work(),
        "",
        &["doctor", "--restore", "api", "--yes"],
    )
    .fails(2)
    .to_string();
    assert!(stderr.contains("project api is bound to"), "{stderr}");
    let stderr = run(
        &env,
        &env.work(),
        "",
        &["doctor", "--restore", "default", "--yes"],
    )
    .fails(1)
    .to_string();
    assert!(stderr.contains("no board.json.bak"), "{stderr}");
    run(&env, &env.work(), "", &["doctor", "--restore", "nope"]).fails(1);
    run(&env, &env.work(), "", &["doctor", "--yes"]).fails(1);
}

#[test]
fn serve_tokens_are_checked_once_there_are_any() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    assert!(
        doctor(&env).details("tokens", "ok").is_empty(),
        "no tokens, nothing said"
    );
    env.run("", &["token", "add", "codex"]).ok();
    let report = doctor(&env);
    report.has("tokens", "ok", &["1 token", "0 web logins", "hashes"]);
    fs::write(env.home().join("tokens.json"), b"{\"schema\": 1, \"tok").unwrap();
    let report = doctor(&env);
    assert_ne!(report.code, 0);
    report.has("tokens", "fail", &["tokens.json", "no request"]);
}

/// The api board of [`healthy_home`], changed by hand with `edit` on each task by id.
fn edit_board(env: &TestEnv, edit: impl Fn(u64, &mut Value)) {
    let mut board = env.board("api");
    for task in board["tasks"].as_array_mut().unwrap() {
        let id = task["id"].as_u64().unwrap();
        edit(id, task);
    }
    env.write_hub_text(
        "projects/api/board.json",
        &serde_json::to_string_pretty(&board).unwrap(),
    );
}

#[test]
fn tasks_that_wait_on_each_other_in_a_circle_fail_naming_them() {
    let env = TestEnv::new();
    let workspace = healthy_home(&env);
    run(
        &env,
        &workspace,
        "claude",
        &["--no-wake", "send", "--to", "codex", "-s", "four"],
    )
    .ok();
    let codex_before = env.inbox_ids("codex");
    edit_board(&env, |id, task| match id {
        2 => task["after"] = serde_json::json!([3]),
        3 => task["after"] = serde_json::json!([4]),
        4 => task["after"] = serde_json::json!([2]),
        _ => {}
    });
    // In nobody's inbox: each waits on another that cannot start.
    let codex_after = env.inbox_ids("codex");
    assert!(
        [2, 3, 4].iter().all(|id| !codex_after.contains(id)),
        "{codex_before:?} became {codex_after:?}"
    );

    let report = doctor(&env);
    assert_eq!(report.code, 1, "{:#?}", report.checks);
    // Where the wait can be taken out by hand: the board's file, or its rows.
    let board = match test_store() {
        TestStore::Files => "projects/api/board.json",
        TestStore::Postgres(_) => "the board of api",
    };
    report.has(
        "waits",
        "fail",
        &[
            "api: T-2 → T-3 → T-4 → T-2 wait on each other: none can start",
            "baton cancel T-2",
            board,
        ],
    );
    assert_eq!(report.details("waits", "fail").len(), 1);

    // Cancelling one lets the others go on: T-4 waits on a task that ended, which puts it
    // before its sender; the circle is gone.
    run(&env, &workspace, "claude", &["--no-wake", "cancel", "2"]).ok();
    doctor(&env).has("waits", "ok", &["no tasks wait on each other"]);
}

#[test]
fn names_no_agent_may_have_fail_shown_escaped() {
    if !files_only("looks at a project's files") {
        return;
    }
    let env = TestEnv::new();
    healthy_home(&env);
    edit_board(&env, |id, task| match id {
        2 => task["to"] = "codex\nok    boards  all is fine".into(),
        3 => {
            task["reviewer"] = "x\u{1b}[2J".into();
            task["thread"] = serde_json::json!([{"at": "2026-11-29T12:00:00.000Z",
                "by": "Mallory Root", "kind": "question", "text": "hi"}]);
        }
        _ => {}
    });
    let mail = env.project_dir("api").join("mail.jsonl");
    let mut lines = fs::read_to_string(&mail).unwrap_or_default();
    lines.push_str(
        &serde_json::json!({"seq": 99, "at": "2026-11-29T12:00:00.000Z", "from": "eve\u{7}",
            "to": "@all", "type": "text", "summary": "", "body": "hello", "payload": null})
        .to_string(),
    );
    lines.push('\n');
    fs::write(&mail, lines).unwrap();

    let report = doctor(&env);
    assert_eq!(report.code, 1, "{:#?}", report.checks);
    report.has(
        "names",
        "fail",
        &[
            "projects/api/board.json: names that are not valid agent names",
            "T-2 to `codex\\u{a}ok    boards  all is fine`",
            "T-3 reviewer `x\\u{1b}[2J`",
            "T-3 thread by `Mallory Root`",
        ],
    );
    report.has(
        "names",
        "fail",
        &[
            "projects/api/mail.jsonl: a name that is not a valid agent name",
            "message 99 from `eve\\u{7}`",
        ],
    );
    let text = run(&env, &env.work(), "", &["doctor"]).stdout;
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|line| line.starts_with("ok    boards  all is fine")),
        "a name's line break starts no line of the doctor's own: {text}"
    );
}

#[test]
fn a_reservation_left_by_an_ended_task_or_unreadable_is_named_with_its_way_out() {
    let env = TestEnv::new();
    env.register(&["claude", "codex"]);
    let id = env.send(
        "claude",
        "codex",
        "Dates",
        &["--touches", "src/date/**", "--no-wake"],
    );
    env.run("codex", &["claim", &id.to_string()]).ok();
    doctor(&env).has("reservations", "ok", &["1 reservation held"]);
    // By hand: the task marked completed, and a pattern that climbs out.
    let path = "projects/default/board.json";
    let mut board: Value = serde_json::from_str(&env.hub_text(path).unwrap()).unwrap();
    board["tasks"][0]["status"] = "completed".into();
    let mut climbing = board["reservations"][0].clone();
    climbing["id"] = 2.into();
    climbing["pattern"] = "../elsewhere".into();
    climbing["task"] = Value::Null;
    board["reservations"].as_array_mut().unwrap().push(climbing);
    env.write_hub_text(path, &serde_json::to_string_pretty(&board).unwrap());
    let report = doctor(&env);
    report.has(
        "reservations",
        "warn",
        &[
            "codex holds `src/date/**` for T-1, which is not an open task of theirs",
            "baton unreserve 'src/date/**' --agent codex",
        ],
    );
    report.has(
        "reservations",
        "warn",
        &["`../elsewhere` does not read as a pattern"],
    );
}
