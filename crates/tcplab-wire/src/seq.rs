//! 32-bit TCP sequence numbers with wrapping comparison.

use core::fmt;
use core::ops::{Add, AddAssign, Sub};

/// A TCP sequence number. Ordering follows Linux's `before()` / `after()`
/// (include/net/tcp.h): `a` is before `b` when `(a - b) as i32 < 0`, so
/// comparisons stay correct across the 2^32 wrap as long as the two numbers
/// are less than 2^31 apart.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// Linux `before(self, other)`.
    #[inline]
    pub fn before(self, other: SeqNum) -> bool {
        (self.0.wrapping_sub(other.0) as i32) < 0
    }
    /// Linux `after(self, other)`.
    #[inline]
    pub fn after(self, other: SeqNum) -> bool {
        other.before(self)
    }
    /// `!before(self, other)`.
    #[inline]
    pub fn after_eq(self, other: SeqNum) -> bool {
        !self.before(other)
    }
    /// `!after(self, other)`.
    #[inline]
    pub fn before_eq(self, other: SeqNum) -> bool {
        !self.after(other)
    }
    /// The later of two sequence numbers.
    #[inline]
    pub fn max(self, other: SeqNum) -> SeqNum {
        if self.after(other) {
            self
        } else {
            other
        }
    }
    /// The earlier of two sequence numbers.
    #[inline]
    pub fn min(self, other: SeqNum) -> SeqNum {
        if self.before(other) {
            self
        } else {
            other
        }
    }
    /// Signed distance `self - other`, valid while the two are within 2^31.
    #[inline]
    pub fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    /// `true` if `start <= self < end` in sequence space.
    #[inline]
    pub fn in_range(self, start: SeqNum, end: SeqNum) -> bool {
        self.after_eq(start) && self.before(end)
    }
}

impl Add<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn add(self, rhs: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(rhs))
    }
}

impl AddAssign<u32> for SeqNum {
    #[inline]
    fn add_assign(&mut self, rhs: u32) {
        self.0 = self.0.wrapping_add(rhs);
    }
}

impl Sub<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn sub(self, rhs: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(rhs))
    }
}

/// Unsigned distance in bytes (`self - rhs`, wrapping).
impl Sub<SeqNum> for SeqNum {
    type Output = u32;
    #[inline]
    fn sub(self, rhs: SeqNum) -> u32 {
        self.0.wrapping_sub(rhs.0)
    }
}

impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_compare_across_wrap() {
        let a = SeqNum(u32::MAX - 10);
        let b = a + 20;
        assert!(a.before(b));
        assert!(b.after(a));
        assert_eq!(b - a, 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(a.max(b), b);
        assert!(SeqNum(u32::MAX).in_range(a, b));
        assert!(!b.in_range(a, b));
    }
}
