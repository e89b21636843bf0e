//! Counted nouns for people to read: "1 task", "3 tasks", "1 task is", "2 tasks are".

/// `count` and `noun`, with an `s` unless the count is one: "1 task", "0 tasks", "3 tasks".
/// For a noun whose plural is another word, [`count_either`].
pub fn count(count: usize, noun: &str) -> String {
    format!("{count} {noun}{}", s(count))
}

/// `count` and whichever of `one` or `many` goes with it: "1 task is", "2 tasks are".
pub fn count_either(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// The `s` a regular noun takes after `count`: none after one, else `s`.
pub fn s(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1, "task"), "1 task");
        assert_eq!(count(0, "task"), "0 tasks");
        assert_eq!(count(2, "finished task"), "2 finished tasks");
        assert_eq!(count_either(1, "task is", "tasks are"), "1 task is");
        assert_eq!(count_either(0, "task is", "tasks are"), "0 tasks are");
        assert_eq!(count_either(12, "entry", "entries"), "12 entries");
        assert_eq!(s(1), "");
        assert_eq!(s(7), "s");
    }
}
