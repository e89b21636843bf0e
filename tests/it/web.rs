//! The web board of `baton serve` in a real browser (SPEC 12.1): headless Chromium driven
//! through WebDriver (webdriver.rs), against the real binary serving a private home while
//! the CLI changes the same board.
//!
//! They need Chromium and its driver: Debian's `chromium` and `chromium-driver`, which
//! `.ci/run` installs, with `BATON_TEST_CHROMEDRIVER` naming the driver. By hand:
//!
//! ```text
//! BATON_TEST_CHROMEDRIVER=/usr/bin/chromedriver cargo test --test it web
//! ```
//!
//! Without it they say they were not run, except in CI, where they fail.

use std::path::PathBuf;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use baton::board::action::ACTIONS;
use serde_json::{Value, json};

use crate::common::http::{Served, free_address};
use crate::common::{TestEnv, eventually_or, eventually_seeing, files_only, task_in};
use crate::webdriver::Browser;

/// The longest the page may take to show a change before a test gives up on it.
const PAGE_DEADLINE: Duration = Duration::from_secs(20);

/// Two browsers at a time: the machine running the suite builds and tests at once, and more
/// Chromiums side by side would only make each slower; one at a time, the web tests were the
/// suite's last minutes, run one after the other once the other tests were done.
const BROWSERS_AT_ONCE: usize = 2;

/// How many browsers run now, and the signal that one has ended.
static BROWSERS: (Mutex<usize>, Condvar) = (Mutex::new(0), Condvar::new());

/// Places for browsers, of the [`BROWSERS_AT_ONCE`], held until dropped.
struct BrowserPlace(usize);

impl BrowserPlace {
    /// Waits for a place.
    fn take() -> BrowserPlace {
        BrowserPlace::take_some(1)
    }

    /// Waits for every place: for a test whose page must answer within a deadline of the
    /// server's, which a second browser starting beside it on a loaded machine can exceed.
    fn take_all() -> BrowserPlace {
        BrowserPlace::take_some(BROWSERS_AT_ONCE)
    }

    fn take_some(places: usize) -> BrowserPlace {
        let (running, ended) = &BROWSERS;
        let mut running = running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        while *running + places > BROWSERS_AT_ONCE {
            running = ended
                .wait(running)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        *running += places;
        BrowserPlace(places)
    }
}

impl Drop for BrowserPlace {
    fn drop(&mut self) {
        let (running, ended) = &BROWSERS;
        *running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) -= self.0;
        ended.notify_all();
    }
}

/// The chromedriver to use; `None` (after saying why) when the test is not to run.
fn chromedriver() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("BATON_TEST_CHROMEDRIVER").filter(|path| !path.is_empty())
    {
        return Some(PathBuf::from(path));
    }
    // CI must run them: a CI run that forgot to install the browser fails here, loudly.
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but BATON_TEST_CHROMEDRIVER is not: .ci/run must install chromium-driver"
    );
    eprintln!(
        "NOT RUN: the web board's browser tests need BATON_TEST_CHROMEDRIVER=<chromedriver>, \
         e.g. /usr/bin/chromedriver from Debian's chromium-driver"
    );
    None
}

/// A hub with project `web` (human `human`, agent `codex`), its server and a browser, which
/// holds one of the places for a browser; none when there is no chromedriver (see
/// [`chromedriver`]).
struct Hub {
    env: TestEnv,
    server: Served,
    browser: Browser,
    /// Dropped last: the next test's browser starts once this one is gone.
    _one: BrowserPlace,
}

fn hub() -> Option<Hub> {
    hub_with(BrowserPlace::take)
}

/// [`hub`], with no other browser running beside it.
fn hub_alone() -> Option<Hub> {
    hub_with(BrowserPlace::take_all)
}

fn hub_with(place: fn() -> BrowserPlace) -> Option<Hub> {
    let chromedriver = chromedriver()?;
    let one = place();
    let env = TestEnv::new();
    let work = env.work();
    let workspace = work.to_str().unwrap();
    env.run(
        "human",
        &[
            "project",
            "init",
            "--name",
            "web",
            "--workspace",
            workspace,
            "--human",
            "human",
        ],
    )
    .ok();
    env.register(&["codex"]);
    let server = Served::start(&env, "human");
    let browser = Browser::start(&chromedriver);
    Some(Hub {
        env,
        server,
        browser,
        _one: one,
    })
}

