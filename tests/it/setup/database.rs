//! Setup on a hub whose state is in PostgreSQL: every client gets the store, and none
//! its password.

use super::*;

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
