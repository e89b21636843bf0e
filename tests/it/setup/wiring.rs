//! Which clients setup wires and as whom: the clients it finds, the agent and its wake
//! command, a file it cannot parse, and what doctor says of the wiring.

use super::*;

#[cfg(unix)]
#[test]
fn auto_wires_the_clients_found_on_path_or_by_their_config_directory() {
    let machine = Machine::new();
    let program = machine.bin().join("codex");
    fs::write(&program, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(machine.user().join(".gemini")).unwrap();

    let status = machine.setup(&[]);
    assert!(
        status.ok().contains("baton setup --auto"),
        "{}",
        status.stdout
    );
    machine.setup(&["--auto"]).ok();
    assert!(machine.codex_home().join("config.toml").is_file());
    assert!(machine.user().join(".gemini/settings.json").is_file());
    assert!(!machine.user().join(".claude.json").exists());
    assert!(!machine.xdg_config().join("opencode").exists());

    let statuses = machine.setup(&["--json"]).json();
    let wired: Vec<(&str, bool)> = statuses
        .as_array()
        .unwrap()
        .iter()
        .map(|status| {
            (
                status["client"].as_str().unwrap(),
                status["server"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        wired,
        [
            ("claude", false),
            ("codex", true),
            ("gemini", true),
            ("opencode", false)
        ]
    );
    assert_eq!(statuses[1]["agent"], "codex");
    assert_eq!(statuses[1]["program"], program.display().to_string());
}

#[test]
fn as_names_the_agent_and_a_customised_wake_command_stays() {
    let machine = Machine::new();
    machine
        .env
        .run(
            "",
            &[
                "agent",
                "add",
                "reviewer",
                "--strengths",
                "reviews",
                "--wake",
                "--",
                "my-wake",
                "-x",
            ],
        )
        .ok();
    machine
        .setup_env(&["--client", "codex", "--as", "reviewer"], &[])
        .ok();
    let config = fs::read_to_string(machine.codex_home().join("config.toml")).unwrap();
    assert!(
        config.contains("args = [\"--as\", \"reviewer\", \"mcp\"]"),
        "{config}"
    );
    let agent = machine.agent("reviewer");
    assert_eq!(agent["wake"], json!(["my-wake", "-x"]));
    assert_eq!(agent["strengths"], "reviews");
    assert_eq!(agent["clients"], json!(["codex"]));

    let error = machine
        .setup(&["--client", "claude,gemini", "--as", "both"])
        .fails(1)
        .to_string();
    assert!(error.contains("--as both names one agent"), "{error}");
    let error = machine
        .setup(&["--client", "claude", "--as", "Bad Name"])
        .fails(1)
        .to_string();
    assert!(error.contains("Bad Name"), "{error}");
    assert!(!machine.user().join(".claude.json").exists());
}

#[test]
fn the_wake_commands_earlier_setups_registered_are_replaced() {
    // Claude Code's `--allowedTools` swallowed the prompt, Codex's sandbox kept the board
    // read-only, Gemini CLI refused the untrusted workspace, and opencode's took a prompt
    // starting with `-` for an option.
    let former: [(&str, &[&str]); 4] = [
        (
            "claude",
            &[
                "claude",
                "-p",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "mcp__baton",
            ],
        ),
        (
            "codex",
            &[
                "codex",
                "exec",
                "--skip-git-repo-check",
                "-s",
                "workspace-write",
            ],
        ),
        ("gemini", &["gemini", "--approval-mode", "auto_edit", "-p"]),
        ("opencode", &["opencode", "run"]),
    ];
    let machine = Machine::new();
    for (client, words) in former {
        let mut args = vec!["agent", "add", client, "--wake", "--"];
        args.extend(words);
        machine.env.run("", &args).ok();
        let out = machine.setup(&["--client", client]).ok().to_string();
        assert!(out.contains(&format!("wake command: {client} ")), "{out}");
        let wake = machine.agent(client)["wake"].clone();
        assert_ne!(wake, json!(words), "{client} kept its broken wake command");
        assert_eq!(wake[0], client);
    }
}

#[test]
fn uninstall_removes_the_wake_command_setup_registered_and_doctor_is_clean() {
    let machine = Machine::new();
    let wake_check = |machine: &Machine| -> Vec<(String, String)> {
        // Doctor exits 1 on a failed check; its report is on stdout either way.
        let run = machine.baton(&["--json", "doctor"], &[]);
        let value: Value = serde_json::from_str(&run.stdout).expect("doctor's JSON");
        value["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|check| check["name"] == "wake")
            .map(|check| {
                (
                    check["status"].as_str().unwrap().to_string(),
                    check["detail"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // Two clients wired as one agent: the first registers its wake command, the second
    // leaves it (it is not one of its own).
    machine.setup(&["--client", "claude", "--as", "dev"]).ok();
    machine.setup(&["--client", "codex", "--as", "dev"]).ok();
    assert_eq!(machine.agent("dev")["wake"][0], "claude");
    assert_eq!(machine.agent("dev")["clients"], json!(["claude", "codex"]));
    // Nothing is installed on PATH: doctor fails on the wake program while it is wired.
    assert_eq!(wake_check(&machine)[0].0, "fail");

    let dry = machine
        .setup(&["--uninstall", "--client", "claude", "--dry-run"])
        .ok()
        .to_string();
    assert!(dry.contains("wake command: codex "), "{dry}");
    assert_eq!(machine.agent("dev")["wake"][0], "claude", "a dry run wrote");
    // Unwiring the client whose wake command it is hands waking to the one still wired.
    machine.setup(&["--uninstall", "--client", "claude"]).ok();
    assert_eq!(machine.agent("dev")["wake"][0], "codex");
    assert_eq!(machine.agent("dev")["clients"], json!(["codex"]));
    let out = machine
        .setup(&["--uninstall", "--client", "codex"])
        .ok()
        .to_string();
    assert!(
        out.contains("remove the wake command setup registered: codex "),
        "{out}"
    );
    assert_eq!(machine.agent("dev")["wake"], Value::Null);
    assert_eq!(
        wake_check(&machine),
        [("ok".to_string(), "no wake commands set".to_string())]
    );
    let doctor = machine.baton(&["doctor"], &[]);
    assert_eq!(doctor.code, 0, "{}{}", doctor.stdout, doctor.stderr);

    // A wake command the user chose is not setup's to remove.
    machine
        .env
        .run(
            "",
            &["agent", "add", "mine", "--wake", "--", "my-wake", "-x"],
        )
        .ok();
    machine.setup(&["--client", "gemini", "--as", "mine"]).ok();
    machine.setup(&["--uninstall", "--client", "gemini"]).ok();
    assert_eq!(machine.agent("mine")["wake"], json!(["my-wake", "-x"]));
    assert_eq!(machine.agent("mine")["clients"], json!([]));
}

#[test]
fn a_file_it_cannot_parse_is_refused_and_nothing_is_written() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let broken = "{\n  \"model\": \"opus\",\n";
    machine.write(&machine.user().join(".claude/settings.json"), broken);
    let before = machine.files();
    let error = machine.setup(&["--client", "claude"]).fails(1).to_string();
    assert!(
        error.contains(".claude/settings.json: it is not valid JSON"),
        "{error}"
    );
    assert!(error.contains("hint: "), "{error}");
    assert_eq!(machine.files(), before);
}

#[test]
fn claude_config_dir_moves_every_claude_file() {
    let machine = Machine::new();
    let dir = machine.env.root.path().join("claude-config");
    machine
        .setup_env(&["--client", "claude"], &[("CLAUDE_CONFIG_DIR", &dir)])
        .ok();
    assert!(dir.join(".claude.json").is_file());
    assert!(dir.join("settings.json").is_file());
    assert!(dir.join("skills/baton/SKILL.md").is_file());
    assert!(!machine.user().join(".claude.json").exists());
    assert!(!machine.user().join(".claude").exists());
}

#[cfg(unix)]
#[test]
fn doctor_reports_which_clients_are_wired_and_what_is_amiss() {
    let machine = Machine::new();
    // The wake commands setup registers must find their programs, or doctor fails on them.
    for program in ["claude", "codex", "opencode"] {
        let path = machine.bin().join(program);
        fs::write(&path, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    fs::create_dir_all(machine.user().join(".gemini")).unwrap();
    machine.setup(&["--client", "claude,codex,opencode"]).ok();
    let clients = |machine: &Machine| -> Vec<(String, String)> {
        let value = machine.baton(&["--json", "doctor"], &[]).json();
        value["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|check| check["name"] == "clients")
            .map(|check| {
                (
                    check["status"].as_str().unwrap().to_string(),
                    check["detail"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let ok = |detail: &str| ("ok".to_string(), detail.to_string());
    assert_eq!(
        clients(&machine),
        [
            ok(
                "claude: mcp as claude · hooks SessionStart,UserPromptSubmit,Stop,PreToolUse · instructions"
            ),
            ok(
                "codex: mcp as codex · hooks SessionStart,UserPromptSubmit,Stop,PreToolUse · instructions"
            ),
            ok("gemini: found, not wired (`baton setup --client gemini`)"),
            ok("opencode: mcp as opencode · plugin · instructions"),
        ]
    );

    fs::remove_file(machine.user().join(".claude/skills/baton/SKILL.md")).unwrap();
    let config = machine.xdg_config().join("opencode/opencode.json");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(&config, text.replace(&baton(), "/gone/baton")).unwrap();
    let found = clients(&machine);
    assert_eq!(found[0].0, "warn");
    assert!(
        found[0]
            .1
            .starts_with("claude is wired only in part (mcp as claude · hooks"),
        "{found:?}"
    );
    assert_eq!(
        found[3],
        (
            "warn".to_string(),
            "opencode starts baton as /gone/baton, which is not there; run `baton setup \
             --client opencode` again"
                .to_string()
        )
    );

    machine.setup(&["--client", "claude,opencode"]).ok();
    assert!(clients(&machine).iter().all(|(status, _)| status == "ok"));
}
