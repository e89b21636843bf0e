//! `baton setup` in a throwaway home holding the user's own configs: what it writes for each
//! client, what it keeps, that a second run changes nothing, that uninstall gives every byte
//! back, and that a dry run writes nothing.

use std::collections::BTreeMap;
use std::fs;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::machine::Machine;
use crate::common::{Run, TestEnv, baton_bin, files_only};

const CLIENTS: [&str; 4] = ["claude", "codex", "gemini", "opencode"];

impl Machine {
    /// The user's own configs: other servers, other hooks, comments, and each file formatted
    /// its own way.
    pub fn with_user_configs(self) -> Machine {
        self.write(&self.user().join(".claude.json"), CLAUDE_STATE);
        self.write(&self.user().join(".claude/settings.json"), CLAUDE_SETTINGS);
        self.write(&self.codex_home().join("config.toml"), CODEX_CONFIG);
        self.write(&self.codex_home().join("hooks.json"), CODEX_HOOKS);
        self.write(&self.codex_home().join("AGENTS.md"), CODEX_AGENTS);
        self.write(&self.user().join(".gemini/settings.json"), GEMINI_SETTINGS);
        self.write(&self.user().join(".gemini/GEMINI.md"), GEMINI_MD);
        self.write(&self.xdg_config().join("opencode/opencode.json"), OPENCODE);
        self
    }

    /// Every file under the user's home, `CODEX_HOME` and `XDG_CONFIG_HOME`, with its bytes.
    /// Every file of the user's home and the clients' directories, but the password file
    /// of the database under test (the user's own, which setup never touches).
    pub fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for root in [self.user(), self.codex_home(), self.xdg_config()] {
            collect(&root, &mut files);
        }
        files.remove(&self.user().join(".pgpass"));
        files
    }

    /// Like [`files`], without setup's backup copies.
    pub fn files_without_backups(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        self.files()
            .into_iter()
            .filter(|(path, _)| !is_backup(path))
            .collect()
    }

    pub fn json(&self, path: &Path) -> Value {
        let text = fs::read_to_string(path).unwrap();
        jsonc(&text)
    }
}

fn collect(dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            // An empty directory counts too: uninstall must not leave them behind.
            files.insert(path.join(""), Vec::new());
            collect(&path, files);
        } else {
            files.insert(path.clone(), fs::read(&path).unwrap());
        }
    }
}

fn is_backup(path: &Path) -> bool {
    path.to_string_lossy().contains(".baton-backup-")
}

/// Parses JSON that may hold comments and trailing commas, as the clients allow.
fn jsonc(text: &str) -> Value {
    jsonc_parser::cst::CstRootNode::parse(text, &Default::default())
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{text}"))
        .value()
        .and_then(|value| value.to_serde_value())
        .unwrap_or_else(|| panic!("no JSON value in:\n{text}"))
}

fn baton() -> String {
    baton_bin().display().to_string()
}

fn hook(env: &TestEnv, agent: &str, event: &str, client: &str) -> String {
    format!(
        "BATON_HOME={} {} --as {agent} hook {event} --client {client}",
        env.home().display(),
        baton()
    )
}

/// The commands of every hook handler of `event`.
pub fn hook_commands(settings: &Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|group| group["hooks"].as_array().cloned().unwrap_or_default())
        .map(|handler| handler["command"].as_str().unwrap().to_string())
        .collect()
}

const CLAUDE_STATE: &str = r#"{
  "numStartups": 12,
  "userID": "0123abcd",
  "mcpServers": {
    "docs": {
      "type": "stdio",
      "command": "docs-server",
      "args": [
        "--port",
        "0"
      ],
      "env": {}
    }
  },
  "projects": {
    "/src/app": {
      "allowedTools": []
    }
  }
}"#;

const CLAUDE_SETTINGS: &str = r#"{
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "audit-bash"}]
            }
        ],
        "Stop": [
            {
                "hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]
            }
        ]
    }
}
"#;

const CODEX_CONFIG: &str = r#"# My Codex settings: keep this comment.
model = "o4"            # aligned comment
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]

[mcp_servers.docs.env]
DOCS_TOKEN = "secret"   # keep me too

