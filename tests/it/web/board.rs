//! The board on the page: live as the CLI changes it, text from agents shown as text, and
//! what a human sends, reassigns and messages from it reaching the hub.

use super::*;

#[test]
fn a_task_sent_from_the_cli_appears_live_and_is_approved_from_the_page() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    // Logged in from the printed URL: the token left the address bar for the browser's
    // storage.
    let login = browser.execute(
        "return {hash: location.hash, stored: localStorage.getItem('baton-token') !== null, \
         me: document.querySelector('#whoami').textContent}",
        &[],
    );
    assert_eq!(login, json!({"hash": "", "stored": true, "me": "as human"}));
    wait_for(
        browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    mark_page(browser);

    let id = env.send("human", "codex", "Fix the date parser", &["--review"]);
    let subject = wait_for(
        browser,
        "the new card in pending",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    assert_eq!(subject, "Fix the date parser");

    env.run("codex", &["claim", &id.to_string()]).ok();
    env.run(
        "codex",
        &["review", &id.to_string(), "--body", "leap years too"],
    )
    .ok();
    wait_for(
        browser,
        "the card in review_requested",
        CARD_IN,
        &[json!(id), json!("review_requested")],
    );
    assert_same_document(browser);

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    wait_for(
        browser,
        "the task's panel with its thread",
        "const panel = document.querySelector('#task-panel'); \
         const thread = document.querySelector('#thread'); \
         return !panel.hidden && thread && thread.textContent.includes('leap years too') && \
           !document.querySelector('#approve').hidden",
        &[],
    );
    browser.click("#approve", deadline);

    completed_on_the_board(env, id, "the approve click");
    // The line is appended just after the board is renamed into place (its journal makes
    // that crash-safe), so a reader without the lock can see the board a moment before it.
    let last = until_hub("the approval's line in the log", || {
        let last = env.activity("web").pop().unwrap();
        if last["action"] != "review" {
            Ok(last)
        } else {
            Err(last.to_string())
        }
    });
    assert_eq!(
        (&last["action"], &last["actor"]),
        (&json!("approve"), &json!("human"))
    );
    wait_for(
        browser,
        "the panel saying completed",
        "const status = document.querySelector('#task-panel [data-field=\"status\"]'); \
         return status && status.textContent === 'completed'",
        &[],
    );
    wait_for(
        browser,
        "the card gone from review_requested",
        "return document.querySelector('.column[data-status=\"review_requested\"] \
         [data-task]') === null",
        &[],
    );
    assert_same_document(browser);
}

#[test]
fn text_from_agents_shows_as_text_and_runs_nothing() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    mark_page(browser);

    let markup = "<img src=x onerror=alert(1)>";
    let body = "<script>alert(2)</script>\n\u{1b}[31mred\u{202e}txt.exe";
    let id = env.send("codex", "human", markup, &["--body", body]);
    let subject = wait_for(browser, "the card", CARD_IN, &[json!(id), json!("pending")]);
    assert_eq!(subject, markup);

    browser.click(
        &format!("[data-task=\"{id}\"]"),
        Instant::now() + PAGE_DEADLINE,
    );
    let shown = wait_for(
        browser,
        "the task's body",
        "const body = document.querySelector('#task-body'); \
         return body ? body.textContent : null",
        &[],
    );
    // The markup as characters; the escape and the bidi override as visible escapes.
    assert_eq!(
        shown,
        "<script>alert(2)</script>\n\\u{1b}[31mred\\u{202e}txt.exe"
    );
    let title = browser.execute(
        "return document.querySelector('#task-title').textContent",
        &[],
    );
    assert_eq!(title, format!("T-{id} {markup}"));

    let dom = browser.execute(
        "return {img: document.querySelectorAll('img').length, \
                 scripts: [...document.querySelectorAll('script')].map((s) => s.getAttribute('src'))}",
        &[],
    );
    assert_eq!(
        dom,
        json!({"img": 0, "scripts": ["/assets/text.js", "/assets/board.js", "/assets/login.js", "/assets/diff.js", "/assets/stats.js", "/assets/app.js"]}),
        "only the page's own scripts"
    );
    assert_same_document(browser);
    assert_eq!(browser.alert_text(), None);

    // The page escapes exactly the characters the CLI does, written the same way.
    let page = browser.execute(
        "const out = []; \
         for (let code = 0; code <= 0x10ffff; code++) { \
           if (code >= 0xd800 && code <= 0xdfff) continue; \
           const ch = String.fromCodePoint(code); \
           if (line(ch) !== ch) out.push([code, line(ch)]); \
         } \
         return out;",
        &[],
    );
    let cli: Vec<Value> = (0..=0x10ffff_u32)
        .filter_map(char::from_u32)
        .filter_map(|c| {
            let shown = baton::text::inline(&c.to_string()).to_string();
            (shown != c.to_string()).then(|| json!([u32::from(c), shown]))
        })
        .collect();
    assert_eq!(page, Value::Array(cli));
}

