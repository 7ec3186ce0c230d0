//! The arrays behind a Dataset's matrix: owned (parsed or generated), a section of a
//! memory-mapped cache file, so a cache hit costs no copy and no parse, or the buffer of another
//! runtime's array (NumPy's, through the Python package), so a fit reads the caller's matrix
//! in place. All deref to slices; nothing downstream knows which it reads.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// The CSR matrix of a Dataset: m × d, 0-based u32 column indices, usize row pointers.
pub type Matrix = sprs::CsMatBase<f64, u32, Store<usize>, Store<u32>, Store<f64>, usize>;

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
    if indptr.first().is_some_and(|&p| p != 0) {
        return Err(sprs::errors::StructureError::OutOfRange("the row pointers do not start at 0"));
    }
    Matrix::try_new(shape, indptr, indices, values).map_err(|(_, _, _, e)| e)
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
