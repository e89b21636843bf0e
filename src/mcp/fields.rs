//! The fields an action changes (an edit's, from the table of actions) as arguments of its
//! tool: each one's schema, made from the kind of its value, and the [`Edits`] read from a
//! call, with the shapes `send` takes (lists as arrays, task numbers as `12` or `"T-12"`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::TaskNumber;
use crate::board::edit::{Edits, Field, FieldValue};
use crate::board::task::Priority;

/// The schema of `field` as a tool's argument.
pub fn schema(field: &Field) -> Value {
    let mut generator = schemars::SchemaGenerator::default();
    let mut schema = match field.value {
        FieldValue::Words | FieldValue::Text => serde_json::json!({ "type": "string" }),
        FieldValue::List => serde_json::json!({ "type": "array", "items": { "type": "string" } }),
        FieldValue::Ids => serde_json::json!({
            "type": "array",
            "items": TaskNumber::json_schema(&mut generator),
        }),
        FieldValue::Priority => Priority::json_schema(&mut generator).to_value(),
    };
    if let (Some(help), Value::Object(schema)) = (field.argument.tool_help, &mut schema) {
        schema.insert("description".into(), help.into());
    }
    schema
}

/// The edits of a call of a tool whose row changes `fields`, read from `arguments`.
pub fn edits(fields: &[Field], arguments: &Map<String, Value>) -> serde_json::Result<Edits> {
    let mut given = Map::new();
    for field in fields {
        let name = field.argument.name;
        let Some(value) = arguments.get(name) else {
            continue;
        };
        let value = match field.value {
            // Task numbers as a model writes them, as `Edits` reads them: numbers.
            FieldValue::Ids => Vec::<TaskNumber>::deserialize(value)?
                .into_iter()
                .map(|TaskNumber(id)| Value::from(id.0))
                .collect(),
            _ => value.clone(),
        };
        given.insert(name.to_string(), value);
    }
    Edits::deserialize(Value::Object(given))
}
