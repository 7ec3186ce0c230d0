//! The arrays behind a Dataset's matrix: owned (parsed or generated), a section of a
//! memory-mapped cache file, so a cache hit costs no copy and no parse, or the buffer of another
//! runtime's array (NumPy's, through the Python package), so a fit reads the caller's matrix
//! in place. All deref to slices; nothing downstream knows which it reads.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

pub use crate::runtime::Indices;

/// The CSR matrix of a Dataset: m × d, usize row pointers, 0-based column indices (see
/// [`Indices`]), f64 values, each array owned, mapped or another runtime's.
#[derive(Clone, Debug)]
pub struct Matrix {
    shape: (usize, usize),
    indptr: Store<usize>,
    indices: IndexStore,
    values: Store<f64>,
}

/// How a matrix holds its column indices. optc's own arrays are u32; a NumPy matrix may come
/// with int64 ones, which are read in place rather than narrowed into a copy as large as the
/// values' half (the matrices that need int64 indices are the ones too large to copy).
#[derive(Clone, Debug)]
enum IndexStore {
    Narrow(Store<u32>),
    /// Checked non-negative and below the column count (≤ 2³²) when the matrix was made.
    Wide(Store<i64>),
}

/// Builds a [`Matrix`] from owned arrays, checking its structure (sorted, in-range indices).
pub fn csr(
    shape: (usize, usize),
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
) -> Result<Matrix, sprs::errors::StructureError> {
    checked(shape, Store::Owned(indptr), Store::Owned(indices), Store::Owned(values))
}

/// Builds a [`Matrix`] from arrays owned or mapped, checking its structure: sprs's checks
/// (sorted, in-range indices, monotone row pointers) and that the row pointers start at 0.
/// sprs accepts an offset first pointer (a view into a larger matrix), but every reader of
/// the raw arrays here indexes the values by the pointers themselves, so a file that came
/// with one (a damaged cache) would index past the values.
pub fn checked(
    shape: (usize, usize),
    indptr: Store<usize>,
    indices: Store<u32>,
    values: Store<f64>,
) -> Result<Matrix, sprs::errors::StructureError> {
    checked_by(Checks::Here, shape, indptr, indices, values)
}

/// Who checks a matrix's structure: [`checked`] and [`checked_wide`] themselves, or their caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    /// sprs's checks, and the row pointers from 0.
    Here,
    /// The caller has checked every row pointer (from 0 to the entries' count, never going
    /// down) and every row's indices (increasing, below the column count) as `Here` would. A
    /// fit on NumPy arrays does, entry by entry, with messages that name the row; a second pass
    /// cost a dense 15,000 × 200 array 3 ms. Debug builds check again.
    Caller,
}

impl Checks {
    /// sprs's checks and the row pointers from 0, where this says they are made here (and in
    /// every debug build).
    fn make<I: sprs::SpIndex>(
        self,
        shape: (usize, usize),
        indptr: &[usize],
        indices: &[I],
        values: &[f64],
    ) -> Result<(), sprs::errors::StructureError> {
        if self == Checks::Here || cfg!(debug_assertions) {
            check_structure(shape, indptr, indices, values)?;
        }
        Ok(())
    }
}

/// [`checked`], with the structure's checks made by `checks`.
pub fn checked_by(
    checks: Checks,
    shape: (usize, usize),
    indptr: Store<usize>,
    indices: Store<u32>,
    values: Store<f64>,
) -> Result<Matrix, sprs::errors::StructureError> {
    checks.make(shape, &indptr, &indices, &values)?;
    Ok(Matrix { shape, indptr, indices: IndexStore::Narrow(indices), values })
}

/// Builds a [`Matrix`] whose column indices are int64 (NumPy's, read in place), checked as
/// [`checked_by`] checks u32 ones (by `checks`), and the column count below 2³², which makes each one's low half (on a
/// little-endian machine, the first u32 of its pair) the index itself: see [`Indices`]. On a
/// big-endian machine the indices are narrowed into a copy instead.
pub fn checked_wide(
    checks: Checks,
    shape: (usize, usize),
    indptr: Store<usize>,
    indices: Store<i64>,
    values: Store<f64>,
) -> Result<Matrix, sprs::errors::StructureError> {
    if u32::try_from(shape.1).is_err() {
        return Err(sprs::errors::StructureError::OutOfRange("2³² columns or more"));
    }
    checks.make(shape, &indptr, &indices, &values)?;
    let indices = if cfg!(target_endian = "little") {
        IndexStore::Wide(indices)
    } else {
        IndexStore::Narrow(Store::Owned(indices.iter().map(|&j| j as u32).collect()))
    };
    Ok(Matrix { shape, indptr, indices, values })
}

