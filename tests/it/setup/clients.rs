//! What setup writes for each client, and what of the user's own it keeps.

use super::*;

#[test]
fn claude_gets_server_hooks_skill_and_registration_and_keeps_the_rest() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let said = machine.setup(&["--client", "claude"]).ok().to_string();
    // It says how to start a session that takes channel pushes, and leaves the flag to
    // the user: no file it writes carries it.
    assert!(
        said.contains(
            "note: to have new work pushed into a running session, start it as \
             `claude --dangerously-load-development-channels server:baton`"
        ),
        "{said}"
    );

    let state = machine.json(&machine.user().join(".claude.json"));
    assert_eq!(
        state["mcpServers"]["baton"],
        json!({
            "type": "stdio",
            "command": baton(),
            "args": ["--as", "claude", "mcp"],
            "env": {"BATON_HOME": machine.env.home().display().to_string()}
        })
    );
    let original: Value = serde_json::from_str(CLAUDE_STATE).unwrap();
    assert_eq!(state["mcpServers"]["docs"], original["mcpServers"]["docs"]);
    assert_eq!(state["projects"], original["projects"]);
    assert_eq!(state["numStartups"], 12);
    let text = fs::read_to_string(machine.user().join(".claude.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"numStartups\": 12,\n  \"userID\": \"0123abcd\",\n"),
        "key order and layout kept:\n{text}"
    );

    let settings = machine.json(&machine.user().join(".claude/settings.json"));
    assert_eq!(settings["model"], "opus");
    // The guard before an edit joins the user's own hook of the event, for the tools that
    // edit files alone.
    assert_eq!(
        hook_commands(&settings, "PreToolUse"),
        [
            "audit-bash".to_string(),
            hook(&machine.env, "claude", "pre-edit", "claude")
        ]
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"][1]["matcher"],
        "Edit|Write|MultiEdit|NotebookEdit"
    );
    assert_eq!(
        settings["hooks"]["PreToolUse"][1]["hooks"][0]["timeout"],
        10
    );
    assert_eq!(
        hook_commands(&settings, "Stop"),
        [
            "notify-send done".to_string(),
            hook(&machine.env, "claude", "stop", "claude")
        ]
    );
    assert_eq!(
        hook_commands(&settings, "SessionStart"),
        [hook(&machine.env, "claude", "session-start", "claude")]
    );
    assert_eq!(
        hook_commands(&settings, "UserPromptSubmit"),
        [hook(&machine.env, "claude", "prompt", "claude")]
    );
    assert_eq!(settings["hooks"]["Stop"][1]["hooks"][0]["timeout"], 10);
    let text = fs::read_to_string(machine.user().join(".claude/settings.json")).unwrap();
    assert!(
        text.contains("\n    \"model\": \"opus\",\n"),
        "4-space indent kept:\n{text}"
    );
    for file in [".claude/settings.json", ".claude.json"] {
        let text = fs::read_to_string(machine.user().join(file)).unwrap();
        assert!(!text.contains("channels"), "{file}:\n{text}");
    }

    let skill = fs::read_to_string(machine.user().join(".claude/skills/baton/SKILL.md")).unwrap();
    assert!(
        skill.starts_with("---\nname: baton\ndescription: "),
        "{skill}"
    );
    assert!(skill.contains("You are `claude` on baton"));

    let agent = machine.agent("claude");
    assert_eq!(agent["clients"], json!(["claude"]));
    assert_eq!(
        agent["wake"],
        json!([
            "claude",
            "-p",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "mcp__baton",
            "--"
        ])
    );
    assert!(!agent["strengths"].as_str().unwrap().is_empty());
}

