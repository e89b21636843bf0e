//! A private hub for one test: a temporary `BATON_HOME`, a workspace directory, and helpers
//! that run the real binary in it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The path of the binary under test: the one cargo built for these tests, or the one in
/// `BATON_TEST_BINARY` (CI runs the suite again on the binary `install/build.sh` makes).
pub fn baton_bin() -> PathBuf {
    std::env::var_os("BATON_TEST_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_baton")))
}

/// The store the suite's hubs keep their state in, from `BATON_TEST_STORE`: `files` (the
/// hub home's files, the default), `postgres` (a throwaway PostgreSQL cluster this process
/// starts, and stops when it exits), or a `postgres://` URL (a cluster started elsewhere,
/// whose user may create databases). On PostgreSQL each [`TestEnv`] gets a fresh database of
/// its own. Any other value fails every test at once rather than testing the wrong thing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestStore {
    Files,
    /// On the throwaway cluster (`None`) or the one at the URL.
    Postgres(Option<String>),
}

pub fn test_store() -> TestStore {
    match std::env::var("BATON_TEST_STORE") {
        Err(std::env::VarError::NotPresent) => TestStore::Files,
        Ok(value) if value.is_empty() || value == "files" => TestStore::Files,
        Ok(value) if value == "postgres" => TestStore::Postgres(None),
        Ok(value) if value.starts_with("postgres://") || value.starts_with("postgresql://") => {
            TestStore::Postgres(Some(value))
        }
        Ok(value) => panic!(
            "BATON_TEST_STORE={value:?} is not a store this suite runs on: `files` (the \
             default), `postgres` (a throwaway cluster) or a postgres:// URL"
        ),
        Err(error) => panic!("BATON_TEST_STORE is not usable: {error}"),
    }
}

mod eventually;
pub use eventually::{
    ends_within, eventually, eventually_async, eventually_or, eventually_seeing, eventually_within,
    exit_within,
};

/// HTTP on loopback: a running `baton serve`, a small client, a recording server.
pub mod git;
pub mod http;

/// haproxy in front of a test's hubs, configured as docs/load-balancer.md says.
pub mod haproxy;

/// An agent's machine acting on a hub elsewhere through `BATON_URL`.
pub mod remote;

/// A user's machine with the agent clients' config directories, for setup.
pub mod machine;

/// The pinned agent clients, their scripted model, and a client wired by setup.
pub mod clients;

/// The throwaway PostgreSQL cluster, shared with the store's unit tests.
#[path = "../../../src/store/postgres/cluster.rs"]
pub mod cluster;

/// The password of the PostgreSQL store under test, which no output of baton may show;
/// `None` on the files (or a given cluster's URL without one).
pub fn store_password() -> Option<String> {
    match test_store() {
        TestStore::Files => None,
        TestStore::Postgres(None) => Some(cluster::password().to_string()),
        TestStore::Postgres(Some(url)) => {
            let parts = baton::store::postgres::url::StoreUrl::parse(&url).ok()?;
            parts
                .password()
                .filter(|password| !password.is_empty())
                .map(str::to_string)
        }
    }
}

/// Whether a test that reads or writes the hub's files directly runs on the store under
/// test: only on the files. `why` says what it looks at, for the line a run on another
/// store prints when it skips the test. Such a test starts with
/// `if !files_only("…") { return; }`; the rest of the suite goes through the binary (and
/// its store) alone.
pub fn files_only(why: &str) -> bool {
    let runs = test_store() == TestStore::Files;
    if !runs {
        eprintln!("skipped: the test looks at the hub's files ({why})");
    }
    runs
}

/// The Python of the pinned SDKs (`BATON_TEST_PYTHON`, made by .ci/run from
/// `requirements`), or `None` after saying that `what` was not run. CI must run it: a CI
/// run that forgot the install step fails here, loudly.
pub fn python(what: &str, requirements: &str) -> Option<std::ffi::OsString> {
    let python = std::env::var_os("BATON_TEST_PYTHON").filter(|value| !value.is_empty());
    if python.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but BATON_TEST_PYTHON is not: .ci/run must install {requirements}"
        );
        eprintln!(
            "NOT RUN: {what} needs BATON_TEST_PYTHON=<venv>/bin/python with {requirements} \
             installed (.ci/run sets it)"
        );
    }
    python
}

