//! `baton store copy` between the files and PostgreSQL, and `doctor` on a database (SPEC
//! 16): a files home moved up to a database and copied back down holds what it held, as
//! baton itself shows it and byte for byte; a second copy writes nothing; a token still logs
//! in on a hub served from a copy; a destination that holds something else is refused; and
//! the database's password shows nowhere. Each test keeps its state in stores of its own
//! (a files home and a database of its own), whatever store the rest of the suite runs on.

use std::collections::BTreeMap;
use std::path::Path;

use baton::store::postgres::schema::SCHEMA;
use serde_json::Value;

use crate::common::http::Served;
use crate::common::{Run, TestEnv, TestStore, cluster, test_store};

/// Every command of these tests runs at this moment, so that what a look writes (an agent's
/// last seen) is the same in every store.
const NOW: &str = "2026-11-20T10:00:00Z";

/// A database of this test's own: its URL with the password (for `BATON_STORE` and the
/// test's own connection), the same without it (for the command line, with the password in
/// `PGPASSWORD`), and the password.
struct Database {
    url: String,
    bare: String,
    password: String,
}

impl Database {
    /// A fresh database, or `None` (NOT RUN said) where no PostgreSQL runs.
    fn fresh() -> Option<Database> {
        if !cluster::runs_here() {
            return None;
        }
        let given = match test_store() {
            TestStore::Postgres(Some(url)) => Some(url),
            _ => None,
        };
        let url = cluster::fresh_database(given.as_deref());
        let (scheme, rest) = url.split_once("://").unwrap();
        let (authority, tail) = rest.split_once('/').unwrap();
        let (bare, password) = match authority.rsplit_once('@') {
            Some((user_info, host)) => match user_info.split_once(':') {
                Some((user, password)) => (
                    format!("{scheme}://{user}@{host}/{tail}"),
                    password.to_string(),
                ),
                None => (url.clone(), String::new()),
            },
            None => (url.clone(), String::new()),
        };
        Some(Database {
            url,
            bare,
            password,
        })
    }

    /// The URL as baton names it: no password, no parameters.
    fn shown(&self) -> String {
        self.bare.split('?').next().unwrap().to_string()
    }

    /// Runs `sql` as someone with the database's password could, for a test that plants
    /// what baton never writes (a row that is no task, a schema a newer baton made) to show
    /// that baton finds it; everything else a test reads goes through baton's store
    /// ([`Database::with_store`]).
    fn tamper(&self, sql: &str) {
        cluster::apart(|| {
            let mut client =
                postgres::Client::connect(&self.url, postgres::NoTls).expect("the database");
            client.batch_execute(sql).expect(sql)
        })
    }

    /// `work` on baton's store in this database (with a home of its own for this machine's
    /// files).
    fn with_store<T: Send>(&self, work: impl FnOnce(&dyn baton::store::Store) -> T + Send) -> T {
        let home = tempfile::tempdir().unwrap();
        let home = baton::home::Home::new(home.path().to_path_buf());
        let lock = baton::file::lock::LockPolicy::silent(std::time::Duration::from_secs(20));
        cluster::apart(|| {
            let store = baton::store::open(&self.url, &home, lock).expect("the database");
            work(&*store)
        })
    }

    /// Every document the database holds, each named, with its bytes and version.
    fn documents(&self) -> Vec<(String, Vec<u8>, Option<baton::store::Version>)> {
        use baton::store::{Collection, Document};
        self.with_store(|store| {
            let list = |collection| store.list_documents(collection).unwrap();
            [Document::Tokens, Document::Alerts, Document::AlertsDropped]
                .into_iter()
                .chain(
                    list(Collection::Projects)
                        .into_iter()
                        .map(Document::Project),
                )
                .chain(list(Collection::Agents).into_iter().map(Document::Agent))
                .chain(
                    list(Collection::QueuedAlerts)
                        .into_iter()
                        .map(Document::QueuedAlert),
                )
                .filter_map(|document| {
                    let bytes = store.load_document(&document).unwrap()?;
                    let version = store.document_version(&document);
                    Some((format!("{document:?}"), bytes, version))
                })
                .collect()
        })
    }

