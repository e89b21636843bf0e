//! What a task says it will touch (SPEC section 18.1), and whether two such claims overlap.
//!
//! A pattern is either a named resource, `KIND:NAME` (`port:3000`, `db:migrations`), which
//! overlaps only itself, or a gitignore-style path pattern relative to the project's
//! workspace: `/`-separated segments, each a glob over one path component (`*`, `?`,
//! `[a-z]`, `\` escaping the next character) or `**` for any number of components, and a
//! trailing `/` naming a directory. Every pattern is anchored at the workspace, whether or not
//! it holds a `/` (unlike gitignore, where `Cargo.lock` matches at any depth): `Cargo.lock` is
//! the workspace's own, and `**/Cargo.lock` any of them. Read the gitignore way, `docs/` would
//! overlap every `**` under any directory, a conflict with nearly every task.
//!
//! Two patterns **overlap** when some path could be touched under both. A path matched by a
//! pattern stands for everything under it (a directory covers its contents), so two patterns
//! overlap exactly when one matches a path and the other a path at or under it. That is
//! decided segment by segment, and within a segment character by character, as the
//! intersection of two patterns, never by listing files. Where a comparison cannot decide
//! (two negated character classes, say) the answer is *overlap*: a false conflict costs a
//! question, a missed one costs someone's work.

use std::fmt;

use crate::text::inline;

/// At most this many patterns a task.
pub const MOST_PATTERNS: usize = 64;

