//! What a newcomer reads off the board without being told (issue 44): a legend for the
//! outline of the cards whose turn is the viewer's, columns that share the whole width of
//! the window, a task with no body shown without a stray dash, and dates in the browser's
//! own languages.

use super::*;

/// The left and right edges of the open columns, and of what holds them, in pixels.
const COLUMN_EDGES: &str = "const columns = [...document.querySelectorAll('#columns .column')]; \
    const holder = document.querySelector('#columns').getBoundingClientRect(); \
    return columns.length !== 5 ? null : { \
      left: holder.left, right: holder.right, \
      columns: columns.map((column) => { \
        const box = column.getBoundingClientRect(); \
        return {left: box.left, right: box.right, top: box.top}; }), \
      page: document.documentElement.scrollWidth, client: document.documentElement.clientWidth}";

#[test]
fn the_board_has_a_legend_columns_that_fill_the_window_and_no_dash_for_no_body() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        browser,
        server,
        ..
    } = &hub;
    browser.set_window_size(2400, 1000);
    browser.goto(&server.url);
    board_shown(browser);
    let mine = env.send("codex", "human", "Waits on you", &[]);
    let theirs = env.send("human", "codex", "Waits on codex", &[]);
    wait_for(
        browser,
        "the cards",
        CARD_IN,
        &[json!(theirs), json!("pending")],
    );

    // The legend says what the outline means, and its swatch is drawn as the outline is.
    let legend = browser.execute(
        "const legend = document.querySelector('#legend'); \
         const mine = document.querySelector(`[data-task=\"${arguments[0]}\"]`); \
         const theirs = document.querySelector(`[data-task=\"${arguments[1]}\"]`); \
         const swatch = legend.querySelector('.swatch-mine'); \
         const shadow = (node) => getComputedStyle(node).boxShadow; \
         return {text: legend.innerText, shown: legend.getBoundingClientRect().height > 0, \
                 mine: mine.classList.contains('my-turn'), \
                 theirs: theirs.classList.contains('my-turn'), \
                 title: mine.title, \
                 outline: shadow(mine), swatch: shadow(swatch), other: shadow(theirs)}",
        &[json!(mine), json!(theirs)],
    );
    assert_eq!(legend["shown"], true, "{legend}");
    let text = legend["text"].as_str().unwrap();
    assert!(text.contains("outlined: your turn"), "{legend}");
    for priority in ["urgent", "high", "normal", "low"] {
        assert!(text.contains(priority), "{legend}");
    }
    assert_eq!(
        (&legend["mine"], &legend["theirs"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(legend["title"], "your turn", "{legend}");
    assert_ne!(legend["outline"], "none", "{legend}");
    assert_eq!(legend["outline"], legend["swatch"], "{legend}");
    assert_ne!(legend["outline"], legend["other"], "{legend}");

    // A wide window: the five open columns side by side across all of it, none empty beside.
    let wide = wait_for(browser, "the columns", COLUMN_EDGES, &[]);
    let columns = wide["columns"].as_array().unwrap();
    let edge = |value: &Value| value.as_f64().unwrap();
    let top = edge(&columns[0]["top"]);
    assert!(
        columns.iter().all(|column| edge(&column["top"]) == top),
        "one row: {wide}"
    );
    assert!(
        (edge(&columns[4]["right"]) - edge(&wide["right"])).abs() <= 2.0,
        "the last column ends where the board does: {wide}"
    );
    let holder = edge(&wide["right"]) - edge(&wide["left"]);
    assert!(holder > 2000.0, "{wide}");
    for column in columns {
        let width = edge(&column["right"]) - edge(&column["left"]);
        assert!(
            width > holder / 5.0 - 20.0,
            "a column {width} px wide: {wide}"
        );
    }

    // A narrow one: fewer to a row, none wider than the window, nothing sideways.
    browser.set_window_size(700, 1000);
    let narrow = wait_for(
        browser,
        "the columns in rows",
        &format!(
            "const edges = (() => {{ {COLUMN_EDGES} }})(); \
             return edges && edges.columns[4].top > edges.columns[0].top ? edges : null"
        ),
        &[],
    );
    assert!(
        narrow["page"].as_u64() <= narrow["client"].as_u64(),
        "sideways at 700 px: {narrow}"
    );
    for column in narrow["columns"].as_array().unwrap() {
        assert!(
            edge(&column["right"]) <= edge(&narrow["right"]) + 1.0,
            "{narrow}"
        );
    }

    // A task with no body: no dash standing for it, a muted word instead.
    browser.set_window_size(1400, 1000);
    browser.click(
        &format!("[data-task=\"{mine}\"]"),
        Instant::now() + PAGE_DEADLINE,
    );
    let panel = wait_for(
        browser,
        "the task without a body",
        "const title = document.querySelector('#task-title').textContent; \
         const none = document.querySelector('#task-no-body'); \
         return title.startsWith(arguments[0]) && none ? { \
           detail: document.querySelector('#task-detail').innerText, none: none.innerText, \
           body: document.querySelector('#task-body') !== null, \
           muted: getComputedStyle(none).color !== getComputedStyle(document.body).color} : null",
        &[json!(format!("T-{mine} "))],
    );
    assert_eq!(panel["none"], "no description", "{panel}");
    assert_eq!(panel["body"], false, "{panel}");
    assert_eq!(panel["muted"], true, "{panel}");
    let detail = panel["detail"].as_str().unwrap();
    assert!(!detail.contains('–') && !detail.contains('—'), "{detail}");
}

#[test]
fn dates_are_in_the_browsers_languages() {
    let Some(hub) = hub_in("de-DE,de") else {
        return;
    };
    let Hub {
        env,
        browser,
        server,
        ..
    } = &hub;
    browser.goto(&server.url);
    board_shown(browser);
    let id = env.send("codex", "human", "Wann?", &[]);
    wait_for(browser, "the card", CARD_IN, &[json!(id), json!("pending")]);
    browser.click(
        &format!("[data-task=\"{id}\"]"),
        Instant::now() + PAGE_DEADLINE,
    );
    let shown = wait_for(
        browser,
        "the task's dates",
        "const created = document.querySelector('#task-panel [data-field=\"created\"] time'); \
         if (!created) return null; \
         const at = new Date(created.getAttribute('datetime')); \
         const options = {dateStyle: 'medium', timeStyle: 'short'}; \
         return {text: created.textContent, languages: navigator.languages, \
                 german: new Intl.DateTimeFormat('de-DE', options).format(at), \
                 american: new Intl.DateTimeFormat('en-US', options).format(at)}",
        &[],
    );
    assert_eq!(shown["languages"][0], "de-DE", "{shown}");
    let text = shown["text"].as_str().unwrap();
    let german = shown["german"].as_str().unwrap();
    assert_ne!(german, shown["american"].as_str().unwrap());
    // `07.12.2026, 06:30 (3s ago)`: the browser's language, not one fixed for all.
    assert!(text.starts_with(&format!("{german} (")), "{shown}");
    let (day, month, year) = (&german[..2], &german[3..5], &german[6..10]);
    assert!(
        [day, month, year]
            .iter()
            .all(|part| part.chars().all(|c| c.is_ascii_digit()))
            && &german[2..3] == "."
            && &german[5..6] == ".",
        "{shown}"
    );
}
