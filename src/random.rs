//! Random bytes from the system's generator (keys, salts).

use ring::rand::{SecureRandom, SystemRandom};

/// `N` random bytes.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    // Without the system's generator there is no key or salt worth having: not an input error.
    SystemRandom::new().fill(&mut out).expect("the system random number generator failed");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn draws_differ() {
        assert_ne!(super::bytes::<32>(), super::bytes::<32>());
    }
}
