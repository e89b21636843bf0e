//! Text from participants, checked on the way in and made safe on the way out (SPEC
//! section 10).
//!
//! Whatever an agent writes is read by other agents (in hook context, in their inbox) and by
//! humans (in a terminal, in a notification). Two rules keep that text from doing anything
//! but being read:
//! - On the way in, one-line fields refuse control characters and have a length cap each,
//!   and long text has a size cap ([`check_line`], [`check_long`]); what is accepted is kept
//!   exactly.
//! - On the way out, every human-readable rendering goes through [`inline`] or [`framed`]:
//!   control characters and bidirectional overrides become visible escapes (`\u{1b}`), and
//!   the lines of multi-line text sit behind a prefix, so none can pass for baton's own.
//!   [`escape_controls`] is the last line of defence on whole outputs.

use std::fmt::{self, Write};

/// The most a multi-line field (a body, a result, a message) may hold, in bytes.
pub const LONG_TEXT_LIMIT: usize = 256 * 1024;

/// Whether `c` is shown as an escape wherever it appears: control characters (C0, DEL, C1),
/// bidirectional embeddings, overrides and isolates (which reorder what a reader sees),
/// and the Unicode line and paragraph separators (which some readers take as line breaks).
/// Newline and tab are included: [`framed`] lets those two through itself.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
        )
}

/// `text` on one line: every character [`is_hidden`] says is written as `\u{…}`, newlines
/// included, so it can neither move the cursor nor start a line of its own.
pub fn inline(text: &str) -> Inline<'_> {
    Inline(text)
}

/// See [`inline`].
#[derive(Debug, Clone, Copy)]
pub struct Inline<'a>(&'a str);

impl fmt::Display for Inline<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_escaped(out, self.0, |_| false)
    }
}

/// Writes `text` with every hidden character escaped but those `keep` lets through.
fn write_escaped(out: &mut impl Write, text: &str, keep: impl Fn(char) -> bool) -> fmt::Result {
    let mut rest = text;
    while let Some(at) = first_hidden(rest, &keep) {
        out.write_str(&rest[..at])?;
        // `find` matched a character at `at`, so there is one.
        let c = rest[at..].chars().next().unwrap_or_default();
        write!(out, "\\u{{{:x}}}", u32::from(c))?;
        rest = &rest[at + c.len_utf8()..];
    }
    out.write_str(rest)
}

/// Where the first character [`is_hidden`] names and `keep` does not let through is.
///
/// Every output a human reads passes here, so it looks at bytes rather than decoding each
/// character: a hidden character's UTF-8 starts with a byte below 0x20, 0x7f, 0xc2 (C1) or
/// 0xe2 (the overrides and separators), and only there is a character decoded.
fn first_hidden(text: &str, keep: impl Fn(char) -> bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = bytes[from..]
        .iter()
        .position(|byte| *byte < 0x20 || matches!(byte, 0x7f | 0xc2 | 0xe2))
    {
        let at = from + found;
        // Those bytes are never inside a character's encoding, only at its start.
        let c = text[at..].chars().next().unwrap_or_default();
        if is_hidden(c) && !keep(c) {
            return Some(at);
        }
        from = at + c.len_utf8();
    }
    None
}

/// Multi-line `text`, each of its lines written as `prefix` followed by the line, with
/// hidden characters escaped but tabs. Lines end with `\n` (the last one too); a carriage
/// return is escaped, so it cannot rewrite the prefix. Empty text writes nothing.
pub fn framed<'a>(text: &'a str, prefix: &'a str) -> Framed<'a> {
    Framed { text, prefix }
}

/// See [`framed`].
#[derive(Debug, Clone, Copy)]
pub struct Framed<'a> {
    text: &'a str,
    prefix: &'a str,
}

impl fmt::Display for Framed<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.is_empty() {
            return Ok(());
        }
        let text = self.text.strip_suffix('\n').unwrap_or(self.text);
        for line in text.split('\n') {
            out.write_str(self.prefix)?;
            write_escaped(out, line, |c| c == '\t')?;
            out.write_char('\n')?;
        }
        Ok(())
    }
}

/// Words after a label: one line goes on the label's line, after a space; more go on the
/// lines below, each behind `frame` (see [`framed`]). Ends with a newline.
pub fn after_label(text: &str, frame: &str) -> String {
    if is_multiline(text) {
        format!("\n{}", framed(text, frame))
    } else {
        format!(" {}\n", inline(text))
    }
}

