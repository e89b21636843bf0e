//! `baton serve --metrics ADDRESS` and `--log json` (issue 45): `/metrics` read by the text
//! format's own rules here and by the official Prometheus Python client's parser
//! (tests/metrics_python, when `BATON_TEST_PYTHON` names a python with it installed), every
//! family docs/metrics.md lists present, counters that move by one with one change, and no
//! token, password, body, subject, path or query in any byte the hub wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::http::{Served, add_token, free_address, send};
use crate::common::{TestEnv, eventually, store_password};

/// One sample: its name, its labels, its value.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// One family as its `# TYPE` line names it.
#[derive(Debug, Clone, PartialEq)]
struct Family {
    kind: String,
    help: String,
    samples: Vec<Sample>,
}

type Families = BTreeMap<String, Family>;

/// Whether `name` is a metric (or, without `:`, a label) name of the format.
fn is_name(name: &str, colon: bool) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':');
    name.chars()
        .next()
        .is_some_and(|first| !first.is_ascii_digit() && allowed(first))
        && name.chars().all(allowed)
}

/// Reads `{name="value",…}` at the start of `text`: the labels, and the rest.
fn labels(text: &str) -> (BTreeMap<String, String>, &str) {
    let mut labels = BTreeMap::new();
    let Some(mut rest) = text.strip_prefix('{') else {
        return (labels, text);
    };
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return (labels, after);
        }
        let (name, after) = rest.split_once("=\"").expect("a label: name=\"value\"");
        assert!(is_name(name, false), "label name {name:?}");
        let mut value = String::new();
        let mut characters = after.char_indices();
        let end = loop {
            match characters.next().expect("a label value ends with a quote") {
                (at, '"') => break at,
                (_, '\\') => match characters.next().expect("an escape").1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    other => panic!("the format has no escape \\{other}"),
                },
                (_, '\n') => panic!("a raw newline in a label value"),
                (_, other) => value.push(other),
            }
        };
        assert!(
            labels.insert(name.to_string(), value).is_none(),
            "label {name} twice"
        );
        rest = &after[end + 1..];
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        }
    }
}

/// Parses a page by the rules of the text format 0.0.4, failing on anything it breaks:
/// `# HELP` and `# TYPE` once a family and before its samples, names and labels as the
/// format spells them, each sample's name its family's (a counter's ending in `_total`, a
/// histogram's `_bucket`, `_sum`, `_count`), values that are numbers, and each histogram's
/// buckets in rising `le`, added up, `+Inf` last and equal to its `_count`.
fn parse_by_the_rules(text: &str) -> Families {
    assert!(text.ends_with('\n'), "the page ends with a newline");
    let mut families = Families::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(help) = line.strip_prefix("# HELP ") {
            let (name, words) = help.split_once(' ').expect("# HELP name words");
            assert!(is_name(name, true), "{name:?}");
            assert!(!families.contains_key(name), "{name} described twice");
            assert!(
                !words.contains("\\ "),
                "help escapes only \\\\ and \\n: {words}"
            );
            families.insert(
                name.to_string(),
                Family {
                    kind: String::new(),
                    help: words.replace("\\n", "\n").replace("\\\\", "\\"),
                    samples: Vec::new(),
                },
            );
            current = Some(name.to_string());
            continue;
        }
        if let Some(kind) = line.strip_prefix("# TYPE ") {
            let (name, kind) = kind.split_once(' ').expect("# TYPE name kind");
            assert_eq!(current.as_deref(), Some(name), "TYPE follows its HELP");
            let family = families.get_mut(name).unwrap();
            assert!(family.kind.is_empty(), "{name} typed twice");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{kind}"
            );
            if kind == "counter" {
                assert!(
                    name.ends_with("_total"),
                    "a counter's name ends in _total: {name}"
                );
            }
            family.kind = kind.to_string();
            continue;
        }
        assert!(
            !line.starts_with('#'),
            "a comment the page has no need of: {line}"
        );
        let name_end = line
            .find(['{', ' '])
            .unwrap_or_else(|| panic!("a sample: {line}"));
        let name = &line[..name_end];
        assert!(is_name(name, true), "{name:?}");
        let (labels, rest) = labels(&line[name_end..]);
        let value = rest.strip_prefix(' ').expect("a space before the value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            number => number
                .parse()
                .unwrap_or_else(|_| panic!("{number:?} is no value")),
        };
        let family_name = current
            .as_deref()
            .expect("a sample after its family's TYPE");
        let family = families.get_mut(family_name).unwrap();
        let fits = match family.kind.as_str() {
            "histogram" => ["_bucket", "_sum", "_count"]
                .iter()
                .any(|suffix| name == format!("{family_name}{suffix}")),
            "" => panic!("{name} before its family's TYPE"),
            _ => name == family_name,
        };
        assert!(fits, "{name} is no sample of {family_name}");
        if name.ends_with("_bucket") {
            assert!(labels.contains_key("le"), "a bucket has its le: {line}");
        }
        family.samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    for (name, family) in &families {
        assert!(!family.kind.is_empty(), "{name} has no TYPE");
        if family.kind == "histogram" {
            check_histogram(name, family);
        }
    }
    families
}

