//! The task's panel: what it offers whom (the table of actions), what each button does, and
//! long text drawn cut.

use super::*;

/// Asserts that the last entry of `task`'s thread is `by`'s and says `text`.
#[track_caller]
fn assert_last_entry(task: &Value, by: &str, text: &str) {
    let last = task["thread"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (&last["by"], &last["text"]),
        (&json!(by), &json!(text)),
        "{task}"
    );
}

#[test]
fn a_human_answers_requests_changes_and_cancels_from_the_panel() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    let id = env.send("human", "codex", "Date parser", &["--review"]);
    let task = id.to_string();
    env.run("codex", &["ask", &task, "--body", "Refuse, or clamp?"])
        .ok();

    browser.goto(&server.url);
    board_shown(browser);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_shows(browser, "input_required");
    browser.type_into("#action-text", "Refuse.", deadline);
    browser.click("#answer", deadline);
    let answered = shown_with_status(env, id, "pending");
    assert_last_entry(&answered, "human", "Refuse.");

    // The open panel follows the CLI's change without a click.
    env.run("codex", &["review", &task, "--body", "refused"])
        .ok();
    panel_shows(browser, "review_requested");
    browser.type_into("#action-text", "Add a leap-year test", deadline);
    browser.click("#request-changes", deadline);
    let changes = shown_with_status(env, id, "changes_requested");
    assert_last_entry(&changes, "human", "Add a leap-year test");

    panel_shows(browser, "changes_requested");
    browser.type_into("#action-text", "not needed after all", deadline);
    browser.click("#cancel", deadline);
    browser.click("#confirm-yes", deadline);
    let canceled = shown_with_status(env, id, "canceled");
    assert_last_entry(&canceled, "human", "not needed after all");
    panel_shows(browser, "canceled");
    assert_eq!(
        browser.execute("return document.querySelector('#task-actions').hidden", &[]),
        true,
        "a finished task offers no actions"
    );
}

/// The script that reads the open task's body, once it shows the mark of a cut: its text.
const CUT_BODY: &str = "const body = document.querySelector('#task-body'); \
    return body && body.textContent.includes('more characters') ? body.textContent : null";

/// Text drawn as a run of `repeated` and what follows it: the run's length and the rest,
/// small enough to show when an assertion fails (the texts here are up to 256 KiB).
fn run_then_rest(text: &Value, repeated: char) -> (usize, String) {
    let text = text.as_str().expect("text");
    let rest = text.trim_start_matches(repeated);
    let run = text[..text.len() - rest.len()].chars().count();
    let rest: String = rest.chars().take(200).collect();
    (run, rest)
}