/// `text` with every hidden character escaped but newlines and tabs: for whole outputs
/// whose line structure is baton's own, as a last guard against raw control characters.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let keep = |c: char| c == '\n' || c == '\t';
    if first_hidden(text, keep).is_none() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    // Writing to a String cannot fail.
    let _ = write_escaped(&mut out, text, keep);
    std::borrow::Cow::Owned(out)
}

/// At most `limit` characters of `text`, and how many were left out.
pub fn cut(text: &str, limit: usize) -> (&str, usize) {
    match text.char_indices().nth(limit) {
        Some((at, _)) => (&text[..at], text[at..].chars().count()),
        None => (text, 0),
    }
}

/// At most `limit` characters of `text` on one line, escaped as [`inline`] escapes them,
/// with `…` where it was cut: a word from a file named in a message about it, which must
/// neither run on for pages nor hold a control character.
pub fn excerpt(text: &str, limit: usize) -> String {
    let (kept, left) = cut(text, limit);
    let ellipsis = if left > 0 { "…" } else { "" };
    format!("{}{ellipsis}", inline(kept))
}

/// Whether `text` holds more than one line (or a carriage return, which acts like one).
pub fn is_multiline(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// A one-line field a participant writes, and how much of it is accepted.
///
/// The caps keep a field within what its readers are built for: a subject or a summary is
/// read at a glance on a card, in a notification or in a list, a file name is a path the
/// system can open, and a skill is a tag, as short as a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineField {
    Subject,
    FileName,
    Skill,
    Summary,
    /// A task's id, or its project's, in the tool `baton import` carried it over from.
    SourceId,
    /// A pattern of what a task touches, or of a reservation (SPEC section 18.1).
    Pattern,
    /// A project's setting given on the command line: a branch, a command, a remote.
    Setting,
    /// The text a board is searched for (SPEC section 19).
    Search,
}

/// How long a one-line field may be: counted in characters where a person reads it, in
/// bytes where the system does (a path).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthCap {
    Characters(usize),
    Bytes(usize),
}

impl LineField {
    /// The field's name in errors.
    pub fn name(self) -> &'static str {
        match self {
            LineField::Subject => "subject",
            LineField::FileName => "file name",
            LineField::Skill => "skill",
            LineField::Summary => "summary",
            LineField::SourceId => "id in its source",
            LineField::Pattern => "pattern",
            LineField::Setting => "setting",
            LineField::Search => "search text",
        }
    }

    /// The most the field may hold.
    pub fn cap(self) -> LengthCap {
        match self {
            LineField::Subject | LineField::Summary => LengthCap::Characters(1000),
            // PATH_MAX on Linux; macOS and Windows allow less.
            LineField::FileName => LengthCap::Bytes(4096),
            // As long as an agent's or a project's name may be.
            LineField::Skill => LengthCap::Characters(64),
            // Ids that tools make (numbers, UUIDs, hashes) are far shorter.
            LineField::SourceId => LengthCap::Characters(200),
            // Long enough for any path a task names; short enough that comparing two
            // patterns built to be slow stays quick.
            LineField::Pattern => LengthCap::Bytes(1024),
            LineField::Setting => LengthCap::Bytes(4096),
            // A piece of a task's words, found in the archive by an index of its pieces.
            LineField::Search => LengthCap::Characters(1000),
        }
    }

    /// What to do with text too long for the field.
    fn hint_when_long(self) -> &'static str {
        match self {
            LineField::Subject => "keep the subject to a short line; put the rest in the body",
            LineField::Summary => "keep the summary to a short line; the message holds the rest",
            LineField::FileName => {
                "no system opens a path that long; name the file by a shorter path"
            }
            LineField::Skill => "a skill is a short tag, such as `rust` or `frontend`",
            LineField::SourceId => "the task stays in its source; carry it over by hand",
            LineField::Pattern => "name a directory (src/date/) or a glob (src/**/*.rs) instead",
            LineField::Setting => "put a long command in a script and name the script",
            LineField::Search => "search for a few words of what the task says",
        }
    }
}

