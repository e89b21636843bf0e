//! Setup for a hub elsewhere (`--url`, `--token-env`): the hub's URL and the token's
//! variable in every client's settings, the token in none, and the listen service.

use super::*;

/// The hub of the remote tests: never contacted, setup only writes its URL.
const HUB: &str = "http://10.0.0.5:7878";

/// A token as `baton token add` prints one, in the variable the remote setups name.
const SECRET: &str = "baton_0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab";

impl Machine {
    /// `baton setup ARGS… --url HUB/ --token-env HUB_TOKEN`, with `HUB_TOKEN` set to
    /// [`SECRET`].
    pub fn setup_remote(&self, args: &[&str]) -> Run {
        let mut all = args.to_vec();
        all.extend(["--url", "http://10.0.0.5:7878/", "--token-env", "HUB_TOKEN"]);
        self.setup_env(&all, &[("HUB_TOKEN", Path::new(SECRET))])
    }

    /// Every file of the hub home, with its bytes (the remote setups must leave no agent
    /// there).
    fn hub_files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        collect(&self.env.home(), &mut files);
        files
    }
}

/// The hook line a remote setup writes for a POSIX shell. Gemini CLI fills in `$VAR`
/// before it runs a line, so its lines name the variable for baton to read.
fn remote_hook(event: &str, client: &str) -> String {
    let token = if client == "gemini" {
        "BATON_TOKEN_ENV=HUB_TOKEN"
    } else {
        "BATON_TOKEN=\"$HUB_TOKEN\""
    };
    format!(
        "BATON_URL={HUB} {token} {} hook {event} --client {client}",
        baton()
    )
}

/// No file holds the token's value, and none names an agent of this machine.
#[track_caller]
fn assert_no_token_in(files: &BTreeMap<PathBuf, Vec<u8>>) {
    for (path, bytes) in files {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(SECRET), "{} holds the token", path.display());
    }
}

#[test]
fn remote_setup_gives_each_client_the_hub_s_url_and_the_token_s_variable_only() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let said = machine
        .setup_remote(&["--client", "claude,codex,gemini,opencode"])
        .ok()
        .to_string();
    for client in CLIENTS {
        assert!(said.contains(&format!("{client} (hub {HUB}):")), "{said}");
    }
    assert!(
        said.contains(&format!(
            "next, to wake the agent when work arrives: BATON_URL={HUB} \
             BATON_TOKEN=\"$HUB_TOKEN\" baton listen --wake -- claude -p"
        )),
        "{said}"
    );
    assert!(!said.contains(SECRET), "{said}");

    let state = machine.json(&machine.user().join(".claude.json"));
    assert_eq!(
        state["mcpServers"]["baton"],
        json!({
            "type": "http",
            "url": format!("{HUB}/mcp"),
            "headers": {"Authorization": "Bearer ${HUB_TOKEN}"}
        })
    );
    assert_eq!(state["mcpServers"]["docs"]["command"], "docs-server");
    let settings = machine.json(&machine.user().join(".claude/settings.json"));
    assert_eq!(
        hook_commands(&settings, "UserPromptSubmit"),
        [remote_hook("prompt", "claude")]
    );
    let skill = fs::read_to_string(machine.user().join(".claude/skills/baton/SKILL.md")).unwrap();
    assert!(
        skill.contains(&format!("through its hub at {HUB}")),
        "{skill}"
    );

    let config = fs::read_to_string(machine.codex_home().join("config.toml")).unwrap();
    assert!(
        config.contains(&format!(
            "[mcp_servers.baton]\nurl = \"{HUB}/mcp\"\nbearer_token_env_var = \"HUB_TOKEN\"\n"
        )),
        "{config}"
    );
    let hooks = machine.json(&machine.codex_home().join("hooks.json"));
    assert_eq!(
        hook_commands(&hooks, "Stop"),
        [remote_hook("stop", "codex")]
    );

    let gemini = machine.json(&machine.user().join(".gemini/settings.json"));
    assert_eq!(
        gemini["mcpServers"]["baton"],
        json!({
            "httpUrl": format!("{HUB}/mcp"),
            "headers": {"Authorization": "Bearer ${HUB_TOKEN}"},
            "trust": true
        })
    );
    assert_eq!(
        hook_commands(&gemini, "SessionStart"),
        [remote_hook("session-start", "gemini")]
    );

    let opencode = machine.json(&machine.xdg_config().join("opencode/opencode.json"));
    assert_eq!(
        opencode["mcp"]["baton"],
        json!({
            "type": "remote",
            "url": format!("{HUB}/mcp"),
            "headers": {"Authorization": "Bearer {env:HUB_TOKEN}"},
            "enabled": true
        })
    );
    let plugin =
        fs::read_to_string(machine.xdg_config().join("opencode/plugins/baton.js")).unwrap();
    assert!(
        plugin.contains(&format!(
            "const WIRING = {{\"agent\":null,\"editTools\":[\"edit\",\"write\",\"apply_patch\"],\"home\":null,\"program\":{},\"tokenEnv\":\"HUB_TOKEN\",\"url\":\"{HUB}\"}};",
            json!(baton())
        )),
        "{}",
        plugin.lines().find(|line| line.contains("WIRING =")).unwrap_or("")
    );

    for file in [".claude/settings.json", ".gemini/settings.json"] {
        let text = fs::read_to_string(machine.user().join(file)).unwrap();
        assert!(!text.contains("--as"), "{file} names an agent:\n{text}");
    }
    assert_no_token_in(&machine.files());
    let hub = machine.hub_files();
    assert!(
        hub.keys()
            .all(|path| !path.starts_with(machine.env.home().join("agents"))),
        "an agent was registered here: {:?}",
        hub.keys()
    );
    assert_no_token_in(&hub);
}

