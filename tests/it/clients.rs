//! The clients' own checks of what `baton setup` wrote: the real Claude Code, Codex, Gemini
//! CLI and opencode, pinned versions from npm, each in a throwaway home that also holds the
//! user's other servers and hooks. Wired to a hub on "another machine" (`setup --url`), each
//! reaches a real `baton serve` with the token from its environment, and not without it.
//!
//! They need the clients, which take the npm registry and a few hundred MB to install.
//! `.ci/run` installs them with `tests/clients/install.sh` and sets `BATON_TEST_CLIENTS` to
//! the directory of their programs; by hand:
//!
//! ```text
//! BATON_TEST_CLIENTS=$(bash tests/clients/install.sh) cargo test --test it clients
//! ```
//!
//! Without it they say they were not run, except in CI, where they fail: there only
//! `BATON_TEST_CLIENTS_SKIPPED`, which `.ci/run` sets when npm cannot reach its registry at
//! all, lets them skip, loudly.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::clients_woken::{ModelServer, configure_codex};
use crate::common::http::{Served, add_token};
use crate::common::{Run, TestEnv, baton_bin, files_only};
use crate::setup::Machine;

/// Longest a client's check may take before the test gives up on it.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

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

/// Runs a client program in the machine's throwaway home, with a deadline.
fn client(
    bin: &Path,
    machine: &Machine,
    program: &str,
    args: &[&str],
    extra: &[(&str, &str)],
) -> Run {
    let program_path = bin.join(program);
    assert!(
        program_path.exists(),
        "{} is missing",
        program_path.display()
    );
    let root = machine.env.root.path();
    let out_path = root.join(format!("{program}.stdout"));
    let err_path = root.join(format!("{program}.stderr"));
    let mut command = Command::new(&program_path);
    machine
        .client_env(&mut command, bin)
        .args(args)
        .current_dir(machine.env.work())
        .env("BATON_HOME", machine.env.home())
        .envs(machine.env.store_env())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("BATON_AGENT")
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap());
    for (key, value) in extra {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("the client starts");
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`{program} {}` took longer than {CLIENT_TIMEOUT:?}; it printed:\n{}\n{}",
                args.join(" "),
                fs::read_to_string(&out_path).unwrap_or_default(),
                fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// The line of a listing that names server `name`.
fn server_line<'a>(listing: &'a str, name: &str) -> Option<&'a str> {
    listing.lines().find(|line| {
        line.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
            .any(|word| word == name)
    })
}

fn wired(client: &str) -> Machine {
    let machine = Machine::new().with_user_configs();
    machine.setup(&["--client", client]).ok();
    machine
}

#[test]
fn claude_lists_baton_connected_and_its_doctor_finds_no_invalid_settings() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = wired("claude");
    let out = claude_lists_baton_as_connected(&bin, &machine, &[]);
    let baton = server_line(&out, "baton").expect("listed");
    assert!(
        baton.contains(&baton_bin().display().to_string()),
        "{baton}"
    );
    assert!(
        server_line(&out, "docs").is_some(),
        "the user's server is gone:\n{out}"
    );

    let doctor = client(&bin, &machine, "claude", &["doctor"], &[]);
    let report = format!("{}{}", doctor.stdout, doctor.stderr);
    assert!(
        report.contains("Claude Code doctor"),
        "claude doctor did not run:\n{report}"
    );
    assert!(
        !report.contains("Invalid settings"),
        "claude doctor finds invalid settings:\n{report}"
    );

    machine.setup(&["--uninstall", "--client", "claude"]).ok();
    let listing = client(&bin, &machine, "claude", &["mcp", "list"], &[]);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    assert!(
        server_line(&out, "baton").is_none(),
        "baton still listed:\n{out}"
    );
    assert!(server_line(&out, "docs").is_some(), "{out}");
}

/// `claude mcp list` (with `extra` variables), which must show baton connected; what it
/// printed.
#[track_caller]
fn claude_lists_baton_as_connected(
    bin: &Path,
    machine: &Machine,
    extra: &[(&str, &str)],
) -> String {
    let listing = client(bin, machine, "claude", &["mcp", "list"], extra);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    let baton = server_line(&out, "baton").unwrap_or_else(|| panic!("no baton in:\n{out}"));
    assert!(
        baton.contains("Connected"),
        "baton is not connected:\n{out}"
    );
    out
}

/// `gemini mcp list` in a trusted workspace (with `extra` variables), which must show baton
/// connected; what it printed.
#[track_caller]
fn gemini_lists_baton_as_connected(
    bin: &Path,
    machine: &Machine,
    extra: &[(&str, &str)],
) -> String {
    let mut variables = vec![("GEMINI_CLI_TRUST_WORKSPACE", "true")];
    variables.extend_from_slice(extra);
    let listing = client(bin, machine, "gemini", &["mcp", "list"], &variables);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    let baton = server_line(&out, "baton").unwrap_or_else(|| panic!("no baton in:\n{out}"));
    assert!(
        baton.contains("Connected") && !baton.contains("Disconnected"),
        "baton is not connected:\n{out}"
    );
    out
}

