//! Text laid out in the terminal's cells: made safe for a grid of cells, measured, cut and
//! wrapped by grapheme cluster, the unit ratatui puts in a cell.
//!
//! ratatui gives each grapheme cluster the width `unicode-width` says and writes it to the
//! terminal whole, but terminals do not agree on how wide some clusters are drawn. An emoji
//! sequence joined by U+200D (`👨‍👩‍👧`) is one glyph two cells wide where the terminal
//! joins it (kitty, WezTerm, iTerm2) and three glyphs six cells wide where it does not
//! (xterm, VTE, tmux, the Linux console); a flag (two regional indicators) is two cells or
//! four; an emoji with a skin tone or a variation selector, two or four, one or two. Where
//! the terminal draws wider than ratatui counted, the rest of the row moves right and runs
//! into the next one. So [`shown`] keeps only what every terminal draws at the width
//! ratatui counts: each character that joins or alters the one before it (the joiners,
//! variation selectors, skin tones, regional indicators, tags, the keycap) is written as a
//! visible escape (`\u{200d}`), as the characters SPEC section 10 hides are; the pieces it
//! joined stand on their own, each at its own plain width. Combining marks stay on their
//! letter, at most [`MARKS_ON_ONE`] of them: more are stacked by some terminals into the
//! rows above and below.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use baton::text::inline;

/// The combining marks kept on one character (Vietnamese and Hangul syllables need two);
/// the rest are shown as escapes.
pub const MARKS_ON_ONE: usize = 2;

/// A tab in a cell would move the cursor: it is drawn as this many spaces.
const TAB: &str = "    ";

/// One line as the board draws it: tabs as spaces, every hidden character escaped (as
/// [`inline`] does, newlines too), and every character whose drawn width terminals disagree
/// on escaped (see the module's words). Text already shown comes back unchanged.
pub fn shown(line: &str) -> String {
    let line = line.replace('\t', TAB);
    let line = inline(&line).to_string();
    if line.is_ascii() {
        return line;
    }
    let mut out = String::with_capacity(line.len());
    for cluster in line.graphemes(true) {
        write_cluster(&mut out, cluster);
    }
    out
}

/// One grapheme cluster: its characters as themselves where their width is sure, else as
/// escapes.
fn write_cluster(out: &mut String, cluster: &str) {
    // Whether the last character written raw can carry a combining mark, and how many it
    // carries already.
    let mut has_base = false;
    let mut marks = 0;
    for c in cluster.chars() {
        let width = c.width().unwrap_or(0);
        let is_raw = if is_joining(c) {
            false
        } else if width == 0 {
            has_base && marks < MARKS_ON_ONE
        } else {
            true
        };
        if !is_raw {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            has_base = false;
            continue;
        }
        out.push(c);
        if width == 0 {
            marks += 1;
        } else {
            has_base = true;
            marks = 0;
        }
    }
}

/// Characters that join the ones around them into a glyph, or change how wide the one
/// before them is drawn, in some terminals and not in others.
fn is_joining(c: char) -> bool {
    matches!(
        c,
        // Zero-width non-joiner and joiner.
        '\u{200C}' | '\u{200D}'
        // Variation selectors: text or emoji presentation, and the rest.
        | '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}'
        // Tags, which make subdivision flags.
        | '\u{E0000}'..='\u{E007F}'
        // The keycap that encloses a digit.
        | '\u{20E3}'
        // Skin tones.
        | '\u{1F3FB}'..='\u{1F3FF}'
        // Regional indicators, two of which are a flag.
        | '\u{1F1E6}'..='\u{1F1FF}'
    )
}

/// How many cells shown text takes, counted as ratatui counts it: by grapheme cluster.
pub fn width(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.graphemes(true).map(UnicodeWidthStr::width).sum()
}

/// Shown text in at most `room` cells: whole if it fits, else as much as fits before an
/// ellipsis. A cluster is never split, nor a wide one put across the edge.
pub fn cut(text: &str, room: usize) -> Cow<'_, str> {
    if width(text) <= room {
        return Cow::Borrowed(text);
    }
    let Some(before_ellipsis) = room.checked_sub(1) else {
        return Cow::Borrowed("");
    };
    let mut cut = String::new();
    let mut used = 0;
    for cluster in text.graphemes(true) {
        let width = cluster.width();
        if used + width > before_ellipsis {
            break;
        }
        cut.push_str(cluster);
        used += width;
    }
    cut.push('…');
    Cow::Owned(cut)
}

