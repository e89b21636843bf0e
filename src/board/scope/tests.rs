//! The overlap rule, by examples and against a brute force over generated paths.

use proptest::prelude::*;

use super::*;

fn overlap(a: &str, b: &str) -> bool {
    let (a, b) = (Pattern::parse(a).unwrap(), Pattern::parse(b).unwrap());
    let there = a.overlaps(&b);
    assert_eq!(there, b.overlaps(&a), "the rule is symmetric: {a} and {b}");
    there
}

#[test]
fn a_directory_covers_what_is_under_it_and_globs_are_compared_segment_by_segment() {
    for (a, b) in [
        ("src/date/**", "src/date/parse.rs"),
        ("src/date/**", "src/date"),
        ("docs/", "docs/guide/intro.md"),
        ("src", "src/main.rs"),
        ("src/*.rs", "src/main.rs"),
        ("src/*.rs", "src/m*"),
        ("src/**/test_*.py", "src/a/b/test_x.py"),
        ("**/*.lock", "Cargo.lock"),
        ("**/Cargo.lock", "crates/x/Cargo.lock"),
        ("src/[a-c]*.rs", "src/b?.rs"),
        ("src/[!a]x", "src/[a]x"),
        (".", "anything/at/all"),
        ("a//b/./c", "a/b/c"),
        ("port:3000", "port:3000"),
    ] {
        assert!(overlap(a, b), "{a} and {b} overlap");
    }
    for (a, b) in [
        ("src/date/**", "src/time/**"),
        ("src/*.rs", "src/main.py"),
        ("src/*.rs", "tests/main.rs"),
        ("docs/", "doc/x"),
        ("src/a/b", "src/a/c"),
        ("src/[a-c]x", "src/[d-f]x"),
        ("src/\\*", "src/x"),
        ("port:3000", "port:3001"),
        ("port:3000", "src/**"),
        ("db:migrations", "db/migrations"),
        ("Cargo.lock", "crates/x/Cargo.lock"),
        ("docs/", "src/date/**"),
    ] {
        assert!(!overlap(a, b), "{a} and {b} do not overlap");
    }
}

#[test]
fn patterns_that_leave_the_workspace_or_are_empty_are_refused() {
    assert_eq!(Pattern::parse(""), Err(ScopeError::Empty));
    for absolute in ["/etc/passwd", "\\\\server\\share", "~/notes", "C:/x", "c:"] {
        assert!(
            matches!(Pattern::parse(absolute), Err(ScopeError::Absolute(_))),
            "{absolute}"
        );
    }
    for climbing in ["../other", "src/../../x", ".."] {
        assert!(
            matches!(Pattern::parse(climbing), Err(ScopeError::Climbs(_))),
            "{climbing}"
        );
    }
    assert!(matches!(
        Pattern::parse("src/[ab"),
        Err(ScopeError::OpenClass(_))
    ));
    let many: Vec<String> = (0..=MOST_PATTERNS).map(|n| format!("f{n}")).collect();
    assert_eq!(
        Pattern::parse_all(many.iter().map(String::as_str)),
        Err(ScopeError::TooMany(MOST_PATTERNS + 1))
    );
    let ok = Pattern::parse_all(["src/**", "port:3000"]).unwrap();
    assert_eq!(ok[0].as_str(), "src/**");
    assert_eq!(ok[1].to_string(), "port:3000");
}

#[test]
fn overlapping_names_each_pair_that_overlaps() {
    let mine = Pattern::parse_all(["src/date/**", "Cargo.lock"]).unwrap();
    let theirs = Pattern::parse_all([
        "docs/",
        "src/date/parse.rs",
        "crates/a/Cargo.lock",
        "Cargo.lock",
    ])
    .unwrap();
    let pairs: Vec<(&str, &str)> = overlapping(&mine, &theirs)
        .into_iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("src/date/**", "src/date/parse.rs"),
            ("Cargo.lock", "Cargo.lock")
        ]
    );
}

// The brute force: a path is touched under a pattern when the pattern matches it or a
// directory above it, matched here by plain recursion over the pattern's text, apart from
// the rule's own code.

/// Whether `glob` (one component's pattern, as written) matches `name`.
fn glob_matches(glob: &[char], name: &[char]) -> bool {
    match glob.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|k| glob_matches(&glob[1..], &name[k..])),
        Some('?') => !name.is_empty() && glob_matches(&glob[1..], &name[1..]),
        Some('[') => {
            let close = glob.iter().skip(2).position(|c| *c == ']').unwrap() + 2;
            let class = &glob[1..close];
            let (negated, class) = match class.first() {
                Some('!') => (true, &class[1..]),
                _ => (false, class),
            };
            let mut inside = false;
            let mut k = 0;
            while k < class.len() {
                if k + 2 < class.len() && class[k + 1] == '-' {
                    inside |= name
                        .first()
                        .is_some_and(|c| (class[k]..=class[k + 2]).contains(c));
                    k += 3;
                } else {
                    inside |= name.first() == Some(&class[k]);
                    k += 1;
                }
            }
            !name.is_empty() && inside != negated && glob_matches(&glob[close + 1..], &name[1..])
        }
        Some(c) => name.first() == Some(c) && glob_matches(&glob[1..], &name[1..]),
    }
}

