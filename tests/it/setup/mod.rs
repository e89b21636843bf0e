//! `baton setup` in a throwaway home holding the user's own configs: what it writes for each
//! client, what it keeps, that a second run changes nothing, that uninstall gives every byte
//! back, and that a dry run writes nothing.

mod clients;
mod database;
mod remote;
mod subagents;
mod uninstall;
mod wiring;

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
