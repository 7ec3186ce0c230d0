//! The parallel reader: one thread reads (and decompresses) the text in large blocks cut at a
//! line end, parser threads turn blocks into CSR pieces, and the calling thread stitches the
//! pieces in file order. Decompression thus overlaps parsing, and parsing uses every core.
//!
//! Blocks travel in slots (a text buffer and the rows parsed from it) that go round from the
//! reader to a parser to the stitcher and back to the reader: a fixed number of slots bounds
//! the memory in flight and reuses the buffers, so no block pays for fresh pages. A block's
//! lines are numbered from 1 within it; the stitcher knows how many lines came before, so
//! rows and messages get the same file line the sequential reader gives them.

use super::line::{parse_line, LineError, Rows};
use super::{bad_line, finish, saturate, too_long, DataError};
use crate::data::Dataset;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Mutex;

/// How the parallel reader splits its work.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Blocks {
    /// Parser threads (besides the reading thread and the stitching caller).
    pub threads: usize,
    /// Bytes of text per block (a block ends at the last line end within it).
    pub block: usize,
    /// A line this long or longer is an error, as in the sequential reader.
    pub max_line: u64,
}

/// A block of text on its way round, and what was parsed from it.
#[derive(Default)]
struct Slot {
    text: Vec<u8>,
    rows: Rows,
    /// Lines in `text` (the last one may lack its `\n` at the end of the file).
    lines: usize,
    /// The first bad line: its number within the block and what is wrong.
    error: Option<(usize, DataError)>,
}

/// What reaches the stitcher, numbered by block.
enum Done {
    Parsed(Box<Slot>),
    Io(io::Error),
    /// No block has this number or a later one.
    End,
}

pub(crate) fn read_blocks(reader: Box<dyn Read + Send>, name: &str, cfg: Blocks) -> Result<Dataset, DataError> {
    let threads = cfg.threads.max(1);
    let slots = 2 * threads + 2;
    let (work_tx, work_rx) = sync_channel::<(usize, Box<Slot>)>(slots);
    let work_rx = Mutex::new(work_rx);
    std::thread::scope(|scope| {
        let (free_tx, free_rx) = sync_channel::<Box<Slot>>(slots);
        for _ in 0..slots {
            let _ = free_tx.send(Box::default());
        }
        let (done_tx, done_rx) = channel::<(usize, Done)>();
        let done_reader = done_tx.clone();
        scope.spawn(move || produce(reader, cfg, free_rx, work_tx, done_reader));
        for _ in 0..threads {
            let (work_rx, done_tx) = (&work_rx, done_tx.clone());
            scope.spawn(move || parse_blocks(work_rx, done_tx, name, cfg.max_line));
        }
        drop(done_tx);
        // Returning drops free_tx and done_rx: the reader and the parsers then stop at their
        // next hand-over, so an error on line 3 does not wait for the rest of the file.
        stitch(done_rx, free_tx, name)
    })
}

/// The reading thread: fills slots with whole lines, in file order.
fn produce(
    mut reader: Box<dyn Read + Send>,
    cfg: Blocks,
    free: Receiver<Box<Slot>>,
    work: SyncSender<(usize, Box<Slot>)>,
    done: Sender<(usize, Done)>,
) {
    let mut carry: Vec<u8> = vec![];
    let mut k = 0usize;
    loop {
        let Ok(mut slot) = free.recv() else { return };
        slot.text.clear();
        slot.text.reserve(cfg.block + carry.len());
        slot.text.extend_from_slice(&carry);
        carry.clear();
        let mut searched = slot.text.len(); // text[..searched] has no line end
        let cut = loop {
            let len = slot.text.len();
            let want = if len < cfg.block { cfg.block - len } else { cfg.block };
            let read = match (&mut reader).take(want as u64).read_to_end(&mut slot.text) {
                Ok(n) => n,
                Err(e) => {
                    // The lines read whole before the error are parsed first, as the
                    // sequential reader would have parsed them.
                    let whole = memchr::memrchr(b'\n', &slot.text).map_or(0, |i| i + 1);
                    slot.text.truncate(whole);
                    if whole > 0 && work.send((k, slot)).is_ok() {
                        k += 1;
                    }
                    let _ = done.send((k, Done::Io(e)));
                    return;
                }
            };
            if read == 0 {
                break None; // the end of the file: the slot holds the last line(s)
            }
            match memchr::memrchr(b'\n', &slot.text[searched..]) {
                Some(i) => break Some(searched + i + 1),
                // One line longer than a block: read on, unless it is already too long to
                // be a line (the parser then says so, as the sequential reader does).
                None if slot.text.len() as u64 >= cfg.max_line => {
                    let _ = work.send((k, slot));
                    return;
                }
                None => searched = slot.text.len(),
            }
        };
        let last = cut.is_none();
        if let Some(cut) = cut {
            carry.extend_from_slice(&slot.text[cut..]);
            slot.text.truncate(cut);
        }
        if !slot.text.is_empty() {
            if work.send((k, slot)).is_err() {
                return;
            }
            k += 1;
        }
        if last {
            let _ = done.send((k, Done::End));
            return;
        }
    }
}