/// Each histogram of `family`: buckets in rising `le`, added up, `+Inf` last, equal to
/// `_count`.
fn check_histogram(name: &str, family: &Family) {
    let mut by_labels: BTreeMap<BTreeMap<String, String>, Vec<(f64, f64)>> = BTreeMap::new();
    let mut counts = BTreeMap::new();
    for sample in &family.samples {
        let mut labels = sample.labels.clone();
        if sample.name.ends_with("_bucket") {
            let le = labels.remove("le").unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            by_labels
                .entry(labels)
                .or_default()
                .push((le, sample.value));
        } else if sample.name.ends_with("_count") {
            counts.insert(labels, sample.value);
        }
    }
    assert_eq!(
        by_labels.keys().collect::<Vec<_>>(),
        counts.keys().collect::<Vec<_>>(),
        "{name}: each histogram has buckets and a count"
    );
    for (labels, buckets) in by_labels {
        assert!(
            buckets
                .windows(2)
                .all(|pair| pair[0].0 < pair[1].0 && pair[0].1 <= pair[1].1),
            "{name}{labels:?}: buckets rise and add up: {buckets:?}"
        );
        let (last, total) = *buckets.last().unwrap();
        assert_eq!(last, f64::INFINITY, "{name}: +Inf last");
        assert_eq!(
            Some(&total),
            counts.get(&labels),
            "{name}: +Inf is the count"
        );
    }
}

/// The page read by the Prometheus Python client's parser, when `BATON_TEST_PYTHON` names a
/// python that has it; `None` (saying so) otherwise, outside CI.
fn parse_by_prometheus_client(text: &str) -> Option<Families> {
    let python = crate::common::python(
        "reading /metrics with the Prometheus Python client (read by the format's rules alone)",
        "tests/metrics_python/requirements.txt",
    )?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/metrics_python/parse.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the parser runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "prometheus_client refused the page: {}\n{text}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: BTreeMap<String, Value> = serde_json::from_slice(&output.stdout).unwrap();
    Some(
        read.into_iter()
            .map(|(name, family)| {
                let samples = family["samples"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|sample| Sample {
                        name: sample["name"].as_str().unwrap().to_string(),
                        labels: serde_json::from_value(sample["labels"].clone()).unwrap(),
                        value: sample["value"].as_f64().unwrap(),
                    })
                    .collect();
                let family = Family {
                    kind: family["type"].as_str().unwrap().to_string(),
                    help: family["help"].as_str().unwrap().to_string(),
                    samples,
                };
                (name, family)
            })
            .collect(),
    )
}