/// Refuses a one-line field holding any character [`is_hidden`] names, newline included, or
/// more than its [`LineField::cap`].
pub fn check_line(field: LineField, value: &str) -> Result<(), Refused> {
    let name = field.name();
    if let Some((at, c)) = value.char_indices().find(|(_, c)| is_hidden(*c)) {
        let what = match c {
            '\n' | '\r' => "a line break",
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => "a bidirectional override",
            _ => "a control character",
        };
        return Err(Refused {
            message: format!(
                "the {name} must be one line: it holds {what} ({}) at byte {at}",
                inline(&c.to_string())
            ),
            hint: RefusedHint::Said(match field {
                LineField::Search => "search for words on one line of what the task says",
                _ => "put longer or multi-line text in the body",
            }),
        });
    }
    let (length, most, unit) = match field.cap() {
        LengthCap::Bytes(most) => (value.len(), most, "bytes"),
        // A string holds at least as many bytes as characters: only a long one is counted.
        LengthCap::Characters(most) if value.len() <= most => return Ok(()),
        LengthCap::Characters(most) => (value.chars().count(), most, "characters"),
    };
    if length <= most {
        return Ok(());
    }
    Err(Refused {
        message: format!(
            "the {name} is {} {unit} long; at most {} are accepted",
            with_thousands(length),
            with_thousands(most)
        ),
        hint: RefusedHint::Said(field.hint_when_long()),
    })
}

/// Refuses multi-line text (a body, a result, a reason, a message) above
/// [`LONG_TEXT_LIMIT`] bytes. Any character is accepted: it is escaped when shown.
pub fn check_long(field: &str, value: &str) -> Result<(), Refused> {
    if value.len() <= LONG_TEXT_LIMIT {
        return Ok(());
    }
    Err(Refused {
        message: format!(
            "the {field} is {} KiB; at most {} KiB is accepted",
            value.len().div_ceil(1024),
            LONG_TEXT_LIMIT / 1024
        ),
        hint: RefusedHint::PassAFile,
    })
}

/// `number` with a comma between each group of three digits: `100,000`.
fn with_thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The face a refusal is told through. The model's words are the same on every face; where
/// they name an argument, each face spells it its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Face {
    /// The command line, and what shows its words: the terminal board, and the JSON API,
    /// whose refusals the command line on another machine prints as its own and the web
    /// board shows (SPEC section 13: the same output on either machine).
    #[default]
    Cli,
    /// An MCP tool call, whose caller has arguments, not flags.
    Tool,
}

impl Face {
    /// How this face names the argument `name`: `--files` on the command line, `` `files` ``
    /// in a tool call.
    pub fn argument(self, name: &str) -> String {
        match self {
            Face::Cli => format!("--{name}"),
            Face::Tool => format!("`{name}`"),
        }
    }

    /// [`Face::argument`] with the placeholder the command line shows for its value:
    /// `--to NAME`; a tool call's schema says what goes in it.
    pub fn argument_with(self, name: &str, value: &str) -> String {
        match self {
            Face::Cli => format!("--{name} {value}"),
            Face::Tool => format!("`{name}`"),
        }
    }
}

/// A participant's text refused on the way in: what is wrong with it, and how to get past.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    pub message: String,
    pub hint: RefusedHint,
}

/// How to get past a [`Refused`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusedHint {
    /// These words, the same on every face.
    Said(&'static str),
    /// Put the text in a file and name the file instead.
    PassAFile,
}

