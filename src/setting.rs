//! A setting from the environment that cannot be used as it is, told with how to put it
//! right: the hub home's (`BATON_HOME`), the lock's timeout, the store's address.

/// A setting from the environment (`BATON_HOME`, `BATON_LOCK_TIMEOUT`, `BATON_STORE`) that
/// cannot be used: what is wrong, and how to put it right where there is a way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SettingError {
    pub message: String,
    pub hint: Option<String>,
}

impl SettingError {
    pub fn new(message: impl Into<String>, hint: Option<String>) -> Self {
        SettingError {
            message: message.into(),
            hint,
        }
    }
}