/// Whether `segments` (the pattern's text split at `/`) matches exactly `path`.
fn path_matches(segments: &[&str], path: &[&str]) -> bool {
    match segments.first() {
        None => path.is_empty(),
        Some(&"**") => (0..=path.len()).any(|k| path_matches(&segments[1..], &path[k..])),
        Some(glob) => {
            let glob: Vec<char> = glob.chars().collect();
            path.first()
                .is_some_and(|name| glob_matches(&glob, &name.chars().collect::<Vec<_>>()))
                && path_matches(&segments[1..], &path[1..])
        }
    }
}

/// Whether `path` is touched under `pattern`: it, or a directory above it, matches.
fn touched(pattern: &str, path: &[&str]) -> bool {
    let trimmed = pattern.strip_suffix('/').unwrap_or(pattern);
    let segments: Vec<&str> = trimmed.split('/').collect();
    (0..=path.len()).any(|k| path_matches(&segments, &path[..k]))
}

const NAMES: [&str; 5] = ["a", "b", "ab", "ba", "aab"];

fn segment() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "b", "ab", "*", "?", "**", "a*", "*b", "[ab]", "[!a]", "?b", "[a-b]a*",
    ])
    .prop_map(str::to_string)
}

fn pattern() -> impl Strategy<Value = String> {
    (prop::collection::vec(segment(), 1..4), any::<bool>()).prop_map(|(segments, directory)| {
        let mut text = segments.join("/");
        if directory {
            text.push('/');
        }
        text
    })
}

/// Every path of one to four components over [`NAMES`].
fn paths() -> Vec<Vec<&'static str>> {
    let mut all: Vec<Vec<&str>> = vec![vec![]];
    let mut out = Vec::new();
    for _ in 0..4 {
        all = all
            .iter()
            .flat_map(|path| {
                NAMES.iter().map(move |name| {
                    let mut longer = path.clone();
                    longer.push(*name);
                    longer
                })
            })
            .collect();
        out.extend(all.iter().cloned());
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whenever some path is touched under both, the rule says they overlap; and where it
    /// says they do not, no path is.
    #[test]
    fn the_rule_never_misses_a_path_both_patterns_touch(a in pattern(), b in pattern()) {
        let both = paths().into_iter().find(|path| touched(&a, path) && touched(&b, path));
        let rule = Pattern::parse(&a).unwrap().overlaps(&Pattern::parse(&b).unwrap());
        if let Some(path) = both {
            prop_assert!(rule, "{a} and {b} both touch {}", path.join("/"));
        }
    }
}

#[test]
fn a_literal_names_its_path_alone() {
    for path in [
        "a[1].rs",
        "port:3000",
        "*.md",
        "~notes",
        "src/what?.rs",
        "C:",
        "back\\slash",
    ] {
        let named = Pattern::parse(&literal(path)).unwrap();
        assert!(named.overlaps(&named), "{path}");
        let other = Pattern::parse(&literal(&format!("{path}x"))).unwrap();
        assert!(!named.overlaps(&other), "{path} is not {path}x");
    }
    let star = Pattern::parse(&literal("*.md")).unwrap();
    assert!(!star.overlaps(&Pattern::parse("README.md").unwrap()));
    // Too long, in characters of several bytes: cut at a character, to its directory.
    let long = format!("{}/{}", "é".repeat(300), "ü".repeat(600));
    assert_eq!(literal(&long), format!("{}/", "é".repeat(300)));
    let resource = Pattern::parse(&literal("port:3000")).unwrap();
    assert!(!resource.overlaps(&Pattern::parse("port:3000").unwrap()));
    assert!(resource.overlaps(&Pattern::parse("port*").unwrap()));
}

#[test]
fn uncovered_paths_are_those_no_pattern_overlaps() {
    let scope = Pattern::parse_all(["src/date/**", "Cargo.lock", "port:3000"]).unwrap();
    let paths: Vec<String> = ["src/date/parse.rs", "src/lib.rs", "Cargo.lock", "README.md"]
        .map(String::from)
        .to_vec();
    assert_eq!(uncovered(&scope, &paths), ["src/lib.rs", "README.md"]);
    assert_eq!(
        uncovered(&[Pattern::everything()], &paths),
        Vec::<&str>::new()
    );
}