#[test]
fn long_text_is_drawn_cut_and_the_page_stays_responsive() {
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
    env.register(&["human"]);
    // A board full of the largest bodies baton accepts, each one unbroken run of characters
    // (the hardest text for a browser to lay out), one of them asked about at that length.
    let most = "y".repeat(256 * 1024);
    let send = [
        "--json",
        "send",
        "--to",
        "human",
        "--subject",
        "Big body",
        "--body",
        "-",
    ];
    let ids: Vec<u64> = (0..12)
        .map(|_| {
            env.run_stdin("codex", &send, &most).json()["task"]["id"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let big = ids[0].to_string();
    env.run("human", &["claim", &big]).ok();
    env.run_stdin("human", &["ask", &big, "--body", "-"], &most)
        .ok();
    // A subject of 100,000 characters, as the attacker's was, written into board.json by
    // hand now that baton refuses it: the readers must survive it all the same.
    let long = env.send("codex", "human", "placeholder", &[]);
    let path = env.board_path("web");
    let mut board: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let subject = "S".repeat(100_000);
    for task in board["tasks"].as_array_mut().unwrap() {
        if task["id"] == long {
            task["subject"] = json!(subject);
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&board).unwrap()).unwrap();
    let shown = env.run("human", &["--json", "show", &long.to_string()]);
    assert!(
        shown.json()["subject"] == json!(subject),
        "the CLI reads it"
    );

    browser.goto(&server.url);
    board_shown(browser);
    mark_page(browser);
    let card = wait_for(
        browser,
        "the long subject's card",
        CARD_IN,
        &[json!(long), json!("pending")],
    );
    let more = |left: &str| format!("… {left} more characters");
    assert_eq!(run_then_rest(&card, 'S'), (200, more("99,800")));

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{long}\"]"), deadline);
    let title = wait_for(
        browser,
        "the long subject as the task's title",
        "const title = document.querySelector('#task-title').textContent; \
         return title.includes('more characters') ? title.slice(arguments[0].length) : null",
        &[json!(format!("T-{long} "))],
    );
    assert_eq!(run_then_rest(&title, 'S'), (1000, more("99,000")));

    // The panel covers part of the board, and the header the top of a scrolled page.
    browser.click("#close-task", deadline);
    browser.execute(
        "document.querySelector(`[data-task=\"${arguments[0]}\"]`)\
           .scrollIntoView({block: 'center'})",
        &[json!(big)],
    );
    browser.click(&format!("[data-task=\"{big}\"]"), deadline);
    let body = wait_for(browser, "the long body, cut", CUT_BODY, &[]);
    let cut = (4000, format!("{} (show all)", more("258,144")));
    assert_eq!(run_then_rest(&body, 'y'), cut);
    let question = browser.execute(
        "return document.querySelector('#thread pre.text').textContent",
        &[],
    );
    assert_eq!(run_then_rest(&question, 'y'), cut);

    // The page keeps up with the board while all that is on it, and what it drew is a
    // small part of the 3 MiB the board holds.
    let later = env.send("codex", "human", "Sent after the big ones", &[]);
    let card = wait_for(
        browser,
        "a card sent after the big ones",
        CARD_IN,
        &[json!(later), json!("pending")],
    );
    assert_eq!(card, "Sent after the big ones");
    let drawn = browser.execute("return document.body.textContent.length", &[]);
    assert!(
        drawn.as_u64().unwrap() < 100_000,
        "{drawn} characters drawn"
    );

    // A cut body is shown whole on request, and stays whole as the page refreshes.
    browser.click("#task-body [data-whole]", deadline);
    wait_for(
        browser,
        "the whole body",
        "const body = document.querySelector('#task-body'); \
         return body.textContent.length === arguments[0] && !body.querySelector('button')",
        &[json!(most.len())],
    );
    env.send("codex", "human", "One more", &[]);
    wait_for(
        browser,
        "the refresh after one more task",
        "return document.querySelectorAll('[data-task]').length === arguments[0]",
        &[json!(ids.len() + 3)],
    );
    let body = browser.execute(
        "return document.querySelector('#task-body').textContent.length",
        &[],
    );
    assert_eq!(body, json!(most.len()));
    assert_same_document(browser);
}

/// The page's action buttons are the table of actions', one a row in its order, each with
/// the row's label, words and confirmation: a button written by hand, or a row without its
/// button, is seen here.
fn buttons_are_the_tables(browser: &Browser) {
    let shown = browser.execute(
        "return [...document.querySelectorAll('#task-actions button[data-action]')] \
           .map((button) => [button.dataset.action, button.dataset.command, \
                             button.textContent, button.dataset.words || null, \
                             button.dataset.confirm !== undefined])",
        &[],
    );
    let table: Vec<Value> = ACTIONS
        .iter()
        .map(|row| {
            json!([
                row.name,
                row.command,
                row.button.label,
                row.button.words,
                row.confirms
            ])
        })
        .collect();
    assert_eq!(shown, json!(table));
}

#[test]
fn a_human_assignee_claims_and_finishes_a_task_from_the_page() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    let id = env.send("codex", "human", "Check the release notes", &[]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    // The assignee's actions, and none of the sender's (answer, approve, cancel, reassign).
    panel_offers(browser, id, &["claim", "ask", "review", "done", "fail"]);
    mark_page(browser);
    browser.click("#claim", deadline);
    shown_with_status(env, id, "working");
    panel_offers(browser, id, &["release", "ask", "review", "done", "fail"]);

    // Done without words is refused in baton's words, and nothing changes.
    browser.click("#done", deadline);
    let refused = wait_for(
        browser,
        "the refusal of done without a result",
        SHOWN_TEXT,
        &[json!("#task-error")],
    );
    assert!(
        refused.as_str().unwrap().contains("done needs --result"),
        "{refused}"
    );
    browser.type_into("#action-text", "Notes checked, two typos fixed", deadline);
    browser.click("#done", deadline);
    let task = completed_on_the_board(env, id, "the done click");
    assert_eq!(task["result"], "Notes checked, two typos fixed");
    // The log's line follows the board's rename by a moment: wait for it.
    let actions = until_hub("the done click's line in the log", || {
        let actions: Vec<Value> = env
            .activity("web")
            .iter()
            .filter(|record| record["task"] == id)
            .map(|record| json!([record["actor"], record["action"]]))
            .collect();
        if actions.len() >= 3 {
            Ok(actions)
        } else {
            Err(format!("{actions:?}"))
        }
    });
    assert_eq!(
        actions,
        [
            json!(["codex", "send"]),
            json!(["human", "claim"]),
            json!(["human", "done"])
        ]
    );
    panel_shows(browser, "completed");
    assert_eq!(offered_buttons(browser), json!([]));
    let none = browser.execute(
        "return document.querySelector('#task-none').textContent",
        &[],
    );
    assert!(
        none.as_str().unwrap().contains("nothing moves it again"),
        "{none}"
    );

    // Asking and asking for a review go the same way.
    let asked = env.send("codex", "human", "Which branch?", &[]);
    let reviewed = env.send("codex", "human", "Tidy the docs", &["--review"]);
    browser.click(&format!("[data-task=\"{asked}\"]"), deadline);
    panel_offers(browser, asked, &["claim", "ask", "review", "done", "fail"]);
    browser.type_into("#action-text", "main or release?", deadline);
    browser.click("#ask", deadline);
    assert_last_entry(
        &shown_with_status(env, asked, "input_required"),
        "human",
        "main or release?",
    );
    // The page shows the question asked before the next click: its board, drawn again with
    // the task moved, would otherwise shift under the click (CI saw it land on the asked
    // task's card, in the place the next one had).
    panel_offers(browser, asked, &["fail"]);
    browser.click(&format!("[data-task=\"{reviewed}\"]"), deadline);
    // Sent with --review: it cannot be done, so done is not offered.
    panel_offers(browser, reviewed, &["claim", "ask", "review", "fail"]);
    browser.type_into("#action-text", "tidied", deadline);
    browser.click("#review", deadline);
    shown_with_status(env, reviewed, "review_requested");
    assert_same_document(browser);
}

#[test]
fn a_human_edits_a_task_from_its_panel_and_a_refusal_shows_beside_it() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    let id = env.send("human", "codex", "Draft", &["--touches", "src/a.rs"]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_offers(browser, id, &["cancel", "reassign", "edit"]);
    // The inputs hold what the task says now.
    let value = |name: &str| {
        browser.execute(
            "return document.querySelector('#edit-row [data-name=\"' + arguments[0] + '\"]').value",
            &[json!(name)],
        )
    };
    assert_eq!(value("subject"), json!("Draft"));
    assert_eq!(value("touches"), json!("src/a.rs"));
    assert_eq!(value("priority"), json!("normal"));
    let set = |name: &str, text: &str| {
        browser.execute(
            "document.querySelector('#edit-row [data-name=\"' + arguments[0] + '\"]').value = arguments[1]",
            &[json!(name), json!(text)],
        );
    };
    // Refused on the hub: said beside the form, and nothing changes.
    set("touches", "../x");
    browser.click("#edit", deadline);
    let refused = wait_for(browser, "the refusal", SHOWN_TEXT, &[json!("#task-error")]);
    assert!(
        refused.as_str().unwrap().contains("climbs out"),
        "{refused}"
    );
    set("touches", "src/a.rs, docs/");
    set("subject", "Final");
    browser.click("#edit-row option[value=\"high\"]", deadline);
    browser.click("#edit", deadline);
    let task = eventually_seeing(PAGE_DEADLINE, "the edit", || {
        let task = env
            .run("human", &["--json", "show", &id.to_string()])
            .json();
        match task["subject"] == "Final" {
            true => Ok(task),
            false => Err(task.to_string()),
        }
    });
    assert_eq!(task["touches"], json!(["src/a.rs", "docs/"]));
    assert_eq!(task["priority"], "high");
    assert_eq!(task["status"], "pending");
    assert_last_entry(
        &task,
        "human",
        "subject was \"Draft\"; touches were src/a.rs; priority was normal",
    );
}

#[test]
fn cancel_asks_first_and_dismissing_it_changes_nothing() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    let id = env.send("human", "codex", "Maybe not needed", &[]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_offers(browser, id, &["cancel", "reassign", "edit"]);
    let log_before = env.activity("web").len();

    browser.type_into("#action-text", "changed my mind", deadline);
    browser.click("#cancel", deadline);
    let question = wait_for(
        browser,
        "the confirmation",
        SHOWN_TEXT,
        &[json!("#confirm")],
    );
    assert!(
        question
            .as_str()
            .unwrap()
            .contains(&format!("Cancel T-{id}?")),
        "{question}"
    );
    // Asking sent nothing: the window in which a request would land is the test.
    std::thread::sleep(Duration::from_millis(300));
    let task = env
        .run("human", &["--json", "show", &id.to_string()])
        .json();
    assert_eq!(task["status"], "pending");
    assert_eq!(env.activity("web").len(), log_before);

    browser.click("#confirm-no", deadline);
    wait_for(
        browser,
        "the confirmation gone",
        "return document.querySelector('#confirm').hidden",
        &[],
    );
    // Dismissing sent nothing either: the window is the test.
    std::thread::sleep(Duration::from_millis(300));
    let task = env
        .run("human", &["--json", "show", &id.to_string()])
        .json();
    assert_eq!(task["status"], "pending", "dismissing changes nothing");
    assert_eq!(env.activity("web").len(), log_before);
    panel_offers(browser, id, &["cancel", "reassign", "edit"]);

    // Asked again and confirmed: canceled, with the words given before.
    browser.click("#cancel", deadline);
    browser.click("#confirm-yes", deadline);
    let canceled = shown_with_status(env, id, "canceled");
    assert_last_entry(&canceled, "human", "changed my mind");
    panel_shows(browser, "canceled");
}

#[test]
fn only_what_the_viewer_may_do_is_offered_and_the_picker_names_nobody() {
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
    // codex coordinates: the human may cancel and reassign only what it sent.
    env.run("human", &["coordinator", "--set", "codex"]).ok();
    let reviewed = env.send(
        "human",
        "codex",
        "Reviewed by claude",
        &["--reviewer", "claude"],
    );
    env.run("codex", &["claim", &reviewed.to_string()]).ok();
    env.run(
        "codex",
        &["review", &reviewed.to_string(), "--body", "done"],
    )
    .ok();
    let others = env.send("codex", "claude", "Between agents", &[]);
    let mine = env.send("human", "codex", "Sent by the human", &[]);

    browser.goto(&server.url);
    board_shown(browser);
    buttons_are_the_tables(browser);
    let deadline = Instant::now() + PAGE_DEADLINE;
    // Review requested of claude: the human, its sender, may neither approve nor request
    // changes, and reassigning waits for the verdict.
    browser.click(&format!("[data-task=\"{reviewed}\"]"), deadline);
    panel_offers(browser, reviewed, &["cancel"]);
    // A task between two agents: nothing at all, and the page says whose turn it is.
    browser.click(&format!("[data-task=\"{others}\"]"), deadline);
    panel_offers(browser, others, &[]);
    let none = wait_for(
        browser,
        "the note that nothing is the viewer's",
        SHOWN_TEXT,
        &[json!("#task-none")],
    );
    assert!(none.as_str().unwrap().contains("claude's turn"), "{none}");
    // The human's own task: the picker chooses nobody, offers everyone but the assignee,
    // and the button waits for a choice.
    browser.click(&format!("[data-task=\"{mine}\"]"), deadline);
    panel_offers(browser, mine, &["cancel", "reassign", "edit"]);
    let picker = browser.execute(
        "const select = document.querySelector('#reassign-to'); \
         return {value: select.value, chosen: select.selectedOptions[0].textContent, \
                 options: [...select.options].map((option) => option.value), \
                 disabled: document.querySelector('#reassign').disabled}",
        &[],
    );
    assert_eq!(
        picker,
        json!({"value": "", "chosen": "reassign to…", "options": ["", "claude", "human"],
               "disabled": true})
    );
    browser.click("#reassign-to option[value=\"claude\"]", deadline);
    browser.click("#reassign", deadline);
    assigned_on_the_board(env, mine, "claude");
}
