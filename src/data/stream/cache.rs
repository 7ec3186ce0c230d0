//! `--stream --cache`: the blocks of a streamed file kept as they were parsed, in a binary log
//! that the first pass writes as it goes, so that every later pass (and every later run) reads
//! bytes instead of parsing text. A streamed epoch from text runs at the parser's speed, a few
//! times slower than the solver's epoch; from the log it runs at the solver's own speed, as
//! long as the disk (or the page cache) gives ~12 bytes per non-zero that fast. Vowpal
//! Wabbit's `--cache_file` is the same idea.
//!
//! Never trusted, like the in-memory cache (`data::cache`), whose key and places it shares: the
//! source's canonical path, size and modification time, the format version, the machine's byte
//! order and pointer width, and here the block size too, since a pass hands the solver the
//! blocks as they were cut. The log ends in a trailer that records its length, so a file cut
//! short is not used; every block carries a CRC-32 checked when it is read back, and its
//! matrix is structure-checked as the in-memory cache's is. The log is written to a temporary
//! file and renamed into place only when whole and only if the source did not change meanwhile.
//!
//! Unlike the in-memory cache it is read, not mapped: a mapped file larger than memory would
//! count its resident pages against the run, and a pass needs each block once.
//!
//! Layout (native byte order): a 64-byte header and the canonical path of the source; then per
//! block a 48-byte frame (rows, non-zeros, features, text bytes, line of the largest feature
//! index: u64; CRC-32 of the frame's other bytes and the arrays: u32; 4 zero bytes) followed by
//! its arrays: row pointers
//! (usize × rows+1), column indices (u32 × nnz), values (f64 × nnz), labels (f64 × rows), file
//! lines (u32 × rows); then a trailer of the frame's size (u64::MAX where a frame has its row
//! count, the file's length, the largest block's bytes after its frame, and a CRC-32 of those).

use crate::data::cache::{sections, temporary_beside, u32_at, u64_at, CacheDir, Key, Miss, TAG};
use crate::data::store;
use crate::data::{DataError, Dataset};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"OPTCSTRM";
/// Bump whenever the layout or the meaning of a field changes (4: a block's checksum covers its
/// frame too).
const VERSION: u32 = 4;
/// The longest source path a header holds: more is a damaged header, not a path to allocate.
const MAX_PATH: u64 = 1 << 16;
const HEADER: usize = 64;
const FRAME: usize = 48;
/// What stands in the trailer where a frame has its row count.
const TRAILER: u64 = u64::MAX;
/// What a streamed cache's file name ends in (`FILE.optc-stream`).
const EXT: &str = "optc-stream";

/// The files a streamed cache of `source` may be in, in the order they are tried.
pub(super) fn places(source: &Path, dir: &CacheDir) -> Vec<PathBuf> {
    crate::data::cache::places(source, dir, EXT)
}

/// The frame before a block's arrays.
struct Frame {
    rows: u64,
    nnz: u64,
    features: u64,
    bytes: u64,
    max_index_line: u64,
    crc: u32,
}

impl Frame {
    fn encode(&self) -> [u8; FRAME] {
        let mut b = [0u8; FRAME];
        for (k, v) in [self.rows, self.nnz, self.features, self.bytes, self.max_index_line].iter().enumerate() {
            b[8 * k..8 * k + 8].copy_from_slice(&v.to_ne_bytes());
        }
        b[40..44].copy_from_slice(&self.crc.to_ne_bytes());
        b
    }

    /// The block's checksum: of every byte of its frame but the checksum's own, then of
    /// `arrays`, so that no byte of a block is used unchecked.
    fn checksum(frame: &[u8; FRAME], arrays: &[&[u8]]) -> u32 {
        let mut crc = crc32fast::Hasher::new();
        crc.update(&frame[..40]);
        crc.update(&frame[44..]);
        arrays.iter().for_each(|a| crc.update(a));
        crc.finalize()
    }

    fn decode(b: &[u8; FRAME]) -> Frame {
        let u = |k: usize| u64_at(b, 8 * k);
        Frame { rows: u(0), nnz: u(1), features: u(2), bytes: u(3), max_index_line: u(4), crc: u32_at(b, 40) }
    }
}