/// baton's entry in `codex mcp list --json`, if it is there.
fn codex_entry(bin: &Path, machine: &Machine) -> Option<Value> {
    let listing = client(bin, machine, "codex", &["mcp", "list", "--json"], &[]);
    let servers: Value = serde_json::from_str(listing.ok())
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{}", listing.stdout));
    let servers = servers.as_array().expect("a list of servers");
    assert!(
        servers.iter().any(|server| server["name"] == "docs"),
        "the user's server is gone: {servers:?}"
    );
    servers
        .iter()
        .find(|server| server["name"] == "baton")
        .cloned()
}

#[test]
fn codex_lists_baton_with_its_identity() {
    if !files_only("looks at files in the hub home") {
        return;
    }
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = wired("codex");
    let baton = codex_entry(&bin, &machine).expect("codex lists baton");
    assert_eq!(baton["enabled"], true, "{baton}");
    let transport = &baton["transport"];
    assert_eq!(transport["type"], "stdio");
    assert_eq!(
        transport["command"],
        baton_bin().display().to_string().as_str()
    );
    assert_eq!(
        transport["args"],
        serde_json::json!(["--as", "codex", "mcp"])
    );
    assert_eq!(
        transport["env"]["BATON_HOME"],
        machine.env.home().display().to_string().as_str()
    );

    machine.setup(&["--uninstall", "--client", "codex"]).ok();
    assert_eq!(codex_entry(&bin, &machine), None);
}

#[test]
fn gemini_lists_baton_connected() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = wired("gemini");
    let trust = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];
    let out = gemini_lists_baton_as_connected(&bin, &machine, &[]);
    assert!(
        server_line(&out, "docs").is_some(),
        "the user's server is gone:\n{out}"
    );

    machine.setup(&["--uninstall", "--client", "gemini"]).ok();
    let listing = client(&bin, &machine, "gemini", &["mcp", "list"], &trust);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    assert!(
        server_line(&out, "baton").is_none(),
        "baton still listed:\n{out}"
    );
}

#[test]
fn opencode_lists_baton_connected() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = wired("opencode");
    let listing = client(&bin, &machine, "opencode", &["mcp", "list"], &[]);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    let baton = server_line(&out, "baton").unwrap_or_else(|| panic!("no baton in:\n{out}"));
    assert!(
        baton.contains("connected") && !baton.contains("failed"),
        "baton is not connected:\n{out}"
    );
    assert!(
        server_line(&out, "docs").is_some(),
        "the user's server is gone:\n{out}"
    );

    machine.setup(&["--uninstall", "--client", "opencode"]).ok();
    let listing = client(&bin, &machine, "opencode", &["mcp", "list"], &[]);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    assert!(
        server_line(&out, "baton").is_none(),
        "baton still listed:\n{out}"
    );
}

/// The real clients reach `baton serve` over HTTP with a token in the header they are
/// configured with (CLIENTS.md, "Over HTTP"), and say why when the token is wrong.
#[test]
fn claude_and_gemini_connect_to_baton_serve_over_http_with_a_token() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let machine = Machine::new();
    let token = add_token(&machine.env, "claude");
    let served = Served::start(&machine.env, "alice");
    let url = format!("http://{}/mcp", served.address);
    for (name, bearer) in [("baton", token.as_str()), ("stranger", "baton_not_a_token")] {
        let header = format!("Authorization: Bearer {bearer}");
        let args = [
            "mcp",
            "add",
            "--transport",
            "http",
            name,
            &url,
            "--header",
            &header,
        ];
        client(&bin, &machine, "claude", &args, &[]).ok();
    }
    let out = claude_lists_baton_as_connected(&bin, &machine, &[]);
    let stranger = server_line(&out, "stranger").unwrap_or_else(|| panic!("{out}"));
    assert!(
        !stranger.contains("✔") && stranger.contains("401"),
        "a wrong token is refused: {stranger}"
    );

    // Gemini CLI's form: `httpUrl` with its headers, in the user's settings.
    let settings = machine.user().join(".gemini/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let entry = serde_json::json!({"mcpServers": {"baton": {
        "httpUrl": url, "headers": {"Authorization": format!("Bearer {token}")}, "trust": true}}});
    fs::write(&settings, entry.to_string()).unwrap();
    gemini_lists_baton_as_connected(&bin, &machine, &[]);
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
    fn new(client: &str, before: impl FnOnce(&Machine)) -> RemoteRig {
        let machine = Machine::new().with_user_configs();
        before(&machine);
        RemoteRig::wire(machine, TestEnv::new(), client, "alice")
    }

    /// `client` on `machine` wired to `hub`, which `human` serves.
    pub fn wire(machine: Machine, hub: TestEnv, client: &str, human: &str) -> RemoteRig {
        // As the README's hub does it: `baton agent add NAME && baton token add NAME`.
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
    fn with_token(&self) -> [(&str, &str); 1] {
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

#[test]
fn claude_reaches_a_remote_hub_with_the_token_from_its_environment() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let rig = RemoteRig::new("claude", |_| {});
    let out = claude_lists_baton_as_connected(&bin, &rig.machine, &rig.with_token());
    let baton = server_line(&out, "baton").unwrap();
    assert!(
        baton.contains(&format!("http://{}/mcp (HTTP)", rig.served.address)),
        "{baton}"
    );
    assert!(server_line(&out, "docs").is_some(), "{out}");

    // Without the variable Claude Code has no token to send: the token comes from there.
    let listing = client(&bin, &rig.machine, "claude", &["mcp", "list"], &[]);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    assert!(
        out.contains(&format!("Missing environment variables: {TOKEN_ENV}"))
            && server_line(&out, "baton").is_none_or(|line| !line.contains("✔ Connected")),
        "{out}"
    );
    rig.assert_token_in_no_file();
}

#[test]
fn gemini_reaches_a_remote_hub_with_the_token_from_its_environment() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let rig = RemoteRig::new("gemini", |_| {});
    let out = gemini_lists_baton_as_connected(&bin, &rig.machine, &rig.with_token());
    assert!(server_line(&out, "docs").is_some(), "{out}");

    let trust = [("GEMINI_CLI_TRUST_WORKSPACE", "true")];
    let listing = client(&bin, &rig.machine, "gemini", &["mcp", "list"], &trust);
    let out = format!("{}{}", listing.stdout, listing.stderr);
    let baton = server_line(&out, "baton").unwrap_or_else(|| panic!("{out}"));
    assert!(baton.contains("Disconnected"), "{out}");
    rig.assert_token_in_no_file();
}