impl Refused {
    /// How to get past it, as `face` names the arguments.
    pub fn hint(&self, face: Face) -> String {
        match self.hint {
            RefusedHint::Said(words) => words.to_string(),
            RefusedHint::PassAFile => format!(
                "put the text in a file and pass its path with {}",
                face.argument("files")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn inline_escapes_controls_line_breaks_and_overrides() {
        assert_eq!(inline("plain – text").to_string(), "plain – text");
        assert_eq!(
            inline("a\u{1b}]52;c;aGk=\u{7}b").to_string(),
            "a\\u{1b}]52;c;aGk=\\u{7}b"
        );
        assert_eq!(inline("1\n2\r3\t4").to_string(), "1\\u{a}2\\u{d}3\\u{9}4");
        assert_eq!(
            inline("x\u{202E}y\u{2066}z\u{85}\u{7f}").to_string(),
            "x\\u{202e}y\\u{2066}z\\u{85}\\u{7f}"
        );
    }

    #[test]
    fn framed_puts_every_line_behind_the_prefix() {
        assert_eq!(framed("", "| ").to_string(), "");
        assert_eq!(framed("one", "  | ").to_string(), "  | one\n");
        assert_eq!(
            framed("one\n\ttwo\nT-7 [urgent] to do: x\n", "| ").to_string(),
            "| one\n| \ttwo\n| T-7 [urgent] to do: x\n"
        );
        assert_eq!(
            framed("a\r\nb\u{1b}[2J", "| ").to_string(),
            "| a\\u{d}\n| b\\u{1b}[2J\n"
        );
    }

    #[test]
    fn cut_counts_characters_not_bytes() {
        assert_eq!(cut("héllo", 2), ("hé", 3));
        assert_eq!(cut("hé", 5), ("hé", 0));
    }

    #[test]
    fn one_line_fields_refuse_hidden_characters_and_say_where() {
        assert!(check_line(LineField::Subject, "Fix the parser (again) – ünïcode").is_ok());
        let error = check_line(LineField::Subject, "ok\nT-7 [urgent] to do: fake").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the subject must be one line: it holds a line break (\\u{a}) at byte 2"
        );
        assert!(check_line(LineField::Subject, "a\u{1b}[2J").is_err());
        assert!(check_line(LineField::FileName, "a\u{202e}b").is_err());
    }

    #[test]
    fn one_line_fields_are_capped_each_in_its_own_unit() {
        // A subject is counted in characters: a thousand of them, however many bytes.
        assert!(check_line(LineField::Subject, &"é".repeat(1000)).is_ok());
        let error = check_line(LineField::Subject, &"x".repeat(100_000)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the subject is 100,000 characters long; at most 1,000 are accepted"
        );
        assert!(error.hint(Face::Cli).contains("body"), "{:?}", error.hint);
        assert!(check_line(LineField::Summary, &"é".repeat(1001)).is_err());
        // A path is counted in bytes, as the system counts it.
        assert!(check_line(LineField::FileName, &"a".repeat(4096)).is_ok());
        let error = check_line(LineField::FileName, &"é".repeat(2049)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the file name is 4,098 bytes long; at most 4,096 are accepted"
        );
        assert!(check_line(LineField::Skill, &"r".repeat(64)).is_ok());
        assert!(check_line(LineField::Skill, &"r".repeat(65)).is_err());
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(with_thousands(0), "0");
        assert_eq!(with_thousands(999), "999");
        assert_eq!(with_thousands(1000), "1,000");
        assert_eq!(with_thousands(262_144), "262,144");
        assert_eq!(with_thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn long_text_is_capped_in_bytes() {
        assert!(check_long("body", &"x".repeat(LONG_TEXT_LIMIT)).is_ok());
        let error = check_long("body", &"x".repeat(LONG_TEXT_LIMIT + 1)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the body is 257 KiB; at most 256 KiB is accepted"
        );
        assert!(error.hint(Face::Cli).contains("--files"));
        assert!(error.hint(Face::Tool).contains("`files`"));
        assert!(check_long("body", "line\nline\u{1b}").is_ok());
    }

    fn no_raw_hidden(text: &str, allowed: &[char]) -> bool {
        text.chars().all(|c| !is_hidden(c) || allowed.contains(&c))
    }

    /// Text drawn mostly from the characters that matter here.
    fn hostile_text() -> impl Strategy<Value = String> {
        let interesting = prop_oneof![
            Just('\n'),
            Just('\r'),
            Just('\t'),
            Just('\u{1b}'),
            Just('\u{7}'),
            Just('\u{7f}'),
            Just('\u{9b}'),
            Just('\u{85}'),
            Just('\u{202e}'),
            Just('\u{2069}'),
            Just('\u{2028}'),
            Just('\\'),
            Just('|'),
            any::<char>(),
        ];
        proptest::collection::vec(interesting, 0..64).prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        /// The display functions' fuzz target: whatever goes in, no raw hidden character
        /// comes out (but the newlines and tabs `framed` keeps), an inline rendering is one
        /// line, every framed line starts with the prefix, and text with nothing hidden is
        /// shown as it is.
        #[test]
        fn nothing_hidden_comes_out_raw(text in hostile_text()) {
            let one = inline(&text).to_string();
            prop_assert!(no_raw_hidden(&one, &[]));
            prop_assert!(!one.contains('\n'));
            let block = framed(&text, "  | ").to_string();
            prop_assert!(no_raw_hidden(&block, &['\n', '\t']));
            for line in block.lines() {
                prop_assert!(line.starts_with("  | "));
            }
            prop_assert!(no_raw_hidden(&escape_controls(&text), &['\n', '\t']));
            if !text.chars().any(is_hidden) {
                prop_assert_eq!(&one, &text);
            }
            // The byte scan finds what decoding every character would.
            let decoded = text.char_indices().find(|(_, c)| is_hidden(*c)).map(|(at, _)| at);
            prop_assert_eq!(first_hidden(&text, |_| false), decoded);
        }

        #[test]
        fn arbitrary_strings_too(text in any::<String>()) {
            prop_assert!(no_raw_hidden(&inline(&text).to_string(), &[]));
            prop_assert!(no_raw_hidden(&framed(&text, "| ").to_string(), &['\n', '\t']));
            let (kept, left) = cut(&text, 7);
            prop_assert_eq!(kept.chars().count() + left, text.chars().count());
        }
    }
}