/// One pattern of what a task touches, checked and split into its segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// `KIND:NAME`, matched exactly.
    Resource,
    /// The path's segments, from the workspace down.
    Path(Vec<Segment>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of components, none included.
    Any,
    /// One component, matched by these tokens.
    Glob(Vec<Token>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Char(char),
    /// `?`: one character.
    One,
    /// `*`: any run of characters within the component.
    Star,
    /// `[...]`: one character of the class (or, negated, not of it).
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// Why a pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    #[error("a pattern of what a task touches is empty")]
    Empty,
    #[error("`{}` is absolute: what a task touches is named relative to its workspace", inline(.0))]
    Absolute(String),
    #[error("`{}` climbs out of the workspace with `..`", inline(.0))]
    Climbs(String),
    #[error("`{}` has a character class that is not closed with `]`", inline(.0))]
    OpenClass(String),
    #[error("a task names at most {MOST_PATTERNS} patterns of what it touches; {0} were given")]
    TooMany(usize),
}

impl Pattern {
    /// Reads one pattern, refusing an empty, absolute or climbing one.
    pub fn parse(text: &str) -> Result<Pattern, ScopeError> {
        if text.is_empty() {
            return Err(ScopeError::Empty);
        }
        if is_absolute(text) {
            return Err(ScopeError::Absolute(text.to_string()));
        }
        if is_resource(text) {
            return Ok(Pattern {
                text: text.to_string(),
                kind: Kind::Resource,
            });
        }
        let trimmed = text.strip_suffix('/').unwrap_or(text);
        let mut segments = Vec::new();
        for part in trimmed.split('/') {
            match part {
                // `a//b` and `./a` name what `a/b` and `a` name.
                "" | "." => {}
                ".." => return Err(ScopeError::Climbs(text.to_string())),
                "**" => {
                    if segments.last() != Some(&Segment::Any) {
                        segments.push(Segment::Any);
                    }
                }
                glob => segments.push(Segment::Glob(
                    tokens(glob).ok_or_else(|| ScopeError::OpenClass(text.to_string()))?,
                )),
            }
        }
        if segments.is_empty() {
            // `.` or `./`: the whole workspace.
            segments.push(Segment::Any);
        }
        Ok(Pattern {
            text: text.to_string(),
            kind: Kind::Path(segments),
        })
    }

    /// Reads a task's patterns, at most [`MOST_PATTERNS`].
    pub fn parse_all<'a>(
        texts: impl IntoIterator<Item = &'a str>,
    ) -> Result<Vec<Pattern>, ScopeError> {
        let patterns = texts
            .into_iter()
            .map(Pattern::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if patterns.len() > MOST_PATTERNS {
            return Err(ScopeError::TooMany(patterns.len()));
        }
        Ok(patterns)
    }

    /// `**`: the whole workspace, what a pattern that does not read stands for.
    pub fn everything() -> Pattern {
        Pattern {
            text: "**".to_string(),
            kind: Kind::Path(vec![Segment::Any]),
        }
    }

    /// The first name the pattern gives: a resource's whole text, or the first component
    /// of a path when it is a literal name; `None` when the path begins with a glob. Two
    /// patterns with different first names never overlap (an index of them by it is exact).
    pub fn first_name(&self) -> Option<String> {
        match &self.kind {
            Kind::Resource => Some(self.text.clone()),
            Kind::Path(segments) => match segments.first() {
                Some(Segment::Glob(tokens)) if is_literal(tokens) => Some(
                    tokens
                        .iter()
                        .map(|token| match token {
                            Token::Char(c) => *c,
                            _ => '?',
                        })
                        .collect(),
                ),
                _ => None,
            },
        }
    }

    /// The pattern as it was written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether some path (or the same resource) could be touched under both.
    pub fn overlaps(&self, other: &Pattern) -> bool {
        match (&self.kind, &other.kind) {
            (Kind::Resource, Kind::Resource) => self.text == other.text,
            (Kind::Path(mine), Kind::Path(theirs)) => {
                if literally_apart(mine, theirs) {
                    return false;
                }
                // One matches a path, the other that path or one under it.
                let under = |segments: &[Segment]| {
                    let mut longer = segments.to_vec();
                    longer.push(Segment::Any);
                    longer
                };
                meet(&under(mine), theirs) || meet(mine, &under(theirs))
            }
            _ => false,
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A participant's words: shown as SPEC section 10 says.
        write!(f, "{}", inline(&self.text))
    }
}

/// Whether two path patterns name different literal components at the same depth before
/// either reaches a glob or ends: then no path is touched under both (`held/a1/f.rs` and
/// `work/**` part at their first component). Cheap, and never wrong: it answers only where
/// the full comparison would say no overlap, and leaves every other pair to it.
fn literally_apart(mine: &[Segment], theirs: &[Segment]) -> bool {
    for (a, b) in mine.iter().zip(theirs) {
        match (a, b) {
            (Segment::Glob(a), Segment::Glob(b)) if is_literal(a) && is_literal(b) => {
                if a != b {
                    return true;
                }
            }
            _ => return false,
        }
    }
    false
}

fn is_literal(tokens: &[Token]) -> bool {
    tokens.iter().all(|token| matches!(token, Token::Char(_)))
}

/// Whether any of `mine` overlaps any of `theirs`: the pairs that do, in order.
pub fn overlapping<'a>(
    mine: &'a [Pattern],
    theirs: &'a [Pattern],
) -> Vec<(&'a Pattern, &'a Pattern)> {
    mine.iter()
        .flat_map(|a| theirs.iter().filter(|b| a.overlaps(b)).map(move |b| (a, b)))
        .collect()
}

/// The longest pattern a one-line field holds (`reserved` and `reserve` take no longer).
const PATTERN_LIMIT: usize = 1024;

/// The pattern that names `path` (relative to the workspace, as git and the clients name
/// it) and nothing else: glob characters and a colon escaped, so that `a[1].rs` is not a
/// class nor `port:3000` a resource; each character a pattern may not hold (a control
/// character, a line break) as `?`, which matches it among others; `./` before a name that
/// would read as absolute once escaped. A path too long for a pattern is named as the
/// directory that holds it, which covers it.
pub fn literal(path: &str) -> String {
    let mut text = String::with_capacity(path.len() + 2);
    for c in path.chars() {
        match c {
            '\\' | '*' | '?' | '[' | ']' | ':' => {
                text.push('\\');
                text.push(c);
            }
            c if crate::text::is_hidden(c) => text.push('?'),
            c => text.push(c),
        }
    }
    if is_absolute(&text) {
        text.insert_str(0, "./");
    }
    while text.len() > PATTERN_LIMIT {
        // At a character's start: a name may hold characters of several bytes.
        let mut end = PATTERN_LIMIT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let cut = text[..end].trim_end_matches('/');
        text = match cut.rfind('/') {
            Some(slash) => text[..=slash].to_string(),
            None => "**".to_string(),
        };
    }
    text
}

/// The paths of `paths` (files relative to the workspace) that no pattern of `scope`
/// covers: a path is covered when some pattern overlaps it. A path that cannot be read as
/// one (`..` in it, say) is covered by nothing.
pub fn uncovered<'a>(scope: &[Pattern], paths: &'a [String]) -> Vec<&'a str> {
    paths
        .iter()
        .filter(|path| {
            Pattern::parse(&literal(path)).map_or(true, |path| {
                !scope.iter().any(|pattern| pattern.overlaps(&path))
            })
        })
        .map(String::as_str)
        .collect()
}