/// `GET /metrics` at `address`: the text as sent, and its families, read by the format's
/// rules and, where it can be, by prometheus_client, which must read the same.
fn scrape(address: &str) -> (String, Families) {
    let reply = send(
        address,
        "GET",
        "/metrics",
        &[("Host".to_string(), address.to_string())],
        None,
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let families = parse_by_the_rules(&reply.body);
    if let Some(read) = parse_by_prometheus_client(&reply.body) {
        assert_same(&read, &families);
    }
    (reply.body, families)
}

/// That prometheus_client read what the rules read: the same families, kinds, help and
/// samples, values alike to the last bits of a float's printing.
fn assert_same(read: &Families, by_the_rules: &Families) {
    assert_eq!(
        read.keys().collect::<Vec<_>>(),
        by_the_rules.keys().collect::<Vec<_>>()
    );
    for (name, family) in by_the_rules {
        let other = &read[name];
        assert_eq!(
            (&other.kind, &other.help),
            (&family.kind, &family.help),
            "{name}"
        );
        assert_eq!(other.samples.len(), family.samples.len(), "{name}");
        for (theirs, ours) in other.samples.iter().zip(&family.samples) {
            assert_eq!((&theirs.name, &theirs.labels), (&ours.name, &ours.labels));
            assert!(
                (theirs.value - ours.value).abs() <= 1e-9 * ours.value.abs().max(1.0),
                "{}{:?}: {} and {}",
                ours.name,
                ours.labels,
                theirs.value,
                ours.value
            );
        }
    }
}

/// The value of the sample `name` with exactly `labels` (0 when there is none).
fn value(families: &Families, name: &str, labels: &[(&str, &str)]) -> f64 {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    families
        .values()
        .flat_map(|family| &family.samples)
        .find(|sample| sample.name == name && sample.labels == wanted)
        .map_or(0.0, |sample| sample.value)
}

/// The families docs/metrics.md lists: the first cell of each row of its table.
fn documented_families() -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md"))
            .unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("| `baton_"))
        .map(|rest| format!("baton_{}", &rest[..rest.find('`').unwrap()]))
        .collect()
}

/// Opens an MCP session at `/mcp` as `token`, the client calling itself `client`.
fn mcp_initialize(served: &Served, token: &str, client: &str) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": client, "version": "1"}}
    });
    let reply = send(
        &served.address,
        "POST",
        "/mcp",
        &[
            ("Host".to_string(), served.address.clone()),
            ("Authorization".to_string(), format!("Bearer {token}")),
            ("Content-Type".to_string(), "application/json".to_string()),
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ],
        Some(&body.to_string()),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.header("mcp-session-id").is_some());
}

fn serve_watched(env: &TestEnv, metrics: &str) -> Served {
    Served::start_with(env, "alice", &["--metrics", metrics, "--log", "json"])
}