/// Writes the password file (`.pgpass`, mode 600) in `dir` for the database at `url`, whose
/// password is in the URL: for a client that gives the `baton` it starts no `PGPASSWORD`
/// (Codex filters its MCP servers' environment), as a user keeps it.
pub fn write_password_file(dir: &Path, url: &str) {
    use baton::store::postgres::url::{StoreUrl, percent_decode};
    let parts = StoreUrl::parse(url).expect("a postgres:// URL");
    let user = percent_decode(parts.user.expect("a user in the URL"));
    let password = percent_decode(parts.password().expect("a password in the URL"));
    let (host, port) = parts
        .hosts
        .rsplit_once(':')
        .unwrap_or((parts.hosts, "5432"));
    // The password file's fields escape `:` and `\\`.
    let escape = |field: &str| field.replace('\\', "\\\\").replace(':', "\\:");
    let path = dir.join(".pgpass");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        &path,
        format!("{host}:{port}:*:{}:{}\n", escape(&user), escape(&password)),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

pub struct TestEnv {
    pub root: tempfile::TempDir,
    /// The database this hub keeps its state in (`BATON_STORE`), on PostgreSQL.
    pub store_url: Option<String>,
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if let Some(url) = &self.store_url {
            cluster::drop_database(url);
        }
    }
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: Output) -> Run {
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        // The database's password shows in nothing baton says.
        if let Some(password) = store_password() {
            assert!(
                !run.stdout.contains(&password) && !run.stderr.contains(&password),
                "the store's password shows in the output:\nstdout: {}\nstderr: {}",
                run.stdout,
                run.stderr
            );
        }
        run
    }

    /// Asserts success and returns stdout.
    #[track_caller]
    pub fn ok(&self) -> &str {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        &self.stdout
    }

    /// Asserts success and parses stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        let text = self.ok();
        serde_json::from_str(text).unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
    }

    /// Asserts the exit code and returns stderr.
    #[track_caller]
    pub fn fails(&self, code: i32) -> &str {
        assert_eq!(
            self.code, code,
            "wrong exit code\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        &self.stderr
    }
}

impl TestEnv {
    pub fn new() -> TestEnv {
        TestEnv::with_root(tempfile::tempdir().expect("a temporary directory"))
    }

    /// A hub on a database of its own whatever store the suite runs on, for what only a
    /// shared database does (hubs that serve each other's MCP sessions); `None`, having said
    /// NOT RUN, where PostgreSQL cannot run ([`cluster::runs_here`]).
    pub fn on_postgres() -> Option<TestEnv> {
        if !cluster::runs_here() {
            return None;
        }
        let mut env = TestEnv::new();
        if env.store_url.is_none() {
            env.store_url = Some(cluster::fresh_database(None));
        }
        Some(env)
    }

    /// A hub in a directory under `parent`, for a test that needs it away from /tmp.
    pub fn new_in(parent: &Path) -> TestEnv {
        std::fs::create_dir_all(parent).unwrap();
        TestEnv::with_root(tempfile::tempdir_in(parent).expect("a temporary directory"))
    }

    fn with_root(root: tempfile::TempDir) -> TestEnv {
        // A store the suite cannot run on fails every test here, at once.
        let store_url = match test_store() {
            TestStore::Files => None,
            TestStore::Postgres(given) => Some(cluster::fresh_database(given.as_deref())),
        };
        std::fs::create_dir_all(root.path().join("work")).unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        TestEnv { root, store_url }
    }

    /// The hub home (`BATON_HOME`). On the file store it holds the hub's state too: a test
    /// that looks at those files is [`files_only`].
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The directory commands run in unless told otherwise.
    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    pub fn project_dir(&self, project: &str) -> PathBuf {
        self.home().join("projects").join(project)
    }

    pub fn board_path(&self, project: &str) -> PathBuf {
        self.project_dir(project).join("board.json")
    }