/// Shown text in exactly `room` cells: cut as [`cut`] does, or filled with spaces.
pub fn pad(text: &str, room: usize) -> String {
    let cut = cut(text, room);
    let fill = room.saturating_sub(width(&cut));
    format!("{cut}{}", " ".repeat(fill))
}

/// A line of a pane ([`shown`] first) as the rows it takes at `room` cells a row. A line
/// framed behind `| ` (SPEC section 10) keeps its frame on every row it wraps onto, so no
/// piece of a participant's line ever starts a row as if it were baton's; the rows of any
/// other line go on behind its indent and `  | `, since such a line may end in a
/// participant's words too. Rows break after a space where there is one, else anywhere.
pub fn wrap(line: &str, room: usize) -> Vec<String> {
    let line = shown(line);
    if width(&line) <= room {
        return vec![line];
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    let (frame, continuation) = if line[indent..].starts_with("| ") {
        let frame = indent + 2;
        (frame, line[..frame].to_string())
    } else {
        (indent, format!("{}  | ", &line[..indent]))
    };
    wrap_behind(&line, frame, &continuation, room)
}

/// A line of a list whose rows start with baton's own words (an activity record, behind
/// its time) as the rows it takes at `room` cells, at most `most` of them (the last then
/// ends in an ellipsis): the rows after the first go on behind `indent` spaces, under
/// those words, where no participant's words ever start, so none of theirs can pass for
/// the start of a line of baton's (SPEC section 10) and no `| ` frame is needed to say so.
pub fn wrap_under(line: &str, room: usize, indent: usize, most: usize) -> Vec<String> {
    let line = shown(line);
    if width(&line) <= room {
        return vec![line];
    }
    let mut rows = wrap_behind(&line, 0, &" ".repeat(indent), room);
    if rows.len() > most.max(1) {
        rows.truncate(most.max(1));
        if let Some(last) = rows.last_mut() {
            *last = match width(last) < room {
                true => format!("{last}…"),
                false => cut(last, room.saturating_sub(1)).into_owned(),
            };
        }
    }
    rows
}

/// Shown `line`, whose first `frame` bytes are its frame, as rows of `room` cells, each
/// after the first behind `continuation`.
fn wrap_behind(line: &str, frame: usize, continuation: &str, room: usize) -> Vec<String> {
    // Room for at least a wide character after the frame, or the line is only cut.
    if continuation.len() + 2 > room {
        return vec![cut(line, room).into_owned()];
    }
    let mut rows = Vec::new();
    let mut row = line[..frame].to_string();
    let mut used = frame;
    // Where the row may break: just after its last space past the frame.
    let mut space: Option<usize> = None;
    for cluster in line[frame..].graphemes(true) {
        let cells = cluster.width();
        if cluster == " " && used + cells > room {
            // A space where the row is full is the break itself.
            rows.push(row.trim_end_matches(' ').to_string());
            row = continuation.to_string();
            used = continuation.len();
            space = None;
            continue;
        }
        // Twice at most: what a break at a space carries over may leave too little room,
        // and a row of the frame alone has room for any cluster.
        while used + cells > room {
            let carried = match space.take() {
                Some(at) => row.split_off(at),
                None => String::new(),
            };
            rows.push(row.trim_end_matches(' ').to_string());
            used = continuation.len() + width(&carried);
            row = format!("{continuation}{carried}");
        }
        row.push_str(cluster);
        used += cells;
        if cluster == " " {
            space = Some(row.len());
        }
    }
    rows.push(row);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_emoji_flags_and_skin_tones_are_shown_apart_and_the_joiners_escaped() {
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(shown(family), "👨\\u{200d}👩\\u{200d}👧");
        assert_eq!(shown("🇺🇸"), "\\u{1f1fa}\\u{1f1f8}");
        assert_eq!(shown("👍🏽"), "👍\\u{1f3fd}");
        assert_eq!(shown("❤\u{fe0f}"), "❤\\u{fe0f}");
        assert_eq!(shown("1\u{fe0f}\u{20e3}"), "1\\u{fe0f}\\u{20e3}");
        // Every cluster left is one a terminal draws at the width ratatui counts: the sum
        // of its characters' widths (a terminal that joins nothing) is the cluster's
        // width (one that joins what Unicode joins).
        for text in [
            family,
            "🇺🇸🇫",
            "👍🏽",
            "🏳\u{fe0f}\u{200d}🌈",
            "x\u{301}\u{302}\u{303}",
        ] {
            let shown = shown(text);
            for cluster in shown.graphemes(true) {
                let apart: usize = cluster.chars().filter_map(|c| c.width()).sum();
                assert_eq!(apart, cluster.width(), "{cluster:?} of {text:?}");
            }
        }
    }

    #[test]
    fn letters_keep_their_marks_and_wide_text_stays_whole() {
        assert_eq!(shown("café"), "café");
        assert_eq!(shown("e\u{301}"), "e\u{301}");
        assert_eq!(shown("ệ"), "ệ");
        assert_eq!(shown("漢字 かな 한국어"), "漢字 かな 한국어");
        assert_eq!(shown("กำ"), "กำ");
        // A third mark on one letter, and a mark with no letter before it, are escaped.
        assert_eq!(shown("x\u{301}\u{302}\u{303}"), "x\u{301}\u{302}\\u{303}");
        assert_eq!(shown("\u{200d}\u{301}a"), "\\u{200d}\\u{301}a");
        // What is shown already is shown unchanged.
        let once = shown("👨\u{200d}👩 \u{1b}[2J\tok");
        assert_eq!(shown(&once), once);
        assert_eq!(once, "👨\\u{200d}👩 \\u{1b}[2J    ok");
    }

    #[test]
    fn a_cut_counts_cells_and_never_splits_a_wide_character() {
        assert_eq!(cut("漢字かな", 8), "漢字かな");
        assert_eq!(cut("漢字かな", 7), "漢字か…");
        assert_eq!(cut("漢字かな", 6), "漢字…");
        assert_eq!(width(&cut("漢字かな", 6)), 5);
        assert_eq!(cut("abc", 0), "");
        assert_eq!(pad("漢", 4), "漢  ");
        assert_eq!(width(&pad("漢字かな", 5)), 5);
    }

    #[test]
    fn a_framed_line_keeps_its_frame_on_every_row_it_wraps_onto() {
        let rows = wrap("  | one two three four baton: approved", 16);
        assert_eq!(
            rows,
            vec![
                "  | one two",
                "  | three four",
                "  | baton:",
                "  | approved"
            ]
        );
        let long = format!("    | {}", "x".repeat(30));
        let rows = wrap(&long, 16);
        assert!(rows.iter().all(|row| row.starts_with("    | ")), "{rows:?}");
        assert!(rows.iter().all(|row| width(row) <= 16), "{rows:?}");
        assert_eq!(rows.concat().matches('x').count(), 30);
    }

    #[test]
    fn a_line_of_a_list_wraps_under_its_first_words_and_is_cut_after_its_rows() {
        let rows = wrap_under("06:07:08 worker note T-1: one two three four", 20, 9, 3);
        assert_eq!(
            rows,
            vec![
                "06:07:08 worker note",
                "         T-1: one",
                "         two three…"
            ]
        );
        let short = wrap_under("06:07:08 worker note", 20, 9, 3);
        assert_eq!(short, vec!["06:07:08 worker note"]);
        // Wide characters: no row is wider than its room, the cut one included.
        let rows = wrap_under(&format!("06:07:08 {}", "漢".repeat(40)), 21, 9, 2);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows.iter().all(|row| width(row) <= 21), "{rows:?}");
        assert!(
            rows[1].starts_with("         漢") && rows[1].ends_with('…'),
            "{rows:?}"
        );
    }

    #[test]
    fn any_other_line_wraps_behind_its_indent_and_a_frame() {
        let rows = wrap("  at worker question: status: completed", 22);
        assert_eq!(
            rows,
            vec!["  at worker question:", "    | status:", "    | completed"]
        );
        // Wide characters: no row is wider than its room.
        let rows = wrap(&format!("T-1 {}", "漢".repeat(20)), 11);
        assert!(rows.iter().all(|row| width(row) <= 11), "{rows:?}");
        assert_eq!(rows.concat().matches('漢').count(), 20);
    }
}