/// [`hub`], with the browser logged in from the printed URL and the board shown.
fn logged_in() -> Option<Hub> {
    let hub = hub()?;
    hub.browser.goto(&hub.server.url);
    board_shown(&hub.browser);
    Some(hub)
}

/// Waits up to [`PAGE_DEADLINE`] for what the CLI shows of the hub to pass `check`, which
/// says what it saw when it does not: what a click on the page did reaching the board.
#[track_caller]
fn until_hub<T>(what: &str, check: impl FnMut() -> Result<T, String>) -> T {
    eventually_seeing(PAGE_DEADLINE, what, check)
}

/// Task `id` once the CLI's board shows it completed: `what` (a click) reached the board.
#[track_caller]
fn completed_on_the_board(env: &TestEnv, id: u64, what: &str) -> Value {
    until_hub(&format!("{what} reaching the board"), || {
        let board = env.run("human", &["--json", "board", "--all"]).json();
        let task = task_in(&board, id);
        if task["status"] == "completed" {
            Ok(task)
        } else {
            Err(task.to_string())
        }
    })
}

/// Waits until the CLI shows task `id` assigned to `agent`: the reassign click arrived.
#[track_caller]
fn assigned_on_the_board(env: &TestEnv, id: u64, agent: &str) {
    until_hub(&format!("T-{id} reassigned to {agent}"), || {
        let task = env
            .run("human", &["--json", "show", &id.to_string()])
            .json();
        if task["to"] == agent {
            Ok(())
        } else {
            Err(task.to_string())
        }
    });
}

