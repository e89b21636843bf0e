//! The library's floors (docs/architecture.md): a module imports only from its own floor or
//! the floors below it, and the top-level modules import each other in no circle. Read from
//! the source: every `crate::<module>` a module names outside its test module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of the library and its floor, lowest first: the model (`board`)
/// imports only the base, the store lays out the model's values, and the domains reach the
/// hub's state through the store. `error` (the crate's error, over every domain's) sits
/// with the domains.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "time", "names", "text", "process", "client", "secret", "plural",
        ],
    ),
    ("model", &["board"]),
    ("store", &["store"]),
    (
        "domains",
        &[
            "activity", "alert", "archive", "mail", "registry", "project", "wake", "desktop",
            "setup", "doctor", "tokens", "error", "import",
        ],
    ),
    ("session", &["session", "wire", "remote"]),
    ("faces", &["mcp", "hook", "serve"]),
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The top-level modules each module's source names as `crate::<module>`, test modules left
/// out (they sit at the end of a file, after `#[cfg(test)]`).
fn imports(sources: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in sources {
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let named = found.entry(module.clone()).or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != *module {
                named.insert(name);
            }
        }
        // `use crate::{a, b::c}` names several at once.
        let mut rest = code;
        while let Some(at) = rest.find("crate::{") {
            rest = &rest[at + "crate::{".len()..];
            let mut depth = 1;
            let mut item = String::new();
            let mut at_start = true;
            for c in rest.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if depth == 1 && (c == ',' || c.is_whitespace()) {
                    at_start = true;
                    continue;
                }
                if at_start && depth == 1 {
                    item = c.to_string();
                    at_start = false;
                } else if !at_start && (c.is_ascii_alphanumeric() || c == '_') && !item.is_empty() {
                    item.push(c);
                } else if !item.is_empty() {
                    if item != *module {
                        named.insert(std::mem::take(&mut item));
                    }
                    item.clear();
                }
            }
            if !item.is_empty() && item != *module {
                named.insert(item);
            }
        }
    }
    found
}

/// What breaks the floors: a module no floor holds, any import up a floor,
/// and every circle among the top-level modules.
fn violations(sources: &BTreeMap<String, String>) -> Vec<String> {
    let graph = imports(sources);
    let mut found = Vec::new();
    for (module, named) in &graph {
        let Some(own) = floor_of(module) else {
            found.push(format!("`{module}` is on no floor"));
            continue;
        };
        for other in named {
            let Some(theirs) = floor_of(other) else {
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

/// The library's top-level modules as written in src/ (cli/ belongs to the binary, the top
/// face, and may import anything).
fn library_sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for entry in walk(&src) {
        let relative = entry.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap();
        let top = first.as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if ["lib", "main", "cli"].contains(&top) {
            continue;
        }
        let text = std::fs::read_to_string(&entry).unwrap();
        let joined = sources.entry(top.to_string()).or_default();
        joined.push_str(&text);
        joined.push('\n');
    }
    sources
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
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

#[test]
fn no_module_imports_a_higher_floor_and_none_import_in_a_circle() {
    let sources = library_sources();
    assert!(sources.contains_key("store") && sources.contains_key("board"));
    assert_eq!(violations(&sources), Vec::<String>::new());
}

#[test]
fn an_upward_import_or_a_circle_is_found() {
    let mut sources = library_sources();
    let board = sources.get_mut("board").unwrap();
    board.insert_str(0, "use crate::store::StoreError;\n");
    let found = violations(&sources);
    assert!(
        found.contains(&"`board` (model) imports `store` (store)".to_string()),
        "{found:?}"
    );
    let mut sources = library_sources();
    let store = sources.get_mut("store").unwrap();
    store.insert_str(0, "use crate::registry::AgentRecord;\n");
    let found = violations(&sources);
    assert!(
        found.contains(&"`store` (store) imports `registry` (domains)".to_string()),
        "{found:?}"
    );
    let mut sources = library_sources();
    let names = sources.get_mut("names").unwrap();
    names.insert_str(0, "use crate::{time, session::Session};\n");
    assert!(
        violations(&sources).contains(&"`names` (base) imports `session` (session)".to_string())
    );
    let mut sources = library_sources();
    sources
        .get_mut("archive")
        .unwrap()
        .insert_str(0, "use crate::doctor;\n");
    sources
        .get_mut("doctor")
        .unwrap()
        .insert_str(0, "use crate::archive;\n");
    let found = violations(&sources);
    assert!(
        found.contains(&"`archive` imports itself through a circle".to_string()),
        "{found:?}"
    );
}
