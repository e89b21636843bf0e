//! The page's other views (the inbox, the messages), its layout on a narrow screen, and
//! that its looks renew no lease.

use super::*;

#[test]
fn the_inbox_view_shows_what_baton_inbox_shows() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    env.send("codex", "human", "Low one", &["--priority", "low"]);
    env.send(
        "codex",
        "human",
        "Urgent one",
        &[
            "--priority",
            "urgent",
            "--body",
            "line one\nline two",
            "--files",
            "a.rs,b.rs",
        ],
    );
    let asked = env.send("human", "codex", "Asked about", &[]);
    env.run(
        "codex",
        &["ask", &asked.to_string(), "--body", "Which <b>one</b>?"],
    )
    .ok();
    env.send("human", "codex", "Not in the inbox", &[]);
    env.run("codex", &["msg", "--to", "human", "the build is green"])
        .ok();

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#tab-inbox", deadline);
    let cli = env.run("human", &["--json", "inbox", "--peek"]).json();
    let expected_ids: Vec<Value> = cli["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["id"].clone())
        .collect();
    assert_eq!(expected_ids.len(), 3, "{cli}");
    let shown = wait_for(
        browser,
        "the inbox's tasks",
        "const entries = [...document.querySelectorAll('#inbox-tasks [data-task]')]; \
         return entries.length === arguments[0] ? entries.map((entry) => ({ \
           id: Number(entry.dataset.task), \
           what: entry.querySelector('.what').textContent, \
           subject: entry.querySelector('.subject').textContent, \
           text: entry.textContent})) : null",
        &[json!(expected_ids.len())],
    );
    let shown = shown.as_array().unwrap();
    let ids: Vec<Value> = shown.iter().map(|entry| entry["id"].clone()).collect();
    assert_eq!(ids, expected_ids, "the CLI's order: priority, then age");
    let text = env.run("human", &["inbox", "--peek"]).ok().to_string();
    for (entry, task) in shown.iter().zip(cli["tasks"].as_array().unwrap()) {
        let what = entry["what"].as_str().unwrap();
        let subject = task["subject"].as_str().unwrap();
        // The same words as `baton inbox`'s line for the task.
        assert!(
            text.contains(&format!("{what}: {subject}")),
            "{what}: {subject} in\n{text}"
        );
        assert_eq!(entry["subject"], task["subject"]);
    }
    let urgent = shown[0]["text"].as_str().unwrap();
    for part in [
        "[urgent]",
        "line one\nline two",
        "files: a.rs, b.rs",
        "codex is waiting on you",
    ] {
        assert!(urgent.contains(part), "{part} in {urgent}");
    }
    let question = shown.iter().find(|entry| entry["id"] == asked).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        question.contains("last question by codex") && question.contains("Which <b>one</b>?"),
        "{question}"
    );
    let unread = wait_for(
        browser,
        "the unread message",
        "const bodies = [...document.querySelectorAll('#inbox-messages .message pre')]; \
         return bodies.length ? bodies.map((body) => body.textContent) : null",
        &[],
    );
    let cli_unread: Vec<Value> = cli["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["body"].clone())
        .collect();
    assert_eq!(unread, Value::Array(cli_unread));
    let counts = browser.execute(
        "return [document.querySelector('#inbox-count').textContent, \
                 document.querySelector('#unread-count').textContent]",
        &[],
    );
    assert_eq!(counts, json!(["3", "1"]));
    assert_eq!(
        browser.execute("return document.querySelectorAll('b').length", &[]),
        0,
        "text, not markup"
    );

    // An entry opens its task; "mark read" marks the messages read as `baton inbox` would.
    browser.click(&format!("#inbox-tasks [data-task=\"{asked}\"]"), deadline);
    panel_offers(browser, asked, &["answer", "cancel", "reassign", "edit"]);
    browser.click("#close-task", deadline);
    browser.click("#inbox-mark-read", deadline);
    wait_for(
        browser,
        "no unread messages",
        "return document.querySelectorAll('#inbox-messages .message').length === 0 && \
         document.querySelector('#unread-count').hidden",
        &[],
    );
    let after = env.run("human", &["--json", "inbox", "--peek"]).json();
    assert_eq!(after["messages"], json!([]), "{after}");
}

