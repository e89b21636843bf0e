//! Labels and the search on the web board (SPEC 19): typing in the search box shows only
//! the cards of the tasks holding the words (the hub searches, as `board --search` does); a
//! label's chip shows only its tasks; a card shows its labels as text.

use super::*;

/// The ids of the cards the open columns show, in id order.
const CARDS_SHOWN: &str = "return [...document.querySelectorAll('#columns [data-task]')] \
    .map((card) => Number(card.dataset.task)).sort((a, b) => a - b)";

/// Waits until the open columns show exactly the cards of `ids`.
#[track_caller]
fn cards_are(browser: &crate::webdriver::Browser, what: &str, ids: &[u64]) {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    wait_for(
        browser,
        what,
        &format!(
            "const shown = (() => {{ {CARDS_SHOWN} }})(); \
             return JSON.stringify(shown) === JSON.stringify(arguments[0]) ? shown : null"
        ),
        &[json!(ids)],
    );
}

#[test]
fn typing_in_the_search_box_and_clicking_a_label_show_only_their_cards() {
    let Some(hub) = logged_in() else {
        return;
    };
    let Hub { env, browser, .. } = &hub;
    mark_page(browser);
    let parser = env.send("codex", "human", "Fix the parser", &["--label", "bug"]);
    let lexer = env.send("codex", "human", "Fix the lexer", &["--label", "bug,ui"]);
    let docs = env.send(
        "human",
        "codex",
        "Write the docs",
        &["--body", "how the PARSER reads a line", "--label", "docs"],
    );
    let plain = env.send("human", "codex", "Nothing to do with it", &[]);
    cards_are(browser, "every card", &[parser, lexer, docs, plain]);

    // A card shows its labels, as text, each a chip.
    let chips = browser.execute(
        "return [...document.querySelectorAll(`[data-task=\"${arguments[0]}\"] .labels [data-label]`)] \
           .map((chip) => chip.textContent)",
        &[json!(lexer)],
    );
    assert_eq!(chips, json!(["bug", "ui"]));

    // Typing searches subjects, bodies and threads, case aside.
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.type_into("#search", "parser", deadline);
    cards_are(browser, "the cards holding `parser`", &[parser, docs]);
    let said = browser.execute(
        "return document.querySelector('#search-on').textContent",
        &[],
    );
    assert_eq!(said, "showing only tasks holding “parser”");

    // A label's chip above the board narrows it to that label too.
    browser.click("#label-chips [data-label=\"bug\"]", deadline);
    cards_are(browser, "the cards with `bug` holding `parser`", &[parser]);
    let said = browser.execute(
        "return document.querySelector('#search-on').textContent",
        &[],
    );
    assert_eq!(said, "showing only tasks labelled bug and holding “parser”");
    let pressed = browser.execute(
        "return document.querySelector('#label-chips [data-label=\"bug\"]').getAttribute('aria-pressed')",
        &[],
    );
    assert_eq!(pressed, "true");

    // A change made by the CLI meanwhile shows only if it matches.
    let later = env.send("codex", "human", "Parser again", &["--label", "bug"]);
    env.send("codex", "human", "Parser but no label", &[]);
    cards_are(
        browser,
        "the new card with `bug` holding `parser`",
        &[parser, later],
    );

    // Show every task; then a card's own chip searches by its label, opening no panel.
    browser.click("#search-clear", deadline);
    wait_for(
        browser,
        "the box emptied",
        "return document.querySelector('#search').value === '' && \
           document.querySelector('#search-on').textContent === ''",
        &[],
    );
    browser.click(
        &format!("[data-task=\"{lexer}\"] [data-label=\"ui\"]"),
        deadline,
    );
    cards_are(browser, "the cards labelled `ui`", &[lexer]);
    let panel = browser.execute("return document.querySelector('#task-panel').hidden", &[]);
    assert_eq!(panel, true, "a chip's click opened the task");
    assert_same_document(browser);
}
