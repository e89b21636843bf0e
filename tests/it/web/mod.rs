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

mod board;
mod diff;
mod labels;
mod layout;
mod login;
mod panel;
mod stats;
mod views;

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
    hub_with(BrowserPlace::take, None)
}

/// [`hub`], with no other browser running beside it.
fn hub_alone() -> Option<Hub> {
    hub_with(BrowserPlace::take_all, None)
}

/// [`hub`], its browser set to the languages `languages` (`de-DE,de`).
fn hub_in(languages: &str) -> Option<Hub> {
    hub_with(BrowserPlace::take, Some(languages))
}

fn hub_with(place: fn() -> BrowserPlace, languages: Option<&str>) -> Option<Hub> {
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
    let browser = Browser::start(&chromedriver, languages);
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

/// Which of the task panel's action buttons are shown, by their ids.
fn offered_buttons(browser: &Browser) -> Value {
    browser.execute(
        "if (document.querySelector('#task-actions').hidden) return []; \
         return [...document.querySelectorAll('#action-buttons [data-action]')] \
           .filter((button) => !button.hidden).map((button) => button.id) \
           .concat(document.querySelector('#reassign-row').hidden ? [] : ['reassign']) \
           .concat(document.querySelector('#edit-row').hidden ? [] : ['edit']);",
        &[],
    )
}
