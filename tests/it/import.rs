//! `baton import`: a roundtable board and an agent-bridge database, written here from the
//! formats `shared/ANCHORS.md` records, carried onto a project; twice gives the same board.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{TestEnv, files_only, run_guarded, task_in, thread_kinds};

/// A roundtable v1.1 board: open and finished tasks, the words kept as keys of their own, a
/// key of the board's own that baton does not know, hostile text in a body, a subject of two
/// lines and an id holding an escape, which baton refuses, and an id given twice.
fn roundtable_board(dir: &Path) -> PathBuf {
    let board = json!({
        "version": "1.1",
        "tasks": [
            {"id": "rt-a1", "subject": "fix the parser", "body": "it drops the last line",
             "from": "claude", "to": "codex", "status": "pending", "skill": "",
             "created": "2026-11-01T09:00:00Z", "updated": "2026-11-01T09:00:00Z",
             "files": ["src/parse.rs"], "project": "api"},
            {"id": "rt-a2", "subject": "which API?", "body": "",
             "from": "claude", "to": "Gemini CLI", "status": "input_required", "skill": "rust",
             "created": "2026-11-02T09:00:00Z", "updated": "2026-11-02T10:00:00Z",
             "files": [], "project": "api", "question": "v1 or v2?"},
            {"id": "rt-a3", "subject": "ship it", "body": "\u{1b}[31mred\u{1b}[0m",
             "from": "codex", "to": "claude", "status": "completed", "skill": "",
             "created": "2026-11-03T09:00:00Z", "updated": "2026-11-03T11:00:00Z",
             "files": [], "project": "api", "result": "shipped in 1.2",
             "review_note": "looks good"},
            {"id": "rt-a4", "subject": "redo the docs", "body": "",
             "from": "claude", "to": "codex", "status": "changes_requested", "skill": "",
             "created": "2026-11-04T09:00:00Z", "updated": "2026-11-04T12:00:00Z",
             "files": [], "project": "api", "review_note": "cover the errors too"},
            {"id": "rt-a5", "subject": "a subject\nwith two lines", "body": "",
             "from": "claude", "to": "codex", "status": "pending", "skill": "",
             "created": "2026-11-05T09:00:00Z", "updated": "2026-11-05T09:00:00Z",
             "files": [], "project": "api"},
            {"id": "rt-\u{1b}[2J", "subject": "an id with an escape", "body": "",
             "from": "claude", "to": "codex", "status": "pending", "skill": "",
             "created": "2026-11-06T09:00:00Z", "updated": "2026-11-06T09:00:00Z",
             "files": [], "project": "api"},
            {"id": "rt-a1", "subject": "the same id again", "body": "",
             "from": "claude", "to": "codex", "status": "pending", "skill": "",
             "created": "2026-11-06T09:00:00Z", "updated": "2026-11-06T09:00:00Z",
             "files": [], "project": "api"}
        ]
    });
    let path = dir.join("board.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&board).unwrap()).unwrap();
    path
}

fn roundtable_registry(dir: &Path) -> PathBuf {
    let registry = json!({"agents": [
        {"name": "codex", "skills": ["rust", "tests"], "strengths": "careful",
         "wake": ["codex", "exec", "--full-auto", "rm -rf /"]},
        {"name": "claude", "skills": [], "strengths": "", "wake": []}
    ]});
    let path = dir.join("agents.json");
    std::fs::write(&path, serde_json::to_vec(&registry).unwrap()).unwrap();
    path
}

/// Each task of the board as `subject: status, from → to`, in board order.
fn summary(board: &Value) -> Vec<String> {
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            let field = |name: &str| task[name].as_str().unwrap_or_default().to_string();
            format!(
                "{}: {}, {} → {}",
                field("subject"),
                field("status"),
                field("from"),
                field("to")
            )
        })
        .collect()
}

fn task_with_subject<'a>(board: &'a Value, subject: &str) -> &'a Value {
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|task| task["subject"] == subject)
        .unwrap_or_else(|| panic!("no task `{subject}` on the board"))
}