#[test]
fn codex_follows_codex_home_and_keeps_toml_comments() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let run = machine.setup(&["--client", "codex"]);
    assert!(
        run.ok().contains("/hooks"),
        "tells the user to trust the hooks: {}",
        run.stdout
    );
    assert!(
        !machine.user().join(".codex").exists(),
        "CODEX_HOME is used, not ~/.codex"
    );

    let text = fs::read_to_string(machine.codex_home().join("config.toml")).unwrap();
    let added = format!(
        "[mcp_servers.baton]\ncommand = \"{}\"\nargs = [\"--as\", \"codex\", \"mcp\"]\n\
         default_tools_approval_mode = \"approve\"\nenv_vars = [\"CODEX_HOME\"]\n\n\
         [mcp_servers.baton.env]\nBATON_HOME = \"{}\"\n\n",
        baton(),
        machine.env.home().display()
    );
    assert!(text.contains(&added), "{text}");
    assert_eq!(
        text.replacen(&added, "", 1),
        CODEX_CONFIG,
        "every byte of the user's TOML kept"
    );
    let config: toml_edit::DocumentMut = text.parse().unwrap();
    let server = &config["mcp_servers"]["baton"];
    assert_eq!(server["command"].as_str(), Some(baton().as_str()));
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--as", "codex", "mcp"]);
    assert_eq!(
        server["env"]["BATON_HOME"].as_str(),
        Some(machine.env.home().to_str().unwrap())
    );

    let hooks = machine.json(&machine.codex_home().join("hooks.json"));
    assert_eq!(
        hook_commands(&hooks, "SessionStart"),
        [
            "echo hello".to_string(),
            hook(&machine.env, "codex", "session-start", "codex")
        ]
    );
    assert_eq!(
        hook_commands(&hooks, "UserPromptSubmit"),
        [hook(&machine.env, "codex", "prompt", "codex")]
    );
    assert_eq!(
        hook_commands(&hooks, "Stop"),
        [hook(&machine.env, "codex", "stop", "codex")]
    );

    let agents = fs::read_to_string(machine.codex_home().join("AGENTS.md")).unwrap();
    assert!(agents.starts_with(&format!("{CODEX_AGENTS}\n<!-- baton:start -->\n")));
    assert!(agents.ends_with("<!-- baton:end -->\n"));
    assert!(agents.contains("You are `codex` on baton"));

    assert_eq!(
        machine.agent("codex")["wake"],
        json!([
            "codex",
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "--add-dir",
            machine.env.home().display().to_string(),
            "--"
        ])
    );
}

#[test]
fn gemini_gets_trusted_server_and_millisecond_hooks_in_one_file_with_its_comments() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    machine.setup(&["--client", "gemini"]).ok();
    let path = machine.user().join(".gemini/settings.json");
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains("  // Gemini accepts comments here; they must survive.\n"));

    let settings = machine.json(&path);
    assert_eq!(settings["theme"], "Dracula");
    assert_eq!(settings["mcpServers"]["docs"]["command"], "docs-server");
    assert_eq!(
        settings["mcpServers"]["baton"],
        json!({
            "command": baton(),
            "args": ["--as", "gemini", "mcp"],
            "env": {"BATON_HOME": machine.env.home().display().to_string()},
            "trust": true
        })
    );
    assert_eq!(
        hook_commands(&settings, "BeforeTool"),
        [
            "lint-it".to_string(),
            hook(&machine.env, "gemini", "pre-edit", "gemini")
        ]
    );
    let guard = &settings["hooks"]["BeforeTool"][1];
    assert_eq!(guard["matcher"], "write_file|replace");
    assert_eq!(guard["hooks"][0]["name"], "baton pre-edit");
    assert_eq!(guard["hooks"][0]["timeout"], 10_000, "milliseconds");
    for (event, baton_event) in [
        ("SessionStart", "session-start"),
        ("BeforeAgent", "prompt"),
        ("AfterAgent", "stop"),
    ] {
        assert_eq!(
            hook_commands(&settings, event),
            [hook(&machine.env, "gemini", baton_event, "gemini")]
        );
        assert_eq!(settings["hooks"][event][0]["hooks"][0]["timeout"], 10_000);
    }
    let instructions = fs::read_to_string(machine.user().join(".gemini/GEMINI.md")).unwrap();
    assert!(instructions.starts_with("Prefer small functions.\n\n<!-- baton:start -->\n"));
    assert_eq!(
        machine.agent("gemini")["wake"],
        json!([
            "gemini",
            "--skip-trust",
            "--approval-mode",
            "auto_edit",
            "-p"
        ])
    );
}