/// The end of a log of `len` bytes, trailer included, whose largest block is `largest` bytes
/// after its frame: read back before any block, so a log cut short (or with anything after its
/// end) is not used, and a damaged frame cannot make a pass allocate more than a block the log
/// holds (the block's own checksum is known only once its bytes are read).
fn trailer(len: u64, largest: u64) -> [u8; FRAME] {
    let mut b = [0u8; FRAME];
    b[..8].copy_from_slice(&TRAILER.to_ne_bytes());
    b[8..16].copy_from_slice(&len.to_ne_bytes());
    b[16..24].copy_from_slice(&largest.to_ne_bytes());
    let crc = crc32fast::hash(&b[..24]);
    b[24..28].copy_from_slice(&crc.to_ne_bytes());
    b
}

/// The header and path: what the log was made from, checksummed.
fn header(key: &Key, block_rows: usize) -> Vec<u8> {
    let path = key.path.as_os_str().as_encoded_bytes();
    let mut head = vec![0u8; HEADER + path.len()];
    head[..8].copy_from_slice(MAGIC);
    head[12..16].copy_from_slice(&VERSION.to_ne_bytes());
    head[16..20].copy_from_slice(&TAG.to_ne_bytes());
    let fields = [key.size, key.mtime_s as u64, key.mtime_ns as u64, block_rows as u64, path.len() as u64];
    for (k, v) in fields.iter().enumerate() {
        head[24 + 8 * k..32 + 8 * k].copy_from_slice(&v.to_ne_bytes());
    }
    head[HEADER..].copy_from_slice(path);
    let crc = crc32fast::hash(&head[12..]);
    head[8..12].copy_from_slice(&crc.to_ne_bytes());
    head
}

/// A log being written during the first pass.
pub(super) struct Writer {
    place: PathBuf,
    out: BufWriter<crate::temporary::Temporary>,
    /// Bytes written so far.
    at: u64,
    /// The largest block's bytes after its frame.
    largest: u64,
}

impl Writer {
    /// A temporary file beside the first of `places` where one can be made.
    pub(super) fn create(places: &[PathBuf], key: &Key, block_rows: usize) -> Result<Writer, String> {
        let mut failures = vec![];
        for place in places {
            match Writer::create_at(place, key, block_rows) {
                Ok(w) => return Ok(w),
                Err(e) => failures.push(format!("{}: {e}", place.display())),
            }
        }
        Err(failures.join("; "))
    }

    fn create_at(place: &Path, key: &Key, block_rows: usize) -> io::Result<Writer> {
        let head = header(key, block_rows);
        let mut out = BufWriter::with_capacity(1 << 20, temporary_beside(place)?);
        out.write_all(&head)?;
        Ok(Writer { place: place.to_path_buf(), out, at: head.len() as u64, largest: 0 })
    }

    /// Where the log goes once whole.
    pub(super) fn place(&self) -> &Path {
        &self.place
    }

    pub(super) fn push(&mut self, d: &Dataset) -> io::Result<()> {
        let indices = d.x.narrow_indices();
        let arrays = sections(d, &indices);
        let mut frame = Frame {
            rows: d.rows() as u64,
            nnz: d.nnz() as u64,
            features: d.features() as u64,
            bytes: d.bytes,
            max_index_line: d.max_index_line as u64,
            crc: 0,
        };
        frame.crc = Frame::checksum(&frame.encode(), &arrays);
        self.out.write_all(&frame.encode())?;
        for a in arrays {
            self.out.write_all(a)?;
        }
        let body = arrays.iter().map(|a| a.len()).sum::<usize>() as u64;
        self.at += FRAME as u64 + body;
        self.largest = self.largest.max(body);
        Ok(())
    }

    /// Ends the log and renames it into place, unless the source changed since `key` was
    /// taken (then what was parsed may not be what the file now holds).
    pub(super) fn finish(mut self, source: &Path, key: &Key) -> Result<PathBuf, String> {
        let place = self.place.clone();
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", place.display());
        self.out.write_all(&trailer(self.at + FRAME as u64, self.largest)).map_err(|e| failed(&e))?;
        let tmp = self.out.into_inner().map_err(|e| failed(&e.error()))?;
        if Key::of(source).ok().as_ref() != Some(key) {
            return Err("the data file changed while it was read".into());
        }
        tmp.persist(&place).map_err(|e| failed(&e.error))?;
        Ok(place)
    }
}

