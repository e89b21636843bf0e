//! Statements sent unprepared, for a command: a command uses most of its statements once, so
//! preparing each (a round trip to parse it, then one to run it) costs it a round trip a
//! statement that it never wins back. Sent with its parameters' types instead (the extended
//! protocol's unnamed statement: parse, bind and run together), a statement is one round
//! trip, as a kept one is for a hub ([`super::client::Client::sends_unprepared`]).
//!
//! The types are found from the parameters themselves: the first of the types baton's
//! statements use that the value's own encoding accepts. A value of a type not among them
//! leaves its statement prepared, as before.

use postgres::types::private::BytesMut;
use postgres::types::{ToSql, Type};

/// The types a parameter may be told as, in the order they are tried. Each Rust type accepts
/// one of them first: `&str`/`String` text, `i64` bigint, `i32` integer, `Vec<String>`
/// text[], `Vec<i64>` bigint[], `&[u8]`/`Vec<u8>` bytea, `bool`; an `Option` its inner one.
const TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::INT4,
    Type::INT2,
    Type::BOOL,
    Type::BYTEA,
    Type::FLOAT8,
    Type::TEXT_ARRAY,
    Type::INT8_ARRAY,
    Type::INT4_ARRAY,
    Type::TIMESTAMPTZ,
];

/// `params` each with its type, or `None` when one is of no type known here.
pub fn typed<'a>(params: &[&'a (dyn ToSql + Sync)]) -> Option<Vec<(&'a (dyn ToSql + Sync), Type)>> {
    let mut scratch = BytesMut::new();
    params
        .iter()
        .map(|param| {
            TYPES
                .iter()
                .find(|ty| {
                    scratch.clear();
                    // The check of the type comes before any encoding: a refusal costs nothing.
                    param.to_sql_checked(ty, &mut scratch).is_ok()
                })
                .map(|ty| (*param, ty.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_parameter_is_told_as_the_type_its_value_encodes_as() {
        let text = "a";
        let owned = String::from("b");
        let big = 7_i64;
        let small = 7_i32;
        let none: Option<String> = None;
        let some: Option<i64> = Some(1);
        let texts = vec![String::from("x")];
        let bigs = vec![1_i64];
        let bytes: &[u8] = b"\x00";
        let flag = true;
        let params: [&(dyn ToSql + Sync); 10] = [
            &text, &owned, &big, &small, &none, &some, &texts, &bigs, &bytes, &flag,
        ];
        let types: Vec<Type> = typed(&params)
            .unwrap()
            .into_iter()
            .map(|(_, ty)| ty)
            .collect();
        assert_eq!(
            types,
            [
                Type::TEXT,
                Type::TEXT,
                Type::INT8,
                Type::INT4,
                Type::TEXT,
                Type::INT8,
                Type::TEXT_ARRAY,
                Type::INT8_ARRAY,
                Type::BYTEA,
                Type::BOOL
            ]
        );
    }

    #[test]
    fn a_value_of_no_known_type_leaves_the_statement_prepared() {
        let unknown = std::net::IpAddr::from([127, 0, 0, 1]);
        assert!(typed(&[&unknown]).is_none());
    }
}
