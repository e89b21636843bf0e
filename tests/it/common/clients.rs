//! Real agent clients, scripted models: the pinned clients (`BATON_TEST_CLIENTS`), the
//! scripted model server they are pointed at (`tests/clients/model_server.py`), what differs
//! between the clients ([`Dialect`]), and a client wired by `baton setup` on a machine of
//! its own: to the hub in its home ([`WiredClient`]) or to a hub elsewhere ([`RemoteRig`]).

#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use serde_json::{Value, json};

use super::http::{Served, add_token};
use super::machine::Machine;
use super::{Run, TestEnv, run};

/// The directory of the clients' programs; `None` (after saying why) when the test is not
/// to run.
pub fn clients_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("BATON_TEST_CLIENTS").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(reason) = std::env::var_os("BATON_TEST_CLIENTS_SKIPPED") {
        eprintln!(
            "SKIPPED: the agent clients' checks of baton setup: npm cannot reach its registry \
             ({})",
            reason.to_string_lossy()
        );
        return None;
    }
    // CI must run them: a CI run that forgot the install step fails here, loudly.
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but BATON_TEST_CLIENTS is not: .ci/run must run tests/clients/install.sh"
    );
    eprintln!(
        "NOT RUN: the agent clients' checks of baton setup need BATON_TEST_CLIENTS=<dir of \
         claude, codex, gemini, opencode>, as `bash tests/clients/install.sh` prints"
    );
    None
}

pub const RESULT: &str = "Refused invalid dates in the parser";
pub const QUESTION: &str = "Should 2026-02-30 be refused or clamped to the month end?";
pub const ANSWER: &str = "Refuse it";
pub const PROJECT: &str = "app";

/// The scripted model, running until the test ends.
pub struct ModelServer {
    child: Child,
    /// Held so that the server sees its stdin close when the test ends, however it ends.
    _stdin: ChildStdin,
    port: u16,
    log: PathBuf,
}