[profiles.fast]
model = "o4-mini"
"#;

const CODEX_HOOKS: &str = r#"{
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "echo hello", "timeout": 3}]}
    ]
  }
}
"#;

const CODEX_AGENTS: &str = "# My global rules\n\nAlways run the tests.\n";

const GEMINI_SETTINGS: &str = r#"{
  // Gemini accepts comments here; they must survive.
  "theme": "Dracula",
  "mcpServers": {
    "docs": {"command": "docs-server", "args": []}
  },
  "hooks": {
    "BeforeTool": [
      {"matcher": "write_file", "hooks": [{"type": "command", "command": "lint-it", "timeout": 2000}]}
    ]
  }
}
"#;

const GEMINI_MD: &str = "Prefer small functions.\n";

const OPENCODE: &str = r#"{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "docs": {
      "type": "local",
      "command": ["docs-server"],
      "enabled": true
    }
  }
}
"#;

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
    assert_eq!(hook_commands(&settings, "PreToolUse"), ["audit-bash"]);
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
    assert_eq!(hook_commands(&settings, "BeforeTool"), ["lint-it"]);
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
    let source = include_str!("../../hooks/opencode/baton.js");
    let wiring = json!({
        "agent": "opencode",
        "home": machine.env.home().display().to_string(),
        "program": baton(),
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
    let agents = || {
        let mut listed = machine.env.run("", &["--json", "agents"]).json();
        for agent in listed["agents"].as_array_mut().unwrap() {
            agent.as_object_mut().unwrap().remove("seen_seconds_ago");
        }
        listed
    };
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
            ok("claude: mcp as claude · hooks SessionStart,UserPromptSubmit,Stop · instructions"),
            ok("codex: mcp as codex · hooks SessionStart,UserPromptSubmit,Stop · instructions"),
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
            "const WIRING = {{\"agent\":null,\"home\":null,\"program\":{},\"tokenEnv\":\"HUB_TOKEN\",\"url\":\"{HUB}\"}};",
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
                    "claude: {wired} · hooks SessionStart,UserPromptSubmit,Stop · instructions; \
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

/// On a database (SPEC 16), setup gives each client's baton the store, without its password
/// (which no file of the clients gets, and the user keeps in ~/.pgpass, as setup says), so
/// that a client which passes its servers a short list of variables (Codex) still acts on
/// the hub's state; Codex's wake command may open a socket in its sandbox, for the `baton`
/// in its shell. `clients_woken.rs` proves the clients act through it on PostgreSQL.
#[test]
fn on_a_database_every_client_gets_the_store_without_its_password() {
    let machine = Machine::new();
    let (url, made_here) = match &machine.env.store_url {
        Some(url) => (url.clone(), false),
        None if crate::common::cluster::runs_here() => {
            (crate::common::cluster::fresh_database(None), true)
        }
        None => return,
    };
    let password = crate::common::store_password()
        .unwrap_or_else(|| crate::common::cluster::password().to_string());
    assert!(url.contains(&password), "the test's URL holds its password");
    let without = baton::store::postgres::url::StoreUrl::parse(&url)
        .unwrap()
        .without_password();
    let store = [("BATON_STORE", Path::new(&url))];
    let run = machine.setup_env(&["--client", "claude,codex,gemini,opencode"], &store);
    assert!(
        run.ok()
            .contains("BATON_STORE without its password: keep the password in ~/.pgpass"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(&password) && !run.stderr.contains(&password));

    let codex: toml_edit::DocumentMut =
        fs::read_to_string(machine.codex_home().join("config.toml"))
            .unwrap()
            .parse()
            .unwrap();
    assert_eq!(
        codex["mcp_servers"]["baton"]["env"]["BATON_STORE"].as_str(),
        Some(without.as_str())
    );
    let claude = machine.json(&machine.user().join(".claude.json"));
    assert_eq!(
        claude["mcpServers"]["baton"]["env"]["BATON_STORE"],
        json!(without)
    );
    let gemini = machine.json(&machine.user().join(".gemini/settings.json"));
    assert_eq!(
        gemini["mcpServers"]["baton"]["env"]["BATON_STORE"],
        json!(without)
    );
    for hook in hook_commands(&claude_settings(&machine), "UserPromptSubmit") {
        assert!(hook.contains(&format!("BATON_STORE='{without}'")), "{hook}");
    }
    for (path, bytes) in machine.files() {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(&password),
            "the password is in {}",
            path.display()
        );
    }

    let shown = machine.baton(
        &["--json", "--as", "codex", "agent", "show", "codex"],
        &store,
    );
    let wake: Vec<String> = serde_json::from_value(shown.json()["wake"].clone()).unwrap();
    assert!(
        wake.windows(2)
            .any(|pair| pair == ["-c", "sandbox_workspace_write.network_access=true"]),
        "{wake:?}"
    );
    if made_here {
        crate::common::cluster::drop_database(&url);
    }
}

fn claude_settings(machine: &Machine) -> Value {
    machine.json(&machine.user().join(".claude/settings.json"))
}

/// The front matter of a subagent file setup wrote, as a YAML parser reads it (PyYAML's
/// `safe_load`, through `python3`), as JSON; `None` where no python3 with PyYAML is here.
fn yaml_front_matter(path: &Path) -> Option<Value> {
    let script = "import sys, json, yaml\n\
                  text = open(sys.argv[1]).read()\n\
                  matter = text.split('---\\n')[1]\n\
                  print(json.dumps(yaml.safe_load(matter)))\n";
    let ran = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .ok()?;
    if !ran.status.success() {
        let said = String::from_utf8_lossy(&ran.stderr);
        assert!(said.contains("No module named 'yaml'"), "{said}");
        return None;
    }
    Some(serde_json::from_slice(&ran.stdout).unwrap())
}

#[test]
fn gemini_subagents_of_agents_named_like_yaml_values_keep_their_names_as_strings() {
    use crate::common::clients::{RemoteRig, TOKEN_ENV};
    let hub = TestEnv::new();
    let names = ["true", "null", "123", "1e3", "no"];
    for name in names {
        hub.run("", &["agent", "add", name]).ok();
    }
    let rig = RemoteRig::wire(Machine::new(), hub, "gemini", "lead");
    let url = rig.url();
    let setup = rig.machine.setup_env(
        &[
            "--client",
            "gemini",
            "--url",
            &url,
            "--token-env",
            TOKEN_ENV,
            "--a2a",
        ],
        &[(TOKEN_ENV, Path::new(&rig.token))],
    );
    setup.ok();
    let agents = rig.machine.user().join(".gemini/agents");
    let mut parsed = 0;
    for name in names {
        let path = agents.join(format!("baton-{name}.md"));
        let text = fs::read_to_string(&path).unwrap_or_else(|_| panic!("{}", setup.stdout));
        // Every value of the front matter is a double-quoted string, the fixed ones too.
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 12, "{text}");
        assert_eq!(
            [&lines[2..5], &lines[7..]].concat(),
            [
                "kind: \"remote\"".to_string(),
                format!("name: \"baton-{name}\""),
                format!("display_name: \"{name}\""),
                "auth:".to_string(),
                "  type: \"http\"".to_string(),
                "  scheme: \"Bearer\"".to_string(),
                format!("  token: \"${TOKEN_ENV}\""),
                "---".to_string(),
            ],
            "{text}"
        );
        assert!(
            lines[5].starts_with(&format!("description: \"{name}, an agent")),
            "{text}"
        );
        assert!(
            lines[6].starts_with(&format!("agent_card_url: \"{url}/a2a/agents/{name}/")),
            "{text}"
        );
        assert!(lines[5].ends_with('"') && lines[6].ends_with('"'), "{text}");
        let Some(matter) = yaml_front_matter(&path) else {
            continue;
        };
        parsed += 1;
        assert_eq!(matter["display_name"], json!(name), "{matter}");
        assert_eq!(matter["name"], json!(format!("baton-{name}")), "{matter}");
        assert_eq!(matter["kind"], "remote", "{matter}");
        assert_eq!(matter["auth"]["token"], format!("${TOKEN_ENV}"), "{matter}");
    }
    if parsed == 0 {
        eprintln!("NOT RUN (in part): no python3 with PyYAML here to read the files as YAML");
    }
}
