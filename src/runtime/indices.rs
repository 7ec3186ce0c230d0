//! Column indices as the back ends and the runtime read a row: u32s, or the low halves of int64
//! indices read in place. The data layer stores them (`data::store`); the runtime's routines
//! that walk rows (the dictionary's coder) take them, so the type lives here, below both.

use std::fmt;
use std::ops::Range;

/// Column indices as the back ends read them: the k-th is `raw[k << shift]`. Shift 0 is a
/// plain u32 array. Shift 1 is an int64 array below 2³² on a little-endian machine, whose
/// pairs of u32 hold each index in the first: so the interpreter indexes one array type, and
/// the compiled kernels load 32 bits at a stride of 4 or 8 bytes ([`Indices::shift`]).
#[derive(Clone, Copy)]
pub struct Indices<'a> {
    raw: &'a [u32],
    shift: u32,
}

impl<'a> Indices<'a> {
    pub fn len(&self) -> usize {
        self.raw.len() >> self.shift
    }
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
    /// The indices at positions `r`.
    pub fn range(&self, r: Range<usize>) -> Indices<'a> {
        Indices { raw: &self.raw[r.start << self.shift..r.end << self.shift], shift: self.shift }
    }
    pub fn iter(&self) -> std::iter::Copied<std::iter::StepBy<std::slice::Iter<'a, u32>>> {
        self.raw.iter().step_by(1 << self.shift).copied()
    }
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }
    /// The first index's address; the k-th is `k << shift` u32s after it.
    pub fn as_ptr(&self) -> *const u32 {
        self.raw.as_ptr()
    }
    /// The indices as one slice, when they are plain u32s (shift 0).
    pub fn as_slice(&self) -> Option<&'a [u32]> {
        (self.shift == 0).then_some(self.raw)
    }
    /// log₂ of the distance between indices, in u32s.
    pub fn shift(&self) -> u32 {
        self.shift
    }
    /// Every `1 << shift`-th u32 of `raw`, from the first: `raw.len() >> shift` indices.
    pub fn strided(raw: &'a [u32], shift: u32) -> Indices<'a> {
        Indices { raw, shift }
    }
}

impl std::ops::Index<usize> for Indices<'_> {
    type Output = u32;
    #[inline]
    fn index(&self, k: usize) -> &u32 {
        &self.raw[k << self.shift]
    }
}

impl<'a> From<&'a [u32]> for Indices<'a> {
    fn from(raw: &'a [u32]) -> Self {
        Indices { raw, shift: 0 }
    }
}

impl<'a> From<&'a Vec<u32>> for Indices<'a> {
    fn from(raw: &'a Vec<u32>) -> Self {
        Indices { raw, shift: 0 }
    }
}

impl<'a, const N: usize> From<&'a [u32; N]> for Indices<'a> {
    fn from(raw: &'a [u32; N]) -> Self {
        Indices { raw, shift: 0 }
    }
}

impl<'a> IntoIterator for Indices<'a> {
    type Item = u32;
    type IntoIter = std::iter::Copied<std::iter::StepBy<std::slice::Iter<'a, u32>>>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl PartialEq for Indices<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<[u32]> for Indices<'_> {
    fn eq(&self, other: &[u32]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl fmt::Debug for Indices<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