#[test]
fn a_message_sent_from_the_page_arrives_and_one_from_the_cli_shows() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    env.register(&["claude"]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#tab-messages", deadline);
    wait_for(
        browser,
        "the empty messages view",
        SHOWN_TEXT,
        &[json!("#messages-empty")],
    );
    mark_page(browser);

    browser.click("#messages-write", deadline);
    browser.click("#message-to option[value=\"@all\"]", deadline);
    browser.type_into("#message-text", "stand-up in five minutes", deadline);
    browser.click("#message-submit", deadline);
    for agent in ["codex", "claude"] {
        assert_eq!(
            from_human(env, agent),
            [json!("stand-up in five minutes")],
            "{agent}"
        );
    }
    // The page lists what it sent.
    wait_for(
        browser,
        "the sent message in the list",
        "return [...document.querySelectorAll('#messages .message')] \
         .some((message) => message.textContent.includes('human → @all') && \
           message.textContent.includes('stand-up in five minutes'))",
        &[],
    );

    // One from the CLI shows without a reload, as text, unread, with a reply to its sender.
    let hostile = "<img src=x onerror=alert(1)> \u{1b}[2J done";
    env.run("codex", &["msg", "--to", "human", hostile]).ok();
    let body = wait_for(
        browser,
        "codex's message",
        "const message = [...document.querySelectorAll('#messages .message.unread')] \
           .find((message) => message.textContent.includes('codex → human')); \
         return message ? message.querySelector('pre').textContent : null",
        &[],
    );
    assert_eq!(body, "<img src=x onerror=alert(1)> \\u{1b}[2J done");
    assert_eq!(
        browser.execute("return document.querySelectorAll('img').length", &[]),
        0
    );
    browser.click("#messages [data-reply=\"codex\"]", deadline);
    let chosen = browser.execute(
        "return document.querySelector('#message-panel').hidden ? null : \
         document.querySelector('#message-to').value",
        &[],
    );
    assert_eq!(chosen, "codex");
    browser.type_into("#message-text", "thanks", deadline);
    browser.click("#message-submit", deadline);
    until_hub("the reply in codex's mail", || {
        let mail = env.run("codex", &["--json", "messages", "--peek"]).json();
        mail["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["body"] == "thanks" && message["to"] == "codex")
            .then_some(())
            .ok_or_else(|| mail.to_string())
    });

    // Marked read from the page, as `baton messages` marks them.
    browser.click("#messages-mark-read", deadline);
    wait_for(
        browser,
        "nothing unread",
        "return document.querySelectorAll('#messages .message.unread').length === 0",
        &[],
    );
    let unread = env.run("human", &["--json", "messages", "--peek"]).json();
    assert_eq!(unread["messages"], json!([]), "{unread}");
    assert_same_document(browser);
}

#[test]
fn at_700_pixels_nothing_scrolls_sideways_in_any_view() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    // The longest unbroken text baton takes, wherever a participant writes.
    let name = format!("agent{}", "w".repeat(59));
    env.register(&[&name, "human"]);
    env.run(
        &name,
        &[
            "agent",
            "add",
            &name,
            "--strengths",
            &"S".repeat(2000),
            "--skills",
            &"k".repeat(64),
        ],
    )
    .ok();
    let subject = "W".repeat(1000);
    let body = "B".repeat(6000);
    let file = format!("src/{}", "f".repeat(300));
    let id = env.send(
        &name,
        "human",
        &subject,
        &["--body", &body, "--files", &file, "--priority", "urgent"],
    );
    env.run("human", &["claim", &id.to_string()]).ok();
    env.run("human", &["ask", &id.to_string(), "--body", &body])
        .ok();
    env.send(&name, "human", &subject, &[]);
    env.send("human", &name, &subject, &[]);
    env.run(&name, &["msg", "--to", "human", &body]).ok();
    env.run(&name, &["note", &body]).ok();

    browser.set_window_size(700, 900);
    browser.goto(&server.url);
    board_shown(browser);
    let width = browser.execute("return window.innerWidth", &[]);
    assert!(
        width.as_u64().unwrap() <= 700,
        "the page is {width} pixels wide"
    );
    let sideways = "const page = document.documentElement; \
        return {scroll: page.scrollWidth, client: page.clientWidth}";
    let check = |view: &str| {
        let measured = browser.execute(sideways, &[]);
        assert!(
            measured["scroll"].as_u64() <= measured["client"].as_u64(),
            "{view} scrolls sideways at 700 px: {measured}"
        );
    };
    let deadline = Instant::now() + PAGE_DEADLINE;
    wait_for(
        browser,
        "the long cards",
        CARD_IN,
        &[json!(id), json!("input_required")],
    );
    check("the board");
    browser.click("#toggle-finished", deadline);
    check("the board with finished tasks");
    for (tab, ready) in [
        ("inbox", "#inbox-tasks [data-task]"),
        ("messages", "#messages .message"),
        ("agents", "#agents tbody tr"),
        ("activity", "#activity li"),
        ("stats", "#stats tbody tr"),
    ] {
        browser.click(&format!("#tab-{tab}"), deadline);
        wait_for(
            browser,
            &format!("the {tab} view"),
            "return document.querySelector(arguments[0]) !== null",
            &[json!(ready)],
        );
        check(tab);
    }
    browser.click("#tab-board", deadline);
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_shows(browser, "input_required");
    check("the task panel");
    // The header wraps to more rows at this width; the panel starts below them all.
    let placed = browser.execute(
        "const header = document.querySelector('#top').getBoundingClientRect(); \
         const panel = document.querySelector('#task-panel').getBoundingClientRect(); \
         return {rows: header.height > 60, below: panel.top >= header.bottom - 1}",
        &[],
    );
    assert_eq!(placed, json!({"rows": true, "below": true}));
    browser.click("#close-task", deadline);
    browser.click("#open-send", deadline);
    check("the send form");
    browser.click("#send-panel .close", deadline);
    browser.click("#open-message", deadline);
    check("the message form");
    // The login notice too, once logged out, with a long target in it.
    browser.click("#message-panel .close", deadline);
    browser.click("#logout", deadline);
    login_notice(browser);
    browser.goto(&format!(
        "{}#task=T-{id}&project={}",
        server.base(),
        "p".repeat(64)
    ));
    login_notice(browser);
    check("the login notice");
}