    /// A command with a clean environment: private home, no identity, no wake, no notify.
    pub fn command(&self, cwd: &Path) -> Command {
        let mut command = Command::new(baton_bin());
        command
            .current_dir(cwd)
            .env_remove("BATON_AGENT")
            .env_remove("BATON_PROJECT")
            .env_remove("BATON_NOW")
            // A hub elsewhere would take every command away from the private home.
            .env_remove("BATON_URL")
            .env_remove("BATON_TOKEN")
            .env_remove("BATON_TOKEN_FILE")
            .env("BATON_HOME", self.home())
            // Where the hub's state is: the files of the home, or this test's database.
            .env_remove("BATON_STORE")
            // A home of its own, so `setup` and `doctor` never see the real agent clients.
            .env("HOME", self.root.path().join("user-home"))
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("BATON_NOTIFY", "0")
            // The kernel's file events unless a test asks for the fallback.
            .env_remove("BATON_FILE_EVENTS")
            .env("BATON_LOCK_TIMEOUT", "20")
            .stdin(Stdio::null());
        if let Some(url) = &self.store_url {
            command.env("BATON_STORE", url);
        }
        command
    }

    /// Runs `baton --as AGENT ARGS…` in the workspace.
    pub fn run(&self, agent: &str, args: &[&str]) -> Run {
        self.run_in(&self.work(), agent, args)
    }

    pub fn run_in(&self, cwd: &Path, agent: &str, args: &[&str]) -> Run {
        let mut command = self.command(cwd);
        if !agent.is_empty() {
            command.args(["--as", agent]);
        }
        Run::from(command.args(args).output().expect("the baton binary runs"))
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, agent: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command(&self.work());
        if !agent.is_empty() {
            command.args(["--as", agent]);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        Run::from(command.args(args).output().expect("the baton binary runs"))
    }

    /// Runs `command` with `stdin` written to its standard input (closed after): for words
    /// longer than one argument may be (128 KiB on Linux), or a hook's JSON.
    pub fn run_piped(&self, mut command: Command, stdin: &str) -> Run {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the baton binary runs");
        // A command that exits without reading all of it closes the pipe early: not an error.
        let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes());
        Run::from(child.wait_with_output().expect("the baton binary runs"))
    }

    /// Runs `baton --as AGENT ARGS…` in the workspace with `stdin` as standard input.
    pub fn run_stdin(&self, agent: &str, args: &[&str], stdin: &str) -> Run {
        let mut command = self.command(&self.work());
        command.args(["--as", agent]).args(args);
        self.run_piped(command, stdin)
    }

