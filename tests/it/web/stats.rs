//! The stats view (SPEC 19): the agents' figures as the API gives them, and a plot with one
//! bar an agent, drawn by the page; agents' names as text.

use super::*;

/// `agent` runs `args` `minutes` ago.
fn ago(env: &TestEnv, minutes: i64, agent: &str, args: &[&str]) -> Value {
    let at = crate::remote::seconds_from_now(-60 * minutes);
    let mut json = vec!["--json"];
    json.extend_from_slice(args);
    env.run_env(agent, &json, &[("BATON_NOW", &at)]).json()
}

/// A task from human to `agent`, claimed `claimed` minutes ago and done `done` minutes ago.
fn finished(env: &TestEnv, agent: &str, claimed: i64, done: i64) {
    let sent = ago(
        env,
        claimed + 1,
        "human",
        &["send", "--to", agent, "-s", "Work", "--no-wake"],
    );
    let id = sent["task"]["id"].to_string();
    ago(env, claimed, agent, &["claim", &id]);
    ago(env, done, agent, &["done", &id, "--result", "ok"]);
}

#[test]
fn the_stats_view_shows_each_agents_figures_and_a_bar_for_each() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    env.register(&["ada"]);
    // codex: 10 and 25 minutes from claim to done → 17m 30s; ada: 5 minutes.
    finished(env, "codex", 60, 50);
    finished(env, "codex", 40, 15);
    finished(env, "ada", 10, 5);
    // A name no command would take, in a log edited by hand: shown as text.
    let hostile = "<b>bold</b>\u{202e}";
    let mut names = vec!["ada", "codex", "human"];
    if files_only("a hostile actor written into activity.jsonl") {
        let line = json!({
            "at": crate::remote::seconds_from_now(-60),
            "project": "web",
            "actor": hostile,
            "action": "send",
            "task": 99,
            "to_status": "pending",
        });
        let path = env.project_dir("web").join("activity.jsonl");
        let mut log = std::fs::read_to_string(&path).unwrap();
        log.push_str(&format!("{line}\n"));
        std::fs::write(&path, log).unwrap();
        // '<' sorts before the letters.
        names.insert(0, hostile);
    }
    let api = env
        .run("human", &["--json", "stats", "--project", "web"])
        .json();
    let listed: Vec<&str> = api["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["agent"].as_str().unwrap())
        .collect();
    assert_eq!(listed, names, "{api}");

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#tab-stats", deadline);
    let rows = wait_for(
        browser,
        "a row of the stats table for each agent, and everyone's",
        "const rows = [...document.querySelectorAll('#stats tbody tr')]; \
         return rows.length === arguments[0] ? rows.map((row) => \
           [...row.children].map((cell) => cell.textContent)) : null",
        &[json!(names.len() + 1)],
    );
    let row = |name: &str| -> Vec<String> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|row| serde_json::from_value::<Vec<String>>(row.clone()).unwrap())
            .find(|row| row[0] == name)
            .unwrap_or_else(|| panic!("{name} in {rows}"))
    };
    // agent, finished, claim → finish, waited on human, rework, unseen > 5m.
    assert_eq!(row("ada"), ["ada", "1", "5m 00s", "0s", "0.00", "0"]);
    assert_eq!(row("codex"), ["codex", "2", "17m 30s", "0s", "0.00", "0"]);
    assert_eq!(
        row("human (human)"),
        ["human (human)", "0", "—", "0s", "—", "0"]
    );
    assert_eq!(row("all agents")[1..3], ["3", "10m 00s"]);

    // The plots: one bar an agent, in the table's order, as long as its figure allows.
    let bars = browser.execute(
        "return ['#stats-finished', '#stats-median'].map((plot) => \
           [...document.querySelectorAll(plot + ' .plot-row')].map((row) => ({ \
             agent: row.dataset.agent, \
             name: row.querySelector('.plot-name').textContent, \
             width: Number(row.querySelector('rect.bar').getAttribute('width')), \
             label: row.querySelector('.plot-value').textContent})))",
        &[],
    );
    for plot in bars.as_array().unwrap() {
        let plot = plot.as_array().unwrap();
        let agents: Vec<&str> = plot
            .iter()
            .map(|bar| bar["agent"].as_str().unwrap())
            .collect();
        assert_eq!(agents, names, "one bar an agent: {plot:?}");
    }
    let bar = |plot: usize, agent: &str| {
        bars[plot]
            .as_array()
            .unwrap()
            .iter()
            .find(|bar| bar["agent"] == agent)
            .unwrap()
            .clone()
    };
    // Tasks finished: codex's 2 the longest, ada's 1 half of it, human's none.
    assert_eq!(bar(0, "codex")["label"], "2");
    let (codex, ada) = (
        bar(0, "codex")["width"].as_f64().unwrap(),
        bar(0, "ada")["width"].as_f64().unwrap(),
    );
    assert!(codex > 0.0 && (ada * 2.0 - codex).abs() < 0.5, "{bars}");
    assert_eq!(bar(0, "human")["width"], 0.0);
    // Median claim → finish: codex's 17m 30s against ada's 5m.
    assert_eq!(bar(1, "codex")["label"], "17m 30s");
    assert_eq!(bar(1, "ada")["label"], "5m 00s");
    assert_eq!(bar(1, "human")["label"], "—");
    let (codex, ada) = (
        bar(1, "codex")["width"].as_f64().unwrap(),
        bar(1, "ada")["width"].as_f64().unwrap(),
    );
    assert!((ada * 3.5 - codex).abs() < 0.5, "{bars}");

    if names[0] == hostile {
        // Escaped as the CLI escapes it, in the table and in the plot, and no markup made.
        let shown = "<b>bold</b>\\u{202e}";
        assert_eq!(row(shown)[0], shown);
        assert_eq!(bar(0, hostile)["name"], shown);
        assert_eq!(
            browser.execute(
                "return document.querySelectorAll('#stats-view b').length",
                &[]
            ),
            0
        );
    }

    // Another window: everything the log holds.
    browser.execute(
        "const since = document.querySelector('#stats-since'); since.value = 'all'; \
         since.dispatchEvent(new Event('change'));",
        &[],
    );
    wait_for(
        browser,
        "the window of everything",
        "return document.querySelector('#stats-window').textContent === \
         'Everything the activity log holds.'",
        &[],
    );
}