/// The fuzzers' way in (`fuzz_harness::stream_log`): writes, where a run with `--cache=DIR`
/// looks for the log of `source`, the header such a run expects followed by `body` (the
/// frames, arrays and trailer of a log, the trailer's length counted from the end of the
/// header so that a body does not depend on where the fuzzer runs: it is moved to count from
/// the file's start, and its checksum made anew only if it held before). With `reseal`, every
/// frame's checksum and the trailer are recomputed over what `body` holds, so the structure
/// checks behind them are reached too.
#[doc(hidden)]
pub fn fuzz_place(source: &Path, dir: &Path, block_rows: usize, body: &[u8], reseal: bool) -> io::Result<PathBuf> {
    let key = Key::of(source)?;
    let place = places(&key.path, &CacheDir::In(dir.to_path_buf())).remove(0);
    let mut log = header(&key, block_rows);
    let start = log.len();
    log.extend_from_slice(body);
    if log.len() >= start + FRAME {
        let end = log.len() - FRAME;
        let last: [u8; FRAME] = log[end..].try_into().expect("a trailer's bytes");
        let (len, largest) = (u64_at(&last, 8), u64_at(&last, 16));
        let moved = trailer(len.wrapping_add(start as u64), largest);
        let sealed = last == trailer(len, largest);
        log[end + 8..end + 16].copy_from_slice(&moved[8..16]);
        if sealed {
            log[end..].copy_from_slice(&moved);
        }
    }
    if reseal && log.len() >= start + FRAME {
        let end = log.len() - FRAME;
        let (mut at, mut largest) = (start, 0u64);
        while at + FRAME <= end {
            let (rows, nnz) = (u64_at(&log, at), u64_at(&log, at + 8));
            let size =
                nnz.checked_mul(12).zip(rows.checked_mul(20)).and_then(|(a, b)| a.checked_add(b)?.checked_add(8));
            let Some(size) = size.and_then(|b| usize::try_from(b).ok()).filter(|&b| at + FRAME + b <= end) else {
                break;
            };
            let frame: [u8; FRAME] = log[at..at + FRAME].try_into().expect("a frame's bytes");
            let crc = Frame::checksum(&frame, &[&log[at + FRAME..at + FRAME + size]]);
            log[at + 40..at + 44].copy_from_slice(&crc.to_ne_bytes());
            largest = largest.max(size as u64);
            at += FRAME + size;
        }
        let len = log.len() as u64;
        log[end..].copy_from_slice(&trailer(len, largest));
    }
    std::fs::write(&place, log)?;
    Ok(place)
}

/// A log whose header matches the source and whose trailer is where its length says.
#[derive(Clone, Debug)]
pub struct Log {
    path: PathBuf,
    /// Held open: a pass reads by offset, so passes never share a file position, and a log
    /// renamed over by another run stays the one this run checked.
    file: Arc<File>,
    /// Where the first block's frame begins and the trailer's does.
    start: u64,
    end: u64,
    block_rows: usize,
    /// The largest block's bytes after its frame, from the checksummed trailer.
    largest: u64,
    /// The source's length, from the header: no block was parsed from more text than that.
    source_bytes: u64,
}

