//! The README and the pages under docs/ link to each other by relative paths and heading
//! anchors: every such link must lead somewhere, so that moving a section cannot leave a
//! link to nothing. Each page of docs/ leads back to the README.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file of the repository (not the build's, git's or npm's).
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// `line` without its code spans, where `](…)` is no link.
fn without_code(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}

/// The targets of the inline links of `text`: `[words](target)`.
fn links(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            targets.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// GitHub's anchor of a heading: lowercase, punctuation dropped but `-` and `_`, each
/// space a `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of `text`, a repeated one numbered as GitHub numbers it.
fn anchors(text: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    for line in prose(text) {
        let Some(heading) = line
            .strip_prefix('#')
            .map(|rest| rest.trim_start_matches('#'))
            .filter(|rest| rest.starts_with(' '))
        else {
            continue;
        };
        // A link in a heading counts by its words.
        let mut words = String::new();
        let mut rest = heading.trim();
        while let Some(at) = rest.find("](") {
            words.push_str(&rest[..at]);
            rest = rest[at..].split_once(')').map_or("", |(_, after)| after);
        }
        words.push_str(rest);
        let base = slug(words.replace(['[', ']'], "").trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while found.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        found.insert(anchor);
    }
    found
}

#[test]
fn every_relative_link_of_the_docs_leads_somewhere() {
    let mut files = Vec::new();
    markdown_files(&root(), &mut files);
    assert!(files.iter().any(|file| file.ends_with("docs/a2a.md")));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let linked = match path {
                "" => file.clone(),
                path => file.parent().unwrap().join(path),
            };
            checked += 1;
            let place = file.strip_prefix(root()).unwrap().display();
            if !linked.exists() {
                broken.push(format!("{place}: {target}: no such file"));
                continue;
            }
            if fragment.is_empty() {
                continue;
            }
            let anchors = match linked.is_file() {
                true => anchors(&fs::read_to_string(&linked).unwrap()),
                false => HashSet::new(),
            };
            if !anchors.contains(fragment) {
                broken.push(format!("{place}: {target}: no heading with that anchor"));
            }
        }
    }
    assert!(checked > 50, "the links were found: {checked}");
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_page_of_docs_leads_back_to_the_readme() {
    let mut pages = Vec::new();
    markdown_files(&root().join("docs"), &mut pages);
    for page in pages {
        let text = fs::read_to_string(&page).unwrap();
        assert!(
            links(&text).iter().any(|target| target == "../README.md"),
            "{} has no link back to the README",
            page.display()
        );
    }
}

#[test]
fn the_readme_stays_a_five_minute_read() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    // About 300 lines: the tour and a paragraph per capability; the rest is in docs/.
    assert!(lines <= 320, "the README has {lines} lines");
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let text = "# baton\n## On more than one machine: `BATON_URL`\n## The commit guard: `baton \
                setup --git`\n```\n## not a heading\n```\n## Doctor\n## Doctor\n";
    let found = anchors(text);
    for anchor in [
        "baton",
        "on-more-than-one-machine-baton_url",
        "the-commit-guard-baton-setup---git",
        "doctor",
        "doctor-1",
    ] {
        assert!(found.contains(anchor), "{anchor}: {found:?}");
    }
    assert!(!found.contains("not-a-heading"));
    assert_eq!(
        links("[a](b.md#c) `[no](link)` [d](../e.md)"),
        ["b.md#c", "../e.md"]
    );
}
