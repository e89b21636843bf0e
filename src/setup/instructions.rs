//! The short instructions each client reads: a Claude Code skill, or a delimited block in the
//! AGENTS.md-style file the client loads into every session. The block's markers let setup
//! replace it in place and uninstall remove exactly it.

use super::remote::RemoteHub;

pub const BLOCK_START: &str = "<!-- baton:start -->";
pub const BLOCK_END: &str = "<!-- baton:end -->";

/// How to work with baton, for the agent `agent`.
pub fn guide(agent: &str) -> String {
    format!(
        "## Working with baton\n\
         \n\
         You are `{agent}` on baton, the task board you share with other coding agents and \
         humans on this machine. Your teammates hear from you only through baton: what you \
         say in this session never reaches them.\n\
         \n\
         - Check your inbox when you start and whenever you finish something: the baton MCP \
         tool `inbox`, or `baton --as {agent} inbox` in a shell. It lists the tasks whose \
         turn is yours and your unread messages.\n\
         {COMMON_RULES}"
    )
}

/// What every agent does with baton, wherever its hub is.
const COMMON_RULES: &str = "- `claim` a task before you work on it. If only its sender can \
     unblock you, `ask` them and move on; their answer comes back to your inbox.\n\
     - When you are finished, `review` if the task asks for a review, else `done` with a \
     one-line result; `fail` with the reason if it cannot be done.\n\
     - Hand work to a teammate with `send` (`agents` shows who is good at what) and talk \
     with `message` (`baton msg` in a shell). Answer questions and review requests that \
     reach your inbox.\n\
     - While your inbox holds tasks for you, keep working on them.\n";

/// How to work with baton on a hub reached over HTTP, as the agent of the token in `hub`'s
/// variable: the same tools, and a shell needs the hub's URL and the token.
pub fn remote_guide(hub: &RemoteHub) -> String {
    let url = hub.base_url();
    let variable = hub.token_env();
    format!(
        "## Working with baton\n\
         \n\
         You work on baton, the task board you share with other coding agents and humans, \
         through its hub at {url}; the token in `${variable}` says which agent you are. Your \
         teammates hear from you only through baton: what you say in this session never \
         reaches them.\n\
         \n\
         - Check your inbox when you start and whenever you finish something: the baton MCP \
         tool `inbox`, or `BATON_URL={url} BATON_TOKEN=\"${variable}\" baton inbox` in a \
         shell. It lists the tasks whose turn is yours and your unread messages.\n\
         {COMMON_RULES}"
    )
}

/// The Claude Code skill (`skills/baton/SKILL.md`) around `guide`.
pub fn skill(guide: &str) -> String {
    format!(
        "---\n\
         name: baton\n\
         description: Work with teammates on the shared baton task board. Use at the start \
         of a session, whenever you finish a piece of work, and when the user mentions \
         baton, tasks, teammates or other agents: check the inbox, claim, ask, review and \
         finish tasks, and hand work to other agents.\n\
         ---\n\
         \n\
         {guide}"
    )
}

/// `text` with baton's block holding `body`: replaced where it is, else appended after a
/// blank line.
pub fn with_block(text: Option<&str>, body: &str) -> String {
    let block = format!("{BLOCK_START}\n{body}{BLOCK_END}\n");
    let text = text.unwrap_or("");
    if let Some(range) = find_block(text) {
        return format!("{}{block}{}", &text[..range.start], &text[range.end..]);
    }
    let separator = if text.is_empty() {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    format!("{text}{separator}{block}")
}

/// `text` without baton's block and the blank line setup put before it; `None` when there is
/// no block. (A file that did not end in a newline gets one back: the only byte not restored.)
pub fn without_block(text: &str) -> Option<String> {
    let mut text = text.to_string();
    let mut found = false;
    while let Some(range) = find_block(&text) {
        found = true;
        let mut start = range.start;
        if text[..start].ends_with("\n\n") {
            start -= 1;
        }
        text.replace_range(start..range.end, "");
    }
    found.then_some(text)
}

pub fn has_block(text: &str) -> bool {
    find_block(text).is_some()
}

/// The byte range of the first block, from its start marker through the end marker's line.
fn find_block(text: &str) -> Option<std::ops::Range<usize>> {
    let start = text.find(BLOCK_START)?;
    let end_marker = start + text[start..].find(BLOCK_END)?;
    let mut end = end_marker + BLOCK_END.len();
    if text[end..].starts_with('\n') {
        end += 1;
    }
    Some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_is_appended_replaced_and_removed_exactly() {
        for original in ["", "# My rules\n\nBe brief.\n", "# My rules\n\n\n"] {
            let added = with_block(Some(original), "one\n");
            assert!(added.starts_with(original));
            assert!(added.ends_with(&format!("{BLOCK_START}\none\n{BLOCK_END}\n")));
            let replaced = with_block(Some(&added), "two\n");
            assert_eq!(replaced, with_block(Some(original), "two\n"));
            assert_eq!(with_block(Some(&replaced), "two\n"), replaced);
            assert_eq!(without_block(&replaced).as_deref(), Some(original));
        }
        assert_eq!(without_block("no block here\n"), None);
    }

    #[test]
    fn text_the_user_wrote_after_the_block_stays() {
        let text = format!("mine\n\n{BLOCK_START}\nx\n{BLOCK_END}\nlater\n");
        assert_eq!(without_block(&text).as_deref(), Some("mine\nlater\n"));
        assert!(with_block(Some(&text), "y\n").ends_with(&format!("y\n{BLOCK_END}\nlater\n")));
    }

    #[test]
    fn the_skill_has_front_matter_and_names_the_agent() {
        let skill = skill(&guide("claude"));
        assert!(skill.starts_with("---\nname: baton\ndescription: "));
        assert!(skill.contains("You are `claude` on baton"));
        assert!(skill.contains("baton --as claude inbox"));
    }

    #[test]
    fn the_remote_guide_names_the_hub_and_the_variable_but_no_token_or_agent() {
        let hub = RemoteHub::new("http://10.0.0.5:7878", "HUB_TOKEN").unwrap();
        let guide = remote_guide(&hub);
        assert!(
            guide.contains("through its hub at http://10.0.0.5:7878"),
            "{guide}"
        );
        assert!(
            guide.contains("BATON_URL=http://10.0.0.5:7878 BATON_TOKEN=\"$HUB_TOKEN\" baton inbox"),
            "{guide}"
        );
        assert!(!guide.contains("--as"), "{guide}");
        assert!(guide.ends_with(COMMON_RULES));
    }
}
