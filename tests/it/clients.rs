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
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::clients::{ModelServer, RemoteRig, TOKEN_ENV, clients_bin, configure_codex};
use crate::common::http::{Served, add_token};
use crate::common::machine::Machine;
use crate::common::{Run, baton_bin, exit_within, files_only};

/// Longest a client's check may take before the test gives up on it.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(180);

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
    let status = exit_within(
        &mut child,
        CLIENT_TIMEOUT,
        &format!("{program} {}", args.join(" ")),
        || {
            format!(
                "it printed:\n{}\n{}",
                fs::read_to_string(&out_path).unwrap_or_default(),
                fs::read_to_string(&err_path).unwrap_or_default()
            )
        },
    );
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
