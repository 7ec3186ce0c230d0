//! `--cache`: the parsed data kept in a binary file so the next run maps it instead of parsing
//! the text again. The file is keyed by the source's canonical path, size and modification
//! time (ns) and by the format version; a cache whose key differs, whose length or checksum is
//! wrong, or whose matrix fails the structure check is not used, and the parse that follows
//! writes a fresh one. Never trusted, so never worse than no cache.
//!
//! Where it lives: next to the data as `FILE.optc-cache`; when that directory is not
//! writable, in `$XDG_CACHE_HOME/optc` (else `~/.cache/optc`) as `FILE-HASH.optc-cache`, HASH
//! naming the source's directory; with `--cache=DIR`, in DIR under that same name.
//!
//! Layout (native byte order, checked by a tag): a 96-byte header, the canonical path, then
//! five arrays each starting on a 64-byte boundary: row pointers (u64 × m+1), column indices
//! (u32 × nnz), values (f64 × nnz), labels (f64 × m), file lines (u32 × m). The CRC-32 at
//! byte 8 covers everything after it.

use super::store::{self, Store};
use super::{display_name, DataError, Dataset};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

const MAGIC: &[u8; 8] = b"OPTCDATA";
/// Bump whenever the layout or the meaning of a field changes.
const VERSION: u32 = 1;
/// Byte order and pointer width of the writer: a file from another kind of machine is not used.
pub(super) const TAG: u32 = 0x0102_0300 | std::mem::size_of::<usize>() as u32;
const HEADER: usize = 96;
const ALIGN: usize = 64;

/// Where caches go (the `--cache` flag).
#[derive(Clone, Debug, PartialEq)]
pub enum CacheDir {
    /// Next to the data, else the user's cache directory.
    Beside,
    /// This directory (created if missing).
    In(PathBuf),
}

/// What the cache did for one load, for the run's report.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheNote {
    /// The data came from this cache file.
    Hit(PathBuf),
    /// The text was parsed and this cache written (`why` the old one, if any, was not used).
    Written { path: PathBuf, why: Option<String> },
    /// The text was parsed; no cache could be written, for this reason.
    Unwritten(String),
}

impl std::fmt::Display for CacheNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheNote::Hit(p) => write!(f, "data read from the cache {}", p.display()),
            CacheNote::Written { path, why: None } => write!(f, "data cache written to {}", path.display()),
            CacheNote::Written { path, why: Some(w) } => {
                write!(f, "the data cache was {w}; rewritten: {}", path.display())
            }
            CacheNote::Unwritten(why) => write!(f, "no data cache written: {why}"),
        }
    }
}

/// What identifies the source a cache was made from.
#[derive(Debug, PartialEq)]
pub(super) struct Key {
    pub(super) path: PathBuf,
    pub(super) size: u64,
    pub(super) mtime_s: i64,
    pub(super) mtime_ns: u32,
}

impl Key {
    pub(super) fn of(path: &Path) -> io::Result<Key> {
        let canonical = fs::canonicalize(path)?;
        let meta = fs::metadata(&canonical)?;
        let since = meta.modified()?.duration_since(UNIX_EPOCH).unwrap_or_default();
        Ok(Key { path: canonical, size: meta.len(), mtime_s: since.as_secs() as i64, mtime_ns: since.subsec_nanos() })
    }
}

/// Loads `path` from its cache when a valid one exists; otherwise reads it with `parse` and
/// writes the cache. Standard input is never cached.
pub fn load(
    path: &Path,
    dir: &CacheDir,
    parse: impl FnOnce() -> Result<Dataset, DataError>,
) -> Result<(Dataset, CacheNote), DataError> {
    if path == Path::new("-") {
        return Ok((parse()?, CacheNote::Unwritten("standard input is not cached".into())));
    }
    let Ok(key) = Key::of(path) else {
        // The reader names the problem (a missing file, a permission) as it always does.
        return Ok((parse()?, CacheNote::Unwritten("the data file cannot be examined".into())));
    };
    let places = places(&key.path, dir, "optc-cache");
    let mut why = None;
    for place in &places {
        match read(place, &key, &display_name(path)) {
            Ok(d) => return Ok((d, CacheNote::Hit(place.clone()))),
            Err(Miss::Absent) => {}
            Err(Miss::Unusable(w)) => why = why.or(Some(w)),
        }
    }
    let data = parse()?;
    // A source that changed while it was read may not be what was parsed: no cache then.
    if Key::of(path).ok().as_ref() != Some(&key) {
        return Ok((data, CacheNote::Unwritten("the data file changed while it was read".into())));
    }
    let mut failures = vec![];
    for place in &places {
        match write(place, &key, &data) {
            Ok(()) => return Ok((data, CacheNote::Written { path: place.clone(), why })),
            Err(e) => failures.push(format!("{}: {e}", place.display())),
        }
    }
    Ok((data, CacheNote::Unwritten(failures.join("; "))))
}

