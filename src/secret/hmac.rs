//! HMAC-SHA256 (RFC 2104) over `sha2`: the signature of a JSON alert's body, and of a wake
//! command by the machine it runs on. A few lines here rather than one more crate; checked
//! against RFC 4231's test vectors.

use sha2::{Digest, Sha256};

/// SHA-256 reads its input in blocks of this many bytes.
const BLOCK: usize = 64;

/// The HMAC-SHA256 of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // A key longer than a block is hashed first; a shorter one is padded with zeros.
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(block.map(|byte| byte ^ 0x36));
    inner.update(message);
    let mut outer = Sha256::new();
    outer.update(block.map(|byte| byte ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::hex;

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rfc_4231_test_vectors() {
        // (key, data, HMAC-SHA256) of test cases 1, 2, 3, 4, 6 and 7; case 5 checks a
        // truncated output, which baton does not use.
        let cases: &[(Vec<u8>, Vec<u8>, &str)] = &[
            (
                vec![0x0b; 20],
                b"Hi There".to_vec(),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe".to_vec(),
                b"what do ya want for nothing?".to_vec(),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                vec![0xaa; 20],
                vec![0xdd; 50],
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            ),
            (
                unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                vec![0xcd; 50],
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            ),
            (
                vec![0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
            (
                vec![0xaa; 131],
                b"This is a test using a larger than block-size key and a larger than \
                  block-size data. The key needs to be hashed before being used by the HMAC \
                  algorithm."
                    .to_vec(),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            ),
        ];
        for (key, data, expected) in cases {
            assert_eq!(hex(&hmac_sha256(key, data)), *expected, "key {key:02x?}");
        }
    }

    #[test]
    fn a_key_of_exactly_one_block_is_used_as_it_is() {
        let key = [0x42u8; BLOCK];
        let mut padded = key.to_vec();
        padded.push(0);
        padded.truncate(BLOCK);
        assert_eq!(hmac_sha256(&key, b"x"), hmac_sha256(&padded, b"x"));
        assert_ne!(hmac_sha256(&key, b"x"), hmac_sha256(&key[..63], b"x"));
    }
}