/// The task on the CLI's board whose subject is `subject`, once it is there.
fn task_by_subject(env: &TestEnv, subject: &str) -> Value {
    eventually_seeing(
        PAGE_DEADLINE,
        &format!("a task {subject:?} on the board"),
        || {
            let board = env.run("human", &["--json", "board", "--all"]).json();
            board
                .as_array()
                .unwrap()
                .iter()
                .find(|task| task["subject"] == subject)
                .cloned()
                .ok_or_else(|| board.to_string())
        },
    )
}

#[test]
fn a_human_sends_reassigns_and_messages_from_the_page() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    env.register(&["claude"]);

    browser.goto(&server.url);
    board_shown(browser);
    let deadline = Instant::now() + PAGE_DEADLINE;

    // A refusal from the server shows next to the form, and nothing is sent.
    browser.click("#open-send", deadline);
    browser.click("#send-to option[value=\"codex\"]", deadline);
    browser.execute(
        "document.querySelector('#send-subject').value = 'two\\u001bparts'",
        &[],
    );
    browser.click("#send-submit", deadline);
    let refused = wait_for(
        browser,
        "the refusal next to the form",
        SHOWN_TEXT,
        &[json!("#send-error")],
    );
    assert!(refused.as_str().unwrap().contains("one line"), "{refused}");
    assert_eq!(env.run("human", &["--json", "board"]).json(), json!([]));

    browser.execute("document.querySelector('#send-subject').value = ''", &[]);
    browser.type_into("#send-subject", "Sent from the page", deadline);
    browser.type_into("#send-body", "line one\nline two", deadline);
    browser.click("#send-priority option[value=\"high\"]", deadline);
    browser.click("#send-review", deadline);
    browser.click("#send-submit", deadline);
    let task = task_by_subject(env, "Sent from the page");
    assert_eq!(
        (
            &task["from"],
            &task["to"],
            &task["body"],
            &task["priority"],
            &task["review"]
        ),
        (
            &json!("human"),
            &json!("codex"),
            &json!("line one\nline two"),
            &json!("high"),
            &json!(true)
        )
    );
    let id = task["id"].as_u64().unwrap();

    // The page opens what it sent; reassigning it there moves it to claude.
    wait_for(
        browser,
        "the sent task's panel",
        "return !document.querySelector('#task-panel').hidden && \
         document.querySelector('#task-title').textContent === arguments[0]",
        &[json!(format!("T-{id} Sent from the page"))],
    );
    browser.click("#reassign-to option[value=\"claude\"]", deadline);
    browser.click("#reassign", deadline);
    assigned_on_the_board(env, id, "claude");
    wait_for(
        browser,
        "the panel naming claude",
        "const to = document.querySelector('#task-panel [data-field=\"to\"]'); \
         return to && to.textContent === 'claude'",
        &[],
    );

    browser.click("#open-message", deadline);
    browser.click("#message-to option[value=\"codex\"]", deadline);
    browser.type_into("#message-text", "the benchmarks are in bench/", deadline);
    browser.click("#message-submit", deadline);
    assert_eq!(
        from_human(env, "codex"),
        [json!("the benchmarks are in bench/")]
    );
    wait_for(
        browser,
        "the message form closed",
        "return document.querySelector('#message-panel').hidden",
        &[],
    );
}