    /// What a second copy must leave as it is: every project as baton reads it, and the
    /// version of every board and document.
    fn state(&self) -> Vec<String> {
        let mut state: Vec<String> = self.with_store(|store| {
            let projects = store
                .list_documents(baton::store::Collection::Projects)
                .unwrap();
            projects
                .iter()
                .flat_map(|project| {
                    let image = store.export_project(project).unwrap();
                    [
                        format!(
                            "project {project}: {}",
                            serde_json::to_string(&image).unwrap()
                        ),
                        format!("board {project}: {:?}", store.board_version(project)),
                    ]
                })
                .collect()
        });
        for (name, _, version) in self.documents() {
            state.push(format!("{name}: {version:?}"));
        }
        state
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        cluster::drop_database(&self.url);
    }
}

/// Every output of these tests, to be searched for the password at the end.
#[derive(Default)]
struct Said(Vec<String>);

impl Said {
    fn keep(&mut self, run: Run) -> Run {
        self.0.push(run.stdout.clone());
        self.0.push(run.stderr.clone());
        run
    }

    fn assert_no(&self, password: &str) {
        assert!(!password.is_empty());
        for words in &self.0 {
            assert!(!words.contains(password), "the password shows in: {words}");
        }
    }
}

/// `baton ARGS…` on the files of `env`'s home.
fn on_files(env: &TestEnv, agent: &str, args: &[&str]) -> Run {
    env.run_env(agent, args, &[("BATON_STORE", ""), ("BATON_NOW", NOW)])
}

/// `baton ARGS…` on `database`, with `env`'s home for this machine's own files.
fn on_database(env: &TestEnv, database: &Database, agent: &str, args: &[&str]) -> Run {
    env.run_env(
        agent,
        args,
        &[("BATON_STORE", &database.url), ("BATON_NOW", NOW)],
    )
}

/// `baton store copy ARGS…` run with the files of `env` as the current store, the password
/// in `PGPASSWORD` alone.
fn copy(env: &TestEnv, database: &Database, args: &[&str]) -> Run {
    let mut all = vec!["store", "copy"];
    all.extend_from_slice(args);
    env.run_env(
        "",
        &all,
        &[
            ("BATON_STORE", ""),
            ("PGPASSWORD", &database.password),
            ("BATON_NOW", NOW),
        ],
    )
}

/// A hub with some of everything: two projects, tasks in several states (one archived),
/// the log, messages some read, agents, tokens. The token made for codex.
fn fill(env: &TestEnv) -> String {
    let run = |agent: &str, args: &[&str]| on_files(env, agent, args).ok().to_string();
    let work = env.work();
    let other = env.root.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    run(
        "lead",
        &[
            "project",
            "init",
            "--name",
            "app",
            "--workspace",
            work.to_str().unwrap(),
        ],
    );
    run(
        "lead",
        &[
            "project",
            "init",
            "--name",
            "docs",
            "--workspace",
            other.to_str().unwrap(),
        ],
    );
    run("", &["agent", "add", "codex", "--skills", "rust"]);
    run("", &["agent", "add", "gemini"]);
    run("lead", &["send", "--to", "codex", "--subject", "build it"]);
    run("lead", &["send", "--to", "codex", "--subject", "test it"]);
    run("lead", &["send", "--to", "gemini", "--subject", "drop it"]);
    run("codex", &["claim", "1"]);
    run("codex", &["done", "1", "--result", "built"]);
    run("lead", &["cancel", "3"]);
    run("lead", &["archive", "--older-than", "0"]);
    run("lead", &["note", "halfway"]);
    run("lead", &["msg", "--to", "codex", "look at the build"]);
    run("codex", &["msg", "--to", "@all", "on it"]);
    run("gemini", &["messages"]);
    env.run_with(
        &other,
        "lead",
        &["send", "--to", "gemini", "--subject", "write"],
        &[("BATON_STORE", ""), ("BATON_NOW", NOW)],
    )
    .ok();
    let token = run("", &["token", "add", "codex"]).trim().to_string();
    assert!(!token.is_empty());
    token
}

