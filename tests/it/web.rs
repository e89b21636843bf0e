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
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{TestEnv, stdout_lines, task_in};
use crate::webdriver::Browser;

/// The longest the page may take to show a change before a test gives up on it.
const PAGE_DEADLINE: Duration = Duration::from_secs(20);

/// One browser at a time: the machine running the suite builds and tests at once, and a
/// few Chromiums side by side would only make each slower.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

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

/// `baton serve` on a free loopback port, acting for `human`; killed when dropped.
struct Server {
    child: Child,
    /// The URL it printed, token fragment included.
    url: String,
}

impl Server {
    fn start(env: &TestEnv) -> Server {
        let mut child = env
            .command(&env.work())
            .args(["--as", "human", "serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("baton serve starts");
        let lines = stdout_lines(&mut child);
        let first = lines.recv_timeout(PAGE_DEADLINE).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("baton serve printed no URL")
        });
        // The first line is the login URL alone.
        let url = first.trim().to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.contains("/#token="),
            "not the login URL: {first}"
        );
        Server { child, url }
    }

    /// The page's address without the login token.
    fn base(&self) -> &str {
        &self.url[..self.url.find('#').expect("a fragment")]
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A hub with project `web` (human `human`, agent `codex`), its server and a browser, which
/// holds the one browser at a time; none when there is no chromedriver (see [`chromedriver`]).
struct Hub {
    env: TestEnv,
    server: Server,
    browser: Browser,
    /// Dropped last: the next test's browser starts once this one is gone.
    _one: std::sync::MutexGuard<'static, ()>,
}

fn hub() -> Option<Hub> {
    let chromedriver = chromedriver()?;
    let one = ONE_BROWSER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
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
    let server = Server::start(&env);
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

/// Waits until `script` (run in the page) returns something other than null or false, and
/// returns it; panics with `what` and the page's state when the deadline passes.
fn wait_for(browser: &Browser, what: &str, script: &str, args: &[Value]) -> Value {
    let deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let value = browser.execute(script, args);
        if !value.is_null() && value != false {
            return value;
        }
        if Instant::now() > deadline {
            // The start of it: a page may hold megabytes of text.
            let page = browser.execute("return document.body.innerText.slice(0, 4000)", &[]);
            panic!(
                "the page never showed {what}; it shows:\n{}",
                page.as_str().unwrap_or("")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
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
    wait_for(
        &browser,
        "the login message after a 401",
        "const why = document.querySelector('#login-why'); \
         return !document.querySelector('#login').hidden && why.textContent.length > 0",
        &[],
    );
    assert_eq!(
        browser.execute("return sessionStorage.getItem('baton-token')", &[]),
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
    // Logged in from the printed URL: the token left the address bar for the tab's storage.
    let login = browser.execute(
        "return {hash: location.hash, stored: sessionStorage.getItem('baton-token') !== null, \
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

    let board_deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let board = env.run("human", &["--json", "board", "--all"]).json();
        let task = task_in(&board, id);
        if task["status"] == "completed" {
            break;
        }
        assert!(
            Instant::now() < board_deadline,
            "the approve click never reached the board: {task}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The line is appended just after the board is renamed into place (its journal makes
    // that crash-safe), so a reader without the lock can see the board a moment before it.
    let last = loop {
        let last = env.activity("web").pop().unwrap();
        if last["action"] != "review" || Instant::now() > board_deadline {
            break last;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
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
    let deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let board = env.run("human", &["--json", "board", "--all"]).json();
        if let Some(task) = board
            .as_array()
            .unwrap()
            .iter()
            .find(|task| task["subject"] == subject)
        {
            return task.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no task {subject:?} on the board: {board}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
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
    let reassign_deadline = Instant::now() + PAGE_DEADLINE;
    while env
        .run("human", &["--json", "show", &id.to_string()])
        .json()["to"]
        != "claude"
    {
        assert!(
            Instant::now() < reassign_deadline,
            "the reassign click never reached the board"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
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
    let message_deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let messages = env.run("codex", &["--json", "messages", "--peek"]).json();
        let bodies: Vec<_> = messages["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|message| message["from"] == "human")
            .map(|message| message["body"].clone())
            .collect();
        if !bodies.is_empty() {
            assert_eq!(bodies, [json!("the benchmarks are in bench/")]);
            break;
        }
        assert!(
            Instant::now() < message_deadline,
            "the message never arrived: {messages}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_for(
        &browser,
        "the message form closed",
        "return document.querySelector('#message-panel').hidden",
        &[],
    );
}

#[test]
fn a_corrupt_project_shows_its_error_and_the_page_keeps_working() {
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
    let deadline = Instant::now() + PAGE_DEADLINE;
    loop {
        let task = env
            .run("human", &["--json", "show", &id.to_string()])
            .json();
        if task["status"] == status {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "T-{id} never became {status}: {task}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
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
