//! A fixed-size set of positions (one bit each): the values of the must-analysis.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// The empty set over `n` positions.
    pub fn empty(n: usize) -> Self {
        Bits {
            words: vec![0; n.div_ceil(64)],
        }
    }

    /// Every position (the top of the lattice: "not reached yet").
    pub fn full(n: usize) -> Self {
        let mut b = Bits {
            words: vec![u64::MAX; n.div_ceil(64)],
        };
        if !n.is_multiple_of(64)
            && let Some(last) = b.words.last_mut()
        {
            *last = (1u64 << (n % 64)) - 1;
        }
        b
    }

    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    pub fn insert(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1u64 << (i % 64);
        }
    }

    pub fn intersect(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    pub fn union(&mut self, other: &Bits) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_holds_exactly_the_positions() {
        let f = Bits::full(70);
        assert!(f.contains(69) && !f.contains(70));
        let mut e = Bits::empty(70);
        e.insert(3);
        let mut g = f.clone();
        g.intersect(&e);
        assert_eq!(g, e);
        e.union(&f);
        assert_eq!(e, f);
    }
}