#[test]
fn metrics_are_prometheus_text_with_every_documented_family_and_move_with_each_change() {
    let env = TestEnv::new();
    env.register(&["alice"]);
    env.run("", &["agent", "add", "bob", "--wake", "--", "true"])
        .ok();
    let metrics = free_address();
    let served = serve_watched(&env, &metrics);
    let (_, before) = scrape(&metrics);
    let documented = documented_families();
    assert!(documented.len() >= 10, "{documented:?}");
    assert_eq!(
        before.keys().cloned().collect::<BTreeSet<_>>(),
        documented,
        "/metrics has exactly the families docs/metrics.md lists"
    );
    for family in before.values() {
        assert!(!family.help.is_empty());
    }
    // Every action of the table is counted from the start, at 0.
    for action in ["send", "claim", "request_changes", "edit"] {
        assert_eq!(
            value(&before, "baton_changes_total", &[("action", action)]),
            0.0
        );
        assert!(
            before["baton_refusals_total"]
                .samples
                .iter()
                .any(|sample| sample.labels["action"] == action)
        );
    }

    let sent = served.post(
        "/api/v1/projects/default/tasks",
        &served.login,
        &json!({"to": "bob", "subject": "count me"}),
    );
    assert_eq!(sent.status, 200, "{}", sent.body);
    let refused = served.post(
        "/api/v1/projects/default/tasks/1/approve",
        &served.login,
        &json!({}),
    );
    assert_eq!(refused.status, 400, "{}", refused.body);
    let (_, after) = scrape(&metrics);
    let moved = |name: &str, labels: &[(&str, &str)]| {
        value(&after, name, labels) - value(&before, name, labels)
    };
    assert_eq!(moved("baton_changes_total", &[("action", "send")]), 1.0);
    assert_eq!(moved("baton_refusals_total", &[("action", "approve")]), 1.0);
    assert_eq!(moved("baton_changes_total", &[("action", "approve")]), 0.0);
    assert_eq!(moved("baton_refusals_total", &[("action", "send")]), 0.0);
    let tasks = "/api/v1/projects/{project}/tasks";
    assert_eq!(
        moved(
            "baton_http_requests_total",
            &[("route", tasks), ("method", "POST"), ("status", "200")]
        ),
        1.0
    );
    assert_eq!(
        moved(
            "baton_http_requests_total",
            &[
                ("route", "/api/v1/projects/{project}/tasks/{id}/{action}"),
                ("method", "POST"),
                ("status", "400")
            ]
        ),
        1.0
    );
    assert_eq!(
        moved(
            "baton_http_request_duration_seconds_count",
            &[("route", tasks)]
        ),
        1.0
    );
    // No path of a request is a label: only the routes' templates.
    for family in after.values() {
        for sample in &family.samples {
            if let Some(route) = sample.labels.get("route") {
                assert!(
                    route == "unmatched" || !route.contains("default"),
                    "{route}"
                );
            }
        }
    }
    let store = if env.store_env().is_empty() {
        "files"
    } else {
        "postgres"
    };
    assert!(
        moved("baton_store_round_trips_total", &[("store", store)]) >= 1.0,
        "the send's round trips to the {store} store are counted"
    );
    assert!(moved("baton_group_commit_batch_size_count", &[]) >= 1.0);
    // Bob's wake for the task; on a shared store, the hub's watch for work handed to this
    // machine's agents may wake him for it too, once his first run has ended.
    assert!(
        moved("baton_wake_runs_total", &[("outcome", "started")]) >= 1.0,
        "bob's wake for the task"
    );

    // What is open now: an event stream, an MCP session.
    let events = served.events(&served.login);
    eventually("the event stream counted open", || {
        (value(&scrape(&metrics).1, "baton_streams_open", &[]) == 1.0).then_some(())
    });
    mcp_initialize(&served, &served.login, "test");
    assert_eq!(
        value(&scrape(&metrics).1, "baton_mcp_sessions_open", &[]),
        1.0
    );
    drop(events);

    // A question handed to alice, a human with an alert whose receiver never answers: the
    // alert waits in the queue, retried.
    env.run("alice", &["coordinator", "--human", "alice"]).ok();
    env.run(
        "alice",
        &["alert", "add", "pager", "--url", "http://127.0.0.1:1/"],
    )
    .ok();
    assert_eq!(value(&after, "baton_alert_queue_length", &[]), 0.0);
    env.run("bob", &["claim", "1"]).ok();
    env.run("bob", &["ask", "1", "--body", "which one?"]).ok();
    eventually("the alert counted in the queue", || {
        (value(&scrape(&metrics).1, "baton_alert_queue_length", &[]) >= 1.0).then_some(())
    });
}