    /// Runs in `cwd` with extra environment variables: the most general form.
    pub fn run_with(&self, cwd: &Path, agent: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = self.command(cwd);
        if !agent.is_empty() {
            command.args(["--as", agent]);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        Run::from(command.args(args).output().expect("the baton binary runs"))
    }

    /// Binds a project named `name` to the directory `workspace`, as `agent` (may be "").
    pub fn init_project(&self, agent: &str, name: &str, workspace: &Path) {
        self.init_project_with(agent, name, workspace, &[]);
    }

    /// A project `name` bound to a directory of that name beside the workspace, which it
    /// makes, as `agent` (may be ""): the directory.
    pub fn project_beside(&self, agent: &str, name: &str) -> PathBuf {
        let workspace = self.root.path().join(name);
        std::fs::create_dir_all(&workspace).unwrap();
        self.init_project(agent, name, &workspace);
        workspace
    }

    /// [`TestEnv::init_project`] with more of `project init`'s options (`--human NAME`).
    pub fn init_project_with(&self, agent: &str, name: &str, workspace: &Path, extra: &[&str]) {
        let workspace = workspace.to_str().expect("a UTF-8 test path");
        let mut args = vec!["project", "init", "--name", name, "--workspace", workspace];
        args.extend_from_slice(extra);
        self.run(agent, &args).ok();
    }

    /// Registers agents by having each run a harmless command.
    pub fn register(&self, agents: &[&str]) {
        for agent in agents {
            self.run(agent, &["whoami"]).ok();
        }
    }

    /// Sends a task and returns its number.
    pub fn send(&self, from: &str, to: &str, subject: &str, extra: &[&str]) -> u64 {
        let mut args = vec!["--json", "send", "--to", to, "--subject", subject];
        args.extend_from_slice(extra);
        let value = self.run(from, &args).json();
        value["task"]["id"].as_u64().expect("a task id")
    }

    /// The board as stored: `board.json` on the files; on PostgreSQL the same fields as
    /// baton reads them ([`TestEnv::hub_text`]).
    pub fn board(&self, project: &str) -> Value {
        let text = self
            .hub_text(&format!("projects/{project}/board.json"))
            .expect("the board exists");
        serde_json::from_str(&text).expect("the board parses")
    }

    /// The text of the hub's file at `relative` (under the home), as the store keeps it:
    /// on PostgreSQL, what baton's store reads for the file (a document's bytes; a board's
    /// fields and tasks; a log's or the mail's records, one line each), made into the
    /// file's text. `None` when there is none.
    pub fn hub_text(&self, relative: &str) -> Option<String> {
        if self.store_url.is_none() {
            return std::fs::read_to_string(self.home().join(relative)).ok();
        }
        let place = HubPlace::of(relative);
        let lines = |values: Vec<String>| (!values.is_empty()).then(|| values.concat());
        self.with_store(|store| match place {
            HubPlace::Document(document) => store
                .load_document(&document)
                .expect("the document reads")
                .map(|bytes| String::from_utf8(bytes).expect("a document is text")),
            HubPlace::Board(project) => {
                let image = store.export_project(&project).expect("the project reads");
                image.board.map(|board| {
                    let mut text = serde_json::json!({
                        "schema": board.schema,
                        "project": project,
                        "next_id": board.next_id,
                        "tasks": board.tasks,
                    });
                    // As the files have it: only when the board holds any.
                    if !board.reservations.is_empty() {
                        text["reservations"] = serde_json::json!(board.reservations);
                    }
                    serde_json::to_string_pretty(&text).unwrap() + "\n"
                })
            }
            HubPlace::Mail(project) => lines(
                store
                    .mail(&project)
                    .expect("the mail reads")
                    .iter()
                    .map(|message| serde_json::to_string(message).unwrap() + "\n")
                    .collect(),
            ),
            HubPlace::Activity(project) => lines(
                store
                    .log(&project, None, None)
                    .expect("the log reads")
                    .iter()
                    .map(|record| serde_json::to_string(record).unwrap() + "\n")
                    .collect(),
            ),
        })
    }

    /// Writes `text` as the hub's file at `relative` (see [`TestEnv::hub_text`]), for a test
    /// that plants what no command would write (hostile text, a hand-edited field): on
    /// PostgreSQL through baton's store, a document as its bytes, a board (parsed) as
    /// `doctor --restore` writes one, task for task as given.
    pub fn write_hub_text(&self, relative: &str, text: &str) {
        if self.store_url.is_none() {
            std::fs::write(self.home().join(relative), text).unwrap();
            return;
        }
        let place = HubPlace::of(relative);
        let text = text.to_string();
        self.with_store(move |store| match place {
            HubPlace::Document(document) => store
                .save_document(&document, baton::store::Edit::Write(text.into_bytes()))
                .expect("the document is written"),
            HubPlace::Board(project) => {
                let board: Value = serde_json::from_str(&text).expect("a board's JSON");
                let image = baton::store::copy::BoardImage {
                    schema: board["schema"].as_u64().expect("a schema") as u32,
                    next_id: board["next_id"].as_u64().expect("a next id"),
                    reservations: match board.get("reservations") {
                        Some(reservations) => {
                            serde_json::from_value(reservations.clone()).expect("reservations")
                        }
                        None => Vec::new(),
                    },
                    tasks: serde_json::from_value(board["tasks"].clone()).expect("tasks"),
                };
                let board = image.board(&project);
                store
                    .restore_board(&project, false, &mut |_| Ok((board.clone(), Vec::new())))
                    .expect("the board is written");
            }
            HubPlace::Mail(_) | HubPlace::Activity(_) => {
                panic!("{relative}: a test writes documents and boards only")
            }
        });
    }

    /// `BATON_STORE` as this hub's commands get it: for a test that makes a command's
    /// environment from nothing. None on the files.
    pub fn store_env(&self) -> Vec<(&'static str, String)> {
        self.store_url
            .iter()
            .map(|url| ("BATON_STORE", url.clone()))
            .collect()
    }

    /// `work` on this hub's store as the library opens it (the files of the home, or the
    /// test's database), on a thread of its own, as an async test may ask: for a test that
    /// asks what `baton serve` itself would.
    pub fn with_store<T: Send>(
        &self,
        work: impl FnOnce(&dyn baton::store::Store) -> T + Send,
    ) -> T {
        let home = baton::home::Home::new(self.home());
        let lock = baton::file::lock::LockPolicy::silent(Duration::from_secs(20));
        // Made, used and dropped (its connections closed) on that thread.
        cluster::apart(|| {
            let store: std::sync::Arc<dyn baton::store::Store> = match &self.store_url {
                Some(url) => baton::store::open(url, &home, lock).expect("the test's store"),
                None => std::sync::Arc::new(baton::store::files::FileStore::new(home, lock)),
            };
            work(&*store)
        })
    }

    /// `work` on a connection to this hub's database, on PostgreSQL (on a thread of its own,
    /// as an async test may ask); `None` on the files. Only for what no face of baton shows
    /// (the numbers of the log's rows); everything else goes through baton's store
    /// ([`TestEnv::with_store`]), so that no test holds its tables.
    pub fn in_database<T: Send>(
        &self,
        work: impl FnOnce(&mut postgres::Client) -> T + Send,
    ) -> Option<T> {
        let url = self.store_url.as_ref()?;
        Some(cluster::apart(|| {
            let mut client =
                postgres::Client::connect(url, postgres::NoTls).expect("the test database");
            work(&mut client)
        }))
    }

    /// Task numbers in `agent`'s inbox, in inbox order.
    pub fn inbox_ids(&self, agent: &str) -> Vec<u64> {
        let value = self.run(agent, &["--json", "inbox", "--peek"]).json();
        value["tasks"]
            .as_array()
            .expect("tasks list")
            .iter()
            .map(|task| task["id"].as_u64().unwrap())
            .collect()
    }

    /// The action of each activity log line of a project, in order.
    pub fn actions(&self, project: &str) -> Vec<String> {
        self.activity(project)
            .iter()
            .map(|line| line["action"].as_str().unwrap().to_string())
            .collect()
    }

    /// The activity log lines of a project, parsed.
    pub fn activity(&self, project: &str) -> Vec<Value> {
        let text = match self.store_url {
            Some(_) => self.hub_text(&format!("projects/{project}/activity.jsonl")),
            None => std::fs::read_to_string(self.project_dir(project).join("activity.jsonl")).ok(),
        };
        text.unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("activity line parses"))
            .collect()
    }
}