impl ModelServer {
    pub fn start(dir: &Path, extra: &[&str]) -> ModelServer {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/model_server.py");
        let log = dir.join("model-requests.jsonl");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg("--log")
            .arg(&log)
            .args(["--result", RESULT, "--question", QUESTION])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the scripted model server");
        let stdin = child.stdin.take().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the model server did not say its port: {line:?}"));
        ModelServer {
            child,
            _stdin: stdin,
            port,
            log,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request the clients sent, in order.
    pub fn requests(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("a request record parses"))
            .collect()
    }

    /// The model's answers from request `from` on, one line each, for failure messages.
    pub fn answers(&self, from: usize) -> String {
        self.requests()
            .iter()
            .skip(from)
            .map(|request| {
                format!(
                    "{} {} -> {}",
                    request["n"], request["path"], request["answer"]
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The tool calls the model made from request `from` on: (tool name, arguments).
    pub fn calls(&self, from: usize) -> Vec<(String, Value)> {
        self.requests()
            .iter()
            .skip(from)
            .filter(|request| request["answer"][0] == "call")
            .map(|request| {
                (
                    request["answer"][1].as_str().unwrap().to_string(),
                    request["answer"][2].clone(),
                )
            })
            .collect()
    }

    /// The text of every request from `from` on, as the client sent it.
    pub fn sent_text(&self, from: usize) -> String {
        self.requests()
            .iter()
            .skip(from)
            .map(|request| request["body"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What differs between the clients.
pub struct Dialect {
    pub client: &'static str,
    /// How the client spells baton's `claim` tool in the model's tool calls.
    pub claim_tool: &'static str,
    /// The client shows the model baton's inbox from its hooks (setup's hooks run).
    pub has_hook_context: bool,
    /// The client has a stop hook that setup wires and that runs without the user's say.
    pub has_stop_hook: bool,
    /// Variables that point the client at the model server.
    pub env: fn(&ModelServer) -> Vec<(String, String)>,
    /// Writes the client's model settings into the user's config, before setup runs.
    pub configure: fn(&Machine, &ModelServer),
}

impl Dialect {
    pub fn claude() -> Dialect {
        Dialect {
            client: "claude",
            claim_tool: "mcp__baton__claim",
            has_hook_context: true,
            has_stop_hook: true,
            env: |server| {
                env_pairs(&[
                    ("ANTHROPIC_BASE_URL", server.url()),
                    ("ANTHROPIC_API_KEY", "scripted".into()),
                ])
            },
            configure: |_, _| {},
        }
    }

    pub fn codex(claim_tool: &'static str) -> Dialect {
        Dialect {
            client: "codex",
            claim_tool,
            // Codex skips hooks the user has not trusted in its /hooks screen, and setup
            // does not trust them for the user: the model looks at the inbox itself.
            has_hook_context: false,
            has_stop_hook: false,
            env: |_| env_pairs(&[("SCRIPTED_API_KEY", "scripted".into())]),
            configure: configure_codex,
        }
    }

    pub fn gemini() -> Dialect {
        Dialect {
            client: "gemini",
            claim_tool: "mcp_baton_claim",
            has_hook_context: true,
            has_stop_hook: true,
            env: |server| {
                env_pairs(&[
                    ("GOOGLE_GEMINI_BASE_URL", server.url()),
                    ("GEMINI_API_KEY", "scripted".into()),
                ])
            },
            // An API key as the way in, and a fixed model, so that no model router asks
            // first.
            configure: |machine, _| {
                machine.write(
                    &machine.user().join(".gemini/settings.json"),
                    r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "model": {"name": "gemini-2.5-pro"}}
"#,
                );
            },
        }
    }

    pub fn opencode() -> Dialect {
        Dialect {
            client: "opencode",
            claim_tool: "baton_claim",
            // Its hooks are baton's plugin, which setup installs: the inbox joins the system
            // prompt before each model call, so the model acts without looking. `opencode
            // run` ends its process when the session goes idle, before the plugin's
            // re-prompt can start a turn (seen with 1.18.33): the idle prompt serves
            // interactive sessions, and a headless run relies on the next run instead.
            has_hook_context: true,
            has_stop_hook: false,
            env: |_| Vec::new(),
            configure: |machine, server| {
                machine.write(
                    &machine.xdg_config().join("opencode/opencode.json"),
                    &json!({
                        "model": "scripted/scripted-model",
                        "provider": {"scripted": {
                            "npm": "@ai-sdk/openai-compatible",
                            "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "scripted"},
                            "models": {"scripted-model": {}}
                        }}
                    })
                    .to_string(),
                );
            },
        }
    }
}

fn env_pairs(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.clone()))
        .collect()
}

/// Codex's provider for the scripted model, in the user's config.toml before setup runs.
pub fn configure_codex(machine: &Machine, server: &ModelServer) {
    configure_codex_model(machine, server, "scripted-model");
}

/// [`configure_codex`] with `model` as the model's name: Codex offers `apply_patch` only
/// for a model it knows (`gpt-5.5`).
pub fn configure_codex_model(machine: &Machine, server: &ModelServer, model: &str) {
    machine.write(
        &machine.codex_home().join("config.toml"),
        &format!(
            "model = \"{model}\"\n\
             model_provider = \"scripted\"\n\
             \n\
             [model_providers.scripted]\n\
             name = \"scripted\"\n\
             base_url = \"{}/v1\"\n\
             wire_api = \"responses\"\n\
             env_key = \"SCRIPTED_API_KEY\"\n",
            server.url()
        ),
    );
}

/// A client wired by `baton setup` on a machine of its own, to the hub in that machine's
/// home, pointed at a scripted model; the project [`PROJECT`] is bound to the workspace.
pub struct WiredClient {
    pub machine: Machine,
    pub server: ModelServer,
    /// The directory of the clients' programs.
    pub bin: PathBuf,
}

impl WiredClient {
    /// Starts the model with `server_args`, writes the client's model settings, runs setup
    /// for the client and binds the project.
    pub fn new(machine: Machine, bin: PathBuf, dialect: &Dialect, server_args: &[&str]) -> Self {
        let server = ModelServer::start(machine.env.root.path(), server_args);
        (dialect.configure)(&machine, &server);
        machine.setup(&["--client", dialect.client]).ok();
        let wired = WiredClient {
            machine,
            server,
            bin,
        };
        let workspace = wired.machine.env.work();
        wired
            .lead(
                &[
                    "project",
                    "init",
                    "--name",
                    PROJECT,
                    "--workspace",
                    workspace.to_str().unwrap(),
                ],
                &[],
            )
            .ok();
        wired
    }

    /// `baton --as lead ARGS…` in the workspace, with the machine's client variables and
    /// `vars`: a wake supervisor it starts inherits them.
    pub fn lead(&self, args: &[&str], vars: &[(String, String)]) -> Run {
        let machine = &self.machine;
        let mut command = machine.env.command(&machine.env.work());
        machine
            .client_env(&mut command, &self.bin)
            .args(["--as", "lead"])
            .args(args)
            .envs(vars.iter().map(|(key, value)| (key, value)));
        run(&mut command)
    }
}

/// A hub on a machine of its own with the project [`PROJECT`] bound to its workspace and
/// `lead` its human, for a client elsewhere to be wired to.
pub fn hub_with_project() -> TestEnv {
    let hub = TestEnv::new();
    let workspace = hub.work();
    hub.init_project_with("lead", PROJECT, &workspace, &["--human", "lead"]);
    hub
}

/// The variable the remote setups name for the hub's token.
pub const TOKEN_ENV: &str = "HUB_TOKEN";

/// A client on one machine wired by `baton setup --url URL --token-env HUB_TOKEN` to a hub
/// on another: a real `baton serve --listen 127.0.0.1:0` serving a home of its own, where
/// the client's agent is registered and has a token made by `baton token add`.
pub struct RemoteRig {
    /// The agent's machine: its own home, user home and workspace.
    pub machine: Machine,
    pub served: Served,
    /// The hub's machine.
    // Read by `clients_remote.rs`, which is Unix-only.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub hub: TestEnv,
    pub token: String,
    /// What the remote setup printed.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub setup: Run,
}

impl RemoteRig {
    /// `client` wired to a hub of its own by the remote setup, run with the token in
    /// `HUB_TOKEN`; `before` writes the user's own settings first.
    pub fn new(client: &str, before: impl FnOnce(&Machine)) -> RemoteRig {
        let machine = Machine::new().with_user_configs();
        before(&machine);
        RemoteRig::wire(machine, TestEnv::new(), client, "alice")
    }

    /// `client` on `machine` wired to `hub`, which `human` serves.
    pub fn wire(machine: Machine, hub: TestEnv, client: &str, human: &str) -> RemoteRig {
        // As docs/remote.md's hub does it: `baton agent add NAME && baton token add NAME`.
        hub.run("", &["agent", "add", client]).ok();
        let token = add_token(&hub, client);
        let served = Served::start(&hub, human);
        let url = format!("http://{}/", served.address);
        let setup = machine.setup_env(
            &["--client", client, "--url", &url, "--token-env", TOKEN_ENV],
            &[(TOKEN_ENV, Path::new(&token))],
        );
        setup.ok();
        let rig = RemoteRig {
            machine,
            served,
            hub,
            token,
            setup,
        };
        rig.assert_token_in_no_file();
        rig
    }

    /// The hub's address, as `BATON_URL` holds it.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn url(&self) -> String {
        format!("http://{}", self.served.address)
    }

    /// The variable set as the client would have it.
    pub fn with_token(&self) -> [(&str, &str); 1] {
        [(TOKEN_ENV, self.token.as_str())]
    }

    /// No file of the agent's machine holds the token: not the clients' settings (nor after
    /// a client rewrote its own), nor anything a client or baton wrote there since (its
    /// home, logs, transcripts, caches, the workspace).
    #[track_caller]
    pub fn assert_token_in_no_file(&self) {
        let mut files = Vec::new();
        regular_files(self.machine.env.root.path(), &mut files);
        for path in files {
            let bytes = fs::read(&path).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(&self.token),
                "{} holds the token",
                path.display()
            );
        }
    }
}

/// Every regular file under `dir`, however deep (a symbolic link is not followed: what it
/// points to is not the machine's own).
fn regular_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            regular_files(&entry.path(), files);
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
}
