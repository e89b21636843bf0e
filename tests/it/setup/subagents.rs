//! Gemini CLI's subagents (`--a2a`), one per agent of the hub, named as the agents are.

use super::*;

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
