//! Edits to the clients' JSON (and JSONC) files that keep every byte baton does not own:
//! comments, indentation, key order, trailing commas, the final newline. Built on
//! `jsonc-parser`'s concrete syntax tree, which re-renders only the nodes that change and
//! formats new ones the way the file around them is formatted.

use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstObject, CstRootNode};
use serde_json::Value;

use crate::client::ClientHooks;
use crate::error::{Error, Result, SetupError};

use super::command;

/// One parsed JSON file, changed in place.
pub(super) struct Document {
    root: CstRootNode,
    path: PathBuf,
}

/// A key path from the top of the document, e.g. `["hooks", "Stop"]`.
pub(super) type KeyPath = Vec<String>;

/// What an edit did to one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Added,
    Updated,
    Unchanged,
}

impl Document {
    /// Parses `text` (absent files count as empty); the top level must be an object.
    pub fn parse(path: &Path, text: Option<&str>) -> Result<Document> {
        let text = text.unwrap_or("");
        let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|error| {
            SetupError::NotJson {
                path: path.to_path_buf(),
                cause: error.to_string(),
            }
        })?;
        let document = Document {
            root,
            path: path.to_path_buf(),
        };
        if document.root.value().is_some() && document.root.object_value().is_none() {
            return Err(document.not_an_object("the top level"));
        }
        Ok(document)
    }

    pub fn text(&self) -> String {
        self.root.to_string()
    }

    /// True when the document holds nothing but an empty object (or nothing at all).
    pub fn is_empty(&self) -> bool {
        self.root
            .object_value()
            .is_none_or(|object| object.properties().is_empty())
    }

    fn not_an_object(&self, what: &str) -> Error {
        SetupError::NotJsonObject {
            path: self.path.clone(),
            what: what.to_string(),
        }
        .into()
    }

    fn top(&self) -> Result<CstObject> {
        self.root
            .object_value_or_create()
            .ok_or_else(|| self.not_an_object("the top level"))
    }

    /// The object at `keys`, if every step is there and is an object.
    fn object_at(&self, keys: &[&str]) -> Option<CstObject> {
        let mut object = self.root.object_value()?;
        for key in keys {
            object = object.object_value(key)?;
        }
        Some(object)
    }

    /// The object at `keys`, creating the missing steps; each created step is added to
    /// `created`.
    fn ensure_object(&self, keys: &[&str], created: &mut Vec<KeyPath>) -> Result<CstObject> {
        let mut object = self.top()?;
        for (depth, key) in keys.iter().enumerate() {
            let existed = object.get(key).is_some();
            object = object
                .object_value_or_create(key)
                .ok_or_else(|| self.not_an_object(&format!("`{}`", keys[..=depth].join("."))))?;
            if !existed {
                created.push(key_path(&keys[..=depth]));
            }
        }
        Ok(object)
    }

    /// The value of `container.key`, if present.
    pub fn entry(&self, container: &str, key: &str) -> Option<Value> {
        self.object_at(&[container])?
            .get(key)?
            .value()?
            .to_serde_value()
    }

    /// Sets `container.key` to `value`, adding the container if needed.
    pub fn set_entry(
        &self,
        container: &str,
        key: &str,
        value: CstInputValue,
        created: &mut Vec<KeyPath>,
    ) -> Result<Outcome> {
        if self.entry(container, key).as_ref() == Some(&to_serde(&value)) {
            return Ok(Outcome::Unchanged);
        }
        let object = self.ensure_object(&[container], created)?;
        match object.get(key) {
            Some(property) => {
                property.set_value(value);
                Ok(Outcome::Updated)
            }
            None => {
                object.append(key, value);
                Ok(Outcome::Added)
            }
        }
    }

    /// Removes `container.key`; true when it was there.
    pub fn remove_entry(&self, container: &str, key: &str) -> bool {
        match self
            .object_at(&[container])
            .and_then(|object| object.get(key))
        {
            Some(property) => {
                property.remove();
                true
            }
            None => false,
        }
    }

    /// The hook events under `container` (`hooks`) that hold a baton hook command.
    pub fn baton_hook_events(&self, container: &str) -> Vec<String> {
        let Some(hooks) = self.object_at(&[container]) else {
            return Vec::new();
        };
        hooks
            .properties()
            .into_iter()
            .filter(|property| {
                property
                    .array_value()
                    .is_some_and(|groups| !baton_handlers(&groups).is_empty())
            })
            .filter_map(|property| property.decoded_name())
            .collect()
    }

    /// Makes `container.event` hold exactly one baton hook: `group` (a matcher group with
    /// one handler). Other hooks of the event are kept as they are.
    pub fn set_hook(
        &self,
        container: &str,
        event: &str,
        group: CstInputValue,
        created: &mut Vec<KeyPath>,
    ) -> Result<Outcome> {
        let wanted = to_serde(&group);
        let hooks = self.ensure_object(&[container], created)?;
        let existed = hooks.get(event).is_some();
        let groups = hooks
            .array_value_or_create(event)
            .ok_or_else(|| self.not_an_object(&format!("`{container}.{event}`")))?;
        if !existed {
            created.push(key_path(&[container, event]));
        }
        let ours = baton_handlers(&groups);
        if let [(group_index, _)] = ours.as_slice()
            && groups
                .elements()
                .get(*group_index)
                .and_then(|node| node.to_serde_value())
                .as_ref()
                == Some(&wanted)
        {
            return Ok(Outcome::Unchanged);
        }
        let outcome = if ours.is_empty() {
            Outcome::Added
        } else {
            Outcome::Updated
        };
        remove_handlers(&groups, &ours);
        groups.append(group);
        Ok(outcome)
    }

    /// Removes every baton hook under `container`, and the matcher groups left empty by it;
    /// returns the events it removed hooks from.
    pub fn remove_hooks(&self, container: &str) -> Vec<String> {
        let Some(hooks) = self.object_at(&[container]) else {
            return Vec::new();
        };
        let mut events = Vec::new();
        for property in hooks.properties() {
            let Some(groups) = property.array_value() else {
                continue;
            };
            let ours = baton_handlers(&groups);
            if ours.is_empty() {
                continue;
            }
            remove_handlers(&groups, &ours);
            events.extend(property.decoded_name());
        }
        events
    }

    /// Removes the value at `keys` if it is an empty object or array; true when it did.
    pub fn prune(&self, keys: &[String]) -> bool {
        let Some((last, parents)) = keys.split_last() else {
            return false;
        };
        let parents: Vec<&str> = parents.iter().map(String::as_str).collect();
        let Some(property) = self.object_at(&parents).and_then(|object| object.get(last)) else {
            return false;
        };
        let is_empty = match property.value().and_then(|value| value.to_serde_value()) {
            Some(Value::Object(map)) => map.is_empty(),
            Some(Value::Array(items)) => items.is_empty(),
            _ => false,
        };
        if is_empty {
            property.remove();
        }
        is_empty
    }
}