/// What a change costs the database on a hub, by the hub's own count of its round trips:
/// one for the token's check (the tokens' version, the project's record and the caller's,
/// together), one for the change's `BEGIN` (with the lock, the board's fields, the
/// project's record and the archive's highest id, which a new task's id needs), one for
/// its writes and `COMMIT`. A task sent to oneself reads no agent's record again and
/// wakes nobody. One sent to another agent asks after the receiver (that it is known, the
/// alerts, its record, its listeners, its live sessions) once each, however many of the
/// change's after-effects want to know. On the files there are no round trips to count.
#[test]
fn a_change_on_a_hub_costs_the_database_the_round_trips_it_needs_and_no_more() {
    let env = TestEnv::new();
    if env.store_env().is_empty() {
        return;
    }
    env.register(&["alice", "bob"]);
    let metrics = free_address();
    let served = serve_watched(&env, &metrics);
    let trips = || {
        value(
            &scrape(&metrics).1,
            "baton_store_round_trips_total",
            &[("store", "postgres")],
        )
    };
    let tasks = "/api/v1/projects/default/tasks";
    let send = |to: &str| {
        let sent = served.post(
            tasks,
            &served.login,
            &json!({"to": to, "subject": "counted"}),
        );
        assert_eq!(sent.status, 200, "{}", sent.body);
        sent.json()["task"]["id"].as_u64().unwrap()
    };
    // The hub's own work in the background (its look for this machine's agents, once a
    // second) adds a round trip now and then to whatever is being counted, and never takes
    // one away: what a change costs is the least counted over a few of it. A scrape reads
    // the alert queue's length, counted in each figure and taken off.
    let least = |change: &dyn Fn()| {
        (0..5)
            .map(|_| {
                let before = trips();
                change();
                trips() - before
            })
            .fold(f64::INFINITY, f64::min)
    };
    let scrape_costs = least(&|| {});
    let cost = |change: &dyn Fn()| least(change) - scrape_costs;
    // The hub's first change reads the board whole; those after it keep it.
    send("alice");
    send("bob");
    let sending = |to: &'static str| {
        move || {
            send(to);
        }
    };
    assert_eq!(cost(&sending("alice")), 3.0);
    assert_eq!(cost(&sending("bob")), 8.0);
    let mine: Vec<u64> = (0..5).map(|_| send("alice")).collect();
    let next = std::cell::Cell::new(0);
    let claim = || {
        let id = mine[next.replace(next.get() + 1)];
        let claimed = served.post(&format!("{tasks}/{id}/claim"), &served.login, &json!({}));
        assert_eq!(claimed.status, 200, "{}", claimed.body);
    };
    assert_eq!(cost(&claim), 3.0);
}

