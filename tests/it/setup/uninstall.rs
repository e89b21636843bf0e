//! A second run changes nothing, uninstall gives every byte back, backups hold what was
//! there, and a dry run writes nothing.

use super::*;
use crate::common::without_ages;

#[test]
fn a_second_run_changes_nothing_and_uninstall_gives_every_byte_back() {
    let machine = Machine::new().with_user_configs();
    let original = machine.files();

    machine
        .setup(&["--client", "claude,codex,gemini,opencode"])
        .ok();
    let wired = machine.files();
    assert_ne!(wired, original);
    // How long ago each agent was seen moves on with the clock between the two looks.
    let agents = || without_ages(machine.env.run("", &["--json", "agents"]).json());
    let agents_before = agents();

    let again = machine.setup(&["--client", "claude,codex,gemini,opencode"]);
    for client in CLIENTS {
        assert!(
            again.ok().contains(&format!(
                "{client} (agent {client}): already wired, nothing to change"
            )),
            "{}",
            again.stdout
        );
    }
    assert_eq!(machine.files(), wired, "the second run wrote something");
    assert_eq!(agents(), agents_before);

    let run = machine.setup(&["--uninstall"]);
    for client in CLIENTS {
        assert!(
            run.ok().contains(&format!("{client} (agent {client}):")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(
        machine.files_without_backups(),
        original,
        "uninstall left something different"
    );
    for client in CLIENTS {
        assert_eq!(machine.agent(client)["clients"], json!([]));
    }
    let run = machine.setup(&["--uninstall", "--client", "claude"]);
    assert!(
        run.ok().contains("nothing of baton's to remove"),
        "{}",
        run.stdout
    );
}

#[test]
fn in_an_empty_home_uninstall_removes_every_file_and_directory_setup_made() {
    let machine = Machine::new();
    machine
        .setup(&["--client", "claude,codex,gemini,opencode"])
        .ok();
    assert!(
        machine
            .user()
            .join(".claude/skills/baton/SKILL.md")
            .is_file()
    );
    assert!(machine.user().join(".gemini/settings.json").is_file());
    assert!(
        machine.files().keys().all(|path| !is_backup(path)),
        "no backup of files that did not exist"
    );
    machine.setup(&["--uninstall"]).ok();
    assert_eq!(machine.files(), BTreeMap::new());
}

#[test]
fn backups_hold_what_the_file_held_before() {
    let machine = Machine::new().with_user_configs();
    machine.setup(&["--client", "gemini"]).ok();
    let backups: Vec<PathBuf> = machine
        .files()
        .into_keys()
        .filter(|path| is_backup(path))
        .collect();
    assert_eq!(backups.len(), 2, "settings.json and GEMINI.md: {backups:?}");
    for backup in backups {
        let text = fs::read_to_string(&backup).unwrap();
        let expected = if backup.to_string_lossy().contains("settings.json") {
            GEMINI_SETTINGS
        } else {
            GEMINI_MD
        };
        assert_eq!(text, expected, "{}", backup.display());
    }
}

#[test]
fn dry_run_shows_the_changes_and_writes_nothing() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let before = machine.files();
    let run = machine.setup(&["--client", "claude,codex,gemini,opencode", "--dry-run"]);
    let out = run.ok();
    assert!(out.starts_with("dry run: nothing was written\n"), "{out}");
    assert!(out.contains(&format!(
        "would edit {}",
        machine.codex_home().join("config.toml").display()
    )));
    assert!(out.contains("      + [mcp_servers.baton]\n"), "{out}");
    assert!(out.contains(&format!(
        "would create {}",
        machine.user().join(".claude/skills/baton/SKILL.md").display()
    )));
    assert!(out.contains("would update the registry: register agent claude"));
    assert_eq!(machine.files(), before);
    assert!(
        !machine.env.home().join("agents").exists(),
        "no agent registered"
    );

    let value = machine
        .setup(&["--client", "codex", "--dry-run", "--json"])
        .json();
    assert_eq!(value["dry_run"], true);
    let files = value["clients"][0]["files"].as_array().unwrap();
    let config = files
        .iter()
        .find(|file| file["path"].as_str().unwrap().ends_with("config.toml"))
        .unwrap();
    assert_eq!(config["action"], "edit");
    assert!(
        config["after"]
            .as_str()
            .unwrap()
            .contains("[mcp_servers.baton]")
    );
    assert_eq!(machine.files(), before);

    machine.setup(&["--client", "codex"]).ok();
    let wired = machine.files();
    machine.setup(&["--uninstall", "--dry-run"]).ok();
    assert_eq!(machine.files(), wired, "a dry uninstall removed something");
}