#[test]
fn opencode_follows_xdg_config_home_and_gets_the_plugin() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let machine = Machine::new().with_user_configs();
    let plugin = machine.xdg_config().join("opencode/plugins/baton.js");
    let dry = machine.setup(&["--client", "opencode", "--dry-run"]);
    assert!(
        dry.ok().contains(&format!(
            "would create {}\n      add the baton plugin",
            plugin.display()
        )),
        "{}",
        dry.stdout
    );
    assert!(!plugin.exists(), "a dry run writes nothing");
    let run = machine.setup(&["--client", "opencode"]);
    assert!(
        run.ok()
            .contains("opencode takes baton's hooks through its plugin"),
        "{}",
        run.stdout
    );
    let config = machine.json(&machine.xdg_config().join("opencode/opencode.json"));
    assert_eq!(config["$schema"], "https://opencode.ai/config.json");
    assert_eq!(config["mcp"]["docs"]["command"], json!(["docs-server"]));
    assert_eq!(
        config["mcp"]["baton"],
        json!({
            "type": "local",
            "command": [baton(), "--as", "opencode", "mcp"],
            "environment": {"BATON_HOME": machine.env.home().display().to_string()},
            "enabled": true
        })
    );
    // The plugin is the repository's, with the baton, agent and hub setup wired in.
    let text = fs::read_to_string(&plugin).unwrap();
    let source = include_str!("../../../hooks/opencode/baton.js");
    let wiring = json!({
        "agent": "opencode",
        "home": machine.env.home().display().to_string(),
        "program": baton(),
        "editTools": ["edit", "write", "apply_patch"],
    });
    assert_eq!(
        text,
        source.replace("const WIRING = {};", &format!("const WIRING = {wiring};"))
    );
    let agents = fs::read_to_string(machine.xdg_config().join("opencode/AGENTS.md")).unwrap();
    assert!(agents.starts_with("<!-- baton:start -->\n"));
    assert!(agents.contains("You are `opencode` on baton"));
    assert!(!machine.user().join(".config").exists());
    assert_eq!(
        machine.agent("opencode")["wake"],
        json!(["opencode", "run", "--"])
    );
    let again = machine.setup(&["--client", "opencode"]);
    assert!(!again.ok().contains("baton.js"), "{}", again.stdout);

    machine.setup(&["--uninstall", "--client", "opencode"]).ok();
    assert!(!plugin.exists(), "uninstall removes the plugin");
    assert!(
        !plugin.parent().unwrap().exists(),
        "and the plugin directory setup made for it"
    );
}

#[test]
fn a_plugin_file_of_the_user_s_own_is_neither_replaced_nor_removed() {
    let machine = Machine::new().with_user_configs();
    let plugin = machine.xdg_config().join("opencode/plugins/baton.js");
    fs::create_dir_all(plugin.parent().unwrap()).unwrap();
    fs::write(&plugin, "export default {}\n").unwrap();
    let before = machine.files();
    let error = machine
        .setup(&["--client", "opencode"])
        .fails(1)
        .to_string();
    assert!(
        error.contains("is not baton's plugin: setup leaves it as it is"),
        "{error}"
    );
    assert_eq!(machine.files(), before, "nothing written");
    machine.setup(&["--uninstall", "--client", "opencode"]).ok();
    assert_eq!(fs::read_to_string(&plugin).unwrap(), "export default {}\n");
}
