//! The secrets baton makes (`baton serve`'s tokens, alerts' signing secrets, a machine's
//! key), hex, the form they and their hashes are written in, and HMAC-SHA256, which signs
//! with them.

pub mod hmac;
pub mod machine_key;

/// The bytes of a secret: 256 bits from the operating system.
pub const SECRET_BYTES: usize = 32;

/// The operating system gave no randomness, so no secret could be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot get random bytes from the operating system for {what}: {source}")]
pub struct NoRandomness {
    /// The secret it was for ("a token"), as the error names it.
    pub what: &'static str,
    source: getrandom::Error,
}

/// [`SECRET_BYTES`] bytes from the operating system's randomness, for a secret (`what` names
/// it in the error).
pub fn random_bytes(what: &'static str) -> Result<[u8; SECRET_BYTES], NoRandomness> {
    let mut bytes = [0u8; SECRET_BYTES];
    getrandom::fill(&mut bytes).map_err(|source| NoRandomness { what, source })?;
    Ok(bytes)
}

/// Lowercase hex, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

/// A web address as it may be shown to people: the password of its user information
/// (`https://me:PASSWORD@hub`) as `***`, and user information with no `:` (which may be a
/// token: `https://TOKEN@hub`) as `***` whole. Where the user information ends is read at
/// the last `@` of the address, so a password holding an unencoded `/` is hidden too.
pub fn url_without_password(url: &str) -> std::borrow::Cow<'_, str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.into();
    };
    let Some((user_information, after)) = rest.rsplit_once('@') else {
        return url.into();
    };
    let hidden = match user_information.split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{scheme}://{hidden}@{after}").into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urls_password_is_hidden_and_the_rest_kept() {
        for (url, shown) in [
            ("http://127.0.0.1:7878", "http://127.0.0.1:7878"),
            ("https://hub.example/base", "https://hub.example/base"),
            (
                "https://me:s3cret@hub.example:8443",
                "https://me:***@hub.example:8443",
            ),
            (
                "https://me:a/b@c@hub.example/x",
                "https://me:***@hub.example/x",
            ),
            ("https://baton_token@hub.example", "https://***@hub.example"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(url_without_password(url), shown, "{url}");
        }
    }

    #[test]
    fn hex_is_two_lowercase_digits_a_byte_in_order() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff, 0x5c]), "000fa0ff5c");
        let every: Vec<u8> = (0..=255).collect();
        let text = hex(&every);
        assert_eq!(text.len(), 512);
        for (byte, pair) in every.iter().zip(text.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).unwrap();
            assert_eq!(u8::from_str_radix(pair, 16).unwrap(), *byte);
            assert_eq!(pair, pair.to_lowercase());
        }
    }

    #[test]
    fn random_bytes_differ_from_one_secret_to_the_next() {
        let first = random_bytes("a test").unwrap();
        let second = random_bytes("a test").unwrap();
        assert_ne!(first, second);
        // 256 bits that are all zero would be a stub, not randomness.
        assert_ne!(first, [0u8; SECRET_BYTES]);
    }
}