/// The bodies of the messages from human in `agent`'s mail (unread, left so), once there
/// are any: what the page sent arrived.
#[track_caller]
fn from_human(env: &TestEnv, agent: &str) -> Vec<Value> {
    until_hub(&format!("the message from human in {agent}'s mail"), || {
        let mail = env.run(agent, &["--json", "messages", "--peek"]).json();
        let bodies: Vec<Value> = mail["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["from"] == "human")
            .map(|message| message["body"].clone())
            .collect();
        if bodies.is_empty() {
            Err(mail.to_string())
        } else {
            Ok(bodies)
        }
    })
}

/// Waits until `script` (run in the page) returns something other than null or false, and
/// returns it; panics with `what` and the page's state when the deadline passes.
fn wait_for(browser: &Browser, what: &str, script: &str, args: &[Value]) -> Value {
    eventually_or(
        PAGE_DEADLINE,
        &format!("the page showing {what}"),
        || {
            let value = browser.execute(script, args);
            (!value.is_null() && value != false).then_some(value)
        },
        || {
            // The start of it: a page may hold megabytes of text.
            let page = browser.execute("return document.body.innerText.slice(0, 4000)", &[]);
            format!("it shows:\n{}", page.as_str().unwrap_or(""))
        },
    )
}

/// The script that finds a task's card in a status column: its subject's text, or null.
const CARD_IN: &str = "const card = document.querySelector(\
    `.column[data-status=\"${arguments[1]}\"] [data-task=\"${arguments[0]}\"] .subject`); \
    return card ? card.textContent : null;";

/// The script that reads the element `arguments[0]` selects: its text once shown, else null.
const SHOWN_TEXT: &str = "const shown = document.querySelector(arguments[0]); \
    return shown.hidden ? null : shown.textContent";

/// Waits for the board to show.
fn board_shown(browser: &Browser) {
    wait_for(
        browser,
        "the board",
        "return !document.querySelector('#app').hidden && \
         document.querySelector('.column[data-status=\"pending\"]') !== null",
        &[],
    );
}

/// Marks the page so that a reload (which would clear the mark) shows, and catches any
/// `alert` the page might be tricked into.
fn mark_page(browser: &Browser) {
    browser.execute(
        "window.__sameDocument = true; window.__alerted = []; \
         window.alert = (m) => window.__alerted.push(String(m));",
        &[],
    );
}

fn assert_same_document(browser: &Browser) {
    let state = browser.execute(
        "return {same: window.__sameDocument === true, alerted: window.__alerted || null}",
        &[],
    );
    assert_eq!(
        state,
        json!({"same": true, "alerted": []}),
        "the page reloaded or alerted"
    );
}

#[test]
fn the_page_without_a_token_says_how_to_log_in() {
    let Some(Hub {
        env: _env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    browser.goto(server.base());
    let login = wait_for(
        &browser,
        "the login message",
        "const login = document.querySelector('#login'); \
         return login && !login.hidden ? login.textContent : null",
        &[],
    );
    assert!(login.as_str().unwrap().contains("baton serve"), "{login}");
    assert_eq!(
        browser.execute("return document.querySelector('#app').hidden", &[]),
        true
    );

    // A token the server does not know: the same message, and the tab forgets it.
    browser.goto(&format!("{}#token=not-a-token", server.base()));
    // The message may still be up from the first load when the page has not yet heard the
    // 401: waited for together with the tab forgetting the token.
    wait_for(
        &browser,
        "the login message after a 401, and the token forgotten",
        "const why = document.querySelector('#login-why'); \
         return !document.querySelector('#login').hidden && why.textContent.length > 0 \
             && localStorage.getItem('baton-token') === null",
        &[],
    );
    assert_eq!(
        browser.execute("return localStorage.getItem('baton-token')", &[]),
        Value::Null
    );
}

#[test]
fn a_task_sent_from_the_cli_appears_live_and_is_approved_from_the_page() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    // Logged in from the printed URL: the token left the address bar for the browser's
    // storage.
    let login = browser.execute(
        "return {hash: location.hash, stored: localStorage.getItem('baton-token') !== null, \
         me: document.querySelector('#whoami').textContent}",
        &[],
    );
    assert_eq!(login, json!({"hash": "", "stored": true, "me": "as human"}));
    wait_for(
        &browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    mark_page(&browser);

    let id = env.send("human", "codex", "Fix the date parser", &["--review"]);
    let subject = wait_for(
        &browser,
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
        &browser,
        "the card in review_requested",
        CARD_IN,
        &[json!(id), json!("review_requested")],
    );
    assert_same_document(&browser);

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    wait_for(
        &browser,
        "the task's panel with its thread",
        "const panel = document.querySelector('#task-panel'); \
         const thread = document.querySelector('#thread'); \
         return !panel.hidden && thread && thread.textContent.includes('leap years too') && \
           !document.querySelector('#approve').hidden",
        &[],
    );
    browser.click("#approve", deadline);

    completed_on_the_board(&env, id, "the approve click");
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
        &browser,
        "the panel saying completed",
        "const status = document.querySelector('#task-panel [data-field=\"status\"]'); \
         return status && status.textContent === 'completed'",
        &[],
    );
    wait_for(
        &browser,
        "the card gone from review_requested",
        "return document.querySelector('.column[data-status=\"review_requested\"] \
         [data-task]') === null",
        &[],
    );
    assert_same_document(&browser);
}

#[test]
fn text_from_agents_shows_as_text_and_runs_nothing() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    mark_page(&browser);

    let markup = "<img src=x onerror=alert(1)>";
    let body = "<script>alert(2)</script>\n\u{1b}[31mred\u{202e}txt.exe";
    let id = env.send("codex", "human", markup, &["--body", body]);
    let subject = wait_for(
        &browser,
        "the card",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    assert_eq!(subject, markup);

    browser.click(
        &format!("[data-task=\"{id}\"]"),
        Instant::now() + PAGE_DEADLINE,
    );
    let shown = wait_for(
        &browser,
        "the task's body",
        "const body = document.querySelector('#task-body'); \
         return body && body.textContent !== '—' ? body.textContent : null",
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
                 scripts: document.querySelectorAll('script').length}",
        &[],
    );
    assert_eq!(
        dom,
        json!({"img": 0, "scripts": 1}),
        "only the page's own script"
    );
    assert_same_document(&browser);
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
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    env.register(&["claude"]);

    browser.goto(&server.url);
    board_shown(&browser);
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
        &browser,
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
    let task = task_by_subject(&env, "Sent from the page");
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
        &browser,
        "the sent task's panel",
        "return !document.querySelector('#task-panel').hidden && \
         document.querySelector('#task-title').textContent === arguments[0]",
        &[json!(format!("T-{id} Sent from the page"))],
    );
    browser.click("#reassign-to option[value=\"claude\"]", deadline);
    browser.click("#reassign", deadline);
    assigned_on_the_board(&env, id, "claude");
    wait_for(
        &browser,
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
        from_human(&env, "codex"),
        [json!("the benchmarks are in bench/")]
    );
    wait_for(
        &browser,
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
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    let side = env.root.path().join("side");
    std::fs::create_dir_all(&side).unwrap();
    env.init_project("human", "side", &side);
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
    board_shown(&browser);
    wait_for(
        &browser,
        "the web card",
        CARD_IN,
        &[json!(id), json!("pending")],
    );

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#project option[value=\"side\"]", deadline);
    let error = wait_for(
        &browser,
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
        &browser,
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

/// Waits until `baton show ID --json` says `status`, and returns the task.
fn shown_with_status(env: &TestEnv, id: u64, status: &str) -> Value {
    eventually_seeing(PAGE_DEADLINE, &format!("T-{id} {status}"), || {
        let task = env
            .run("human", &["--json", "show", &id.to_string()])
            .json();
        if task["status"] == status {
            Ok(task)
        } else {
            Err(task.to_string())
        }
    })
}

/// Waits until the open task panel shows `status`.
fn panel_shows(browser: &Browser, status: &str) {
    wait_for(
        browser,
        &format!("the panel saying {status}"),
        "const status = document.querySelector('#task-panel [data-field=\"status\"]'); \
         return !document.querySelector('#task-panel').hidden && status !== null && \
           status.textContent === arguments[0]",
        &[json!(status)],
    );
}

#[test]
fn a_human_answers_requests_changes_and_cancels_from_the_panel() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    let id = env.send("human", "codex", "Date parser", &["--review"]);
    let task = id.to_string();
    env.run("codex", &["ask", &task, "--body", "Refuse, or clamp?"])
        .ok();

    browser.goto(&server.url);
    board_shown(&browser);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_shows(&browser, "input_required");
    browser.type_into("#action-text", "Refuse.", deadline);
    browser.click("#answer", deadline);
    let answered = shown_with_status(&env, id, "pending");
    assert_last_entry(&answered, "human", "Refuse.");

    // The open panel follows the CLI's change without a click.
    env.run("codex", &["review", &task, "--body", "refused"])
        .ok();
    panel_shows(&browser, "review_requested");
    browser.type_into("#action-text", "Add a leap-year test", deadline);
    browser.click("#request-changes", deadline);
    let changes = shown_with_status(&env, id, "changes_requested");
    assert_last_entry(&changes, "human", "Add a leap-year test");

    panel_shows(&browser, "changes_requested");
    browser.type_into("#action-text", "not needed after all", deadline);
    browser.click("#cancel", deadline);
    browser.click("#confirm-yes", deadline);
    let canceled = shown_with_status(&env, id, "canceled");
    assert_last_entry(&canceled, "human", "not needed after all");
    panel_shows(&browser, "canceled");
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
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
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
    board_shown(&browser);
    mark_page(&browser);
    let card = wait_for(
        &browser,
        "the long subject's card",
        CARD_IN,
        &[json!(long), json!("pending")],
    );
    let more = |left: &str| format!("… {left} more characters");
    assert_eq!(run_then_rest(&card, 'S'), (200, more("99,800")));

    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{long}\"]"), deadline);
    let title = wait_for(
        &browser,
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
    let body = wait_for(&browser, "the long body, cut", CUT_BODY, &[]);
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
        &browser,
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
        &browser,
        "the whole body",
        "const body = document.querySelector('#task-body'); \
         return body.textContent.length === arguments[0] && !body.querySelector('button')",
        &[json!(most.len())],
    );
    env.send("codex", "human", "One more", &[]);
    wait_for(
        &browser,
        "the refresh after one more task",
        "return document.querySelectorAll('[data-task]').length === arguments[0]",
        &[json!(ids.len() + 3)],
    );
    let body = browser.execute(
        "return document.querySelector('#task-body').textContent.length",
        &[],
    );
    assert_eq!(body, json!(most.len()));
    assert_same_document(&browser);
}