/// The files a cache of `source` may be in, in the order they are tried; `ext` names the
/// kind of cache (the in-memory one, or the streamed one of `stream::cache`).
pub(super) fn places(source: &Path, dir: &CacheDir, ext: &str) -> Vec<PathBuf> {
    let file = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "data".into());
    let parent = source.parent().unwrap_or(Path::new("/"));
    let hashed = format!("{file}-{:08x}.{ext}", crc32fast::hash(parent.as_os_str().as_encoded_bytes()));
    match dir {
        CacheDir::In(d) => vec![d.join(hashed)],
        CacheDir::Beside => {
            let mut out = vec![parent.join(format!("{file}.{ext}"))];
            if let Some(d) = user_cache_dir() {
                out.push(d.join("optc").join(hashed));
            }
            out
        }
    }
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
fn user_cache_dir() -> Option<PathBuf> {
    let nonempty = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    nonempty("XDG_CACHE_HOME").filter(|p| p.is_absolute()).or_else(|| nonempty("HOME").map(|h| h.join(".cache")))
}

/// Why a cache was not used.
pub(super) enum Miss {
    /// There is none.
    Absent,
    /// There is one, stale or damaged (said how).
    Unusable(String),
}

fn align(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Byte offsets of the five arrays and the file's length, from the header's counts.
fn layout(path_len: usize, rows: usize, nnz: usize) -> Option<([usize; 5], usize)> {
    let sizes = [
        rows.checked_add(1)?.checked_mul(8)?,
        nnz.checked_mul(4)?,
        nnz.checked_mul(8)?,
        rows.checked_mul(8)?,
        rows.checked_mul(4)?,
    ];
    let mut at = align(HEADER.checked_add(path_len)?);
    let mut offsets = [0; 5];
    for (o, s) in offsets.iter_mut().zip(sizes) {
        *o = at;
        at = align(at.checked_add(s)?);
    }
    Some((offsets, offsets[4] + sizes[4]))
}

pub(super) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

pub(super) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn read(place: &Path, key: &Key, name: &str) -> Result<Dataset, Miss> {
    let file = match File::open(place) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Miss::Absent),
        Err(e) => return Err(Miss::Unusable(format!("unreadable ({e})"))),
    };
    let damaged = |what: &str| Miss::Unusable(format!("damaged ({what})"));
    let map = Arc::new(store::map_file(&file).map_err(|e| Miss::Unusable(format!("unreadable ({e})")))?);
    let b: &[u8] = &map;
    if b.len() < HEADER || &b[..8] != MAGIC {
        return Err(damaged("not an optc cache"));
    }
    if u32_at(b, 12) != VERSION || u32_at(b, 16) != TAG {
        return Err(Miss::Unusable("from another version of optc or another kind of machine".into()));
    }
    let count = |at: usize| usize::try_from(u64_at(b, at)).map_err(|_| damaged("a count"));
    let path_len = count(88)?;
    let path = b.get(HEADER..HEADER.saturating_add(path_len)).ok_or_else(|| damaged("too short"))?;
    let same_key = path == key.path.as_os_str().as_encoded_bytes()
        && u64_at(b, 24) == key.size
        && u64_at(b, 32) as i64 == key.mtime_s
        && u64_at(b, 40) == key.mtime_ns as u64;
    if !same_key {
        return Err(Miss::Unusable("stale (the data file changed)".into()));
    }
    let (rows, cols, nnz) = (count(48)?, count(56)?, count(64)?);
    let (offsets, len) = layout(path_len, rows, nnz).ok_or_else(|| damaged("counts"))?;
    if b.len() != len {
        return Err(damaged("length"));
    }
    if crc32fast::hash(&b[12..]) != u32_at(b, 8) {
        return Err(damaged("checksum"));
    }
    let section = || damaged("alignment");
    let indptr = Store::<usize>::mapped(&map, offsets[0], rows + 1).ok_or_else(section)?;
    let indices = Store::<u32>::mapped(&map, offsets[1], nnz).ok_or_else(section)?;
    let values = Store::<f64>::mapped(&map, offsets[2], nnz).ok_or_else(section)?;
    let labels = Store::<f64>::mapped(&map, offsets[3], rows).ok_or_else(section)?.to_vec();
    let lines = Store::<u32>::mapped(&map, offsets[4], rows).ok_or_else(section)?.to_vec();
    let x = store::checked((rows, cols), indptr, indices, values).map_err(|_| damaged("matrix structure"))?;
    if rows == 0 || labels.iter().any(|v| !v.is_finite()) || x.data().iter().any(|v| !v.is_finite()) {
        return Err(damaged("values"));
    }
    let max_index_line = u64_at(b, 80).min(u32::MAX as u64) as u32;
    // The text it was parsed from is the source, whose length the key holds.
    if u64_at(b, 72) > key.size {
        return Err(damaged("counts"));
    }
    Ok(Dataset { weights: None, x, labels, lines, name: name.into(), bytes: u64_at(b, 72), max_index_line })
}