/// What baton keeps for a file of the hub home in a store that keeps no files.
#[derive(Debug, Clone)]
enum HubPlace {
    Document(baton::store::Document),
    Board(String),
    Mail(String),
    Activity(String),
}

impl HubPlace {
    fn of(relative: &str) -> HubPlace {
        use baton::store::Document;
        let parts: Vec<&str> = relative.split('/').collect();
        match parts.as_slice() {
            ["tokens.json"] => HubPlace::Document(Document::Tokens),
            ["alerts.json"] => HubPlace::Document(Document::Alerts),
            ["agents", file] => HubPlace::Document(Document::Agent(
                file.strip_suffix(".json")
                    .expect("an agent's file")
                    .to_string(),
            )),
            ["projects", project, "project.json"] => {
                HubPlace::Document(Document::Project(project.to_string()))
            }
            ["projects", project, "board.json"] => HubPlace::Board(project.to_string()),
            ["projects", project, "mail.jsonl"] => HubPlace::Mail(project.to_string()),
            ["projects", project, "activity.jsonl"] => HubPlace::Activity(project.to_string()),
            _ => panic!("{relative} is not a file the store keeps"),
        }
    }
}

/// Far longer than any command run under it needs, short enough that a hang fails the test
/// instead of blocking the suite.
pub const WATCHDOG: Duration = Duration::from_secs(10);

/// Waits for `child` under the watchdog: kills it and fails the test if it is still running
/// after [`WATCHDOG`].
#[track_caller]
pub fn finish(child: Child, what: &str) -> Run {
    finish_within(child, WATCHDOG, what)
}

/// Starts `command` with its stdout and stderr piped, for [`finish`].
pub fn spawn(mut command: Command) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the baton binary runs")
}

/// `baton --as AGENT ARGS…` in the workspace, under the watchdog.
#[track_caller]
pub fn run_guarded(env: &TestEnv, agent: &str, args: &[&str], vars: &[(&str, &str)]) -> Run {
    let mut command = env.command(&env.work());
    command.args(["--as", agent]).args(args);
    for (key, value) in vars {
        command.env(key, value);
    }
    finish(spawn(command), &args.join(" "))
}

