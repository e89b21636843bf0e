//! Logging in to the page: the link `baton serve` prints, a login's time to live, a
//! removed login, and links to a task from outside the page.

use super::*;

#[test]
fn the_page_without_a_token_says_how_to_log_in() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        server, browser, ..
    } = &hub;
    browser.goto(server.base());
    let login = wait_for(
        browser,
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
        browser,
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
    let Some(hub) = hub() else {
        return;
    };
    drop(hub.server);
    let (env, browser) = (&hub.env, &hub.browser);
    let address = free_address();
    let first = Served::start_at(env, "human", &address, &[], &[]);
    browser.goto(&first.url);
    board_shown(browser);
    wait_for(
        browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    mark_page(browser);
    drop(first);
    wait_for(
        browser,
        "the page noticing the server went",
        "return document.querySelector('#live').dataset.live === 'retry'",
        &[],
    );
    // A new server on the same address: the tab carries on, logged in, live again.
    let second = Served::start_at(env, "human", &address, &[], &[]);
    wait_for(
        browser,
        "the live mark again",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    let id = env.send("codex", "human", "After the restart", &[]);
    wait_for(
        browser,
        "a card sent after the restart",
        CARD_IN,
        &[json!(id), json!("pending")],
    );
    assert_same_document(browser);
    // And a new tab (a reload included) is logged in with it too.
    browser.new_tab();
    browser.goto(second.base());
    board_shown(browser);
    assert_eq!(
        browser.execute("return document.querySelector('#whoami').textContent", &[]),
        "as human"
    );
}

#[test]
fn an_expired_login_is_refused_and_the_page_says_how_to_log_in() {
    let Some(hub) = hub_alone() else {
        return;
    };
    drop(hub.server);
    let (env, browser) = (&hub.env, &hub.browser);
    // Long enough for a browser on a loaded machine to use the login once after the server
    // starts (its time runs from there), short enough to wait out.
    let server = Served::start_at(env, "human", "127.0.0.1:0", &["--login-ttl", "6s"], &[]);
    browser.goto(&server.url);
    board_shown(browser);
    let used = Instant::now();
    // Longer than 6 seconds unused (the page asks again only every 30 seconds).
    std::thread::sleep(Duration::from_millis(6500));
    assert!(used.elapsed() > Duration::from_secs(6));
    browser.goto(server.base());
    let notice = login_notice(browser);
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
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    wait_for(
        browser,
        "the live mark",
        "return document.querySelector('#live').dataset.live === 'on'",
        &[],
    );
    env.run("", &["token", "rm", "human"]).ok();
    // The event stream ends with the token; the page finds out without a click.
    let notice = login_notice(browser);
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
    let side = env.project_beside("human", "side");
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
    let notice = login_notice(browser);
    assert!(
        notice.contains(&format!("this tab opens T-{side_task} of project side")),
        "{notice}"
    );
    assert!(notice.contains("baton serve"), "{notice}");
    let waiting = browser.current_tab();
    // The login URL opened in another tab logs this one in, and it opens its task.
    browser.new_tab();
    browser.goto(&server.url);
    board_shown(browser);
    browser.switch_to(&waiting);
    task_opened(browser, "side", side_task, "Side question");
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
        task_opened(browser, "web", web_task, "Web question");
    }
    // A link opened where the page already is changes only the fragment: it opens too.
    mark_page(browser);
    browser.goto(&format!(
        "{}?project=web&task={web_task}#project=side&task=T-{side_task}",
        server.base()
    ));
    task_opened(browser, "side", side_task, "Side question");
    assert_same_document(browser);
}

#[test]
fn a_link_in_a_browser_with_no_login_opens_its_task_once_the_url_is_pasted() {
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
    let id = env.send("codex", "human", "Pasted login", &[]);
    browser.goto(&format!("{}#project=web&task=T-{id}", server.base()));
    let notice = login_notice(browser);
    assert!(
        notice.contains(&format!("this tab opens T-{id}")),
        "{notice}"
    );
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.type_into("#login-paste", &server.url, deadline);
    browser.click("#login-submit", deadline);
    task_opened(browser, "web", id, "Pasted login");
}

#[test]
fn the_page_opens_on_the_project_of_the_directory_serve_runs_in() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    // A project that sorts before `web`, and the page would open on the first one.
    env.project_beside("human", "aaa");
    env.register(&["human"]);
    let id = env.send("codex", "human", "In web", &[]);
    browser.goto(&server.url);
    board_shown(browser);
    wait_for(
        browser,
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
