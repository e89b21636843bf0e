//! `BATON_STORE` wins over `BATON_HOME`, so where it matters a command says which store it
//! read: `whoami`, `doctor` and `store copy` name the files at the home's path, or the
//! database by its URL without the password (SPEC 16). Each test keeps its state in stores
//! of its own, whatever store the rest of the suite runs on.

use baton::store::postgres::url::StoreUrl;

use crate::common::{Run, TestEnv, TestStore, cluster, test_store};

/// Runs `baton --as AGENT ARGS…` on the files of the test's home, whatever the suite's store.
fn on_files(env: &TestEnv, agent: &str, args: &[&str]) -> Run {
    env.run_env(agent, args, &[("BATON_STORE", "")])
}

#[test]
fn on_the_files_whoami_doctor_and_store_copy_name_the_files_they_read() {
    let env = TestEnv::new();
    on_files(&env, "lead", &["send", "--to", "lead", "--subject", "Mine"]).ok();
    let home = env.home().display().to_string();
    let files = format!("the files at {home}");

    let whoami = on_files(&env, "lead", &["whoami"]);
    assert_eq!(
        whoami.ok(),
        format!("lead in project default\nstore: {files}\n")
    );
    let value = on_files(&env, "lead", &["--json", "whoami"]).json();
    assert_eq!(value["store"], files.as_str());

    let doctor = on_files(&env, "", &["doctor"]);
    assert!(
        doctor
            .ok()
            .lines()
            .any(|line| line == format!("ok    store         {files}")),
        "{}",
        doctor.stdout
    );

    let snapshot = env.root.path().join("snapshot");
    let to = snapshot.to_str().unwrap();
    let copied = on_files(&env, "", &["store", "copy", "--to", to]);
    assert!(
        copied.ok().starts_with(&format!(
            "copied {files} to the files at {to}: 1 project, 1 task"
        )),
        "{}",
        copied.stdout
    );
    let again = on_files(&env, "", &["store", "copy", "--to", to]);
    assert!(
        again.ok().starts_with(&format!(
            "nothing written: everything in {files} is in the files at {to} already"
        )),
        "{}",
        again.stdout
    );
}

#[test]
fn with_baton_store_set_they_name_the_database_and_never_read_the_home_s_files() {
    if !cluster::runs_here() {
        eprintln!("NOT RUN: no PostgreSQL here (see docs/developing.md)");
        return;
    }
    let given = match test_store() {
        TestStore::Postgres(Some(url)) => Some(url),
        _ => None,
    };
    let url = cluster::fresh_database(given.as_deref());
    let parts = StoreUrl::parse(&url).expect("the database's URL");
    let shown = parts.shown();
    let password = parts.password().unwrap_or_default().to_string();
    let env = TestEnv::new();
    // The home holds a board of its own, on the files…
    on_files(
        &env,
        "lead",
        &["send", "--to", "lead", "--subject", "On the files"],
    )
    .ok();
    // …and the database another.
    let on_database =
        |agent: &str, args: &[&str]| env.run_env(agent, args, &[("BATON_STORE", url.as_str())]);
    on_database(
        "lead",
        &["send", "--to", "lead", "--subject", "In the database"],
    )
    .ok();
    let said = |run: &Run| {
        assert!(
            password.is_empty()
                || !(run.stdout.contains(&password) || run.stderr.contains(&password)),
            "the password shows: {run:?}"
        );
        run.ok().to_string()
    };

    let whoami = said(&on_database("lead", &["whoami"]));
    assert_eq!(whoami, format!("lead in project default\nstore: {shown}\n"));
    assert!(!whoami.contains(&env.home().display().to_string()));
    let value = on_database("lead", &["--json", "whoami"]).json();
    assert_eq!(value["store"], shown.as_str());

    let doctor = said(&on_database("", &["doctor"]));
    assert!(
        doctor
            .lines()
            .any(|line| line.starts_with("ok    store")
                && line.contains(&format!("{shown} answers"))),
        "{doctor}"
    );
    assert!(!doctor.contains("store         the files"), "{doctor}");
    // What it read is the database's board, not the home's.
    let board = said(&on_database("lead", &["board"]));
    assert!(
        board.contains("In the database") && !board.contains("On the files"),
        "{board}"
    );

    // `store copy` with no --from copies what BATON_STORE names, and says so.
    let snapshot = env.root.path().join("snapshot");
    let to = snapshot.to_str().unwrap();
    let copied = said(&on_database("", &["store", "copy", "--to", to]));
    assert!(
        copied.starts_with(&format!(
            "copied {shown} to the files at {to}: 1 project, 1 task"
        )),
        "{copied}"
    );
    cluster::drop_database(&url);
}
