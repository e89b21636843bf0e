//! The library's floors (docs/architecture.md): a module imports only from its own floor or
//! the floors below it, and the top-level modules import each other in no circle. Read from
//! the source, file by file: every `crate::<module>` (and `super::` that climbs to the crate)
//! the library's code names, wherever it stands — the code built for tests alone (an item
//! under `#[cfg(test)]`, a file declared under it) left out, and nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of the library and its floor, lowest first: the model (`board`)
/// imports only the base, the store lays out the model's values, and the domains reach the
/// hub's state through the store. `error` (the crate's error, over every domain's) sits
/// with the domains.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "time", "names", "text", "process", "client", "secret", "plural", "file", "home",
            "setting", "git", "metrics",
        ],
    ),
    ("model", &["board"]),
    ("store", &["store"]),
    (
        "domains",
        &[
            "activity", "alert", "mail", "registry", "project", "wake", "desktop", "setup",
            "doctor", "tokens", "error", "import", "worktree",
        ],
    ),
    ("session", &["session", "json_api", "remote"]),
    ("faces", &["mcp", "hook", "serve"]),
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// One file of the library: where it is under src/, and its text.
#[derive(Clone)]
struct SourceFile {
    /// Relative to src/, with `/` between the parts: `store/postgres/mod.rs`.
    path: String,
    text: String,
}

impl SourceFile {
    /// The top-level module the file belongs to: `store` for `store/postgres/mod.rs`.
    fn module(&self) -> &str {
        let first = self.path.split('/').next().unwrap_or("");
        first.strip_suffix(".rs").unwrap_or(first)
    }

    /// How many modules deep the file's code stands: 1 for `wake.rs` and `store/mod.rs`, 2
    /// for `store/tail.rs`; so many `super::` climb to the crate.
    fn depth(&self) -> usize {
        let parts: Vec<&str> = self.path.split('/').collect();
        if parts.last() == Some(&"mod.rs") {
            parts.len() - 1
        } else {
            parts.len()
        }
    }

    /// The files a `mod name;` in this file declares (either spelling).
    fn child(&self, name: &str) -> [String; 2] {
        let dir = match self.path.strip_suffix("mod.rs") {
            Some(dir) => dir.to_string(),
            None => format!("{}/", self.path.strip_suffix(".rs").unwrap_or(&self.path)),
        };
        [format!("{dir}{name}.rs"), format!("{dir}{name}/mod.rs")]
    }
}

/// A piece of code, comments and the insides of strings and characters gone.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    /// `::`
    Colons,
    Open(char),
    Close(char),
    Mark(char),
}

struct Lexed {
    token: Token,
    line: usize,
}

/// The tokens of a file, each with its line. Only what the floors need is told apart: a
/// brace inside a string, a character or a comment must not count as one, nor a `crate::`.
fn lex(text: &str) -> Vec<Lexed> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    // Skips a quoted run starting after its opening `"`, escapes honoured, to past the close.
    let skip_quoted = |mut i: usize, line: &mut usize| {
        while i < chars.len() && chars[i] != '"' {
            if chars[i] == '\\' {
                i += 1;
            }
            if at(i) == '\n' {
                *line += 1;
            }
            i += 1;
        }
        i + 1
    };
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_quoted(i + 1, &mut line);
            tokens.push(Lexed {
                token: Token::Word("\"\"".into()),
                line: start_line,
            });
        } else if c == '\'' {
            // A character ('a', '\n', '{') or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                tokens.push(Lexed {
                    token: Token::Mark('\''),
                    line,
                });
                i += 1;
            }
        } else if is_word(c) {
            // A raw string (r"…", r#"…"#, br"…"), a byte string or byte, or a word.
            let mut j = i;
            if matches!(c, 'b' | 'c') {
                j += 1;
            }
            if at(j) == 'r'
                && (at(j + 1) == '"' || (at(j + 1) == '#' && matches!(at(j + 2), '"' | '#')))
            {
                let mut hashes = 0;
                j += 1;
                while at(j) == '#' {
                    hashes += 1;
                    j += 1;
                }
                j += 1;
                let close: String = std::iter::once('"')
                    .chain(std::iter::repeat_n('#', hashes))
                    .collect();
                let rest: String = chars[j..].iter().collect();
                let end = rest.find(&close).map_or(chars.len(), |end| {
                    j + rest[..end].chars().count() + close.chars().count()
                });
                line += chars[i..end].iter().filter(|c| **c == '\n').count();
                i = end;
                tokens.push(Lexed {
                    token: Token::Word("\"\"".into()),
                    line: start_line,
                });
            } else if matches!(c, 'b' | 'c') && at(i + 1) == '"' {
                i = skip_quoted(i + 2, &mut line);
                tokens.push(Lexed {
                    token: Token::Word("\"\"".into()),
                    line: start_line,
                });
            } else if c == 'b' && at(i + 1) == '\'' {
                i += 2;
                if at(i) == '\\' {
                    i += 1;
                }
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else {
                // `r#type` is the word `type`.
                if c == 'r' && at(i + 1) == '#' && is_word(at(i + 2)) {
                    i += 2;
                }
                let start = i;
                while i < chars.len() && is_word(chars[i]) {
                    i += 1;
                }
                tokens.push(Lexed {
                    token: Token::Word(chars[start..i].iter().collect()),
                    line,
                });
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push(Lexed {
                token: Token::Colons,
                line,
            });
            i += 2;
        } else {
            let token = match c {
                '(' | '[' | '{' => Token::Open(c),
                ')' | ']' | '}' => Token::Close(c),
                _ => Token::Mark(c),
            };
            tokens.push(Lexed { token, line });
            i += 1;
        }
    }
    tokens
}