#[test]
fn opencode_reaches_a_remote_hub_with_the_token_from_its_environment() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let rig = RemoteRig::new("opencode", |_| {});
    let listed = |extra: &[(&str, &str)]| {
        let listing = client(&bin, &rig.machine, "opencode", &["mcp", "list"], extra);
        let out = format!("{}{}", listing.stdout, listing.stderr);
        let baton = server_line(&out, "baton")
            .unwrap_or_else(|| panic!("no baton in:\n{out}"))
            .to_string();
        (baton, out)
    };
    let (baton, out) = listed(&rig.with_token());
    assert!(
        baton.contains("connected") && !baton.contains("failed"),
        "baton is not connected:\n{out}"
    );
    let (baton, out) = listed(&[]);
    assert!(
        baton.contains("failed"),
        "connected without the token:\n{out}"
    );
    rig.assert_token_in_no_file();
}

/// `codex mcp list` only reads the configuration; Codex connects when it runs. So beyond
/// the listing, `codex exec` against the scripted model: the tools it offers the model hold
/// baton's (the `mcp__baton` namespace) exactly when the variable holds the token.
#[test]
fn codex_reaches_a_remote_hub_with_the_token_from_its_environment() {
    let Some(bin) = clients_bin() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let model = ModelServer::start(dir.path(), &[]);
    let rig = RemoteRig::new("codex", |machine| configure_codex(machine, &model));

    let listing = client(&bin, &rig.machine, "codex", &["mcp", "list", "--json"], &[]);
    let servers: Value = serde_json::from_str(listing.ok())
        .unwrap_or_else(|error| panic!("not JSON ({error}):\n{}", listing.stdout));
    let baton = servers
        .as_array()
        .and_then(|servers| servers.iter().find(|server| server["name"] == "baton"))
        .unwrap_or_else(|| panic!("codex lists no baton: {servers}"));
    assert_eq!(baton["enabled"], true, "{baton}");
    assert_eq!(
        baton["transport"],
        serde_json::json!({
            "type": "streamable_http",
            "url": format!("http://{}/mcp", rig.served.address),
            "bearer_token_env_var": TOKEN_ENV,
            "http_headers": null,
            "env_http_headers": null,
            "http_headers_helper": null,
        })
    );

    let offers_baton = |extra: &[(&str, &str)]| {
        let seen = model.requests().len();
        let mut variables = vec![("SCRIPTED_API_KEY", "scripted")];
        variables.extend_from_slice(extra);
        let args = [
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "check your baton inbox",
        ];
        let run = client(&bin, &rig.machine, "codex", &args, &variables);
        let requests = model.requests();
        assert!(
            requests.len() > seen,
            "codex asked the model nothing:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        requests[seen..].iter().any(|request| {
            request["body"]["tools"]
                .as_array()
                .is_some_and(|tools| tools.iter().any(|tool| tool["name"] == "mcp__baton"))
        })
    };
    assert!(
        offers_baton(&rig.with_token()),
        "no baton tools with the token"
    );
    assert!(!offers_baton(&[]), "baton's tools without the token");
    rig.assert_token_in_no_file();
}