impl Log {
    pub(super) fn open(place: &Path, key: &Key, block_rows: usize) -> Result<Log, Miss> {
        let file = match File::open(place) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Miss::Absent),
            Err(e) => return Err(Miss::Unusable(format!("unreadable ({e})"))),
        };
        let damaged = |what: &str| Miss::Unusable(format!("damaged ({what})"));
        let len = file.metadata().map_err(|e| Miss::Unusable(format!("unreadable ({e})")))?.len();
        let mut head = [0u8; HEADER];
        if len < (HEADER + FRAME) as u64 || file.read_exact_at(&mut head, 0).is_err() || &head[..8] != MAGIC {
            return Err(damaged("not an optc stream cache"));
        }
        if u32_at(&head, 12) != VERSION || u32_at(&head, 16) != TAG {
            return Err(Miss::Unusable("from another version of optc or another kind of machine".into()));
        }
        let path_len = u64_at(&head, 56);
        if path_len > MAX_PATH || path_len > len - (HEADER + FRAME) as u64 {
            return Err(damaged("the header"));
        }
        let mut whole = head.to_vec();
        whole.resize(HEADER + path_len as usize, 0);
        file.read_exact_at(&mut whole[HEADER..], HEADER as u64).map_err(|_| damaged("the header"))?;
        if crc32fast::hash(&whole[12..]) != u32_at(&head, 8) {
            return Err(damaged("the header's checksum"));
        }
        let written_with = u64_at(&head, 48);
        if whole != header(key, written_with as usize) {
            return Err(Miss::Unusable("stale (the data file changed)".into()));
        }
        if written_with != block_rows as u64 {
            return Err(Miss::Unusable(format!("written with --block-rows {written_with}")));
        }
        let mut last = [0u8; FRAME];
        file.read_exact_at(&mut last, len - FRAME as u64).map_err(|_| damaged("cut short"))?;
        let largest = u64_at(&last, 16);
        if last != trailer(len, largest) {
            return Err(damaged("cut short"));
        }
        Ok(Log {
            path: place.to_path_buf(),
            file: Arc::new(file),
            start: whole.len() as u64,
            end: len - FRAME as u64,
            block_rows,
            largest,
            source_bytes: key.size,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One pass: the blocks in the order they were written, read and checked on a thread of
    /// their own, handed over one at a time (so at most three exist: being read, waiting,
    /// being solved on). The rows are named as lines of `name`, the source.
    pub(super) fn blocks(&self, name: &str) -> Receiver<Result<Option<Dataset>, DataError>> {
        let (tx, rx) = sync_channel(1);
        let (log, name) = (self.clone(), name.to_string());
        std::thread::spawn(move || {
            let mut at = log.start;
            while at < log.end {
                match log.block_at(at, &name) {
                    Ok((block, next)) => {
                        if tx.send(Ok(Some(block))).is_err() {
                            return;
                        }
                        at = next;
                    }
                    Err(e) => {
                        let file = format!("{} (the stream cache of {name})", log.path.display());
                        let _ = tx.send(Err(DataError::Io { file, source: e }));
                        return;
                    }
                }
            }
        });
        rx
    }

    /// The block whose frame is at `at`, and where the next frame begins.
    fn block_at(&self, at: u64, name: &str) -> io::Result<(Dataset, u64)> {
        let damaged = |what: &str| {
            io::Error::new(io::ErrorKind::InvalidData, format!("damaged ({what} of the block at byte {at})"))
        };
        let mut frame = [0u8; FRAME];
        self.file.read_exact_at(&mut frame, at)?;
        let f = Frame::decode(&frame);
        if f.rows == 0 || f.rows > self.block_rows as u64 {
            return Err(damaged("the row count"));
        }
        let (rows, nnz) = (f.rows as usize, usize::try_from(f.nnz).map_err(|_| damaged("the size"))?);
        let body = (nnz.checked_mul(12)).zip(rows.checked_mul(20)).and_then(|(a, b)| a.checked_add(b)?.checked_add(8));
        let fits = body.is_some_and(|b| {
            let b = b as u64;
            b <= self.largest && at.checked_add(FRAME as u64 + b).is_some_and(|e| e <= self.end)
        });
        if !fits {
            return Err(damaged("the size"));
        }
        let mut indptr = vec![0usize; rows + 1];
        let mut indices = vec![0u32; nnz];
        let mut values = vec![0f64; nnz];
        let mut labels = vec![0f64; rows];
        let mut lines = vec![0u32; rows];
        let mut pos = at + FRAME as u64;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&frame[..40]);
        crc.update(&frame[44..]);
        for bytes in [
            bytemuck::cast_slice_mut::<usize, u8>(&mut indptr),
            bytemuck::cast_slice_mut(&mut indices),
            bytemuck::cast_slice_mut(&mut values),
            bytemuck::cast_slice_mut(&mut labels),
            bytemuck::cast_slice_mut(&mut lines),
        ] {
            self.file.read_exact_at(bytes, pos)?;
            crc.update(bytes);
            pos += bytes.len() as u64;
        }
        if crc.finalize() != f.crc {
            return Err(damaged("the checksum"));
        }
        let features = usize::try_from(f.features).map_err(|_| damaged("the width"))?;
        let x = store::csr((rows, features), indptr, indices, values).map_err(|_| damaged("the matrix structure"))?;
        if labels.iter().any(|v| !v.is_finite()) || x.data().iter().any(|v| !v.is_finite()) {
            return Err(damaged("the values"));
        }
        let max_index_line = u32::try_from(f.max_index_line).map_err(|_| damaged("a line number"))?;
        if f.bytes > self.source_bytes {
            return Err(damaged("the text bytes"));
        }
        Ok((Dataset { weights: None, x, labels, lines, name: name.into(), bytes: f.bytes, max_index_line }, pos))
    }
}
