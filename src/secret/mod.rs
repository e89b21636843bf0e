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

#[cfg(test)]
mod tests {
    use super::*;

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
