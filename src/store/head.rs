//! A task's head (the fields a board is sorted, filtered and routed by) as both stores read
//! it from a task's JSON text: the fields of a stored task by name ([`Field`]), and
//! [`HeadFields`], which reads the head and checks the type of every other field. The file
//! store's strict reader reads a board's tasks with it, its line reader knows the same
//! fields, and PostgreSQL reads each task's row with [`head_of_text`].

use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::board::task::{Head, Priority, Status, TaskId};
use crate::time::Timestamp;

/// One task's head from its JSON text (a task as a database row keeps it), its other
/// fields' types checked as a board file's tasks are ([`HeadFields`]).
pub fn head_of_text(text: &str) -> Result<Head, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let head = (&mut deserializer).deserialize_map(HeadFields)?;
    deserializer.end()?;
    Ok(head)
}

/// The value of a field that may be given once, `seen` telling whether it was.
pub fn once<'text, T: Deserialize<'text>, A: MapAccess<'text>>(
    seen: &Option<T>,
    key: &str,
    map: &mut A,
) -> Result<T, A::Error> {
    match seen {
        Some(_) => Err(duplicate(key)),
        None => map.next_value(),
    }
}

pub fn duplicate<E: de::Error>(key: &str) -> E {
    E::custom(format_args!("duplicate field `{key}`"))
}

/// Reads one task's head, and checks the type of each of its other fields, so that a task
/// decoded later fails only on damage deep inside a list. The fields are the line reader's
/// ([`Field`]), so both readers know the same ones.
pub struct HeadFields;

impl<'text> Visitor<'text> for HeadFields {
    type Value = Head;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a task")
    }

    fn visit_map<A: MapAccess<'text>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head::unread(Arc::from(""));
        let mut seen = 0u32;
        while let Some(key) = map.next_key::<String>()? {
            let field = Field::named(key.as_bytes());
            if seen & field.bit() != 0 {
                return Err(duplicate(&key));
            }
            seen |= field.bit();
            match field {
                Field::Id => head.id = TaskId(map.next_value()?),
                Field::Status => {
                    let status = map.next_value::<String>()?;
                    head.status = Status::ALL[named(&key, &status, &Status::NAMES)?];
                }
                Field::Priority => {
                    let priority = map.next_value::<String>()?;
                    head.priority = Priority::ALL[named(&key, &priority, &Priority::NAMES)?];
                }
                Field::From => head.from = Arc::from(map.next_value::<String>()?),
                Field::To => head.to = Arc::from(map.next_value::<String>()?),
                Field::Reviewer => {
                    head.reviewer = map.next_value::<Option<String>>()?.map(Arc::from);
                }
                Field::After => {
                    let after = map.next_value::<Vec<u64>>()?;
                    head.after = after.into_iter().map(TaskId).collect();
                }
                Field::CreatedAt => head.created_at = map.next_value()?,
                Field::UpdatedAt => head.updated_at = map.next_value()?,
                Field::LeaseExpiresAt => head.lease_expires_at = map.next_value()?,
                Field::Touches => head.touches = map.next_value()?,
                Field::ClaimedAt => drop(map.next_value::<Option<Timestamp>>()?),
                Field::Subject | Field::Body => drop(map.next_value::<String>()?),
                Field::Skill | Field::Result => drop(map.next_value::<Option<String>>()?),
                Field::Review => drop(map.next_value::<bool>()?),
                // A nested record, checked when the task is decoded.
                Field::Delivery | Field::Imported => {
                    map.next_value::<Option<IgnoredAny>>()?;
                }
                // Lists, checked item by item when the task is decoded.
                Field::Files | Field::Thread | Field::Labels => {
                    drop(map.next_value::<Vec<IgnoredAny>>()?)
                }
                // Not a field baton knows: stepped over, and it may repeat (as serde allows).
                Field::Unknown => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        match Field::missing(seen) {
            Some(field) => Err(de::Error::missing_field(field)),
            None => Ok(head),
        }
    }
}

/// The place of `value` among `choices`, the names a field may hold, spelled exactly.
pub fn named<E: de::Error>(field: &str, value: &str, choices: &[&str]) -> Result<usize, E> {
    choices
        .iter()
        .position(|choice| *choice == value)
        .ok_or_else(|| {
            E::custom(format_args!(
                "`{field}` is `{value}`, expected one of {}",
                choices.join(", ")
            ))
        })
}

/// The fields of a stored task (both readers of a board know them by this).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Id,
    Subject,
    Body,
    Files,
    From,
    To,
    Reviewer,
    Status,
    Priority,
    After,
    Skill,
    Review,
    CreatedAt,
    UpdatedAt,
    ClaimedAt,
    LeaseExpiresAt,
    Result,
    Thread,
    Delivery,
    Imported,
    Touches,
    Labels,
    /// Not a field baton knows: stepped over, and it may repeat (serde ignores it too).
    Unknown,
}

impl Field {
    pub fn named(name: &[u8]) -> Field {
        match name {
            b"id" => Field::Id,
            b"subject" => Field::Subject,
            b"body" => Field::Body,
            b"files" => Field::Files,
            b"from" => Field::From,
            b"to" => Field::To,
            b"reviewer" => Field::Reviewer,
            b"status" => Field::Status,
            b"priority" => Field::Priority,
            b"after" => Field::After,
            b"skill" => Field::Skill,
            b"review" => Field::Review,
            b"created_at" => Field::CreatedAt,
            b"updated_at" => Field::UpdatedAt,
            b"claimed_at" => Field::ClaimedAt,
            b"lease_expires_at" => Field::LeaseExpiresAt,
            b"result" => Field::Result,
            b"thread" => Field::Thread,
            b"delivery" => Field::Delivery,
            b"imported" => Field::Imported,
            b"touches" => Field::Touches,
            b"labels" => Field::Labels,
            _ => Field::Unknown,
        }
    }

    /// The bit that marks the field seen; none for unknown fields.
    pub const fn bit(self) -> u32 {
        match self {
            Field::Unknown => 0,
            known => 1 << known as u32,
        }
    }

    /// The first field a task must have that is not among `seen`, by its name.
    pub fn missing(seen: u32) -> Option<&'static str> {
        // A task read whole has them all: one test, once a task.
        if seen & REQUIRED_BITS == REQUIRED_BITS {
            return None;
        }
        REQUIRED
            .into_iter()
            .find(|(field, _)| seen & field.bit() == 0)
            .map(|(_, name)| name)
    }
}

/// The fields a task must have, with their names.
const REQUIRED: [(Field, &str); 7] = [
    (Field::Id, "id"),
    (Field::Subject, "subject"),
    (Field::From, "from"),
    (Field::To, "to"),
    (Field::Status, "status"),
    (Field::CreatedAt, "created_at"),
    (Field::UpdatedAt, "updated_at"),
];

/// The bits of [`REQUIRED`].
const REQUIRED_BITS: u32 = {
    let mut bits = 0;
    let mut at = 0;
    while at < REQUIRED.len() {
        bits |= REQUIRED[at].0.bit();
        at += 1;
    }
    bits
};