/// What baton shows of a hub, command by command: run in the workspace of project `app`,
/// or (`docs` first) in that of `docs`.
fn views(mut run: impl FnMut(&str, &[&str]) -> Run) -> BTreeMap<String, Value> {
    let looks: &[(&str, &[&str])] = &[
        ("", &["--json", "board", "--all"]),
        ("", &["docs", "--json", "board", "--all"]),
        ("", &["--json", "log"]),
        ("", &["docs", "--json", "log"]),
        ("", &["--json", "show", "3"]),
        ("codex", &["--json", "status"]),
        ("codex", &["--json", "inbox", "--peek"]),
        ("codex", &["--json", "messages", "--all", "--peek"]),
        ("gemini", &["--json", "messages", "--peek"]),
        ("", &["--json", "agents"]),
        ("", &["--json", "token", "list"]),
        ("", &["--json", "project", "list"]),
    ];
    looks
        .iter()
        .map(|(agent, args)| {
            let key = format!("{agent} {}", args.join(" "));
            (key, json_of(&run(agent, args)))
        })
        .collect()
}

/// What a `--json` command printed: one value, or one a line (`log`), as an array.
fn json_of(run: &Run) -> Value {
    let text = run.ok();
    serde_json::from_str::<Value>(text).unwrap_or_else(|_| {
        text.lines()
            .map(|line| {
                serde_json::from_str::<Value>(line)
                    .unwrap_or_else(|error| panic!("{error}: {line}"))
            })
            .collect()
    })
}

/// The files of a hub home, each with its bytes: all but the lock files (which name the
/// process that last took them, as a copy's reading does), the board before the last
/// change (not copied), and the machine's own key and signatures under `wake/` (never
/// copied: they are the machine's, not the hub's).
fn files_of(home: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![home.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let name = path.strip_prefix(home).unwrap().display().to_string();
            if name.ends_with(".lock")
                || name.ends_with(".bak")
                || name.ends_with("ids.json")
                || name.starts_with("wake/")
                || name.starts_with("cache/")
            {
                continue;
            }
            found.insert(name, std::fs::read(&path).unwrap());
        }
    }
    found
}

#[test]
fn a_home_moved_to_postgres_and_back_holds_what_it_held_and_a_second_copy_writes_nothing() {
    let Some(database) = Database::fresh() else {
        return;
    };
    let mut said = Said::default();
    let source = TestEnv::new();
    let token = fill(&source);
    let before = files_of(&source.home());

    // Up: the files to the database.
    let up = said.keep(copy(&source, &database, &["--to", &database.bare]));
    let summary = up.ok();
    // Tasks on the boards and in the archive; @all is a message to each of the others.
    assert_eq!(
        summary.trim_end(),
        format!(
            "copied the files at {} to {}: 2 projects, 4 tasks, 9 log records, 4 messages, 3 \
             agents, 1 token (6 items written)",
            source.home().display(),
            database.shown()
        )
    );

    // Down: the database to the files of another home.
    let snapshot = TestEnv::new();
    let down = said.keep(copy(
        &snapshot,
        &database,
        &[
            "--from",
            &database.bare,
            "--to",
            snapshot.home().to_str().unwrap(),
        ],
    ));
    down.ok();
    assert_eq!(
        files_of(&snapshot.home()).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "the same files"
    );
    for (name, bytes) in &before {
        assert_eq!(
            String::from_utf8_lossy(&files_of(&snapshot.home())[name]),
            String::from_utf8_lossy(bytes),
            "{name} came back as it was"
        );
    }

    // Again, both ways: nothing is written.
    let rows = database.state();
    let again = said.keep(copy(
        &source,
        &database,
        &["--json", "--to", &database.bare],
    ));
    let report = again.json();
    assert_eq!(report["written"], 0, "{report}");
    assert_eq!(report["projects"], 2);
    assert_eq!(database.state(), rows, "no row and no version changed");
    let snapshot_files = files_of(&snapshot.home());
    let again = said.keep(copy(
        &snapshot,
        &database,
        &[
            "--from",
            &database.bare,
            "--to",
            snapshot.home().to_str().unwrap(),
        ],
    ));
    assert!(again.ok().contains("nothing written"), "{}", again.stdout);
    assert_eq!(files_of(&snapshot.home()), snapshot_files, "byte for byte");

    // What baton shows is the same on all three.
    // The snapshot's projects are bound to the source's workspaces: looked at from there.
    let look = |home: &TestEnv, store: &str, agent: &str, args: &[&str]| {
        let (dir, args) = match args.split_first() {
            Some((&"docs", rest)) => (source.root.path().join("other"), rest),
            _ => (source.work(), args),
        };
        home.run_with(
            &dir,
            agent,
            args,
            &[("BATON_STORE", store), ("BATON_NOW", NOW)],
        )
    };
    let on_source = views(|agent, args| said.keep(look(&source, "", agent, args)));
    let on_db = views(|agent, args| said.keep(look(&source, &database.url, agent, args)));
    let on_snapshot = views(|agent, args| said.keep(look(&snapshot, "", agent, args)));
    for (look, shown) in &on_source {
        assert_eq!(&on_db[look], shown, "`{look}` on the database");
        assert_eq!(&on_snapshot[look], shown, "`{look}` on the snapshot");
    }
    let log = &on_source[" --json log"];
    assert!(log.as_array().unwrap().len() >= 6, "{log}");

    // The token made on the files logs in on a hub served from each copy.
    for (home, store) in [(&source, database.url.as_str()), (&snapshot, "")] {
        let served = Served::start_with_vars(home, "lead", &[], &[("BATON_STORE", store)]);
        let board = served.get("/api/v1/projects/app/board", &token);
        assert_eq!(board.status, 200, "{}", board.body);
        said.0.push(board.body);
    }
    said.assert_no(&database.password);
}

