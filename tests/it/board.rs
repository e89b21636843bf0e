//! Board tests.
