//! A FIFO whose first entry lives inline.
//!
//! The send path's write queue and pending-write list hold one entry at a
//! time on a quiet connection (a request, a response), and in a `VecDeque`
//! that one entry costs a heap block kept for the connection's lifetime:
//! four 32-byte blocks per idle client-server pair, about 3 % of what a
//! pair holds (issue 15: memory per idle connection). Here a lone entry
//! sits in the value itself; the second one moves both to a `VecDeque`,
//! which then stays (so a busy connection allocates once, as before, and
//! never again per segment).

use std::collections::VecDeque;
use std::ops::{Index, IndexMut};

#[derive(Clone, Debug, Default)]
pub(super) enum InlineDeque<T> {
    #[default]
    Empty,
    One(T),
    Heap(VecDeque<T>),
}

impl<T: Copy> InlineDeque<T> {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            InlineDeque::Heap(q) => q.len(),
            InlineDeque::One(_) => 1,
            InlineDeque::Empty => 0,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        match self {
            InlineDeque::Heap(q) => q.is_empty(),
            InlineDeque::One(_) => false,
            InlineDeque::Empty => true,
        }
    }

    #[inline]
    pub fn push_back(&mut self, v: T) {
        match self {
            InlineDeque::Empty => *self = InlineDeque::One(v),
            InlineDeque::One(first) => {
                let mut q = VecDeque::with_capacity(4);
                q.push_back(*first);
                q.push_back(v);
                *self = InlineDeque::Heap(q);
            }
            InlineDeque::Heap(q) => q.push_back(v),
        }
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        match self {
            InlineDeque::Empty => None,
            InlineDeque::One(v) => {
                let v = *v;
                *self = InlineDeque::Empty;
                Some(v)
            }
            InlineDeque::Heap(q) => q.pop_front(),
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        match self {
            InlineDeque::Heap(q) => q.get(i),
            InlineDeque::One(v) if i == 0 => Some(v),
            _ => None,
        }
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    #[inline]
    pub fn back_mut(&mut self) -> Option<&mut T> {
        match self {
            InlineDeque::Empty => None,
            InlineDeque::One(v) => Some(v),
            InlineDeque::Heap(q) => q.back_mut(),
        }
    }

    /// Removes and returns entry `i`, as `VecDeque::remove`.
    pub fn remove(&mut self, i: usize) -> Option<T> {
        match self {
            InlineDeque::One(_) if i == 0 => self.pop_front(),
            InlineDeque::Heap(q) => q.remove(i),
            _ => None,
        }
    }

    /// Empties the queue, keeping a heap buffer for reuse.
    pub fn clear(&mut self) {
        match self {
            InlineDeque::Heap(q) => q.clear(),
            _ => *self = InlineDeque::Empty,
        }
    }
}

/// Out of range panics, as `VecDeque`'s indexing does; callers index
/// below `len()`.
impl<T: Copy> Index<usize> for InlineDeque<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        match self {
            InlineDeque::Heap(q) => &q[i],
            InlineDeque::One(v) if i == 0 => v,
            _ => out_of_range(i),
        }
    }
}

impl<T: Copy> IndexMut<usize> for InlineDeque<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        match self {
            InlineDeque::Heap(q) => &mut q[i],
            InlineDeque::One(v) if i == 0 => v,
            _ => out_of_range(i),
        }
    }
}

#[cold]
#[inline(never)]
fn out_of_range(i: usize) -> ! {
    panic!("InlineDeque index {i} out of range")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn test_one_entry_stays_inline_and_two_move_to_the_heap() {
        let mut q = InlineDeque::default();
        q.push_back(1u32);
        assert!(matches!(q, InlineDeque::One(1)));
        q.push_back(2);
        assert!(matches!(&q, InlineDeque::Heap(h) if h.len() == 2));
        assert_eq!((q.pop_front(), q.pop_front(), q.pop_front()), (Some(1), Some(2), None));
        q.push_back(3);
        assert!(matches!(q, InlineDeque::Heap(_)), "a buffer once made is kept");
    }

    proptest! {
        /// Every operation answers as `VecDeque`'s does.
        #[test]
        fn prop_behaves_as_a_vecdeque(ops in proptest::collection::vec((0u8..7, 0u32..4), 0..60)) {
            let mut q = InlineDeque::default();
            let mut want = VecDeque::new();
            for (op, v) in ops {
                match op {
                    0 | 1 => { q.push_back(v); want.push_back(v); }
                    2 => prop_assert_eq!(q.pop_front(), want.pop_front()),
                    3 => prop_assert_eq!(q.get(v as usize), want.get(v as usize)),
                    4 => {
                        if let (Some(a), Some(b)) = (q.back_mut(), want.back_mut()) { *a += 10; *b += 10; }
                    }
                    5 => prop_assert_eq!(q.remove(v as usize), want.remove(v as usize)),
                    _ => { q.clear(); want.clear(); }
                }
                prop_assert_eq!(q.len(), want.len());
                prop_assert_eq!(q.front(), want.front());
                for i in 0..want.len() {
                    prop_assert_eq!(q[i], want[i]);
                }
            }
        }
    }
}