#[test]
fn a_destination_that_holds_something_else_is_refused_unless_replaced() {
    let Some(database) = Database::fresh() else {
        return;
    };
    let mut said = Said::default();
    let source = TestEnv::new();
    fill(&source);
    said.keep(copy(&source, &database, &["--to", &database.bare]))
        .ok();
    // The database moves on (a hub wrote to it), and the files too.
    said.keep(on_database(
        &source,
        &database,
        "lead",
        &["note", "on the database"],
    ))
    .ok();
    said.keep(on_files(&source, "lead", &["note", "on the files"]))
        .ok();
    let rows = database.state();
    let refused = said.keep(copy(&source, &database, &["--to", &database.bare]));
    let stderr = refused.fails(1);
    assert_eq!(
        stderr.lines().next().unwrap(),
        format!(
            "error: {} already holds project app differently; nothing was copied",
            database.shown()
        )
    );
    assert!(stderr.contains("--replace"), "{stderr}");
    assert_eq!(database.state(), rows, "nothing written");

    let replaced = said.keep(copy(
        &source,
        &database,
        &["--replace", "--to", &database.bare],
    ));
    assert!(replaced.ok().contains("1 replaced"), "{}", replaced.stdout);
    let log = json_of(&said.keep(on_database(&source, &database, "", &["--json", "log"])));
    let texts: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|record| record["text"].as_str())
        .collect();
    assert!(texts.contains(&"on the files"), "{texts:?}");
    assert!(!texts.contains(&"on the database"), "{texts:?}");

    // A password on the command line is refused without being shown; an unreachable
    // database exits 6, named without it.
    if !database.password.is_empty() {
        let refused = said.keep(copy(&source, &database, &["--to", &database.url]));
        let stderr = refused.fails(1);
        assert!(stderr.contains("holds a password"), "{stderr}");
    }
    let nowhere = "postgres://baton@127.0.0.1:1/baton?sslmode=disable";
    let unreachable = said.keep(copy(&source, &database, &["--to", nowhere]));
    let stderr = unreachable.fails(6);
    assert!(
        stderr.starts_with("error: store postgres://baton@127.0.0.1:1/baton unreachable: "),
        "{stderr}"
    );
    said.assert_no(&database.password);
}