fn key_path(keys: &[&str]) -> KeyPath {
    keys.iter().map(|key| key.to_string()).collect()
}

/// The (group, handler) positions of baton's hook handlers in an event's matcher groups.
fn baton_handlers(groups: &CstArray) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    for (group_index, group) in groups.elements().iter().enumerate() {
        let Some(handlers) = group
            .as_object()
            .and_then(|group| group.array_value("hooks"))
        else {
            continue;
        };
        for (handler_index, handler) in handlers.elements().iter().enumerate() {
            let command = handler
                .as_object()
                .and_then(|handler| handler.get("command"))
                .and_then(|property| property.value())
                .and_then(|value| value.to_serde_value());
            if let Some(Value::String(command)) = command
                && command::is_baton_hook(&command)
            {
                found.push((group_index, handler_index));
            }
        }
    }
    found
}

/// Removes the given handlers, and each group they leave without handlers.
fn remove_handlers(groups: &CstArray, handlers: &[(usize, usize)]) {
    let elements = groups.elements();
    // Back to front, so removing one does not shift the positions of the others.
    for &(group_index, handler_index) in handlers.iter().rev() {
        let Some(group_handlers) = elements
            .get(group_index)
            .and_then(|group| group.as_object())
            .and_then(|group| group.array_value("hooks"))
        else {
            continue;
        };
        if let Some(handler) = group_handlers.elements().get(handler_index) {
            handler.clone().remove();
        }
        if group_handlers.elements().is_empty()
            && let Some(group) = elements.get(group_index)
        {
            group.clone().remove();
        }
    }
}

/// The value as `serde_json` sees it, to compare with what a file holds.
pub(super) fn to_serde(value: &CstInputValue) -> Value {
    match value {
        CstInputValue::Null => Value::Null,
        CstInputValue::Bool(flag) => Value::Bool(*flag),
        CstInputValue::Number(number) => serde_json::from_str(number).unwrap_or(Value::Null),
        CstInputValue::String(text) => Value::String(text.clone()),
        CstInputValue::Array(items) => Value::Array(items.iter().map(to_serde).collect()),
        CstInputValue::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, value)| (key.clone(), to_serde(value)))
                .collect(),
        ),
    }
}

/// Builds an object keeping the order its members are given in.
pub(super) fn object(members: Vec<(&str, CstInputValue)>) -> CstInputValue {
    CstInputValue::Object(
        members
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
    )
}

/// A matcher group holding one command hook: its type, its `name` where the client shows
/// one, the command, the `shell` for a client that lets a hook choose it, and the client's
/// timeout, in that order. With no `matcher` it runs for every source of the event; with
/// one (`Edit|Write`), for those tools alone.
pub(super) fn command_hook_group(
    matcher: Option<&str>,
    command: String,
    name: Option<String>,
    shell: Option<&str>,
    hooks: &ClientHooks,
) -> CstInputValue {
    let mut hook = vec![("type", "command".into())];
    if let Some(name) = name {
        hook.push(("name", name.into()));
    }
    hook.push(("command", command.into()));
    if let Some(shell) = shell {
        hook.push(("shell", shell.into()));
    }
    hook.push(("timeout", hooks.timeout.in_client_unit().into()));
    let mut group = Vec::new();
    if let Some(matcher) = matcher {
        group.push(("matcher", matcher.into()));
    }
    group.push(("hooks", CstInputValue::Array(vec![object(hook)])));
    object(group)
}