#[test]
fn a_corrupt_project_shows_its_error_and_the_page_keeps_working() {
    if !files_only("reads board.json") {
        return;
    }
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    let side = env.project_beside("human", "side");
    env.run_in(
        &side,
        "human",
        &["send", "--to", "codex", "--subject", "Side work"],
    )
    .ok();
    std::fs::write(env.board_path("side"), "not a board").unwrap();
    let id = env.send("human", "codex", "Main work", &[]);

    let (base, token) = server.url.split_once('#').unwrap();
    browser.goto(&format!("{base}?project=web#{token}"));
    board_shown(browser);
    wait_for(
        browser,
        "the web card",
        CARD_IN,
        &[json!(id), json!("pending")],
    );

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#project option[value=\"side\"]", deadline);
    let error = wait_for(
        browser,
        "the corrupt project's error",
        SHOWN_TEXT,
        &[json!("#project-error")],
    );
    assert!(error.as_str().unwrap().contains("board.json"), "{error}");
    assert_eq!(
        browser.execute(
            "return document.querySelectorAll('[data-task]').length",
            &[]
        ),
        0,
        "the other project's cards stay behind"
    );

    browser.click("#project option[value=\"web\"]", deadline);
    wait_for(
        browser,
        "the web card again",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    assert_eq!(
        browser.execute(
            "return document.querySelector('#project-error').hidden",
            &[]
        ),
        true
    );
}

#[test]
fn held_work_and_its_holder_show_and_the_human_ends_a_reservation_from_the_page() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    env.register(&["codex", "gemini"]);
    // The human sends first, and so coordinates the project.
    let first = env.send(
        "human",
        "codex",
        "Fix the date parser",
        &["--touches", "src/date/**", "--no-wake"],
    );
    let held = env.send(
        "human",
        "gemini",
        "Document dates",
        &["--touches", "src/date/api.rs", "--no-wake"],
    );
    env.run("codex", &["claim", &first.to_string()]).ok();
    env.run(
        "codex",
        &[
            "reserve",
            "docs/**",
            "--for",
            "2h",
            "--reason",
            "<b>docs</b>",
        ],
    )
    .ok();
    let mark = wait_for(
        browser,
        "the held mark on the waiting card",
        "const mark = document.querySelector(`[data-task=\"${arguments[0]}\"] [data-mark=held]`); \
         return mark && mark.textContent",
        &[json!(held)],
    );
    assert_eq!(mark, "held: src/date/** by codex (T-1)");
    let listed = wait_for(
        browser,
        "both reservations listed",
        "const items = [...document.querySelectorAll('#reservations li')]; \
         return items.length === 2 && items.map((item) => item.textContent)",
        &[],
    );
    let listed = listed.to_string();
    assert!(listed.contains("src/date/** by codex (T-1)"), "{listed}");
    // The reason is an agent's text: shown as text, never as markup.
    assert!(listed.contains("<b>docs</b>"), "{listed}");
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{first}\"]"), deadline);
    wait_for(
        browser,
        "the claimed task's reservations on its page",
        "const field = document.querySelector('[data-field=reserved]'); \
         return field && field.textContent === 'src/date/**'",
        &[],
    );
    // The human ends codex's claim reservation: the held task goes to gemini.
    browser.click("#close-task", deadline);
    browser.click(
        "#reservations li[data-agent=codex] button[data-pattern=\"src/date/**\"]",
        deadline,
    );
    until_hub("gemini's inbox to hold the freed task", || {
        let ids = env.inbox_ids("gemini");
        if ids == vec![held] {
            Ok(())
        } else {
            Err(format!("{ids:?}"))
        }
    });
    let mail = env.run("codex", &["--json", "messages"]).json();
    assert!(
        mail["messages"][0]["body"]
            .as_str()
            .unwrap_or_default()
            .contains("human ended your reservations of src/date/**"),
        "{mail}"
    );
    wait_for(
        browser,
        "one reservation left",
        "return document.querySelectorAll('#reservations li').length === 1",
        &[],
    );
}