fn check_structure<I: sprs::SpIndex>(
    shape: (usize, usize),
    indptr: &[usize],
    indices: &[I],
    values: &[f64],
) -> Result<(), sprs::errors::StructureError> {
    if indptr.first().is_some_and(|&p| p != 0) {
        return Err(sprs::errors::StructureError::OutOfRange("the row pointers do not start at 0"));
    }
    sprs::CsMatBase::<f64, I, _, _, _, usize>::try_new(shape, indptr, indices, values)
        .map(|_| ())
        .map_err(|(_, _, _, e)| e)
}

impl PartialEq for Matrix {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape
            && self.indptr() == other.indptr()
            && self.indices() == other.indices()
            && self.data() == other.data()
    }
}

impl Matrix {
    /// An owned matrix of arrays its caller built canonical (rows sorted, indices in range);
    /// panics otherwise, as a broken invariant of optc's own code.
    pub fn new(shape: (usize, usize), indptr: Vec<usize>, indices: Vec<u32>, values: Vec<f64>) -> Matrix {
        csr(shape, indptr, indices, values).unwrap_or_else(|e| panic!("a matrix optc built is not canonical: {e}"))
    }
    pub fn rows(&self) -> usize {
        self.shape.0
    }
    pub fn cols(&self) -> usize {
        self.shape.1
    }
    pub fn shape(&self) -> (usize, usize) {
        self.shape
    }
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }
    pub fn indices(&self) -> Indices<'_> {
        match &self.indices {
            IndexStore::Narrow(s) => Indices::strided(s, 0),
            IndexStore::Wide(s) => Indices::strided(bytemuck::cast_slice(s), 1),
        }
    }
    pub fn data(&self) -> &[f64] {
        &self.values
    }
    /// Row i's column indices and values.
    pub fn row(&self, i: usize) -> (Indices<'_>, &[f64]) {
        let r = self.indptr[i]..self.indptr[i + 1];
        (self.indices().range(r.clone()), &self.values[r])
    }
    /// Whether the indices and values are sections of a mapped file (a cache hit).
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        matches!((&self.indices, &self.values), (IndexStore::Narrow(Store::Mapped(_)), Store::Mapped(_)))
    }
    /// The column indices as one u32 array: the matrix's own, or a narrowed copy of int64 ones
    /// (for a cache file, whose format has u32 indices).
    pub fn narrow_indices(&self) -> std::borrow::Cow<'_, [u32]> {
        match &self.indices {
            IndexStore::Narrow(s) => std::borrow::Cow::Borrowed(s),
            IndexStore::Wide(_) => std::borrow::Cow::Owned(self.indices().to_vec()),
        }
    }
}

/// The indices at `ptr` with the given [`shift`](Indices::shift), `len` of them: how a compiled
/// kernel's indices come back to the runtime.
///
/// # Safety
/// As [`std::slice::from_raw_parts`] for the `len << shift` u32s at `ptr`.
#[allow(unsafe_code)]
pub unsafe fn indices_from_raw_parts<'a>(ptr: *const u32, len: usize, shift: u32) -> Indices<'a> {
    // SAFETY: the caller's.
    Indices::strided(unsafe { std::slice::from_raw_parts(ptr, len << shift) }, shift)
}

/// An array, owned, mapped or another runtime's.
#[derive(Clone)]
pub enum Store<T> {
    Owned(Vec<T>),
    Mapped(Section),
    Foreign(Foreign<T>),
}

/// `len` values of T at `ptr`, in a buffer that `keep` owns: while any clone of it lives, the
/// buffer stays where it is and is not written (see [`Store::foreign`]).
pub struct Foreign<T> {
    keep: Arc<dyn Send + Sync>,
    ptr: *const T,
    len: usize,
}