#[test]
fn a_roundtable_board_comes_over_whole_and_twice_adds_nothing() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let board_path = roundtable_board(&env.work());
    let registry = roundtable_registry(&env.work());
    let board_arg = board_path.to_str().unwrap();
    let registry_arg = registry.to_str().unwrap();

    let import = |extra: &[&str]| {
        let mut args = vec![
            "--json",
            "import",
            "roundtable",
            board_arg,
            "--agents",
            registry_arg,
        ];
        args.extend_from_slice(extra);
        env.run("ada", &args).json()
    };
    let dry = import(&["--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["tasks"].as_array().unwrap().len(), 4);
    assert!(
        !env.board_path("default").exists(),
        "a dry run writes no board"
    );
    env.run("", &["agent", "show", "codex"]).fails(1);

    let first = import(&[]);
    assert_eq!(
        first["tasks"], dry["tasks"],
        "the dry run said what was done"
    );
    assert_eq!(first["already"], 0);
    let skipped = first["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3, "{skipped:?}");
    assert_eq!(skipped[0]["what"], "task rt-a5");
    assert!(skipped[0]["why"].as_str().unwrap().contains("one line"));
    assert_eq!(skipped[1]["what"], "task rt-\u{1b}[2J");
    assert!(
        skipped[1]["why"]
            .as_str()
            .unwrap()
            .starts_with("the id in its source must be one line"),
        "{skipped:?}"
    );
    assert_eq!(skipped[2]["what"], "task rt-a1");
    assert_eq!(
        skipped[2]["why"],
        "an earlier task of the source has its id"
    );
    assert_eq!(first["wake_not_carried"], json!(["codex"]));
    assert_eq!(first["renamed"], json!([["Gemini CLI", "gemini-cli"]]));

    // The finished task went on to the archive, as every finished task a week old does.
    let board = env.board("default");
    assert_eq!(
        summary(&board),
        vec![
            "fix the parser: pending, claude → codex",
            "which API?: input_required, claude → gemini-cli",
            "redo the docs: changes_requested, claude → codex",
        ]
    );
    let parser = task_with_subject(&board, "fix the parser");
    assert_eq!(parser["files"], json!(["src/parse.rs"]));
    assert_eq!(parser["body"], "it drops the last line");
    assert_eq!(parser["created_at"], "2026-11-01T09:00:00.000Z");
    assert_eq!(
        parser["imported"],
        json!({"from": "roundtable", "project": "api", "id": "rt-a1"})
    );
    let question = task_with_subject(&board, "which API?");
    assert_eq!(thread_kinds(question), vec!["question"]);
    assert_eq!(question["thread"][0]["by"], "gemini-cli");
    assert_eq!(question["thread"][0]["text"], "v1 or v2?");
    assert_eq!(question["skill"], "rust");
    let shipped_id = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|task| task["subject"] == "ship it")
        .expect("the finished task was carried over")["id"]
        .to_string();
    let shipped = env.run("ada", &["--json", "show", &shipped_id]).json();
    assert_eq!(shipped["archived"], true, "{shipped}");
    assert_eq!(shipped["status"], "completed");
    assert_eq!(thread_kinds(&shipped), vec!["result", "approval"]);
    assert_eq!(shipped["result"], "shipped in 1.2");
    assert_eq!(shipped["body"], "\u{1b}[31mred\u{1b}[0m");
    let shown = env.run("ada", &["show", &shipped_id]).ok().to_string();
    assert!(
        !shown.contains('\u{1b}') && shown.contains("\\u{1b}"),
        "{shown}"
    );
    let docs = task_with_subject(&board, "redo the docs");
    assert_eq!(thread_kinds(docs), vec!["changes_request"]);

    // Whose turn it is follows from the statuses carried over.
    assert_eq!(
        env.inbox_ids("claude").len(),
        1,
        "the question waits on its sender"
    );
    assert_eq!(
        env.inbox_ids("codex").len(),
        2,
        "pending and changes_requested"
    );

    // One `import` line per task, by whoever ran it.
    let imports: Vec<Value> = env
        .activity("default")
        .into_iter()
        .filter(|line| line["action"] == "import")
        .collect();
    assert_eq!(imports.len(), 4);
    assert!(imports.iter().all(|line| line["actor"] == "ada"));

    // Agents came over, without any wake command.
    let codex = env.run("", &["--json", "agent", "show", "codex"]).json();
    assert_eq!(codex["skills"], json!(["rust", "tests"]));
    assert!(codex["wake"].is_null(), "{codex}");
    env.run("", &["agent", "show", "gemini-cli"]).ok();

    // Twice (the archived task included): nothing is added, not a byte of the board
    // changes, no line is logged.
    let bytes = std::fs::read(env.board_path("default")).unwrap();
    let lines = env.activity("default").len();
    let second = import(&[]);
    assert_eq!(second["tasks"], json!([]));
    assert_eq!(second["already"], 4);
    assert_eq!(std::fs::read(env.board_path("default")).unwrap(), bytes);
    assert_eq!(env.activity("default").len(), lines);
    let said = env
        .run("ada", &["import", "roundtable", board_arg])
        .ok()
        .to_string();
    let doctor = env.run("ada", &["doctor"]).stdout;
    assert!(doctor.contains("the log and the board agree"), "{doctor}");
    assert!(
        said.starts_with("carried 0 tasks onto default (4 imported before"),
        "{said}"
    );
    // The source's words in what was not carried over are shown escaped, never raw.
    assert!(
        !said.contains('\u{1b}') && said.contains("not carried over: task rt-\\u{1b}[2J"),
        "{said}"
    );
}

/// An agent-bridge v2 database with the columns ANCHORS.md lists, two projects in it.
fn agent_bridge_database(path: &Path) {
    let connection = rusqlite::Connection::open(path).unwrap();
    connection
        .execute_batch(
            "CREATE TABLE projects (id TEXT PRIMARY KEY, path TEXT NOT NULL, created_at TEXT);
             CREATE TABLE agents (name TEXT PRIMARY KEY, capabilities_json TEXT NOT NULL DEFAULT '[]',
               last_seen TEXT, launch_argv_json TEXT NOT NULL DEFAULT '[]',
               integration_health TEXT NOT NULL DEFAULT 'unknown');
             CREATE TABLE tasks (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, sender TEXT NOT NULL,
               assignee TEXT NOT NULL, state TEXT NOT NULL, subject TEXT NOT NULL,
               body TEXT NOT NULL DEFAULT '', priority INTEGER NOT NULL DEFAULT 0,
               revision INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE task_events (id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL,
               revision INTEGER NOT NULL, kind TEXT NOT NULL, actor TEXT,
               payload_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
             CREATE TABLE task_dependencies (task_id TEXT NOT NULL, depends_on_task_id TEXT NOT NULL);
             INSERT INTO projects VALUES ('web', '/src/web', '2026-10-01T00:00:00Z'),
                                         ('ops', '/src/ops', '2026-10-01T00:00:00Z');
             INSERT INTO agents (name, capabilities_json, launch_argv_json) VALUES
               ('claude', '[\"review\"]', '[]'),
               ('codex', '[\"rust\", {\"name\": \"tests\"}]', '[\"codex\", \"exec\"]');
             INSERT INTO tasks VALUES
               ('9f1c', 'web', 'claude', 'codex', 'completed', 'build the login', 'with OAuth', 0, 4,
                '2026-11-10T08:00:00Z', '2026-11-10T12:00:00Z'),
               ('a77e', 'web', 'claude', 'codex', 'pending', 'add logout', '', 1, 0,
                '2026-11-10T09:00:00Z', '2026-11-10T09:00:00Z'),
               ('b001', 'web', 'codex', 'claude', 'review_requested', 'review the CSS', '', 2, 2,
                '2026-11-11T09:00:00Z', '2026-11-11T10:00:00Z'),
               ('c0de', 'ops', 'claude', 'codex', 'working', 'rotate keys', '', 0, 1,
                '2026-11-12T09:00:00Z', '2026-11-12T09:30:00Z');
             INSERT INTO task_events (task_id, revision, kind, actor, payload_json, created_at) VALUES
               ('9f1c', 0, 'task.created', 'claude', '{\"body\": \"with OAuth\", \"subject\": \"build the login\"}', '2026-11-10T08:00:00Z'),
               ('9f1c', 1, 'task.claim', 'codex', '{\"body\": \"\", \"from\": \"pending\", \"to\": \"working\"}', '2026-11-10T08:10:00Z'),
               ('9f1c', 2, 'task.question', 'codex', '{\"body\": \"which provider?\"}', '2026-11-10T08:20:00Z'),
               ('9f1c', 3, 'task.answer', 'claude', '{\"body\": \"GitHub\"}', '2026-11-10T08:30:00Z'),
               ('9f1c', 4, 'task.done', 'codex', '{\"body\": \"merged as #12\"}', '2026-11-10T12:00:00Z'),
               ('b001', 1, 'task.claim', 'claude', '{\"body\": \"\"}', '2026-11-11T09:10:00Z'),
               ('b001', 2, 'task.request_review', 'claude', '{\"body\": \"ready\"}', '2026-11-11T10:00:00Z'),
               ('b001', 3, 'task.pinged', 'claude', '{\"body\": \"ping\"}', '2026-11-11T10:05:00Z');
             INSERT INTO task_dependencies VALUES ('a77e', '9f1c');",
        )
        .unwrap();
}

#[test]
fn an_agent_bridge_database_comes_over_read_only_and_twice_adds_nothing() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let database = env.work().join("bridge.db");
    agent_bridge_database(&database);
    let before = std::fs::read(&database).unwrap();
    let path = database.to_str().unwrap();

    let which = env
        .run("ada", &["import", "agent-bridge", path])
        .fails(1)
        .to_string();
    assert!(which.contains("holds the projects ops, web"), "{which}");
    assert!(which.contains("--source-project"), "{which}");
    let unknown = env
        .run(
            "ada",
            &["import", "agent-bridge", path, "--source-project", "nope"],
        )
        .fails(1)
        .to_string();
    assert!(unknown.contains("no project `nope`"), "{unknown}");

    let import = |project: &str| {
        env.run(
            "ada",
            &[
                "--json",
                "import",
                "agent-bridge",
                path,
                "--source-project",
                project,
            ],
        )
        .json()
    };
    let first = import("web");
    assert_eq!(first["tasks"].as_array().unwrap().len(), 3);
    // The event of a kind baton's thread has not is named, not dropped in silence.
    assert_eq!(
        first["skipped"][0]["what"],
        "task b001: a `task.pinged` event"
    );
    assert_eq!(first["wake_not_carried"], json!(["codex"]));

    let board = env.board("default");
    assert_eq!(
        summary(&board),
        vec![
            "build the login: completed, claude → codex",
            "add logout: pending, claude → codex",
            "review the CSS: review_requested, codex → claude",
        ]
    );
    let login = task_with_subject(&board, "build the login");
    assert_eq!(
        thread_kinds(login),
        vec!["claim", "question", "answer", "result"]
    );
    assert_eq!(login["thread"][1]["text"], "which provider?");
    assert_eq!(login["thread"][2]["by"], "claude");
    assert_eq!(login["thread"][2]["at"], "2026-11-10T08:30:00.000Z");
    assert_eq!(login["result"], "merged as #12");
    assert_eq!(login["body"], "with OAuth");
    let logout = task_with_subject(&board, "add logout");
    assert_eq!(logout["priority"], "high");
    assert_eq!(
        logout["after"],
        json!([login["id"]]),
        "the dependency is named by its new id"
    );
    let css = task_with_subject(&board, "review the CSS");
    assert_eq!(css["priority"], "urgent");
    assert_eq!(thread_kinds(css), vec!["claim", "review_request"]);
    let codex = env.run("", &["--json", "agent", "show", "codex"]).json();
    assert_eq!(codex["skills"], json!(["rust", "tests"]));
    assert!(codex["wake"].is_null());

    // Twice: the same board. The database was only read.
    let bytes = std::fs::read(env.board_path("default")).unwrap();
    let second = import("web");
    assert_eq!(second["tasks"], json!([]));
    assert_eq!(second["already"], 3);
    assert_eq!(std::fs::read(env.board_path("default")).unwrap(), bytes);
    assert_eq!(std::fs::read(&database).unwrap(), before);

    // The other project carries over beside it; its working task has a live lease.
    let ops = import("ops");
    assert_eq!(ops["tasks"].as_array().unwrap().len(), 1);
    let board = env.board("default");
    let keys = task_with_subject(&board, "rotate keys");
    assert_eq!(keys["status"], "working");
    assert!(keys["lease_expires_at"].is_string());
}

#[test]
fn what_is_not_a_board_is_refused_in_one_line_and_changes_nothing() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let missing = env.work().join("nowhere.json");
    let error = env
        .run("ada", &["import", "roundtable", missing.to_str().unwrap()])
        .fails(1)
        .to_string();
    assert!(error.starts_with("error: cannot read "), "{error}");

    let not_json = env.work().join("notes.txt");
    std::fs::write(&not_json, "just words").unwrap();
    let error = env
        .run("ada", &["import", "roundtable", not_json.to_str().unwrap()])
        .fails(1)
        .to_string();
    assert!(error.contains("is not roundtable's board"), "{error}");

    let error = env
        .run(
            "ada",
            &["import", "agent-bridge", not_json.to_str().unwrap()],
        )
        .fails(1)
        .to_string();
    assert!(error.contains("is not agent-bridge's database"), "{error}");

    // Who carries a board over is named in its log: no identity, no import.
    let board = roundtable_board(&env.work());
    let error = env
        .run("", &["import", "roundtable", board.to_str().unwrap()])
        .fails(1)
        .to_string();
    assert!(error.contains("no identity"), "{error}");
    assert!(!env.board_path("default").exists());
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_the_source_is_refused_without_hanging() {
    let env = TestEnv::new();
    let fifo = env.work().join("board.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    for format in ["roundtable", "agent-bridge"] {
        let error = env
            .run("ada", &["import", format, fifo.to_str().unwrap()])
            .fails(1)
            .to_string();
        assert!(error.starts_with("error: cannot read "), "{error}");
    }
}

/// A roundtable task of `from` to `to` with `status`, its id and subject `id`.
fn roundtable_task(id: &str, from: &str, to: &str, status: &str) -> Value {
    json!({"id": id, "subject": id, "body": "", "from": from, "to": to, "status": status,
           "skill": "", "created": "2026-11-01T09:00:00Z", "updated": "2026-11-01T09:00:00Z",
           "files": [], "project": "api"})
}

fn write_roundtable(dir: &Path, tasks: Vec<Value>) -> PathBuf {
    let path = dir.join("board.json");
    std::fs::write(&path, serde_json::to_vec(&json!({"tasks": tasks})).unwrap()).unwrap();
    path
}

#[test]
fn a_status_baton_does_not_know_is_named_escaped_with_those_it_knows() {
    let env = TestEnv::new();
    let long = "x".repeat(500);
    let board = write_roundtable(
        &env.work(),
        vec![
            roundtable_task("rt-1", "claude", "codex", "paused\u{1b}[2J"),
            roundtable_task("rt-2", "claude", "codex", &long),
            roundtable_task("rt-3", "claude", "codex", "pending"),
        ],
    );
    let imported = env
        .run(
            "ada",
            &["--json", "import", "roundtable", board.to_str().unwrap()],
        )
        .json();
    assert_eq!(imported["tasks"].as_array().unwrap().len(), 1);
    let why = |index: usize| {
        imported["skipped"][index]["why"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let paused = why(0);
    assert!(
        paused.starts_with("its status `paused\\u{1b}[2J` is not one baton knows (pending, "),
        "{paused}"
    );
    assert!(paused.contains("changes_requested") && paused.ends_with("canceled)"));
    assert!(!paused.contains('\u{1b}'), "{paused}");
    let cut = why(1);
    assert!(cut.contains(&format!("`{}…`", "x".repeat(40))), "{cut}");
    assert!(cut.len() < 250, "the status is cut short: {cut}");
    let said = env
        .run("ada", &["import", "roundtable", board.to_str().unwrap()])
        .ok()
        .to_string();
    assert!(
        said.contains("not carried over: task rt-1: its status `paused\\u{1b}[2J` is not one"),
        "{said}"
    );
    assert!(!said.contains('\u{1b}'), "{said}");

    let database = env.work().join("bridge.db");
    let connection = rusqlite::Connection::open(&database).unwrap();
    bridge_schema(&connection);
    connection
        .execute_batch(
            "INSERT INTO tasks VALUES
               ('h1', 'web', 'claude', 'codex', 'on_hold', 'wait', '', 0, 0,
                '2026-11-10T08:00:00Z', '2026-11-10T08:00:00Z');",
        )
        .unwrap();
    drop(connection);
    let imported = env
        .run(
            "ada",
            &[
                "--json",
                "import",
                "agent-bridge",
                database.to_str().unwrap(),
            ],
        )
        .json();
    let why = imported["skipped"][0]["why"].as_str().unwrap();
    assert!(
        why.starts_with("its state `on_hold` is not one baton knows (pending, working,"),
        "{why}"
    );
}

/// agent-bridge v2's tables, empty.
fn bridge_schema(connection: &rusqlite::Connection) {
    connection
        .execute_batch(
            "CREATE TABLE projects (id TEXT PRIMARY KEY, path TEXT NOT NULL, created_at TEXT);
             CREATE TABLE agents (name TEXT PRIMARY KEY, capabilities_json TEXT NOT NULL DEFAULT '[]',
               last_seen TEXT, launch_argv_json TEXT NOT NULL DEFAULT '[]');
             CREATE TABLE tasks (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, sender TEXT NOT NULL,
               assignee TEXT NOT NULL, state TEXT NOT NULL, subject TEXT NOT NULL,
               body TEXT NOT NULL DEFAULT '', priority INTEGER NOT NULL DEFAULT 0,
               revision INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
             CREATE TABLE task_events (id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL,
               revision INTEGER NOT NULL, kind TEXT NOT NULL, actor TEXT,
               payload_json TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
             CREATE TABLE task_dependencies (task_id TEXT NOT NULL, depends_on_task_id TEXT NOT NULL);",
        )
        .unwrap();
}

#[test]
fn a_database_whose_tasks_are_a_view_is_refused_at_once() {
    if !files_only("reads board.json") {
        return;
    }
    let env = TestEnv::new();
    let database = env.work().join("bridge.db");
    let connection = rusqlite::Connection::open(&database).unwrap();
    // Every table agent-bridge has, but `tasks` is a view with no end: reading it would
    // never finish.
    connection
        .execute_batch(
            "CREATE TABLE projects (id TEXT PRIMARY KEY, path TEXT NOT NULL, created_at TEXT);
             CREATE TABLE agents (name TEXT PRIMARY KEY, capabilities_json TEXT, last_seen TEXT,
               launch_argv_json TEXT);
             CREATE TABLE task_events (id INTEGER PRIMARY KEY, task_id TEXT, revision INTEGER,
               kind TEXT, actor TEXT, payload_json TEXT, created_at TEXT);
             CREATE TABLE task_dependencies (task_id TEXT, depends_on_task_id TEXT);
             CREATE VIEW tasks AS
               WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
               SELECT 't' || i AS id, 'p' || i AS project_id, 'claude' AS sender,
                 'codex' AS assignee, 'pending' AS state, 'endless' AS subject, '' AS body,
                 0 AS priority, 0 AS revision, '2026-11-10T08:00:00Z' AS created_at,
                 '2026-11-10T08:00:00Z' AS updated_at
               FROM n;",
        )
        .unwrap();
    drop(connection);
    let path = database.to_str().unwrap();
    let run = run_guarded(&env, "ada", &["import", "agent-bridge", path], &[]);
    let error = run.fails(1);
    let first = error.lines().next().unwrap();
    assert_eq!(
        first,
        format!("error: {path} is not agent-bridge's database: `tasks` is a view, not a table"),
        "{error}"
    );
    assert!(!env.board_path("default").exists(), "nothing is written");
    assert!(env.activity("default").is_empty());
}

#[test]
fn names_that_differ_in_the_source_stay_different_agents() {
    let env = TestEnv::new();
    let board = write_roundtable(
        &env.work(),
        vec![
            roundtable_task("rt-1", "lead", "Alice", "pending"),
            roundtable_task("rt-2", "lead", "ALICE!", "pending"),
            roundtable_task("rt-3", "lead", "alice", "pending"),
            roundtable_task("rt-4", "Alice", "lead", "pending"),
        ],
    );
    let path = board.to_str().unwrap();
    let imported = env
        .run(
            "ada",
            &["--json", "import", "roundtable", path, "--dry-run"],
        )
        .json();
    // `alice` is valid as written and keeps its name; the names made over from the others
    // take the first free ones, in the order the source names them.
    assert_eq!(
        imported["renamed"],
        json!([["Alice", "alice-2"], ["ALICE!", "alice-3"]])
    );
    let said = env
        .run("ada", &["import", "roundtable", path])
        .ok()
        .to_string();
    assert!(said.contains("renamed: `Alice` is alice-2 here"), "{said}");
    assert!(said.contains("renamed: `ALICE!` is alice-3 here"), "{said}");
    let board = env.board("default");
    assert_eq!(
        summary(&board),
        vec![
            "rt-1: pending, lead → alice-2",
            "rt-2: pending, lead → alice-3",
            "rt-3: pending, lead → alice",
            "rt-4: pending, alice-2 → lead",
        ]
    );
    assert_eq!(env.inbox_ids("alice").len(), 1);
    assert_eq!(env.inbox_ids("alice-2").len(), 1);
    assert_eq!(env.inbox_ids("alice-3").len(), 1);
}

/// Source tasks of project `web` for codex, by id, in the order given.
fn bridge_tasks(connection: &rusqlite::Connection, tasks: &[(&str, &str)]) {
    for (place, (id, state)) in tasks.iter().enumerate() {
        connection
            .execute(
                "INSERT INTO tasks VALUES (?1, 'web', 'claude', 'codex', ?2, ?1, '', 0, 0, ?3, ?3)",
                rusqlite::params![id, state, format!("2026-11-10T08:00:{place:02}Z")],
            )
            .unwrap();
    }
}

#[test]
fn waits_that_close_a_circle_or_name_no_task_carried_are_dropped_and_named() {
    let env = TestEnv::new();
    let database = env.work().join("bridge.db");
    let connection = rusqlite::Connection::open(&database).unwrap();
    bridge_schema(&connection);
    bridge_tasks(
        &connection,
        &[
            ("c1", "pending"),
            ("c2", "pending"),
            ("c3", "pending"),
            ("self", "pending"),
            ("s1", "on_hold"),
            ("d1", "pending"),
            ("d2", "pending"),
            ("e1", "pending"),
        ],
    );
    connection
        .execute_batch(
            "INSERT INTO task_dependencies VALUES
               ('c1', 'c2'), ('c2', 'c3'), ('c3', 'c1'), ('self', 'self'),
               ('d1', 's1'), ('d2', 'gone'), ('e1', 'c1'), ('e1', 'c1');",
        )
        .unwrap();
    drop(connection);
    let path = database.to_str().unwrap();
    let imported = env
        .run("ada", &["--json", "import", "agent-bridge", path])
        .json();
    let ids: std::collections::HashMap<String, u64> = imported["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["origin"]["id"].as_str().unwrap().to_string(),
                task["id"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(ids.len(), 7, "{imported}");
    let skipped: Vec<(String, String)> = imported["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skip| {
            (
                skip["what"].as_str().unwrap().to_string(),
                skip["why"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let whats: Vec<&str> = skipped.iter().map(|(what, _)| what.as_str()).collect();
    assert_eq!(
        whats,
        vec![
            "task s1",
            "task c3: its wait for c1",
            "task self: its wait for self",
            "task d1: its wait for s1",
            "task d2: its wait for gone",
        ],
        "{skipped:#?}"
    );
    assert_eq!(
        skipped[1].1,
        format!(
            "it would close the circle c3 → c1 → c2 → c3, in which no task can start; T-{} \
             does not wait for T-{}",
            ids["c3"], ids["c1"]
        )
    );
    assert!(
        skipped[2]
            .1
            .starts_with("it would close the circle self → self")
    );
    assert!(
        skipped[3].1.contains("no task s1 is carried over"),
        "{}",
        skipped[3].1
    );

    // The circle is broken where it closed: c3 can start, c2 waits on it and c1 on c2; the
    // tasks whose wait named nothing carried over can start too.
    let board = env.board("default");
    let after = |origin: &str| task_in(&board["tasks"], ids[origin])["after"].clone();
    assert_eq!(after("c1"), json!([ids["c2"]]));
    assert_eq!(after("c2"), json!([ids["c3"]]));
    assert_eq!(after("c3"), json!([]));
    assert_eq!(after("self"), json!([]));
    assert_eq!(after("d1"), json!([]));
    assert_eq!(after("d2"), json!([]));
    assert_eq!(after("e1"), json!([ids["c1"]]), "named once");
    let mut inbox = env.inbox_ids("codex");
    inbox.sort();
    let mut free: Vec<u64> = ["c3", "self", "d1", "d2"]
        .iter()
        .map(|id| ids[*id])
        .collect();
    free.sort();
    assert_eq!(inbox, free);
    let said = env
        .run("ada", &["import", "agent-bridge", path, "--dry-run"])
        .ok()
        .to_string();
    assert!(said.starts_with("would carry 0 tasks"), "{said}");
    assert!(
        !said.contains("its wait for"),
        "named once, when carried: {said}"
    );
}