#[test]
fn doctor_names_the_database_and_its_schema_finds_a_tampered_row_and_exits_6_when_it_is_gone() {
    let Some(database) = Database::fresh() else {
        return;
    };
    let mut said = Said::default();
    let source = TestEnv::new();
    fill(&source);
    said.keep(copy(&source, &database, &["--to", &database.bare]))
        .ok();
    let doctor = said.keep(on_database(&source, &database, "", &["doctor"]));
    let report = doctor.ok();
    let store_line = report
        .lines()
        .find(|line| line.starts_with("ok    store"))
        .unwrap_or_else(|| panic!("no store line: {report}"));
    assert!(
        store_line.ends_with(&format!(
            "{} answers; schema {SCHEMA}, the one this baton writes",
            database.shown()
        )),
        "{store_line}"
    );
    assert!(
        report.contains("the log and the board agree in 2 projects"),
        "{report}"
    );
    // The archive's search has its index (pg_trgm is there): no word of reading it through.
    assert!(!report.contains("search"), "{report}");
    // Without it (no pg_trgm where the database was made), doctor says so and how to make it.
    database.tamper("DROP INDEX archive_words_trgm");
    let doctor = said.keep(on_database(&source, &database, "", &["doctor"]));
    let report = doctor.ok();
    assert!(
        report.lines().any(|line| line.starts_with("warn  search")
            && line.contains("a search of the archive reads it through")
            && line.contains("CREATE EXTENSION pg_trgm")),
        "{report}"
    );

    // A row changed behind baton's back: task 2 pending on the board, claimed in no line.
    database.tamper(
        "UPDATE tasks SET task = replace(task, '\"status\":\"pending\"', '\"status\":\"working\"') \
         WHERE project = 'app' AND id = 2",
    );
    let doctor = said.keep(on_database(&source, &database, "", &["doctor"]));
    let report = doctor.ok();
    assert!(
        report
            .lines()
            .any(|line| line.starts_with("warn  activity") && line.contains("T-2 is working")),
        "{report}"
    );

    // A schema a newer baton made: one line naming both versions, exit 4.
    database.tamper("UPDATE baton_schema SET version = 99");
    let newer = said.keep(on_database(&source, &database, "", &["doctor"]));
    let stderr = newer.fails(4);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: store {} has schema 99, newer than this baton understands ({SCHEMA}); upgrade baton",
            database.shown()
        )
    );
    database.tamper(&format!("UPDATE baton_schema SET version = {SCHEMA}"));

    // A database that cannot be reached: one line, exit 6.
    let gone = said.keep(source.run_env(
        "",
        &["doctor"],
        &[(
            "BATON_STORE",
            "postgres://baton@127.0.0.1:1/baton?sslmode=disable",
        )],
    ));
    let stderr = gone.fails(6);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: store postgres://baton@127.0.0.1:1/baton unreachable: "),
        "{stderr}"
    );
    assert!(gone.stdout.is_empty(), "{}", gone.stdout);
    said.assert_no(&database.password);
}

#[test]
fn doctor_on_a_database_from_a_machine_with_no_home_of_its_own_checks_the_boards_too() {
    let Some(database) = Database::fresh() else {
        return;
    };
    let mut said = Said::default();
    let source = TestEnv::new();
    fill(&source);
    said.keep(copy(&source, &database, &["--to", &database.bare]))
        .ok();
    // Another machine: BATON_STORE names the database, and it has no home of its own yet.
    let machine = TestEnv::new();
    let nowhere = machine.root.path().join("no-home");
    let doctor = || {
        machine.run_env(
            "",
            &["doctor"],
            &[
                ("BATON_STORE", &database.url),
                ("BATON_HOME", nowhere.to_str().unwrap()),
                ("BATON_NOW", NOW),
            ],
        )
    };
    let healthy = said.keep(doctor());
    let report = healthy.ok();
    assert!(
        report.contains("2 boards parse (schema") && report.contains("the log and the board agree"),
        "{report}"
    );
    assert!(!nowhere.exists(), "doctor only looks");

    // A task row that is no task, and a board a newer baton wrote: both found, exit 1.
    database.tamper("UPDATE tasks SET task = 'not a task' WHERE project = 'app' AND id = 2");
    database.tamper("UPDATE boards SET schema = 99 WHERE project = 'docs'");
    let broken = said.keep(doctor());
    assert_eq!(broken.code, 1, "{}{}", broken.stdout, broken.stderr);
    let fails: Vec<&str> = broken
        .stdout
        .lines()
        .filter(|line| line.starts_with("fail  boards"))
        .collect();
    assert_eq!(fails.len(), 2, "{}", broken.stdout);
    assert!(
        fails
            .iter()
            .any(|line| line.contains("projects/app/board is unreadable")),
        "{}",
        broken.stdout
    );
    assert!(
        fails.iter().any(|line| line.contains("schema 99")),
        "{}",
        broken.stdout
    );
    assert!(
        !broken.stdout.contains("nothing broken"),
        "{}",
        broken.stdout
    );
    said.assert_no(&database.password);
}