/// Which of the task panel's action buttons are shown, by their ids.
fn offered_buttons(browser: &Browser) -> Value {
    browser.execute(
        "if (document.querySelector('#task-actions').hidden) return []; \
         return [...document.querySelectorAll('#action-buttons [data-action]')] \
           .filter((button) => !button.hidden).map((button) => button.id) \
           .concat(document.querySelector('#reassign-row').hidden ? [] : ['reassign']);",
        &[],
    )
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

/// Waits until the open panel shows T-`id` with exactly the buttons `expected`.
fn panel_offers(browser: &Browser, id: u64, expected: &[&str]) {
    let expected = json!(expected);
    eventually_seeing(
        PAGE_DEADLINE,
        &format!("T-{id}'s panel offering {expected}"),
        || {
            let title = browser.execute(
                "return document.querySelector('#task-panel').hidden ? null : \
             document.querySelector('#task-title').textContent",
                &[],
            );
            let shown = offered_buttons(browser);
            let is_task = title
                .as_str()
                .is_some_and(|title| title.starts_with(&format!("T-{id} ")));
            if is_task && shown == expected {
                Ok(())
            } else {
                Err(format!("{shown} ({title})"))
            }
        },
    )
}

#[test]
fn a_human_assignee_claims_and_finishes_a_task_from_the_page() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    let id = env.send("codex", "human", "Check the release notes", &[]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    // The assignee's actions, and none of the sender's (answer, approve, cancel, reassign).
    panel_offers(&browser, id, &["claim", "ask", "review", "done", "fail"]);
    mark_page(&browser);
    browser.click("#claim", deadline);
    shown_with_status(&env, id, "working");
    panel_offers(&browser, id, &["release", "ask", "review", "done", "fail"]);

    // Done without words is refused in baton's words, and nothing changes.
    browser.click("#done", deadline);
    let refused = wait_for(
        &browser,
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
    let task = completed_on_the_board(&env, id, "the done click");
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
    panel_shows(&browser, "completed");
    assert_eq!(offered_buttons(&browser), json!([]));
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
    panel_offers(&browser, asked, &["claim", "ask", "review", "done", "fail"]);
    browser.type_into("#action-text", "main or release?", deadline);
    browser.click("#ask", deadline);
    assert_last_entry(
        &shown_with_status(&env, asked, "input_required"),
        "human",
        "main or release?",
    );
    browser.click(&format!("[data-task=\"{reviewed}\"]"), deadline);
    // Sent with --review: it cannot be done, so done is not offered.
    panel_offers(&browser, reviewed, &["claim", "ask", "review", "fail"]);
    browser.type_into("#action-text", "tidied", deadline);
    browser.click("#review", deadline);
    shown_with_status(&env, reviewed, "review_requested");
    assert_same_document(&browser);
}

#[test]
fn cancel_asks_first_and_dismissing_it_changes_nothing() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    let id = env.send("human", "codex", "Maybe not needed", &[]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_offers(&browser, id, &["cancel", "reassign"]);
    let log_before = env.activity("web").len();

    browser.type_into("#action-text", "changed my mind", deadline);
    browser.click("#cancel", deadline);
    let question = wait_for(
        &browser,
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
        &browser,
        "the confirmation gone",
        "return document.querySelector('#confirm').hidden",
        &[],
    );
    std::thread::sleep(Duration::from_millis(300));
    let task = env
        .run("human", &["--json", "show", &id.to_string()])
        .json();
    assert_eq!(task["status"], "pending", "dismissing changes nothing");
    assert_eq!(env.activity("web").len(), log_before);
    panel_offers(&browser, id, &["cancel", "reassign"]);

    // Asked again and confirmed: canceled, with the words given before.
    browser.click("#cancel", deadline);
    browser.click("#confirm-yes", deadline);
    let canceled = shown_with_status(&env, id, "canceled");
    assert_last_entry(&canceled, "human", "changed my mind");
    panel_shows(&browser, "canceled");
}

#[test]
fn only_what_the_viewer_may_do_is_offered_and_the_picker_names_nobody() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
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
    board_shown(&browser);
    buttons_are_the_tables(&browser);
    let deadline = Instant::now() + PAGE_DEADLINE;
    // Review requested of claude: the human, its sender, may neither approve nor request
    // changes, and reassigning waits for the verdict.
    browser.click(&format!("[data-task=\"{reviewed}\"]"), deadline);
    panel_offers(&browser, reviewed, &["cancel"]);
    // A task between two agents: nothing at all, and the page says whose turn it is.
    browser.click(&format!("[data-task=\"{others}\"]"), deadline);
    panel_offers(&browser, others, &[]);
    let none = wait_for(
        &browser,
        "the note that nothing is the viewer's",
        SHOWN_TEXT,
        &[json!("#task-none")],
    );
    assert!(none.as_str().unwrap().contains("claude's turn"), "{none}");
    // The human's own task: the picker chooses nobody, offers everyone but the assignee,
    // and the button waits for a choice.
    browser.click(&format!("[data-task=\"{mine}\"]"), deadline);
    panel_offers(&browser, mine, &["cancel", "reassign"]);
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
    assigned_on_the_board(&env, mine, "claude");
}

#[test]
fn the_inbox_view_shows_what_baton_inbox_shows() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
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
        &browser,
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
        &browser,
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
    panel_offers(&browser, asked, &["answer", "cancel", "reassign"]);
    browser.click("#close-task", deadline);
    browser.click("#inbox-mark-read", deadline);
    wait_for(
        &browser,
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
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    env.register(&["claude"]);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("#tab-messages", deadline);
    wait_for(
        &browser,
        "the empty messages view",
        SHOWN_TEXT,
        &[json!("#messages-empty")],
    );
    mark_page(&browser);

    browser.click("#messages-write", deadline);
    browser.click("#message-to option[value=\"@all\"]", deadline);
    browser.type_into("#message-text", "stand-up in five minutes", deadline);
    browser.click("#message-submit", deadline);
    for agent in ["codex", "claude"] {
        assert_eq!(
            from_human(&env, agent),
            [json!("stand-up in five minutes")],
            "{agent}"
        );
    }
    // The page lists what it sent.
    wait_for(
        &browser,
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
        &browser,
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
        &browser,
        "nothing unread",
        "return document.querySelectorAll('#messages .message.unread').length === 0",
        &[],
    );
    let unread = env.run("human", &["--json", "messages", "--peek"]).json();
    assert_eq!(unread["messages"], json!([]), "{unread}");
    assert_same_document(&browser);
}

/// Waits until the page shows its login notice, and returns what it says.
fn login_notice(browser: &Browser) -> String {
    let notice = wait_for(
        browser,
        "the login notice",
        "const login = document.querySelector('#login'); \
         return !login.hidden && document.querySelector('#app').hidden ? login.textContent : null",
        &[],
    );
    notice.as_str().unwrap().to_string()
}

/// Waits until the task panel shows T-`id` of `project`, in the board of `project`.
fn task_opened(browser: &Browser, project: &str, id: u64, subject: &str) {
    wait_for(
        browser,
        &format!("T-{id} of {project} opened"),
        "return !document.querySelector('#app').hidden && \
           document.querySelector('#project').value === arguments[0] && \
           !document.querySelector('#task-panel').hidden && \
           document.querySelector('#task-title').textContent === arguments[1] && \
           document.querySelector('#task-panel [data-field=\"status\"]') !== null",
        &[json!(project), json!(format!("T-{id} {subject}"))],
    );
}

#[test]
fn a_login_survives_a_restart_of_serve() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    drop(server);
    let address = free_address();
    let first = Served::start_at(&env, "human", &address, &[], &[]);
    browser.goto(&first.url);
    board_shown(&browser);
    wait_for(
        &browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    mark_page(&browser);
    drop(first);
    wait_for(
        &browser,
        "the page noticing the server went",
        "return document.querySelector('#live').dataset.live === 'retry'",
        &[],
    );
    // A new server on the same address: the tab carries on, logged in, live again.
    let second = Served::start_at(&env, "human", &address, &[], &[]);
    wait_for(
        &browser,
        "the live mark again",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    let id = env.send("codex", "human", "After the restart", &[]);
    wait_for(
        &browser,
        "a card sent after the restart",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    assert_same_document(&browser);
    // And a new tab (a reload included) is logged in with it too.
    browser.new_tab();
    browser.goto(second.base());
    board_shown(&browser);
    assert_eq!(
        browser.execute("return document.querySelector('#whoami').textContent", &[]),
        "as human"
    );
}

#[test]
fn an_expired_login_is_refused_and_the_page_says_how_to_log_in() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub_alone()
    else {
        return;
    };
    drop(server);
    // Long enough for a browser on a loaded machine to use the login once after the server
    // starts (its time runs from there), short enough to wait out.
    let server = Served::start_at(&env, "human", "127.0.0.1:0", &["--login-ttl", "6s"], &[]);
    browser.goto(&server.url);
    board_shown(&browser);
    let used = Instant::now();
    // Longer than 6 seconds unused (the page asks again only every 30 seconds).
    std::thread::sleep(Duration::from_millis(6500));
    assert!(used.elapsed() > Duration::from_secs(6));
    browser.goto(server.base());
    let notice = login_notice(&browser);
    assert!(
        notice.contains("expired: it went unused for more than 6s"),
        "{notice}"
    );
    assert!(notice.contains("restart it for a new one"), "{notice}");
    assert!(
        notice.contains("open the URL baton serve printed"),
        "{notice}"
    );
    assert_eq!(
        browser.execute("return localStorage.getItem('baton-token')", &[]),
        Value::Null,
        "the page forgets a login the server refused"
    );
}

#[test]
fn a_removed_login_logs_the_page_out_at_once_saying_how_to_log_in() {
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    wait_for(
        &browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    env.run("", &["token", "rm", "human"]).ok();
    // The event stream ends with the token; the page finds out without a click.
    let notice = login_notice(&browser);
    assert!(notice.contains("removed (`baton token rm`)"), "{notice}");
    assert!(notice.contains("URL `baton serve` prints"), "{notice}");
    assert_eq!(
        browser.execute(
            "return document.querySelectorAll('[data-task]').length",
            &[]
        ),
        0
    );
}

#[test]
fn an_alert_link_opens_its_task_in_a_new_tab_logged_in_or_once_logged_in() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    env.register(&["human"]);
    let side = env.root.path().join("side");
    std::fs::create_dir_all(&side).unwrap();
    env.init_project("human", "side", &side);
    let side_task = {
        let run = env.run_in(
            &side,
            "codex",
            &[
                "--json",
                "send",
                "--to",
                "human",
                "--subject",
                "Side question",
            ],
        );
        run.json()["task"]["id"].as_u64().unwrap()
    };
    let web_task = env.send("codex", "human", "Web question", &[]);

    // Not logged in: the link's tab says how to log in and what it will open.
    browser.goto(&format!(
        "{}#project=side&task=T-{side_task}",
        server.base()
    ));
    let notice = login_notice(&browser);
    assert!(
        notice.contains(&format!("this tab opens T-{side_task} of project side")),
        "{notice}"
    );
    assert!(notice.contains("baton serve"), "{notice}");
    let waiting = browser.current_tab();
    // The login URL opened in another tab logs this one in, and it opens its task.
    browser.new_tab();
    browser.goto(&server.url);
    board_shown(&browser);
    browser.switch_to(&waiting);
    task_opened(&browser, "side", side_task, "Side question");
    assert_eq!(
        browser.execute("return location.search", &[]),
        format!("?project=side&task={side_task}")
    );

    // Logged in: a new tab from an alert (the fragment form) opens its task at once, and so
    // does the form the page writes (the query).
    for link in [
        format!("{}#project=web&task=T-{web_task}", server.base()),
        format!("{}?project=web&task={web_task}", server.base()),
        format!("{}?project=web&task=t-{web_task}", server.base()),
    ] {
        browser.new_tab();
        browser.goto(&link);
        task_opened(&browser, "web", web_task, "Web question");
    }
    // A link opened where the page already is changes only the fragment: it opens too.
    mark_page(&browser);
    browser.goto(&format!(
        "{}?project=web&task={web_task}#project=side&task=T-{side_task}",
        server.base()
    ));
    task_opened(&browser, "side", side_task, "Side question");
    assert_same_document(&browser);
}

#[test]
fn a_link_in_a_browser_with_no_login_opens_its_task_once_the_url_is_pasted() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    env.register(&["human"]);
    let id = env.send("codex", "human", "Pasted login", &[]);
    browser.goto(&format!("{}#project=web&task=T-{id}", server.base()));
    let notice = login_notice(&browser);
    assert!(
        notice.contains(&format!("this tab opens T-{id}")),
        "{notice}"
    );
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.type_into("#login-paste", &server.url, deadline);
    browser.click("#login-submit", deadline);
    task_opened(&browser, "web", id, "Pasted login");
}

#[test]
fn the_page_opens_on_the_project_of_the_directory_serve_runs_in() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
    // A project that sorts before `web`, and the page would open on the first one.
    let other = env.root.path().join("aaa");
    std::fs::create_dir_all(&other).unwrap();
    env.init_project("human", "aaa", &other);
    env.register(&["human"]);
    let id = env.send("codex", "human", "In web", &[]);
    browser.goto(&server.url);
    board_shown(&browser);
    wait_for(
        &browser,
        "the web project's card",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    let picked = browser.execute(
        "return [document.querySelector('#project').value, \
                 [...document.querySelectorAll('#project option')].map((o) => o.value)]",
        &[],
    );
    assert_eq!(picked, json!(["web", ["aaa", "web"]]));
}

#[test]
fn at_700_pixels_nothing_scrolls_sideways_in_any_view() {
    let Some(Hub {
        env,
        server,
        browser,
        _one,
    }) = hub()
    else {
        return;
    };
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
    board_shown(&browser);
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
        &browser,
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
    ] {
        browser.click(&format!("#tab-{tab}"), deadline);
        wait_for(
            &browser,
            &format!("the {tab} view"),
            "return document.querySelector(arguments[0]) !== null",
            &[json!(ready)],
        );
        check(tab);
    }
    browser.click("#tab-board", deadline);
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    panel_shows(&browser, "input_required");
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
    login_notice(&browser);
    browser.goto(&format!(
        "{}#task=T-{id}&project={}",
        server.base(),
        "p".repeat(64)
    ));
    login_notice(&browser);
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
    let Some(Hub {
        env,
        server: _server,
        browser,
        _one,
    }) = logged_in()
    else {
        return;
    };
    // Opening the page is the human at the desk; the claim comes after it.
    let lease = human_claim_near_its_end(&env);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click("[data-task=\"1\"]", deadline);
    panel_offers(&browser, 1, &["release", "ask", "review", "done", "fail"]);
    // A change makes the page read the board, the inbox and the task again.
    let next = env.send("codex", "human", "Next job", &["--no-wake"]);
    wait_for(
        &browser,
        "the new task",
        CARD_IN,
        &[json!(next), json!("pending")],
    );
    browser.click("#tab-inbox", deadline);
    wait_for(
        &browser,
        "the inbox with the new task",
        "return document.querySelector('#inbox-view').innerText.includes('Next job')",
        &[],
    );
    assert_eq!(
        lease_on(&env, 1),
        lease,
        "the page's looks renewed the lease"
    );
    // Claiming the next task from the page is the human at work: it renews the first.
    browser.click("#tab-board", deadline);
    browser.click(&format!("[data-task=\"{next}\"]"), deadline);
    panel_offers(&browser, next, &["claim", "ask", "review", "done", "fail"]);
    browser.click("#claim", deadline);
    shown_with_status(&env, next, "working");
    assert_ne!(
        lease_on(&env, 1),
        lease,
        "what the human does from the page renews the lease"
    );
}