/// The kinds of the entries in a task's thread, as `show --json` (or MCP `show`) gives it.
pub fn thread_kinds(task: &Value) -> Vec<&str> {
    task["thread"]
        .as_array()
        .expect("a thread")
        .iter()
        .map(|entry| entry["kind"].as_str().unwrap())
        .collect()
}

/// Runs `command` to its end (any program, set up as the caller likes).
pub fn run(command: &mut Command) -> Run {
    Run::from(command.output().expect("the program runs"))
}

/// Waits for `child` to end, for `limit` at most (a hang check, not a measure of speed):
/// past it, kills it and fails the test saying `what` hangs.
#[track_caller]
pub fn finish_within(mut child: Child, limit: Duration, what: &str) -> Run {
    exit_within(&mut child, limit, what, String::new);
    Run::from(child.wait_with_output().expect("the child's output"))
}

/// The lines `child` writes to its piped stdout, as they come, read on a thread of their own
/// (which ends with the output or when the receiver is dropped).
pub fn stdout_lines(child: &mut Child) -> Receiver<String> {
    lines_of(child.stdout.take().expect("stdout is piped"))
}

/// The lines `child` writes to its piped stderr, as they come (see [`stdout_lines`]).
pub fn stderr_lines(child: &mut Child) -> Receiver<String> {
    lines_of(child.stderr.take().expect("stderr is piped"))
}

fn lines_of(output: impl std::io::Read + Send + 'static) -> Receiver<String> {
    use std::io::{BufRead, BufReader};
    let (lines, arrived) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    arrived
}

/// The first line from `lines` that holds `needle`, within 90 s; the lines before it are
/// dropped.
#[track_caller]
pub fn line_with(lines: &Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut said = Vec::new();
    while Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(200)) {
            if line.contains(needle) {
                return line;
            }
            said.push(line);
        }
    }
    panic!("no line with {needle:?} within 90 s; said: {said:#?}");
}

/// Waits for every one of `children` and asserts that each exited 0.
pub fn all_succeed(children: Vec<Child>) {
    for child in children {
        let output = child.wait_with_output().expect("the child runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Holds the exclusive lock on `path` as another baton process would, until dropped.
pub struct HeldLock(std::fs::File);

impl HeldLock {
    pub fn on(path: &Path) -> HeldLock {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        fs4::FileExt::lock(&file).unwrap();
        HeldLock(file)
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let _ = fs4::FileExt::unlock(&self.0);
    }
}

/// Task `id` of a list of tasks (`board.json`'s `tasks`, or a board as `--json` and the API
/// give it), cloned; panics naming the list when it is not there.
pub fn task_in(tasks: &Value, id: u64) -> Value {
    tasks
        .as_array()
        .expect("a list of tasks")
        .iter()
        .find(|task| task["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("T-{id} is not in {tasks:#}"))
}

/// An `agents --json` listing without how many seconds ago each agent was seen: that moves
/// on with the clock between two looks, while `last_seen` says the same thing exactly.
pub fn without_ages(mut listed: Value) -> Value {
    if let Some(agents) = listed["agents"].as_array_mut() {
        for agent in agents {
            if let Some(fields) = agent.as_object_mut() {
                fields.remove("seen_seconds_ago");
            }
        }
    }
    listed
}

/// A wake command that writes down who it was started as, and exits.
pub fn recording_wake_command(dir: &Path) -> String {
    let script = dir.join("record-wake.sh");
    std::fs::write(
        &script,
        "printf '%s\\n' \"$BATON_AGENT\" >>\"$(dirname \"$0\")/woken\"\n",
    )
    .unwrap();
    script.to_str().unwrap().to_string()
}

/// A wake command that writes down who it was started as and in which directory (`AGENT
/// DIR`, the directory with its links resolved), and exits.
pub fn recording_where_woken(dir: &Path) -> String {
    let script = dir.join("record-where-woken.sh");
    std::fs::write(
        &script,
        "printf '%s %s\\n' \"$BATON_AGENT\" \"$(pwd -P)\" >>\"$(dirname \"$0\")/woken\"\n",
    )
    .unwrap();
    script.to_str().unwrap().to_string()
}