/// The fuzzers' way in (`fuzz_harness::data_cache`): writes, where `load` with `--cache=DIR`
/// looks for the cache of `source`, a header with the key such a run expects, the counts (rows,
/// columns, non-zeros, text bytes, line of the largest index: 40 bytes) from the front of
/// `body`, and the rest of `body` as the arrays from the first aligned offset on. With
/// `reseal` the checksum is recomputed, so the checks after it are reached too.
#[doc(hidden)]
pub fn fuzz_place(source: &Path, dir: &Path, body: &[u8], reseal: bool) -> io::Result<PathBuf> {
    let key = Key::of(source)?;
    let place = places(&key.path, &CacheDir::In(dir.to_path_buf()), "optc-cache").remove(0);
    let path = key.path.as_os_str().as_encoded_bytes();
    let mut b = vec![0u8; align(HEADER + path.len())];
    b[..8].copy_from_slice(MAGIC);
    b[12..16].copy_from_slice(&VERSION.to_ne_bytes());
    b[16..20].copy_from_slice(&TAG.to_ne_bytes());
    for (k, v) in [key.size, key.mtime_s as u64, key.mtime_ns as u64].iter().enumerate() {
        b[24 + 8 * k..32 + 8 * k].copy_from_slice(&v.to_ne_bytes());
    }
    let counts = body.len().min(40);
    b[48..48 + counts].copy_from_slice(&body[..counts]);
    b[88..96].copy_from_slice(&(path.len() as u64).to_ne_bytes());
    b[HEADER..HEADER + path.len()].copy_from_slice(path);
    b.extend_from_slice(&body[counts..]);
    let crc = if reseal { crc32fast::hash(&b[12..]) } else { 0 };
    b[8..12].copy_from_slice(&crc.to_ne_bytes());
    fs::write(&place, b)?;
    Ok(place)
}

/// A temporary file in the directory of `place` (made if missing), for a cache written whole
/// and then renamed over `place`: a reader never sees it half written.
pub(super) fn temporary_beside(place: &Path) -> io::Result<crate::temporary::Temporary> {
    let dir = place.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    crate::temporary::Temporary::new_in(dir, ".cache", None)
}

/// A dataset's arrays as bytes, in the order both caches store them: the row pointers, the
/// column indices (`indices`, the matrix's as u32: [`crate::data::Matrix::narrow_indices`]),
/// the values, the labels and the file lines.
pub(super) fn sections<'a>(d: &'a Dataset, indices: &'a [u32]) -> [&'a [u8]; 5] {
    let (indptr, _, values) = d.csr();
    [
        bytemuck::cast_slice(indptr),
        bytemuck::cast_slice(indices),
        bytemuck::cast_slice(values),
        bytemuck::cast_slice(&d.labels),
        bytemuck::cast_slice(&d.lines),
    ]
}