/// `path` relative to `root` as a pattern names it (`/`-separated), when it lies under
/// `root`; `None` when it does not. Pure: the caller resolves links where it must.
pub fn relative_to(root: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let rest = path.strip_prefix(root).ok()?;
    let parts: Vec<&str> = rest
        .components()
        .map(|part| match part {
            std::path::Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    match parts.is_empty() {
        true => Some(".".to_string()),
        false => Some(parts.join("/")),
    }
}

/// `/…`, `\…`, `~…` or a drive (`C:`): not relative to the workspace.
fn is_absolute(text: &str) -> bool {
    let bytes = text.as_bytes();
    matches!(bytes.first(), Some(b'/' | b'\\' | b'~'))
        || (bytes.len() >= 2
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes.get(2), None | Some(b'/' | b'\\')))
}

/// `KIND:NAME`: a lower-case word, a colon, and a name with no separator.
fn is_resource(text: &str) -> bool {
    let Some((kind, name)) = text.split_once(':') else {
        return false;
    };
    !kind.is_empty()
        && kind
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && kind.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.is_empty()
        && !name.contains('/')
}

/// The tokens of one component's glob; `None` for a class left open.
fn tokens(glob: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(match c {
            '\\' => Token::Char(chars.next().unwrap_or('\\')),
            '?' => Token::One,
            '*' => {
                // `**` within a component is `*`.
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                Token::Star
            }
            '[' => {
                let negated = matches!(chars.peek(), Some('!' | '^'));
                if negated {
                    chars.next();
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let c = chars.next()?;
                    if c == ']' && !first {
                        break;
                    }
                    first = false;
                    let low = if c == '\\' { chars.next()? } else { c };
                    if chars.peek() == Some(&'-') {
                        let mut ahead = chars.clone();
                        ahead.next();
                        if let Some(high) = ahead.next().filter(|high| *high != ']') {
                            chars = ahead;
                            ranges.push((low, high));
                            continue;
                        }
                    }
                    ranges.push((low, low));
                }
                Token::Class { negated, ranges }
            }
            c => Token::Char(c),
        });
    }
    Some(out)
}

/// Whether some sequence of components matches both `a` and `b`.
fn meet(a: &[Segment], b: &[Segment]) -> bool {
    Meeting {
        is_any: &|segment: &Segment| *segment == Segment::Any,
        step_meets: &|x: &Segment, y: &Segment| match (x, y) {
            (Segment::Glob(x), Segment::Glob(y)) => globs_meet(x, y),
            _ => false,
        },
    }
    .meet(a, b)
}

/// Whether some component matches both globs. (Two globs that meet only in the empty text
/// are both all stars, which meet in any text too.)
fn globs_meet(x: &[Token], y: &[Token]) -> bool {
    Meeting {
        is_any: &|token: &Token| *token == Token::Star,
        step_meets: &one_char_meets,
    }
    .meet(x, y)
}

/// Whether two patterns over the same steps (components, or characters) have a sequence in
/// common: each a list of steps that match one element and of `any`s that match any number
/// of elements, none included (`**` among components, `*` among characters).
struct Meeting<'f, T> {
    is_any: &'f dyn Fn(&T) -> bool,
    step_meets: &'f dyn Fn(&T, &T) -> bool,
}

impl<T> Meeting<'_, T> {
    fn meet(&self, a: &[T], b: &[T]) -> bool {
        let mut seen = vec![vec![None; b.len() + 1]; a.len() + 1];
        self.meet_at(a, b, 0, 0, &mut seen)
    }

    fn meet_at(
        &self,
        a: &[T],
        b: &[T],
        i: usize,
        j: usize,
        seen: &mut [Vec<Option<bool>>],
    ) -> bool {
        if let Some(known) = seen[i][j] {
            return known;
        }
        // Every step moves on in one pattern or both, so nothing comes back here.
        let a_any = a.get(i).is_some_and(self.is_any);
        let b_any = b.get(j).is_some_and(self.is_any);
        let met = match (a.get(i), b.get(j)) {
            (None, None) => true,
            _ if a_any || b_any => {
                // An `any` matching nothing, or taking the other side's next element.
                (a_any && self.meet_at(a, b, i + 1, j, seen))
                    || (b_any && self.meet_at(a, b, i, j + 1, seen))
                    || (a_any && !b_any && j < b.len() && self.meet_at(a, b, i, j + 1, seen))
                    || (b_any && !a_any && i < a.len() && self.meet_at(a, b, i + 1, j, seen))
            }
            (Some(x), Some(y)) => (self.step_meets)(x, y) && self.meet_at(a, b, i + 1, j + 1, seen),
            _ => false,
        };
        seen[i][j] = Some(met);
        met
    }
}

/// Whether one character matches both tokens (neither a star).
fn one_char_meets(p: &Token, q: &Token) -> bool {
    match (p, q) {
        (Token::Char(a), Token::Char(b)) => a == b,
        (Token::One, _) | (_, Token::One) => true,
        (Token::Char(c), Token::Class { negated, ranges })
        | (Token::Class { negated, ranges }, Token::Char(c)) => {
            ranges.iter().any(|(low, high)| (low..=high).contains(&c)) != *negated
        }
        (
            Token::Class {
                negated: false,
                ranges: mine,
            },
            Token::Class {
                negated: false,
                ranges: theirs,
            },
        ) => mine
            .iter()
            .any(|(a, b)| theirs.iter().any(|(c, d)| a <= d && c <= b)),
        // A negated class beside another class: not worked out, so taken to meet.
        _ => true,
    }
}

#[cfg(test)]
mod tests;