/// Plants in `home` what an attacker with its files would: an agent's record that is a link
/// to /etc/passwd, one of 16 MiB and more (sparse: no disk taken), one whose file is bob's
/// but which names alice, and a line of the mail that is no JSON (its line number given).
/// (A link to /etc/passwd: Unix only.)
#[cfg(unix)]
fn plant(home: &Path) -> usize {
    let agents = home.join("agents");
    std::os::unix::fs::symlink("/etc/passwd", agents.join("mallory.json")).unwrap();
    let junk = std::fs::File::create(agents.join("junk.json")).unwrap();
    junk.set_len(200 * 1024 * 1024).unwrap();
    let gemini = std::fs::read_to_string(agents.join("gemini.json")).unwrap();
    let alice = gemini.replace("\"name\": \"gemini\"", "\"name\": \"alice\"");
    assert_ne!(alice, gemini);
    std::fs::write(agents.join("bob.json"), alice).unwrap();
    let mail = home.join("projects/app/mail.jsonl");
    let mut text = std::fs::read_to_string(&mail).unwrap();
    text.push_str("not a message\n");
    std::fs::write(&mail, &text).unwrap();
    text.lines().count()
}

#[cfg(unix)]
#[test]
fn what_baton_would_not_read_is_skipped_and_named_never_copied() {
    let source = TestEnv::new();
    fill(&source);
    let line = plant(&source.home());
    let target = source.root.path().join("copy");
    let mut destinations = vec![(target.to_str().unwrap().to_string(), None)];
    let database = Database::fresh();
    if let Some(database) = &database {
        destinations.push((database.bare.clone(), Some(database)));
    }
    for (to, database) in destinations {
        let run = |json: bool| {
            let mut args = vec!["store", "copy", "--to", &to];
            if json {
                args.insert(0, "--json");
            }
            source.run_env(
                "",
                &args,
                &[
                    ("BATON_STORE", ""),
                    ("BATON_NOW", NOW),
                    ("PGPASSWORD", database.map_or("", |base| &base.password)),
                ],
            )
        };
        let report = run(true).json();
        let skipped: Vec<(String, String)> = report["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skipped| {
                (
                    skipped["what"].as_str().unwrap().to_string(),
                    skipped["why"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let home = source.home();
        let agents = home.join("agents");
        let expected = [
            (
                "a line of project app".to_string(),
                format!(
                    "{} line {line} does not read as a record",
                    home.join("projects/app/mail.jsonl").display()
                ),
            ),
            (
                "agent bob".to_string(),
                format!(
                    "{} is unreadable: names agent `alice`, not `bob`",
                    agents.join("bob.json").display()
                ),
            ),
            (
                "agent junk".to_string(),
                format!(
                    "{} is unreadable: longer than 16 MiB, more than baton writes in any document",
                    agents.join("junk.json").display()
                ),
            ),
            (
                "agent mallory".to_string(),
                format!(
                    "{} is a symbolic link, not a regular file",
                    agents.join("mallory.json").display()
                ),
            ),
        ];
        assert_eq!(skipped, expected, "{report}");
        assert_eq!(report["agents"], 3, "{report}");
        // The rest is copied, and nothing of what was skipped.
        let held = match database {
            None => {
                let copied = files_of(&target);
                for name in ["mallory", "junk", "bob"] {
                    assert!(
                        !copied.contains_key(&format!("agents/{name}.json")),
                        "{name}"
                    );
                }
                assert!(copied.contains_key("agents/gemini.json"));
                copied
                    .values()
                    .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
                    .collect::<Vec<_>>()
            }
            Some(database) => {
                let documents = database.documents();
                let agents: Vec<&str> = documents
                    .iter()
                    .filter_map(|(name, _, _)| name.strip_prefix("Agent(\"")?.strip_suffix("\")"))
                    .collect();
                assert_eq!(agents, ["codex", "gemini", "lead"]);
                documents
                    .iter()
                    .map(|(_, bytes, _)| String::from_utf8_lossy(bytes).into_owned())
                    .collect()
            }
        };
        assert!(
            !held.iter().any(|text| text.contains("root:x:0:0")),
            "/etc/passwd was copied"
        );
        // Said to a human too, each by name, again on a second copy, which writes nothing.
        let again = run(false);
        let summary = again.ok();
        assert!(summary.contains("nothing written"), "{summary}");
        assert!(
            summary.contains("not copied, 4 things that baton does not read:"),
            "{summary}"
        );
        for (what, why) in &expected {
            assert!(summary.contains(&format!("\n  {what}: {why}")), "{summary}");
        }
    }
}

#[test]
fn a_hub_s_own_logins_and_last_uses_of_tokens_do_not_make_a_second_copy_refuse() {
    let source = TestEnv::new();
    let token = fill(&source);
    let snapshot = TestEnv::new();
    let database = Database::fresh();
    // Each destination with the variables that serve a hub from it.
    let mut destinations = vec![(
        snapshot.home().to_str().unwrap().to_string(),
        &snapshot,
        String::new(),
    )];
    if let Some(database) = &database {
        destinations.push((database.bare.clone(), &source, database.url.clone()));
    }
    // Each destination gets a token of its own added on the source: one agent has one.
    for ((to, home, store), added) in destinations.into_iter().zip(["gemini", "lead"]) {
        let password = database.as_ref().map_or("", |base| &base.password);
        let copy_to = |extra: &[&str]| {
            let mut args = vec!["store", "copy", "--to", &to];
            args.extend_from_slice(extra);
            source.run_env(
                "",
                &args,
                &[
                    ("BATON_STORE", ""),
                    ("BATON_NOW", NOW),
                    ("PGPASSWORD", password),
                ],
            )
        };
        copy_to(&[]).ok();
        // A hub served from the copy: its start makes a login token, and the token's use
        // is recorded.
        {
            let served = Served::start_with_vars(
                home,
                "lead",
                &[],
                &[("BATON_STORE", &store), ("BATON_NOW", NOW)],
            );
            let board = served.get("/api/v1/projects/app/board", &token);
            assert_eq!(board.status, 200, "{}", board.body);
        }
        let listed = home
            .run_env(
                "",
                &["--json", "token", "list"],
                &[("BATON_STORE", &store), ("BATON_NOW", NOW)],
            )
            .json();
        let rows = listed.as_array().unwrap();
        assert!(rows.iter().any(|row| row["login"] == true), "{listed}");
        assert!(
            rows.iter()
                .any(|row| row["name"] == "codex" && !row["last_used_at"].is_null()),
            "{listed}"
        );
        // Nothing a user wrote differs: the copy again writes nothing and refuses nothing.
        let again = copy_to(&[]);
        assert!(again.ok().contains("nothing written"), "{}", again.stdout);
        // A token the user adds on one side is a difference, refused as before.
        source
            .run_env(
                "",
                &["token", "add", added],
                &[("BATON_STORE", ""), ("BATON_NOW", NOW)],
            )
            .ok();
        let refused = copy_to(&[]);
        assert!(
            refused
                .fails(1)
                .contains("already holds the tokens differently"),
            "{}",
            refused.stderr
        );
        copy_to(&["--replace"]).ok();
    }
}

#[test]
fn files_copy_to_files_and_a_directory_that_is_no_hub_home_is_refused() {
    // Needs no database: the files of one home to another's.
    let source = TestEnv::new();
    fill(&source);
    let target = source.root.path().join("copy");
    let copy_to = |to: &Path, extra: &[&str]| {
        let mut args = vec!["store", "copy", "--to", to.to_str().unwrap()];
        args.extend_from_slice(extra);
        source.run_env("", &args, &[("BATON_STORE", ""), ("BATON_NOW", NOW)])
    };
    copy_to(&target, &[]).ok();
    let copied = files_of(&target);
    assert_eq!(copied, files_of(&source.home()), "byte for byte");
    assert!(copy_to(&target, &[]).ok().contains("nothing written"));
    assert_eq!(files_of(&target), copied);

    // A directory that holds something else is not made a hub.
    let workspace = source.work();
    std::fs::write(workspace.join("notes.txt"), "mine").unwrap();
    let refused = copy_to(&workspace, &[]);
    assert!(
        refused.fails(1).starts_with(&format!(
            "error: --to {}: not a hub home",
            workspace.display()
        )),
        "{}",
        refused.stderr
    );
    assert!(!workspace.join("projects").exists());
    // Nor is a home that is not there copied as an empty one.
    let missing = source.root.path().join("nowhere");
    let refused = source.run_env(
        "",
        &["store", "copy", "--to", target.to_str().unwrap()],
        &[
            ("BATON_STORE", ""),
            ("BATON_HOME", missing.to_str().unwrap()),
        ],
    );
    assert!(
        refused.fails(1).starts_with("error: no hub home at "),
        "{}",
        refused.stderr
    );
    // The same store both ways is refused.
    let same = copy_to(&source.home(), &[]);
    assert!(
        same.fails(1)
            .starts_with("error: the source and the destination are the same store"),
        "{}",
        same.stderr
    );
}