/// Writes the cache atomically: a temporary file in the same directory, renamed over `place`.
fn write(place: &Path, key: &Key, d: &Dataset) -> io::Result<()> {
    let path = key.path.as_os_str().as_encoded_bytes();
    let (offsets, len) = layout(path.len(), d.rows(), d.nnz()).ok_or_else(|| io::Error::other("too large"))?;
    let mut head = vec![0u8; offsets[0]];
    head[..8].copy_from_slice(MAGIC);
    head[12..16].copy_from_slice(&VERSION.to_ne_bytes());
    head[16..20].copy_from_slice(&TAG.to_ne_bytes());
    let fields = [
        key.size,
        key.mtime_s as u64,
        key.mtime_ns as u64,
        d.rows() as u64,
        d.features() as u64,
        d.nnz() as u64,
        d.bytes,
        d.max_index_line as u64,
        path.len() as u64,
    ];
    for (k, v) in fields.iter().enumerate() {
        head[24 + 8 * k..32 + 8 * k].copy_from_slice(&v.to_ne_bytes());
    }
    head[HEADER..HEADER + path.len()].copy_from_slice(path);
    let indices = d.x.narrow_indices();
    let sections = sections(d, &indices);
    // Each piece with the zero padding up to where the next begins.
    let ends = [offsets[1], offsets[2], offsets[3], offsets[4], len];
    let zeros = [0u8; ALIGN];
    let mut pieces: Vec<&[u8]> = vec![];
    for (k, s) in sections.iter().enumerate() {
        pieces.push(s);
        pieces.push(&zeros[..ends[k] - offsets[k] - s.len()]);
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&head[12..]);
    for p in &pieces {
        crc.update(p);
    }
    head[8..12].copy_from_slice(&crc.finalize().to_ne_bytes());
    let mut tmp = temporary_beside(place)?;
    {
        let mut out = io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        out.write_all(&head)?;
        for p in &pieces {
            out.write_all(p)?;
        }
        out.flush()?;
    }
    tmp.persist(place).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &Path) -> impl FnOnce() -> Result<Dataset, DataError> + '_ {
        move || super::super::read_libsvm(p)
    }

    fn same(a: &Dataset, b: &Dataset) {
        assert_eq!(a.x, b.x);
        assert_eq!((&a.labels, &a.lines, a.bytes, a.max_index_line), (&b.labels, &b.lines, b.bytes, b.max_index_line));
        assert_eq!(a.name, b.name);
    }

    #[test]
    fn a_hit_returns_the_parsed_data_and_a_change_invalidates_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("d.svm");
        fs::write(&data, "1 1:0.5 3:2\n# c\n-1 2:1e-3 7:4\n").expect("write");
        let (first, note) = load(&data, &CacheDir::Beside, parse(&data)).expect("parses");
        let cache = dir.path().join("d.svm.optc-cache");
        assert_eq!(note, CacheNote::Written { path: cache.clone(), why: None });
        let (hit, note) = load(&data, &CacheDir::Beside, || panic!("a hit must not parse")).expect("hit");
        assert_eq!(note, CacheNote::Hit(cache.clone()));
        assert!(hit.x.is_mapped(), "mapped, not copied");
        same(&hit, &first);

        // Same size, new contents and time: the cache is stale.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(&data, "1 1:0.5 3:2\n# c\n-1 2:1e-3 7:5\n").expect("write");
        let (again, note) = load(&data, &CacheDir::Beside, parse(&data)).expect("parses");
        assert_eq!(note, CacheNote::Written { path: cache.clone(), why: Some("stale (the data file changed)".into()) });
        assert_eq!(again.x.data().last(), Some(&5.0));
        let (hit, _) = load(&data, &CacheDir::Beside, || panic!("a hit must not parse")).expect("hit");
        same(&hit, &again);
    }

    #[test]
    fn a_damaged_cache_is_detected_and_rebuilt() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("d.svm");
        let text: String = (0..200).map(|i| format!("{} {}:{}.5 {}:2\n", i % 2, i + 1, i, i + 300)).collect();
        fs::write(&data, &text).expect("write");
        let (want, _) = load(&data, &CacheDir::Beside, parse(&data)).expect("parses");
        let cache = dir.path().join("d.svm.optc-cache");
        let good = fs::read(&cache).expect("cache");
        let flip = |at: usize| {
            let mut b = good.clone();
            b[at] ^= 0x10;
            b
        };
        for (bytes, why) in [
            (flip(good.len() - 100), "damaged (checksum)"),
            (flip(HEADER + 2000), "damaged (checksum)"),
            (good[..good.len() - 8].to_vec(), "damaged (length)"),
            (flip(0), "damaged (not an optc cache)"),
            (flip(12), "from another version of optc or another kind of machine"),
            (flip(50), "damaged (length)"),
            (vec![], "damaged (not an optc cache)"),
        ] {
            fs::write(&cache, &bytes).expect("damage");
            let (got, note) = load(&data, &CacheDir::Beside, parse(&data)).expect("parses");
            assert_eq!(note, CacheNote::Written { path: cache.clone(), why: Some(why.into()) });
            same(&got, &want);
            assert_eq!(fs::read(&cache).expect("rewritten"), good, "rebuilt as it was");
        }
    }

    #[test]
    fn a_cache_dir_holds_caches_by_name_and_stdin_is_not_cached() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("d.svm");
        fs::write(&data, "1 1:1\n").expect("write");
        let elsewhere = dir.path().join("caches");
        let (_, note) = load(&data, &CacheDir::In(elsewhere.clone()), parse(&data)).expect("parses");
        let CacheNote::Written { path, .. } = note else { panic!("{note:?}") };
        assert_eq!(path.parent(), Some(elsewhere.as_path()));
        assert!(path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("d.svm-")));
        let (_, note) = load(&data, &CacheDir::In(elsewhere), || panic!("hit")).expect("hit");
        assert_eq!(note, CacheNote::Hit(path));
        let (_, note) = load(Path::new("-"), &CacheDir::Beside, || parse(&data)()).expect("parses");
        assert!(matches!(note, CacheNote::Unwritten(_)));
    }
}
