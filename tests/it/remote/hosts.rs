//! The host names a hub answers to, and a remote hook line with its token from a variable.

use super::*;

#[test]
fn a_hub_answers_a_host_name_only_when_serve_allows_it() {
    let env = TestEnv::new();
    let token = add_token(&env, "codex");
    let served = Served::start_with(&env, "alice", &["--allow-host", "BuildBox.lan"]);
    let reply = |host: &str| {
        let headers = [
            ("Host".to_string(), host.to_string()),
            ("Authorization".to_string(), format!("Bearer {token}")),
        ];
        crate::common::http::send(&served.address, "GET", "/api/v1/whoami", &headers, None)
    };
    let ask = |host: &str| reply(host).status;
    assert_eq!(ask(&format!("buildbox.lan:{}", served.port())), 200);
    assert_eq!(ask("buildbox.lan"), 200, "a proxy in front on port 80");
    let refused = reply(&format!("other.lan:{}", served.port()));
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.json()["hint"],
        "if `other.lan` is this server's name, start it with `baton serve --allow-host other.lan`"
    );
    let hostile = reply("`evil`;<b>.lan:80");
    assert_eq!(hostile.status, 403);
    assert!(
        hostile.json()["hint"]
            .as_str()
            .unwrap()
            .ends_with("`baton serve --allow-host NAME`"),
        "{}",
        hostile.body
    );
    assert!(!hostile.body.contains("evil"), "{}", hostile.body);
    let refused = env.run("alice", &["serve", "--allow-host", "http://x:1"]);
    refused.fails(1);
}

/// Forwards every connection to `127.0.0.1:PORT` on to `target`, as a port forward or a
/// proxy in front of a hub does: the hub then sees a `Host` it does not answer by itself.
fn forward_to(target: String) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = std::net::TcpStream::connect(&target) else {
                continue;
            };
            let (mut client_in, mut server_out) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut client_in, &mut server_out);
                let _ = server_out.shutdown(std::net::Shutdown::Write);
            });
            let (mut server_in, mut client_out) = (server, client);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut server_in, &mut client_out);
                let _ = client_out.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    port
}

#[test]
fn a_remote_command_refused_for_its_host_says_how_the_hub_allows_the_name() {
    let hub = Hub::start();
    let port = forward_to(hub.served.address.clone());
    let mut agent = hub.agent();
    agent.url = format!("http://127.0.0.1:{port}");
    let error = agent.run(&["whoami"]).fails(1).to_string();
    assert!(
        error.contains(&format!(
            "the hub at http://127.0.0.1:{port} refused the name it was reached by"
        )),
        "{error}"
    );
    assert!(
        error.contains("on the hub's machine, start it with `baton serve --allow-host 127.0.0.1`"),
        "{error}"
    );

    // What the hint says works.
    let Hub { env, served, token } = hub;
    drop(served);
    let served = Served::start_with(&env, "alice", &["--allow-host", "127.0.0.1"]);
    agent.url = format!("http://127.0.0.1:{}", forward_to(served.address.clone()));
    agent.token = token;
    assert!(agent.run(&["whoami"]).ok().contains("codex"));
}

/// What Gemini CLI does to every string of its settings when it loads them: `$VAR`,
/// `${VAR}` and `${VAR:-default}` become the variable's value (an unset one stays as it is).
#[cfg(unix)]
fn as_gemini_expands(line: &str, vars: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, default, used) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end) => {
                    let body = &inner[..end];
                    let (name, default) = match body.split_once(":-") {
                        Some((name, default)) => (name, Some(default)),
                        None => (body, None),
                    };
                    (name, default, end + 2)
                }
                None => ("", None, 0),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], None, end)
        };
        let value = vars
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
            .or(default.map(str::to_string));
        match value {
            Some(value) if !name.is_empty() => out.push_str(&value),
            _ => out.push_str(&rest[at..at + 1 + used]),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

/// The prompt hook line a remote setup writes for `client`, as the client runs it: in its
/// own environment (the token's variable, nothing of baton's), after what the client does to
/// the line. Returns the line the shell got, and the hook's answer.
#[cfg(unix)]
fn run_remote_prompt_hook(hub: &Hub, client: &str) -> (String, Value) {
    let machine = TestEnv::new();
    let url = hub.url();
    machine
        .run_env(
            "",
            &[
                "setup",
                "--client",
                client,
                "--url",
                &url,
                "--token-env",
                "HUB_TOKEN",
            ],
            &[("HUB_TOKEN", &hub.token)],
        )
        .ok();
    let user = machine.root.path().join("user-home");
    let (settings, event) = match client {
        "claude" => (user.join(".claude/settings.json"), "UserPromptSubmit"),
        "gemini" => (user.join(".gemini/settings.json"), "BeforeAgent"),
        other => panic!("no prompt hook file known for {other}"),
    };
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    let written = settings["hooks"][event][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!written.contains(&hub.token), "{written}");
    let line = if client == "gemini" {
        as_gemini_expands(&written, &[("HUB_TOKEN", &hub.token)])
    } else {
        written
    };
    let mut shell = Command::new("sh");
    shell
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env("HOME", &user)
        .env("BATON_HOME", machine.home())
        .env("HUB_TOKEN", &hub.token)
        .current_dir(machine.work())
        .arg("-c")
        .arg(&line);
    let answer = machine.run_piped(
        shell,
        &serde_json::json!({"cwd": machine.work()}).to_string(),
    );
    (line, serde_json::from_str(answer.ok()).unwrap())
}

#[cfg(unix)]
#[test]
fn the_hook_line_remote_setup_writes_shows_the_hubs_inbox_with_the_token_from_its_variable() {
    let hub = Hub::start();
    hub.env
        .run(
            "alice",
            &["send", "--to", "codex", "--subject", "Through the wiring"],
        )
        .ok();
    for client in ["claude", "gemini"] {
        let (line, answer) = run_remote_prompt_hook(&hub, client);
        // What the shell is given is its argument, in `ps` for anyone to read.
        assert!(!line.contains(&hub.token), "{client}: {line}");
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("{client}: {answer}"));
        assert!(
            context.contains("Through the wiring"),
            "{client}: {context}"
        );
    }
    assert_eq!(
        as_gemini_expands("a $X ${X} ${Y:-d} $Z ${Z}", &[("X", "1")]),
        "a 1 1 d $Z ${Z}"
    );
}

#[test]
fn a_token_named_by_baton_token_env_is_read_from_that_variable() {
    let hub = Hub::start();
    let agent = hub.agent();
    let run = |vars: &[(&str, &str)]| {
        let mut command = agent.env.command(&agent.env.work());
        command
            .env("BATON_URL", &agent.url)
            .env_remove("BATON_TOKEN")
            .envs(vars.iter().copied())
            .arg("whoami");
        run(&mut command)
    };
    let named = run(&[("BATON_TOKEN_ENV", "HUB_TOKEN"), ("HUB_TOKEN", &hub.token)]);
    assert!(named.ok().contains("codex"), "{}", named.stdout);
    let unset = run(&[("BATON_TOKEN_ENV", "HUB_TOKEN")]);
    assert!(
        unset
            .fails(1)
            .contains("BATON_TOKEN_ENV names HUB_TOKEN, which is not set"),
        "{}",
        unset.stderr
    );
    let bad = run(&[("BATON_TOKEN_ENV", "$(touch x)")]);
    assert!(
        bad.fails(1).contains("must name a variable"),
        "{}",
        bad.stderr
    );
}