pub(super) fn strings(items: &[String]) -> CstInputValue {
    CstInputValue::Array(
        items
            .iter()
            .map(|item| CstInputValue::String(item.clone()))
            .collect(),
    )
}

/// An object of strings, e.g. a server's environment.
pub(super) fn string_map(pairs: Vec<(String, String)>) -> CstInputValue {
    CstInputValue::Object(
        pairs
            .into_iter()
            .map(|(key, value)| (key, CstInputValue::String(value)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonc_parser::json;

    fn hook_group(command: &str) -> CstInputValue {
        object(vec![(
            "hooks",
            CstInputValue::Array(vec![object(vec![
                ("type", "command".into()),
                ("command", command.into()),
                ("timeout", 10u64.into()),
            ])]),
        )])
    }

    const BATON_STOP: &str = "/opt/bin/baton --as claude hook stop --client claude";

    #[test]
    fn entry_round_trip_keeps_comments_tabs_and_trailing_commas() {
        let original =
            "{\n\t// mine\n\t\"mcpServers\": {\n\t\t\"other\": {\"command\": \"x\"},\n\t},\n}\n";
        let path = Path::new("settings.json");
        let document = Document::parse(path, Some(original)).unwrap();
        let mut created = Vec::new();
        let value = json!({"command": "/opt/bin/baton", "args": ["mcp"]});
        assert_eq!(
            document
                .set_entry("mcpServers", "baton", value.clone(), &mut created)
                .unwrap(),
            Outcome::Added
        );
        assert!(created.is_empty());
        let edited = document.text();
        assert!(edited.contains("\t// mine\n"), "{edited}");
        assert!(
            edited.contains("\t\t\"baton\": {\n\t\t\t\"command\""),
            "{edited}"
        );

        let again = Document::parse(path, Some(&edited)).unwrap();
        assert_eq!(
            again
                .set_entry("mcpServers", "baton", value, &mut created)
                .unwrap(),
            Outcome::Unchanged
        );
        assert!(again.remove_entry("mcpServers", "baton"));
        assert_eq!(again.text(), original);
    }

    #[test]
    fn hooks_are_added_once_replaced_when_stale_and_removed_with_their_groups() {
        let original = r#"{
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ]
  }
}"#;
        let path = Path::new("settings.json");
        let document = Document::parse(path, Some(original)).unwrap();
        let mut created = Vec::new();
        let old = "/old/baton --as claude hook stop --client claude";
        assert_eq!(
            document
                .set_hook("hooks", "Stop", hook_group(old), &mut created)
                .unwrap(),
            Outcome::Added
        );
        assert_eq!(
            document
                .set_hook("hooks", "Stop", hook_group(BATON_STOP), &mut created)
                .unwrap(),
            Outcome::Updated
        );
        assert_eq!(
            document
                .set_hook("hooks", "Stop", hook_group(BATON_STOP), &mut created)
                .unwrap(),
            Outcome::Unchanged
        );
        let text = document.text();
        assert!(!text.contains("/old/baton"), "{text}");
        assert_eq!(text.matches("hook stop").count(), 1, "{text}");
        assert!(text.contains("notify-send done"));
        assert_eq!(document.baton_hook_events("hooks"), vec!["Stop"]);

        assert_eq!(document.remove_hooks("hooks"), vec!["Stop"]);
        assert_eq!(document.text(), original);
    }

    #[test]
    fn containers_setup_created_are_pruned_when_empty() {
        let path = Path::new("settings.json");
        let document = Document::parse(path, Some("{\n  \"theme\": \"dark\"\n}\n")).unwrap();
        let mut created = Vec::new();
        document
            .set_hook(
                "hooks",
                "SessionStart",
                hook_group(BATON_STOP),
                &mut created,
            )
            .unwrap();
        assert_eq!(
            created,
            vec![
                vec!["hooks".to_string()],
                vec!["hooks".to_string(), "SessionStart".to_string()]
            ]
        );
        document.remove_hooks("hooks");
        assert!(document.prune(&created[1]));
        assert!(document.prune(&created[0]));
        assert_eq!(document.text(), "{\n  \"theme\": \"dark\"\n}\n");
    }

    #[test]
    fn refuses_what_it_cannot_edit_safely() {
        let path = Path::new("settings.json");
        assert!(Document::parse(path, Some("[1, 2]")).is_err());
        assert!(Document::parse(path, Some("{\"a\": ")).is_err());
        let document = Document::parse(path, Some("{\"mcpServers\": 3}")).unwrap();
        let error = document
            .set_entry("mcpServers", "baton", json!({}), &mut Vec::new())
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("`mcpServers` is not a JSON object")
        );
    }
}