impl<T> Clone for Foreign<T> {
    fn clone(&self) -> Self {
        Foreign { keep: Arc::clone(&self.keep), ptr: self.ptr, len: self.len }
    }
}

// SAFETY: a Foreign is a shared, read-only view of a buffer that `keep` (itself Send + Sync)
// holds alive; reading it from any thread is reading a `&[T]` of a Sync T.
#[allow(unsafe_code)]
unsafe impl<T: Sync> Send for Foreign<T> {}
#[allow(unsafe_code)]
unsafe impl<T: Sync> Sync for Foreign<T> {}

impl<T> Store<T> {
    /// The `len` values at `ptr`, read in place.
    ///
    /// # Safety
    /// `ptr` is non-null and aligned for T, the `len` values after it are initialised, and
    /// while `keep` (or a clone of the store) lives they stay at that address and nothing
    /// writes them.
    #[allow(unsafe_code)]
    pub unsafe fn foreign(keep: Arc<dyn Send + Sync>, ptr: *const T, len: usize) -> Store<T> {
        Store::Foreign(Foreign { keep, ptr, len })
    }
}

impl<T: bytemuck::Pod + Send + Sync> Store<T> {
    /// The same buffer read as U, a type of T's size and alignment (int32 indices as u32 ones,
    /// once none is negative): no copy, whatever holds it.
    pub fn same_bits<U: bytemuck::Pod>(self) -> Store<U> {
        const { assert!(size_of::<T>() == size_of::<U>() && align_of::<T>() == align_of::<U>()) };
        let (ptr, len) = (self.as_ptr() as *const U, self.len());
        if len == 0 {
            return Store::Owned(vec![]);
        }
        let keep: Arc<dyn Send + Sync> = Arc::new(self);
        // SAFETY: `ptr` is the non-empty buffer of `len` Ts that `keep` holds (a Vec's heap
        // buffer does not move with the Vec), read as Us of the same size and alignment, which
        // any bits make (both Pod); the store is read-only.
        #[allow(unsafe_code)]
        unsafe {
            Store::foreign(keep, ptr, len)
        }
    }
}

/// `len` elements at byte `start` of a mapped file, checked aligned and in bounds when made.
#[derive(Clone)]
pub struct Section {
    map: Arc<memmap2::Mmap>,
    start: usize,
    len: usize,
}

impl<T: bytemuck::Pod> Store<T> {
    /// The section of `map` at byte `start` holding `len` values of T, or None when it is out
    /// of bounds or misaligned for T (a damaged file: it is then not used).
    pub fn mapped(map: &Arc<memmap2::Mmap>, start: usize, len: usize) -> Option<Store<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = start.checked_add(bytes)?;
        bytemuck::try_cast_slice::<u8, T>(map.get(start..end)?).ok()?;
        Some(Store::Mapped(Section { map: Arc::clone(map), start, len }))
    }
}

impl<T: bytemuck::Pod> Deref for Store<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Store::Owned(v) => v,
            // In bounds and aligned: `mapped` checked it, and a mapping never moves.
            Store::Mapped(s) => bytemuck::cast_slice(&s.map[s.start..s.start + s.len * std::mem::size_of::<T>()]),
            // SAFETY: `Store::foreign`'s contract, which its caller took on.
            #[allow(unsafe_code)]
            Store::Foreign(f) => unsafe { std::slice::from_raw_parts(f.ptr, f.len) },
        }
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq for Store<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: bytemuck::Pod + fmt::Debug> fmt::Debug for Store<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// Maps a whole file read-only, its pages read in up front (a cache is read in full anyway).
///
/// Mapping is `unsafe` because the memory changes if another process writes the file while it
/// is mapped. optc never writes a cache in place: it writes a new file and renames it over the
/// old, which leaves a mapped file's pages as they were; and every mapped cache is
/// checksummed in full before its arrays are used.
#[allow(unsafe_code)]
pub fn map_file(file: &std::fs::File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: see above; the mapping is read-only and outlives every slice made from it
    // (each Section holds an Arc of it).
    unsafe { memmap2::MmapOptions::new().populate().map(file) }
}