#[test]
fn the_metrics_listener_answers_its_own_hosts_and_only_metrics() {
    let env = TestEnv::new();
    let metrics = free_address();
    let _served = serve_watched(&env, &metrics);
    let forged = send(
        &metrics,
        "GET",
        "/metrics",
        &[("Host".to_string(), "evil.example:80".to_string())],
        None,
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    let elsewhere = send(
        &metrics,
        "GET",
        "/api/v1/projects",
        &[("Host".to_string(), metrics.clone())],
        None,
    );
    assert_eq!(
        elsewhere.status, 404,
        "the hub's API is not on the metrics listener"
    );
    let port = metrics.rsplit_once(':').unwrap().1;
    let by_name = send(
        &metrics,
        "GET",
        "/metrics",
        &[("Host".to_string(), format!("localhost:{port}"))],
        None,
    );
    assert_eq!(by_name.status, 200);
}

#[test]
fn a_metrics_address_taken_is_refused_before_serving() {
    let env = TestEnv::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let run = env.run(
        "alice",
        &["serve", "--listen", "127.0.0.1:0", "--metrics", &address],
    );
    let stderr = run.fails(1);
    assert!(stderr.contains("for metrics"), "{stderr}");
    assert!(
        stderr.contains("hint: pick another with --metrics"),
        "{stderr}"
    );
    let stderr = env
        .run("alice", &["serve", "--log", "yaml"])
        .fails(1)
        .to_string();
    assert!(stderr.contains("`json`"), "{stderr}");
}

#[test]
fn nothing_the_hub_writes_holds_a_token_a_password_or_a_participants_words() {
    let env = TestEnv::new();
    env.register(&["alice", "bob"]);
    let token = add_token(&env, "bob");
    let metrics = free_address();
    let served = serve_watched(&env, &metrics);
    let subject = "Subject-7c1e-never-logged";
    let body = "Body-9f3a-never-logged";
    let in_path = "path4d2b-never-logged";
    let in_query = "Query5e6fNeverLogged";
    let forged = "baton_Forged8a8aNeverLogged";

    let sent = served.post(
        "/api/v1/projects/default/tasks",
        &token,
        &json!({"to": "alice", "subject": subject, "body": body}),
    );
    assert_eq!(sent.status, 200, "{}", sent.body);
    let id = sent.json()["task"]["id"].as_u64().unwrap();
    let answered = served.post(
        &format!("/api/v1/projects/default/tasks/{id}/cancel"),
        &token,
        &json!({"text": body}),
    );
    assert_eq!(answered.status, 200, "{}", answered.body);
    let searched = served.get(
        &format!("/api/v1/projects/default/board?search={in_query}&all=true"),
        &token,
    );
    assert_eq!(searched.status, 200, "{}", searched.body);
    let unknown = served.get(&format!("/api/v1/projects/{in_path}/board"), &token);
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(served.get(&format!("/{in_path}"), &token).status, 404);
    assert_eq!(served.get("/api/v1/whoami", forged).status, 401);
    mcp_initialize(&served, &token, subject);
    let (page, _) = scrape(&metrics);
    // The login is printed once, in the URL on the first line (by design), which is not
    // among the lines compared: anywhere else it is a leak.
    let login = served.login.clone();
    let mut stdout = served.more_stdout();
    let (status, stderr) = served.stop();
    assert!(status.success(), "{stderr}");
    // The hub logged the requests: the check below would pass on nothing at all.
    let lines: Vec<Value> = stderr
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(lines.len() >= 7, "{stderr}");
    for line in &lines {
        let keys: BTreeSet<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["time", "method", "route", "status", "duration_ms", "bytes"]),
            "{line}"
        );
    }
    assert!(lines.iter().any(|line| line["status"] == 401));
    assert!(lines.iter().any(|line| {
        line["route"] == "/api/v1/projects/{project}/tasks"
            && line["method"] == "POST"
            && line["status"] == 200
            && line["bytes"].as_u64().unwrap() > 0
    }));
    stdout.push(stderr);
    stdout.push(page);
    let written = stdout.join("\n");
    let mut secrets = vec![
        ("bob's token", token.clone()),
        ("the login token", login),
        ("a forged token", forged.to_string()),
        ("a subject", subject.to_string()),
        ("a body", body.to_string()),
        ("a path", in_path.to_string()),
        ("a query", in_query.to_string()),
    ];
    if let Some(password) = store_password() {
        secrets.push(("the store's password", password));
    }
    for (what, secret) in secrets {
        assert!(
            !secret.is_empty() && !written.contains(&secret),
            "{what} is in what the hub wrote:\n{written}"
        );
    }
}

/// The rules' reader refuses pages that break the format, so that its passing means something.
#[test]
fn the_rules_refuse_what_the_text_format_does_not_allow() {
    let good = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 2\n";
    assert_eq!(parse_by_the_rules(good)["a_total"].samples[0].value, 2.0);
    for broken in [
        // A counter not ending in _total.
        "# HELP a A.\n# TYPE a counter\na 1\n",
        // A sample before its TYPE.
        "# HELP a_total A.\na_total 1\n# TYPE a_total counter\n",
        // An escape the format has not.
        "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"\\t\"} 1\n",
        // A sample of another family.
        "# HELP a_total A.\n# TYPE a_total counter\nb_total 1\n",
        // Buckets that do not add up, and +Inf not the count.
        "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\n\
         h_sum 1\nh_count 2\n",
        "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n",
        // No newline at the end.
        "# HELP a_total A.\n# TYPE a_total counter\na_total 1",
    ] {
        let refused = std::panic::catch_unwind(|| parse_by_the_rules(broken));
        assert!(refused.is_err(), "read as good: {broken:?}");
    }
}
