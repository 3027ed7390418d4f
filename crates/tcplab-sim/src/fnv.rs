//! FNV-1a, 64 bit (Fowler, Noll, Vo; the constants of
//! draft-eastlake-fnv): a hash that is stable across platforms and Rust
//! versions, unlike `std`'s, for keys written to disk — scenario hashes in
//! results and journals, kernel image cache keys.

/// FNV-1a 64-bit offset basis.
pub const FNV64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
pub const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;

#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(u64);

impl Fnv1a64 {
    pub fn new() -> Fnv1a64 {
        Fnv1a64(FNV64_OFFSET_BASIS)
    }

    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(FNV64_PRIME);
        }
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a64 {
    fn default() -> Self {
        Fnv1a64::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_published_vectors() {
        // draft-eastlake-fnv: FNV-1a 64 of "" and of "a".
        assert_eq!(Fnv1a64::new().finish(), 0xcbf2_9ce4_8422_2325);
        let mut h = Fnv1a64::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
