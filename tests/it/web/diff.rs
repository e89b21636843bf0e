//! A task's diff on its panel (SPEC 18.4): stat then hunks, every byte of it drawn as text.

use std::fs;

use super::*;
use crate::common::git::{git, repository};

#[test]
fn a_hostile_diff_is_drawn_as_text_on_the_tasks_panel() {
    let Some(hub) = hub() else {
        return;
    };
    let Hub {
        env,
        server,
        browser,
        ..
    } = &hub;
    let work = env.work();
    repository(env, &work);
    env.run("human", &["project", "set", "--worktrees", "on"])
        .ok();
    let id = env.send("human", "codex", "Hostile diff", &["--review"]);
    env.run("codex", &["claim", &id.to_string()]).ok();
    let tree = env.home().join("worktrees/web").join(format!("T-{id}"));
    let hostile = "\u{1b}[31mred\u{1b}[0m \u{202e}gnp.exe</script><img src=x \
                   onerror=\"window.pwned=1\">\n";
    fs::write(tree.join("evil.txt"), hostile).unwrap();
    git(env, &tree, &["add", "-A"], &[]).ok();
    git(
        env,
        &tree,
        &["commit", "-q", "-m", "hostile <b>bold</b>"],
        &[],
    )
    .ok();
    fs::write(tree.join("draft.md"), "unsaved\n").unwrap();

    browser.goto(&server.url);
    board_shown(browser);
    let deadline = Instant::now() + PAGE_DEADLINE;
    browser.click(&format!("[data-task=\"{id}\"]"), deadline);
    let shown = wait_for(
        browser,
        "the task's diff",
        "const diff = document.querySelector('#task-diff'); \
         return diff && diff.textContent.includes('draft.md') ? diff.textContent : null",
        &[],
    );
    let text = shown.as_str().unwrap();
    for raw in ['\u{1b}', '\u{202e}'] {
        assert!(!text.contains(raw), "{raw:?} drawn raw: {text:?}");
    }
    assert!(text.contains("evil.txt"), "the stat names the file: {text}");
    assert!(text.contains("+1 -0"), "{text}");
    assert!(text.contains("draft.md [untracked]"), "{text}");
    assert!(
        text.contains("hostile <b>bold</b>"),
        "the subject as text: {text}"
    );
    assert!(
        text.contains(
            "+\\u{1b}[31mred\\u{1b}[0m \\u{202e}gnp.exe</script><img src=x \
             onerror=\"window.pwned=1\">"
        ),
        "the hunk as text, escapes shown: {text}"
    );
    let markup = browser.execute(
        "return document.querySelectorAll('#task-diff img, #task-diff script, #task-diff b')\
         .length + (window.pwned === undefined ? 0 : 100)",
        &[],
    );
    assert_eq!(markup, 0, "nothing of the diff became markup");
    let stat_first = browser.execute(
        "const diff = document.querySelector('#task-diff'); \
         const stat = diff.querySelector('.diff-stat'); const hunks = diff.querySelector('pre.diff'); \
         return !!(stat && hunks && \
           (stat.compareDocumentPosition(hunks) & Node.DOCUMENT_POSITION_FOLLOWING))",
        &[],
    );
    assert_eq!(stat_first, true, "the stat comes before the hunks");
}