fn is_word(token: Option<&Lexed>, word: &str) -> bool {
    matches!(token, Some(Lexed { token: Token::Word(w), .. }) if w == word)
}

fn is(token: Option<&Lexed>, wanted: &Token) -> bool {
    token.is_some_and(|lexed| lexed.token == *wanted)
}

/// Where the bracket opened at `open` closes (the index of its closer), or the end.
fn closing(tokens: &[Lexed], open: usize) -> usize {
    let mut depth = 0;
    for (i, lexed) in tokens.iter().enumerate().skip(open) {
        match lexed.token {
            Token::Open(_) => depth += 1,
            Token::Close(_) => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// Whether a `cfg` predicate holds only when testing: `test`, or `all(…)` with one such.
fn needs_test(predicate: &[Lexed]) -> bool {
    match predicate.first().map(|lexed| &lexed.token) {
        Some(Token::Word(word)) if word == "test" => predicate.len() == 1,
        Some(Token::Word(word)) if word == "all" || word == "any" => {
            let end = closing(predicate, 1);
            let mut parts = Vec::new();
            let mut start = 2;
            let mut depth = 0;
            for (i, lexed) in predicate.iter().enumerate().take(end).skip(2) {
                match lexed.token {
                    Token::Open(_) => depth += 1,
                    Token::Close(_) => depth -= 1,
                    Token::Mark(',') if depth == 0 => {
                        parts.push(&predicate[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if start < end {
                parts.push(&predicate[start..end]);
            }
            if word == "all" {
                parts.iter().any(|part| needs_test(part))
            } else {
                !parts.is_empty() && parts.iter().all(|part| needs_test(part))
            }
        }
        _ => false,
    }
}

/// If an attribute starts at `i` (`#[…]` or `#![…]`): where it ends (past its `]`), whether
/// it is inner, and whether it is a `cfg` that holds only in tests.
fn attribute(tokens: &[Lexed], i: usize) -> Option<(usize, bool, bool)> {
    if !is(tokens.get(i), &Token::Mark('#')) {
        return None;
    }
    let inner = is(tokens.get(i + 1), &Token::Mark('!'));
    let open = if inner { i + 2 } else { i + 1 };
    if !is(tokens.get(open), &Token::Open('[')) {
        return None;
    }
    let close = closing(tokens, open);
    let for_tests = is_word(tokens.get(open + 1), "cfg")
        && is(tokens.get(open + 2), &Token::Open('('))
        && needs_test(&tokens[open + 3..closing(tokens, open + 2).min(close)]);
    Some((close + 1, inner, for_tests))
}

/// Where the item (or field, arm, statement) starting at `i` ends: past its `;` or `,`, or
/// past the brace that closes its body, or at the closer of what holds it.
fn item_end(tokens: &[Lexed], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i].token {
            Token::Open(_) => depth += 1,
            Token::Close(closer) => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 && closer == '}' {
                    return i + 1;
                }
            }
            Token::Mark(';' | ',') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// What reading one file found.
#[derive(Default)]
struct Reading {
    /// The top-level names its code reaches by `crate::` (or `super::` up to the crate).
    named: BTreeSet<String>,
    /// Modules declared under a test-only `cfg` (`#[cfg(test)] mod testing;`).
    test_children: Vec<String>,
    /// The lines of test-only code left out.
    lines_left_out: BTreeSet<usize>,
}

/// Reads a file's code: what it names at the crate's top, what it leaves out as tests.
fn read(file: &SourceFile) -> Reading {
    let tokens = lex(&file.text);
    let mut reading = Reading::default();
    // The brackets open at this point, each saying whether it is an inline module's body.
    let mut open: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some((end, inner, for_tests)) = attribute(&tokens, i) {
            if !for_tests {
                i = end;
                continue;
            }
            // Test-only: the rest of what holds an inner attribute, else the next item with
            // its other attributes.
            let mut last = if inner {
                if open.is_empty() {
                    tokens.len()
                } else {
                    item_end(&tokens, end)
                }
            } else {
                let mut item = end;
                while let Some((after, _, _)) = attribute(&tokens, item) {
                    item = after;
                }
                let mut word = item;
                if is_word(tokens.get(word), "pub") {
                    word += 1;
                    if is(tokens.get(word), &Token::Open('(')) {
                        word = closing(&tokens, word) + 1;
                    }
                }
                if is_word(tokens.get(word), "mod")
                    && is(tokens.get(word + 2), &Token::Mark(';'))
                    && let Some(Token::Word(name)) = tokens.get(word + 1).map(|t| &t.token)
                {
                    reading.test_children.push(name.clone());
                }
                item_end(&tokens, item)
            };
            last = last.min(tokens.len());
            let first_line = tokens[i].line;
            let last_line = tokens[last.max(i + 1) - 1].line;
            reading.lines_left_out.extend(first_line..=last_line);
            i = last;
            continue;
        }
        match &tokens[i].token {
            Token::Word(word)
                if word == "mod"
                    && matches!(tokens.get(i + 1).map(|t| &t.token), Some(Token::Word(_)))
                    && is(tokens.get(i + 2), &Token::Open('{')) =>
            {
                open.push(true);
                i += 3;
                continue;
            }
            Token::Word(word) if word == "crate" && is(tokens.get(i + 1), &Token::Colons) => {
                reading.named.extend(top_names(&tokens, i + 2));
            }
            Token::Word(word)
                if word == "super" && !(i > 0 && is(tokens.get(i - 1), &Token::Colons)) =>
            {
                let mut climbs = 0;
                let mut j = i;
                while is_word(tokens.get(j), "super") && is(tokens.get(j + 1), &Token::Colons) {
                    climbs += 1;
                    j += 2;
                }
                let depth = file.depth() + open.iter().filter(|module| **module).count();
                if climbs > 0 && climbs == depth {
                    reading.named.extend(top_names(&tokens, j));
                }
            }
            Token::Open(_) => open.push(false),
            Token::Close(_) => {
                open.pop();
            }
            _ => {}
        }
        i += 1;
    }
    reading
}

/// The top-level names a path names from `i` on, just past `crate::`: one (`store::…`), or
/// each of a group (`{store::…, time, board::{…}}`).
fn top_names(tokens: &[Lexed], i: usize) -> Vec<String> {
    match tokens.get(i).map(|lexed| &lexed.token) {
        Some(Token::Word(name)) => vec![name.clone()],
        Some(Token::Open('{')) => {
            let end = closing(tokens, i);
            let mut names = Vec::new();
            let mut depth = 0;
            let mut at_start = true;
            for lexed in &tokens[i + 1..end] {
                match &lexed.token {
                    Token::Open(_) => {
                        // `crate::{{a, b}}` groups again at the top.
                        at_start = at_start && depth == 0;
                        depth += 1;
                        continue;
                    }
                    Token::Close(_) => depth -= 1,
                    Token::Mark(',') => at_start = true,
                    Token::Word(name) if at_start && name != "self" => {
                        names.push(name.clone());
                        at_start = false;
                    }
                    _ => at_start = false,
                }
            }
            names
        }
        _ => Vec::new(),
    }
}

/// The library's files as written in src/ (cli/ belongs to the binary, the top face, and
/// may import anything; lib.rs is the module map).
fn library_files() -> Vec<SourceFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<SourceFile> = walk(&src)
        .into_iter()
        .map(|path| SourceFile {
            text: std::fs::read_to_string(&path).unwrap(),
            path: path
                .strip_prefix(&src)
                .unwrap()
                .components()
                .map(|part| part.as_os_str().to_str().unwrap())
                .collect::<Vec<_>>()
                .join("/"),
        })
        .filter(|file| !["lib", "main", "cli"].contains(&file.module()))
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files
}

/// What the floors read of the library: per top-level module, the names its code reaches,
/// and the lines read of the lines written.
#[derive(Default)]
struct Library {
    imports: BTreeMap<String, BTreeSet<String>>,
    lines: BTreeMap<String, (usize, usize)>,
}

fn read_library(files: &[SourceFile]) -> Library {
    let readings: Vec<Reading> = files.iter().map(read).collect();
    // A file under a test-only `mod name;` is test code, and so is everything under it.
    let mut for_tests: Vec<String> = Vec::new();
    for (file, reading) in files.iter().zip(&readings) {
        for child in &reading.test_children {
            for path in file.child(child) {
                for_tests.push(
                    path.trim_end_matches("mod.rs")
                        .trim_end_matches(".rs")
                        .into(),
                );
            }
        }
    }
    let mut library = Library::default();
    for (file, reading) in files.iter().zip(readings) {
        let module = file.module().to_string();
        let written = file.text.lines().count();
        let stem = file.path.trim_end_matches("mod.rs").trim_end_matches(".rs");
        let is_test = for_tests
            .iter()
            .any(|test| stem == test.trim_end_matches('/') || stem.starts_with(test.as_str()));
        let lines = library.lines.entry(module.clone()).or_default();
        lines.1 += written;
        let named = library.imports.entry(module.clone()).or_default();
        if is_test {
            continue;
        }
        lines.0 += written - reading.lines_left_out.len().min(written);
        named.extend(reading.named.into_iter().filter(|name| *name != module));
    }
    library
}

/// What breaks the floors: a module no floor holds, a name on no floor, any import up a
/// floor, and every circle among the top-level modules.
fn violations(files: &[SourceFile]) -> Vec<String> {
    let graph = read_library(files).imports;
    let mut found = Vec::new();
    for (module, named) in &graph {
        let Some(own) = floor_of(module) else {
            found.push(format!("`{module}` is on no floor"));
            continue;
        };
        for other in named {
            let Some(theirs) = floor_of(other) else {
                found.push(format!("`{module}` names `crate::{other}`, on no floor"));
                continue;
            };
            if theirs > own {
                found.push(format!(
                    "`{module}` ({}) imports `{other}` ({})",
                    FLOORS[own].0, FLOORS[theirs].0
                ));
            }
        }
    }
    // A circle: a module that reaches itself through the modules it imports.
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = graph[start].iter().collect();
        while let Some(next) = todo.pop() {
            if next == start {
                found.push(format!("`{start}` imports itself through a circle"));
                break;
            }
            if seen.insert(next.clone()) {
                todo.extend(graph.get(next).into_iter().flatten());
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_higher_floor_and_none_import_in_a_circle() {
    let files = library_files();
    assert!(files.iter().any(|file| file.path == "store/mod.rs"));
    assert_eq!(violations(&files), Vec::<String>::new());
}

/// The library with `code` put into one file by `edit`.
fn edited(path: &str, edit: impl Fn(&str) -> String) -> Vec<SourceFile> {
    let mut files = library_files();
    let file = files
        .iter_mut()
        .find(|file| file.path == path)
        .unwrap_or_else(|| panic!("no src/{path}"));
    file.text = edit(&file.text);
    files
}

fn assert_found(files: &[SourceFile], wanted: &str) {
    let found = violations(files);
    assert!(
        found.iter().any(|one| one == wanted),
        "{wanted} in {found:?}"
    );
}

fn at_start(code: &'static str) -> impl Fn(&str) -> String {
    move |text| format!("{code}\n{text}")
}

fn at_end(code: &'static str) -> impl Fn(&str) -> String {
    move |text| format!("{text}\n{code}\n")
}

/// Just before the file's first test-only item.
fn before_tests(code: &'static str) -> impl Fn(&str) -> String {
    move |text| {
        let at = text.find("#[cfg(test)]").expect("a test module");
        format!("{}{code}\n{}", &text[..at], &text[at..])
    }
}

#[test]
fn an_upward_import_is_found_wherever_it_stands() {
    const BOARD_TO_STORE: &str = "`board` (model) imports `store` (store)";
    const STORE_TO_REGISTRY: &str = "`store` (store) imports `registry` (domains)";
    // At the start of a module's first file.
    assert_found(
        &edited("board/mod.rs", at_start("use crate::store::StoreError;")),
        BOARD_TO_STORE,
    );
    // In the module's last file, after every other file's tests.
    let last = library_files()
        .into_iter()
        .rfind(|file| file.module() == "store")
        .unwrap()
        .path;
    assert_found(
        &edited(&last, at_end("use crate::registry::AgentRecord;")),
        STORE_TO_REGISTRY,
    );
    // At the end of a file's own code, before its tests.
    assert_found(
        &edited(
            "store/versioned.rs",
            before_tests("fn late() { crate::registry::save(); }"),
        ),
        STORE_TO_REGISTRY,
    );
    // After a file's tests.
    assert_found(
        &edited(
            "store/versioned.rs",
            at_end("fn later() -> crate::registry::Agents { todo!() }"),
        ),
        STORE_TO_REGISTRY,
    );
    // After a test-only function that is not a module.
    assert_found(
        &edited(
            "board/task.rs",
            at_start("#[cfg(test)]\nfn helper() {}\nuse crate::store::StoreError;"),
        ),
        BOARD_TO_STORE,
    );
    // In a nested module.
    assert_found(
        &edited(
            "board/task.rs",
            at_end("mod inner {\n    pub mod deeper {\n        use crate::store::Store;\n    }\n}"),
        ),
        BOARD_TO_STORE,
    );
    // In a group, after a group.
    assert_found(
        &edited(
            "names.rs",
            at_start("use crate::{time::{self, Timestamp}, text, session::Session};"),
        ),
        "`names` (base) imports `session` (session)",
    );
    assert_found(
        &edited("names.rs", at_start("use crate::{{text, serve::Hub}};")),
        "`names` (base) imports `serve` (faces)",
    );
    // In an expression, and in a macro's arguments.
    assert_found(
        &edited(
            "store/versioned.rs",
            before_tests("fn f() -> usize { 1 + crate::serve::port() }"),
        ),
        "`store` (store) imports `serve` (faces)",
    );
    assert_found(
        &edited(
            "board/task.rs",
            before_tests("fn f() -> String { format!(\"{}\", crate::session::name()) }"),
        ),
        "`board` (model) imports `session` (session)",
    );
    // Through `super::` that climbs to the crate.
    assert_found(
        &edited(
            "store/postgres/address.rs",
            at_start("use super::super::super::registry::Agents;"),
        ),
        STORE_TO_REGISTRY,
    );
    // After a brace in a string, a character or a comment, which close nothing.
    assert_found(
        &edited(
            "board/task.rs",
            before_tests(
                "fn f() -> char { let _ = \"}\"; let _ = r#\"}\"#; /* } */ '}' }\n\
                 #[cfg(test)]\nfn g() {}\nuse crate::store::Store;",
            ),
        ),
        BOARD_TO_STORE,
    );
    // A root item the crate does not place on a floor.
    assert_found(
        &edited("board/task.rs", at_start("use crate::Error;")),
        "`board` names `crate::Error`, on no floor",
    );
}

#[test]
fn only_code_counts() {
    // Words in a comment or a string, and code for tests alone, import nothing.
    let files = edited("board/task.rs", |text| {
        format!(
            "// see crate::store::Store\nconst A: &str = \"crate::serve\";\n\
             #[cfg(all(test, unix))]\nmod more {{ use crate::store::Store; }}\n{text}"
        )
    });
    assert_eq!(violations(&files), Vec::<String>::new());
    // But `any(test, …)` builds without tests too.
    let files = edited("board/task.rs", |text| {
        format!("#[cfg(any(test, feature = \"x\"))]\nuse crate::store::Store;\n{text}")
    });
    assert_found(&files, "`board` (model) imports `store` (store)");
}

#[test]
fn a_circle_is_found() {
    let mut files = edited("wake/mod.rs", at_start("use crate::doctor;"));
    let doctor = files
        .iter_mut()
        .find(|file| file.path == "doctor/mod.rs")
        .unwrap();
    doctor.text.insert_str(0, "use crate::wake;\n");
    assert_found(&files, "`wake` imports itself through a circle");
}

#[test]
fn the_test_reads_all_but_the_tests() {
    // Printed with `--nocapture`: how much of each module the floors read.
    let library = read_library(&library_files());
    let (mut read, mut written) = (0, 0);
    for (module, (lines_read, lines_written)) in &library.lines {
        println!("{module}: {lines_read} of {lines_written} lines");
        read += lines_read;
        written += lines_written;
    }
    println!("library: {read} of {written} lines");
    // The store keeps most of its tests in files of their own; the rest is code.
    let (store_read, store_written) = library.lines["store"];
    assert!(
        store_read * 2 > store_written,
        "{store_read} of {store_written}"
    );
}