/// The human's claim on T-1, 50 seconds into a one-minute lease: less than half is left, so
/// any renewal would move it. Answers the lease as it stands.
fn human_claim_near_its_end(env: &TestEnv) -> String {
    let path = "projects/web/project.json";
    let mut project: Value = serde_json::from_str(&env.hub_text(path).unwrap()).unwrap();
    project["settings"]["lease_minutes"] = 1.into();
    env.write_hub_text(path, &serde_json::to_string_pretty(&project).unwrap());
    env.register(&["human"]);
    let id = env.send("codex", "human", "Long job", &["--no-wake"]);
    let at = crate::remote::seconds_from_now(-50);
    env.run_env("human", &["claim", &id.to_string()], &[("BATON_NOW", &at)])
        .ok();
    lease_on(env, id)
}

fn lease_on(env: &TestEnv, id: u64) -> String {
    let board = env.run("codex", &["--json", "board", "--all"]).json();
    task_in(&board, id)["lease_expires_at"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_pages_looks_renew_no_lease_and_what_the_human_does_from_it_does() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    // Opening the page is the human at the desk; the claim comes after it.
    let lease = human_claim_near_its_end(env);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("[data-task=\"1\"]", deadline);
    panel_offers(browser, 1, &["release", "ask", "review", "done", "fail"]);
    // A change makes the page read the board, the inbox and the task again.
    let next = env.send("codex", "human", "Next job", &["--no-wake"]);
    wait_for(
        browser,
        "the new task",
        CARD_IN,
        &[json!(next), json!("pending")],
    );
    browser.click("#tab-inbox", deadline);
    wait_for(
        browser,
        "the inbox with the new task",
        "return document.querySelector('#inbox-view').innerText.includes('Next job')",
        &[],
    );
    assert_eq!(
        lease_on(env, 1),
        lease,
        "the page's looks renewed the lease"
    );
    // Claiming the next task from the page is the human at work: it renews the first.
    browser.click("#tab-board", deadline);
    browser.click(&format!("[data-task=\"{next}\"]"), deadline);
    panel_offers(browser, next, &["claim", "ask", "review", "done", "fail"]);
    browser.click("#claim", deadline);
    shown_with_status(env, next, "working");
    assert_ne!(
        lease_on(env, 1),
        lease,
        "what the human does from the page renews the lease"
    );
}