/// A parser thread: parses the blocks it is handed until there are no more.
fn parse_blocks(work: &Mutex<Receiver<(usize, Box<Slot>)>>, done: Sender<(usize, Done)>, name: &str, max_line: u64) {
    loop {
        let job = match work.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((k, mut slot)) = job else { return };
        parse_block(&mut slot, name, max_line);
        if done.send((k, Done::Parsed(slot))).is_err() {
            return;
        }
    }
}

/// Parses a block's lines into its rows, up to the first bad one.
fn parse_block(slot: &mut Slot, name: &str, max_line: u64) {
    slot.rows.clear();
    slot.error = None;
    let text = &slot.text;
    let (mut start, mut line) = (0usize, 0usize);
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        line += 1;
        let l = &text[start..end];
        if l.len() as u64 >= max_line {
            slot.error = Some((line, too_long(name, 0, &l[..max_line as usize], max_line)));
            break;
        }
        if let Err(e) = parse_line(l, saturate(line), &mut slot.rows) {
            slot.error = Some((line, bad_line(name, 0, l, e)));
            break;
        }
        start = end + 1;
    }
    slot.lines = line;
}

/// The calling thread: puts the parsed blocks together in file order.
fn stitch(done: Receiver<(usize, Done)>, free: SyncSender<Box<Slot>>, name: &str) -> Result<Dataset, DataError> {
    let mut out = Rows::default();
    let (mut next, mut lines, mut bytes) = (0usize, 0usize, 0u64);
    let mut pending: BTreeMap<usize, Done> = BTreeMap::new();
    loop {
        let Ok((k, msg)) = done.recv() else {
            // Every sender is gone without an end: a thread panicked (its panic follows).
            return Err(DataError::Io { file: name.into(), source: io::Error::other("the reader stopped") });
        };
        pending.insert(k, msg);
        while let Some(msg) = pending.remove(&next) {
            match msg {
                Done::Parsed(slot) => {
                    if let Some((at, mut e)) = slot.error {
                        if let DataError::Bad { line, .. } = &mut e {
                            *line = lines + at;
                        }
                        return Err(e);
                    }
                    append(&mut out, &slot.rows, lines).map_err(|need| {
                        let at = lines + slot.rows.lines.first().map_or(1, |&l| l as usize);
                        let message = format!("out of memory: holding the data read so far needs {need} more");
                        bad_line(name, at, b"", LineError { col: 1, message })
                    })?;
                    lines += slot.lines;
                    bytes += slot.text.len() as u64;
                    next += 1;
                    let _ = free.send(slot);
                }
                Done::Io(e) => return Err(DataError::Io { file: name.into(), source: e }),
                Done::End => return finish(out, name, lines, bytes),
            }
        }
    }
}

/// Appends a block's rows (lines numbered within it) after `base` lines; Err: the memory it
/// could not get.
fn append(out: &mut Rows, block: &Rows, base: usize) -> Result<(), String> {
    let need = |n: usize| crate::memory::bytes_text(n as u64);
    let nnz = block.indices.len();
    out.indices.try_reserve(nnz).map_err(|_| need(nnz * 12))?;
    out.values.try_reserve(nnz).map_err(|_| need(nnz * 12))?;
    let m = block.rows();
    out.indptr.try_reserve(m).map_err(|_| need(m * 16))?;
    out.labels.try_reserve(m).map_err(|_| need(m * 16))?;
    out.lines.try_reserve(m).map_err(|_| need(m * 16))?;
    let offset = out.indices.len();
    out.indices.extend_from_slice(&block.indices);
    out.values.extend_from_slice(&block.values);
    out.indptr.extend(block.indptr[1..].iter().map(|p| p + offset));
    out.labels.extend_from_slice(&block.labels);
    out.lines.extend(block.lines.iter().map(|&l| saturate(base + l as usize)));
    if block.max_index > out.max_index {
        out.max_index = block.max_index;
        out.max_index_line = saturate(base + block.max_index_line as usize);
    }
    Ok(())
}