#[test]
fn remote_setup_again_changes_nothing_and_uninstall_gives_every_byte_back() {
    let machine = Machine::new().with_user_configs();
    let original = machine.files();
    machine
        .setup_remote(&["--client", "claude,codex,gemini,opencode"])
        .ok();
    let wired = machine.files();
    assert_ne!(wired, original);

    let again = machine.setup_remote(&["--client", "claude,codex,gemini,opencode"]);
    for client in CLIENTS {
        assert!(
            again.ok().contains(&format!(
                "{client} (hub {HUB}): already wired, nothing to change"
            )),
            "{}",
            again.stdout
        );
    }
    assert_eq!(machine.files(), wired, "the second run wrote something");

    let run = machine.setup(&["--uninstall"]);
    for client in CLIENTS {
        assert!(
            run.ok().contains(&format!("{client} (hub {HUB}):")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(machine.files_without_backups(), original);

    // From an empty home, nothing of it is left either.
    let empty = Machine::new();
    empty
        .setup_remote(&["--client", "claude,codex,gemini,opencode"])
        .ok();
    empty.setup(&["--uninstall"]).ok();
    assert_eq!(empty.files(), BTreeMap::new());
}

#[test]
fn a_local_wiring_becomes_a_remote_one_and_back() {
    let machine = Machine::new().with_user_configs();
    machine.setup(&["--client", "gemini"]).ok();
    let local = machine.files_without_backups();
    let run = machine.setup_remote(&["--client", "gemini"]);
    assert!(
        run.ok().contains(&format!(
            "update MCP server mcpServers.baton: {HUB}/mcp (token from $HUB_TOKEN)"
        )),
        "{}",
        run.stdout
    );
    let settings = machine.json(&machine.user().join(".gemini/settings.json"));
    assert_eq!(settings["mcpServers"]["baton"]["args"], Value::Null);
    assert_eq!(
        hook_commands(&settings, "AfterAgent"),
        [remote_hook("stop", "gemini")],
        "one baton hook per event, the remote one"
    );
    machine.setup(&["--client", "gemini"]).ok();
    assert_eq!(machine.files_without_backups(), local);
}

#[test]
fn a_bad_url_or_variable_is_refused_with_exit_1_and_nothing_written() {
    let machine = Machine::new().with_user_configs();
    let before = machine.files();
    let hub_before = machine.hub_files();
    let cases: [(&[&str], &str); 9] = [
        (
            &["--url", "10.0.0.5:7878", "--token-env", "T"],
            "--url 10.0.0.5:7878 is not",
        ),
        (
            &["--url", "ftp://hub", "--token-env", "T"],
            "--url ftp://hub is not",
        ),
        (
            &["--url", "http://", "--token-env", "T"],
            "--url http:// is not",
        ),
        (
            &["--url", "http://hub/?t=1", "--token-env", "T"],
            "is not the URL of a hub",
        ),
        (
            &["--url", "http://a@hub", "--token-env", "T"],
            "is not the URL of a hub",
        ),
        (
            &["--url", HUB, "--token-env", "1T"],
            "--token-env 1T is not",
        ),
        (
            &["--url", HUB, "--token-env", "HUB-TOKEN"],
            "--token-env HUB-TOKEN is not",
        ),
        (
            &["--url", HUB, "--token-env", "T", "--as", "x"],
            "--as x does not go with --url",
        ),
        (&["--url", HUB], "--token-env"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--client", "claude"];
        all.extend_from_slice(args);
        let run = machine.setup(&all);
        let error = run.fails(1);
        assert!(error.contains(expected), "{args:?}: {error}");
        assert!(
            !error.contains("panicked") && error.lines().next().unwrap().starts_with("error"),
            "{args:?}: {error}"
        );
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert_eq!(machine.files(), before);
    assert_eq!(machine.hub_files(), hub_before);
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
#[test]
fn a_remote_dry_run_shows_the_wiring_but_not_the_token_and_writes_nothing() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let before = machine.files();
    let out = machine
        .setup_remote(&["--client", "claude", "--listen-service", "--dry-run"])
        .ok()
        .to_string();
    assert!(out.starts_with("dry run: nothing was written\n"), "{out}");
    assert!(
        out.lines().any(|line| line.trim_start().starts_with("+ ")
            && line.contains(r#""Authorization": "Bearer ${HUB_TOKEN}""#)),
        "{out}"
    );
    assert!(!out.contains(SECRET), "{out}");
    let value = machine
        .setup_remote(&[
            "--client",
            "claude",
            "--listen-service",
            "--dry-run",
            "--json",
        ])
        .json();
    assert!(!value.to_string().contains(SECRET), "{value}");
    assert_eq!(value["clients"][0]["hub"], HUB);
    assert_eq!(machine.files(), before);
    assert!(!machine.env.home().join("listen-token").exists());
}

#[cfg(target_os = "linux")]
#[test]
fn the_listen_service_keeps_baton_listen_waking_the_client_and_goes_with_uninstall() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new();
    let original = machine.files();
    let run = machine.setup_remote(&["--client", "codex", "--listen-service"]);
    let said = run.ok();
    assert!(
        said.contains(
            "note: start the listen service: systemctl --user daemon-reload && systemctl \
             --user enable --now baton-listen"
        ),
        "{said}"
    );
    assert!(!said.contains("next, to wake the agent"), "{said}");

    let unit_path = machine
        .xdg_config()
        .join("systemd/user/baton-listen.service");
    let unit = fs::read_to_string(&unit_path).unwrap();
    let token_file = machine.env.home().join("listen-token");
    for line in [
        "# baton's listen service for codex".to_string(),
        format!("Environment=\"BATON_URL={HUB}\""),
        format!("Environment=\"BATON_TOKEN_FILE={}\"", token_file.display()),
        format!(
            "Environment=\"BATON_HOME={}\"",
            machine.env.home().display()
        ),
        format!("Environment=\"PATH={}\"", machine.bin().display()),
        format!(
            "ExecStart={} listen --wake -- /bin/sh -c \"HUB_TOKEN=\\\"$$(cat \\\"$$1\\\")\\\" \
             && export HUB_TOKEN && shift && exec \\\"$$@\\\"\" baton-wake {} codex exec \
             --skip-git-repo-check -s workspace-write --\n",
            baton(),
            token_file.display()
        ),
        "Restart=always".to_string(),
    ] {
        assert!(unit.contains(&line), "no {line:?} in:\n{unit}");
    }
    assert_eq!(fs::read_to_string(&token_file).unwrap(), SECRET);
    #[cfg(unix)]
    assert_eq!(
        fs::metadata(&token_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_no_token_in(&machine.files());

    // Again: nothing changes; for two clients: refused.
    let again = machine.setup_remote(&["--client", "codex", "--listen-service"]);
    assert!(
        again.ok().contains("already wired, nothing to change"),
        "{}",
        again.stdout
    );
    let error = machine
        .setup_remote(&["--client", "codex,claude", "--listen-service"])
        .fails(1)
        .to_string();
    assert!(
        error.contains("--listen-service wakes one client"),
        "{error}"
    );

    // `systemctl --user enable` links it from default.target.wants; uninstall undoes that.
    let wants = machine
        .xdg_config()
        .join("systemd/user/default.target.wants");
    fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(&unit_path, wants.join("baton-listen.service")).unwrap();
    let run = machine.setup(&["--uninstall", "--client", "codex"]);
    assert!(
        run.ok().contains(
            "note: stop the listen service if it runs: systemctl --user stop baton-listen"
        ),
        "{}",
        run.stdout
    );
    assert!(!unit_path.exists());
    assert!(fs::symlink_metadata(wants.join("baton-listen.service")).is_err());
    assert!(!token_file.exists());
    assert_eq!(machine.files(), original);
}

#[cfg(target_os = "linux")]
#[test]
fn without_the_token_in_setup_s_environment_the_service_is_written_and_the_user_told() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new();
    let run = machine.setup(&[
        "--client",
        "gemini",
        "--url",
        HUB,
        "--token-env",
        "HUB_TOKEN_NOT_SET_ANYWHERE",
        "--listen-service",
    ]);
    let token_file = machine.env.home().join("listen-token");
    assert!(
        run.ok().contains(&format!(
            "note: $HUB_TOKEN_NOT_SET_ANYWHERE is not set here, so the service has no token \
             yet: set it and run this setup again, or write the token into {} yourself (mode \
             0600)",
            token_file.display()
        )),
        "{}",
        run.stdout
    );
    assert!(!token_file.exists());
    assert!(
        machine
            .xdg_config()
            .join("systemd/user/baton-listen.service")
            .is_file()
    );
}

#[cfg(unix)]
#[test]
fn doctor_says_a_remote_wired_client_is_wired_to_its_hub() {
    let machine = Machine::new();
    machine.setup_remote(&["--client", "claude,opencode"]).ok();
    let value = machine.baton(&["--json", "doctor"], &[]).json();
    let clients: Vec<(String, String)> = value["checks"]
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
        .collect();
    let wired = format!("wired to the hub at {HUB} (token from $HUB_TOKEN)");
    assert_eq!(
        clients,
        [
            (
                "ok".to_string(),
                format!(
                    "claude: {wired} · hooks SessionStart,UserPromptSubmit,Stop,PreToolUse · instructions; \
                     $HUB_TOKEN is not set in this shell"
                )
            ),
            (
                "ok".to_string(),
                "codex: found, not wired (`baton setup --client codex`)".to_string()
            ),
            (
                "ok".to_string(),
                format!(
                    "opencode: {wired} · plugin · instructions; $HUB_TOKEN is not set in this \
                     shell"
                )
            ),
        ]
    );
    let status = machine.setup(&[]).ok().to_string();
    let claude = status.lines().find(|line| line.starts_with("claude "));
    assert!(
        claude.is_some_and(|line| line.contains(&format!("  {wired} · hooks"))),
        "{status}"
    );
}
