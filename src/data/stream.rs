//! Data larger than memory (`optc run --stream`): a file read as a sequence of row blocks, each
//! a small [`Dataset`] parsed on worker threads while the caller solves on the block before, so
//! memory is the weights plus a few blocks, whatever the file's size.
//!
//! A pass reopens the file and cuts its (decompressed) text into chunks of at most
//! `block_rows` lines on one thread; `workers` threads parse the chunks with the ordinary
//! reader ([`super::read_libsvm_from`]) and hand them back in file order through bounded
//! channels, so at most `3·workers + 2` blocks exist at once. Row line numbers and error
//! positions are the file's, not the chunk's.
//!
//! With `--cache` the first pass also writes the blocks it parsed to a binary log
//! (`cache`), and later passes read that instead of the text.

mod cache;
#[doc(hidden)]
pub use cache::fuzz_place;

use super::cache::{CacheDir, CacheNote, Key, Miss};
use super::{display_name, open_text, read_libsvm_from, DataError, Dataset, LabelMap};
use crate::data::store::Matrix;
use rand::{Rng, SeedableRng};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// The rows of one block when `--block-rows` is not given: large enough that the per-block
/// costs (a channel hand-off, a label mapping, SMM's O(d) catch-up) are small against the
/// rows' own work, small enough that the blocks in flight stay a few hundred MB on wide text
/// rows (debian-files: 16k rows ≈ 50 MB of text, 35 MB parsed).
pub const DEFAULT_BLOCK_ROWS: usize = 1 << 14;

/// A line longer than this is not LIBSVM text (the in-memory reader's bound).
const MAX_LINE_BYTES: u64 = 1 << 30;

/// Where a streamed file is and how it is cut.
#[derive(Clone, Debug)]
pub struct StreamSource {
    pub path: PathBuf,
    pub name: String,
    /// At most this many lines (so rows) per block.
    pub block_rows: usize,
    /// Threads that parse blocks besides the one that reads the file.
    pub workers: usize,
    /// Where `--cache` keeps the parsed blocks (None: no cache).
    pub cache: Option<CacheDir>,
    /// The cache later passes read, once the first pass found or wrote one.
    cached: Option<cache::Log>,
    /// Only these bytes of the file, whole lines, and the file lines before them (one rank's
    /// share of a file several ranks stream: [`StreamSource::share`]).
    range: Option<Share>,
}

/// Bytes `start..end` of a plain text file, both at the start of a line, after `lines` lines.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Share {
    start: u64,
    end: u64,
    lines: usize,
}

impl StreamSource {
    /// `-` (standard input) cannot be streamed: a run reads the data more than once.
    pub fn new(path: &Path, block_rows: usize, workers: usize) -> Result<StreamSource, String> {
        if path == Path::new("-") {
            return Err(
                "--stream reads the data once per pass, and standard input can be read only once: give a file".into()
            );
        }
        if block_rows == 0 {
            return Err("--block-rows must be at least 1".into());
        }
        Ok(StreamSource {
            path: path.to_path_buf(),
            name: display_name(path),
            block_rows,
            workers: workers.max(1),
            cache: None,
            cached: None,
            range: None,
        })
    }

    /// The same source cut to rank `rank`'s share of `ranks`: the lines that start in its
    /// `rank`-th of `ranks` equal byte ranges, so the shares tile the file and each line is one
    /// rank's. Messages keep the file's own line numbers: the lines before the share are
    /// counted once, here. A compressed file cannot be cut (its bytes are not its lines), nor
    /// cached per share.
    pub fn share(self, rank: usize, ranks: usize) -> Result<StreamSource, String> {
        use std::io::{Read, Seek, SeekFrom};
        if self.cache.is_some() {
            return Err("--cache with one file several ranks cut: give one shard file a rank to cache it".into());
        }
        let name = self.name.clone();
        let io = |e: std::io::Error| format!("{name}: {}", super::io_reason(&e));
        let mut file = std::fs::File::open(&self.path).map_err(io)?;
        let mut magic = [0u8; 6];
        let n = file.read(&mut magic).map_err(io)?;
        if [&[0x1f, 0x8b][..], b"BZh", &[0xFD, b'7', b'z', b'X', b'Z', 0x00], &[0x28, 0xB5, 0x2F, 0xFD]]
            .iter()
            .any(|m| magic[..n].starts_with(m))
        {
            return Err(format!(
                "{name} is compressed, so the ranks cannot cut it by bytes: decompress it, or give one shard file a rank"
            ));
        }
        let len = file.metadata().map_err(io)?.len();
        // The first line start at or after byte `at`.
        let mut line_start = |at: u64| -> Result<u64, String> {
            if at == 0 || at >= len {
                return Ok(at.min(len));
            }
            file.seek(SeekFrom::Start(at - 1)).map_err(io)?;
            let mut skipped = vec![];
            std::io::BufReader::new(&mut file).read_until(b'\n', &mut skipped).map_err(io)?;
            Ok(at - 1 + skipped.len() as u64)
        };
        let (start, end) =
            (line_start(len * rank as u64 / ranks as u64)?, line_start(len * (rank + 1) as u64 / ranks as u64)?);
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut lines = 0;
        let mut before = std::io::BufReader::with_capacity(1 << 20, (&mut file).take(start));
        loop {
            let buf = before.fill_buf().map_err(io)?;
            if buf.is_empty() {
                break;
            }
            lines += buf.iter().filter(|&&b| b == b'\n').count();
            let n = buf.len();
            before.consume(n);
        }
        Ok(StreamSource { range: Some(Share { start, end, lines }), ..self })
    }

    /// The same source, its parsed blocks kept in a cache in `dir` (see [`scan`]).
    pub fn with_cache(self, dir: Option<CacheDir>) -> StreamSource {
        StreamSource { cache: dir, ..self }
    }

    /// The cache file passes read, if any.
    pub fn cached(&self) -> Option<&Path> {
        self.cached.as_ref().map(|c| c.path())
    }

    /// One pass over the file: its blocks in file order, each at most `block_rows` rows; from
    /// the cache when [`scan`] found or wrote one.
    pub fn blocks(&self) -> Result<Blocks, DataError> {
        match &self.cached {
            Some(log) => Ok(log.blocks(&self.name).into()),
            None => self.text_blocks(),
        }
    }

    /// Every row of the source in memory, in file order, each with its file line: one pass's
    /// blocks joined (a rank's share under `mpirun` without `--stream`).
    pub fn load(&self) -> Result<Dataset, DataError> {
        let mut joined = Joined::default();
        for block in self.blocks()? {
            joined.push(&block?);
        }
        Ok(joined.dataset(&self.name))
    }

    /// One pass over the text.
    fn text_blocks(&self) -> Result<Blocks, DataError> {
        // Opened here so a missing file is said at once; the reading thread opens its own.
        std::fs::File::open(&self.path).map_err(|e| DataError::Io { file: self.name.clone(), source: e })?;
        let mut inputs = vec![];
        let mut outputs = vec![];
        for _ in 0..self.workers {
            let (chunk_tx, chunk_rx) = sync_channel::<Result<Chunk, DataError>>(1);
            let (block_tx, block_rx) = sync_channel::<Result<Option<Dataset>, DataError>>(1);
            let name = self.name.clone();
            std::thread::spawn(move || parse_chunks(&name, chunk_rx, block_tx));
            inputs.push(chunk_tx);
            outputs.push(block_rx);
        }
        let (path, name, rows, range) = (self.path.clone(), self.name.clone(), self.block_rows, self.range);
        std::thread::spawn(move || match range {
            None => match open_text(&path, false) {
                Ok(reader) => cut_chunks(reader, &name, rows, 0, inputs),
                Err(e) => _ = inputs[0].send(Err(e)),
            },
            Some(share) => match share.reader(&path) {
                Ok(reader) => cut_chunks(reader, &name, rows, share.lines, inputs),
                Err(e) => _ = inputs[0].send(Err(DataError::Io { file: name.clone(), source: e })),
            },
        });
        Ok(Blocks { outputs, next: 0, done: false })
    }
}

impl Share {
    /// The share's bytes of the (plain text) file at `path`.
    fn reader(&self, path: &Path) -> std::io::Result<Box<dyn BufRead + Send>> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(path)?;
        file.seek(SeekFrom::Start(self.start))?;
        Ok(Box::new(std::io::BufReader::with_capacity(1 << 20, file.take(self.end - self.start))))
    }
}

/// The text of up to `block_rows` lines and the file line before its first.
struct Chunk {
    text: Vec<u8>,
    line_offset: usize,
    /// Lines holding an example (neither blank nor a comment): 0 means nothing to parse.
    examples: usize,
}

/// The reading thread: cuts the text into chunks, dealt to the workers in turn (so reading
/// them back in turn restores the file order). Stops at the end, at the first read error
/// (passed on in its place), or when the consumer has gone.
fn cut_chunks(
    mut reader: Box<dyn BufRead>,
    name: &str,
    rows: usize,
    first_line: usize,
    workers: Vec<SyncSender<Result<Chunk, DataError>>>,
) {
    // The file lines before the text the reader gives (a rank's share starts mid-file).
    let mut line_no = first_line;
    for turn in (0..workers.len()).cycle() {
        let mut chunk = Chunk { text: Vec::with_capacity(1 << 20), line_offset: line_no, examples: 0 };
        let mut lines = 0;
        let mut failed = None;
        while lines < rows {
            let start = chunk.text.len();
            match std::io::Read::take(&mut reader, MAX_LINE_BYTES).read_until(b'\n', &mut chunk.text) {
                Ok(0) => break,
                Ok(n) => {
                    lines += 1;
                    let line = &chunk.text[start..];
                    if n as u64 == MAX_LINE_BYTES && line.last() != Some(&b'\n') {
                        // Let the parser word it, at the right line: it sees the same bytes.
                        chunk.examples += 1;
                        break;
                    }
                    let first = line.iter().find(|b| !matches!(b, b' ' | b'\t'));
                    chunk.examples += usize::from(!matches!(first, None | Some(b'#' | b'\n' | b'\r')));
                }
                Err(e) => {
                    failed = Some(DataError::Io { file: name.into(), source: e });
                    break;
                }
            }
        }
        line_no += lines;
        let last = lines < rows || failed.is_some();
        if lines > 0 && workers[turn].send(Ok(chunk)).is_err() {
            return;
        }
        if let Some(e) = failed {
            let next = if lines > 0 { (turn + 1) % workers.len() } else { turn };
            let _ = workers[next].send(Err(e));
            return;
        }
        if last {
            return;
        }
    }
}

/// A parsing thread: chunk → Dataset with the file's line numbers (None for a chunk of blank
/// lines and comments).
fn parse_chunks(
    name: &str,
    chunks: Receiver<Result<Chunk, DataError>>,
    blocks: SyncSender<Result<Option<Dataset>, DataError>>,
) {
    for chunk in chunks {
        let parsed = chunk.and_then(|c| parse_chunk(name, c));
        if blocks.send(parsed).is_err() {
            return;
        }
    }
}

fn parse_chunk(name: &str, chunk: Chunk) -> Result<Option<Dataset>, DataError> {
    if chunk.examples == 0 {
        return Ok(None);
    }
    let offset = chunk.line_offset;
    let mut block = read_libsvm_from(chunk.text.as_slice(), name).map_err(|e| match e {
        DataError::Bad { file, line, col, message, text } => {
            DataError::Bad { file, line: line + offset, col, message, text }
        }
        other => other,
    })?;
    let shift = |l: u32| (l as usize + offset).min(u32::MAX as usize) as u32;
    block.lines.iter_mut().for_each(|l| *l = shift(*l));
    if block.max_index_line > 0 {
        block.max_index_line = shift(block.max_index_line);
    }
    Ok(Some(block))
}

/// The blocks of one pass, in file order. Dropping it mid-pass stops the threads (their next
/// hand-off fails).
pub struct Blocks {
    outputs: Vec<Receiver<Result<Option<Dataset>, DataError>>>,
    next: usize,
    done: bool,
}

impl From<Receiver<Result<Option<Dataset>, DataError>>> for Blocks {
    fn from(r: Receiver<Result<Option<Dataset>, DataError>>) -> Blocks {
        Blocks { outputs: vec![r], next: 0, done: false }
    }
}

impl Iterator for Blocks {
    type Item = Result<Dataset, DataError>;
    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let got = self.outputs[self.next].recv();
            self.next = (self.next + 1) % self.outputs.len();
            match got {
                Ok(Ok(Some(block))) => return Some(Ok(block)),
                Ok(Ok(None)) => continue,
                Ok(Err(e)) => {
                    self.done = true;
                    return Some(Err(e));
                }
                // The reader stopped here: every later chunk would have come after this one.
                Err(_) => self.done = true,
            }
        }
        None
    }
}

/// What the first streamed pass learns: the facts a plan binds, the labels, and a uniform
/// sample of rows for calibrating a step (at most max(block_rows, [`DEFAULT_BLOCK_ROWS`])).
#[derive(Clone, Debug)]
pub struct Scan {
    pub rows: usize,
    /// 1 + the largest feature index (0-based) seen.
    pub features: usize,
    pub nnz: usize,
    pub max_row_norm_sq: f64,
    pub bytes: u64,
    pub blocks: usize,
    /// The file line where the largest feature index first appears.
    pub max_index_line: u32,
    /// The largest block, in rows (≤ the source's `block_rows`).
    pub largest_block: usize,
    /// Distinct raw labels in first-seen order, with the line of each (a dataset of no columns,
    /// for [`LabelMap::fit`]).
    labels: Dataset,
    /// A uniform sample of rows, in file order.
    pub sample: Dataset,
    /// What `--cache` did (None without it).
    pub cache: Option<CacheNote>,
}

/// At most this many distinct labels are kept by a scan (more is not a classification
/// problem optc can hold: W would be d × k).
const MAX_DISTINCT_LABELS: usize = 1 << 16;

/// Blocks joined into one dataset, in the order they are pushed.
struct Joined {
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    labels: Vec<f64>,
    lines: Vec<u32>,
    columns: usize,
    bytes: u64,
    max_index_line: u32,
}

impl Default for Joined {
    fn default() -> Self {
        Joined {
            indptr: vec![0],
            indices: vec![],
            values: vec![],
            labels: vec![],
            lines: vec![],
            columns: 0,
            bytes: 0,
            max_index_line: 0,
        }
    }
}

impl Joined {
    fn push(&mut self, block: &Dataset) {
        let base = *self.indptr.last().unwrap_or(&0);
        self.indptr.extend(block.x.indptr()[1..].iter().map(|p| base + p));
        self.indices.extend(block.x.indices().iter());
        self.values.extend_from_slice(block.x.data());
        self.labels.extend_from_slice(&block.labels);
        self.lines.extend_from_slice(&block.lines);
        if block.features() > self.columns {
            (self.columns, self.max_index_line) = (block.features(), block.max_index_line);
        }
        self.bytes += block.bytes;
    }

    fn dataset(self, name: &str) -> Dataset {
        let x = Matrix::new((self.labels.len(), self.columns), self.indptr, self.indices, self.values);
        Dataset {
            weights: None,
            x,
            labels: self.labels,
            lines: self.lines,
            name: name.into(),
            bytes: self.bytes,
            max_index_line: self.max_index_line,
        }
    }
}

/// [`scan`] that also keeps every row in memory, in one pass over the text (a rank's share
/// under `mpirun` without `--stream`). With a cache, the scan reads or writes it as [`scan`]
/// does and the rows come from a second pass over the cache, which costs no parsing.
pub fn scan_and_load(source: &mut StreamSource, seed: u64) -> Result<(Scan, Dataset), DataError> {
    if source.cache.is_some() {
        let s = scan(source, seed)?;
        let rows = source.load()?;
        return Ok((s, rows));
    }
    source.cached = None;
    let mut joined = Joined::default();
    let s = scan_blocks(source, seed, source.text_blocks()?, |block| joined.push(block))?;
    Ok((s, joined.dataset(&source.name)))
}

/// Reads the file once: sizes, max‖xᵢ‖², labels, and a seeded reservoir sample of rows
/// (Vitter's algorithm R) of at most max(block_rows, [`DEFAULT_BLOCK_ROWS`]) rows: the in-memory
/// run calibrates on 5% of the rows, which this caps so memory stays bounded.
///
/// With `source.cache`, the pass reads a valid cache of the file instead of its text, or else
/// parses the text and writes the cache as it goes; either way later passes of `source` then
/// read the cache. A cache that cannot be used or written is said in [`Scan::cache`], never an
/// error: the text is always there to fall back on.
pub fn scan(source: &mut StreamSource, seed: u64) -> Result<Scan, DataError> {
    source.cached = None;
    let Some(dir) = source.cache.clone() else {
        return scan_blocks(source, seed, source.text_blocks()?, |_| ());
    };
    let unwritten = |why: &str| Some(CacheNote::Unwritten(why.into()));
    let Ok(key) = Key::of(&source.path) else {
        // The reader names the problem (a missing file, a permission) as it always does.
        let s = scan_blocks(source, seed, source.text_blocks()?, |_| ())?;
        return Ok(Scan { cache: unwritten("the data file cannot be examined"), ..s });
    };
    let places = cache::places(&key.path, &dir);
    let mut why = None;
    for place in &places {
        match cache::Log::open(place, &key, source.block_rows) {
            Ok(log) => match scan_blocks(source, seed, log.blocks(&source.name).into(), |_| ()) {
                Ok(s) => {
                    source.cached = Some(log);
                    return Ok(Scan { cache: Some(CacheNote::Hit(place.clone())), ..s });
                }
                Err(DataError::Io { source, .. }) => why = why.or(Some(source.to_string())),
                Err(e) => why = why.or(Some(e.to_string())),
            },
            Err(Miss::Absent) => {}
            Err(Miss::Unusable(w)) => why = why.or(Some(w)),
        }
    }
    let mut writer = cache::Writer::create(&places, &key, source.block_rows);
    let s = scan_blocks(source, seed, source.text_blocks()?, |block| {
        if let Ok(w) = &mut writer {
            if let Err(e) = w.push(block) {
                // Dropping the writer removes its partial file (a full disk is freed at once).
                writer = Err(format!("{}: {e}", w.place().display()));
            }
        }
    })?;
    let note = match writer.and_then(|w| w.finish(&source.path, &key)) {
        Ok(path) => match cache::Log::open(&path, &key, source.block_rows) {
            Ok(log) => {
                source.cached = Some(log);
                CacheNote::Written { path, why }
            }
            Err(_) => CacheNote::Unwritten(format!("{}: not readable once written", path.display())),
        },
        Err(e) => CacheNote::Unwritten(e),
    };
    Ok(Scan { cache: Some(note), ..s })
}

/// The scan proper over one pass's `blocks`, each handed to `keep` as it goes by.
fn scan_blocks(
    source: &StreamSource,
    seed: u64,
    blocks: Blocks,
    mut keep: impl FnMut(&Dataset),
) -> Result<Scan, DataError> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5ca9_b10c);
    let mut s = Scan {
        rows: 0,
        features: 0,
        nnz: 0,
        max_row_norm_sq: 0.0,
        bytes: 0,
        blocks: 0,
        max_index_line: 0,
        largest_block: 0,
        labels: empty(&source.name),
        sample: empty(&source.name),
        cache: None,
    };
    let mut seen = std::collections::HashSet::new();
    let (mut distinct, mut distinct_lines) = (vec![], vec![]);
    let mut reservoir: Vec<SampleRow> = vec![];
    let capacity = source.block_rows.max(DEFAULT_BLOCK_ROWS);
    for block in blocks {
        let block = block?;
        keep(&block);
        s.blocks += 1;
        s.bytes = s.bytes.saturating_add(block.bytes);
        s.nnz += block.nnz();
        s.largest_block = s.largest_block.max(block.rows());
        s.max_row_norm_sq = s.max_row_norm_sq.max(block.max_row_norm_sq());
        if block.features() > s.features {
            s.features = block.features();
            s.max_index_line = block.max_index_line;
        }
        let (indptr, indices, values) = block.csr();
        for i in 0..block.rows() {
            let y = block.labels[i];
            if distinct.len() < MAX_DISTINCT_LABELS && seen.insert(y.to_bits()) {
                distinct.push(y);
                distinct_lines.push(block.lines[i]);
            }
            let row = || SampleRow {
                label: y,
                line: block.lines[i],
                indices: indices.range(indptr[i]..indptr[i + 1]).to_vec(),
                values: values[indptr[i]..indptr[i + 1]].to_vec(),
            };
            let n = s.rows + i;
            if reservoir.len() < capacity {
                reservoir.push(row());
            } else {
                let k = rng.gen_range(0..=n);
                if k < reservoir.len() {
                    reservoir[k] = row();
                }
            }
        }
        s.rows += block.rows();
    }
    if s.rows == 0 {
        return Err(DataError::Bad {
            file: source.name.clone(),
            line: 1,
            col: 1,
            message: "no examples: the file is empty or holds only blank lines and comments".into(),
            text: String::new(),
        });
    }
    let n = distinct.len();
    s.labels = Dataset {
        weights: None,
        x: Matrix::new((n, 0), vec![0; n + 1], vec![], vec![]),
        labels: distinct,
        lines: distinct_lines,
        name: source.name.clone(),
        bytes: 0,
        max_index_line: 0,
    };
    reservoir.sort_by_key(|r| r.line);
    s.sample = sample_dataset(&source.name, reservoir, s.features);
    Ok(s)
}

impl Scan {
    /// The label mapping training fits, from the distinct labels (errors name their line).
    pub fn label_map(&self, kind: crate::stdlib::LabelKind) -> Result<LabelMap, super::LabelError> {
        LabelMap::fit(kind, &self.labels)
    }

    /// The distinct raw labels, in first-seen order.
    pub fn distinct_labels(&self) -> &[f64] {
        &self.labels.labels
    }

    /// Makes `all` (every rank's labels, in rank order) the labels, each once in its first
    /// place, so that every rank numbers the classes alike; a label of this file keeps its line.
    pub fn share_labels(&mut self, all: &[f64]) {
        let own = std::mem::take(&mut self.labels.labels);
        let own_lines = std::mem::take(&mut self.labels.lines);
        let (mut labels, mut lines): (Vec<f64>, Vec<u32>) = (vec![], vec![]);
        for &y in all {
            if !labels.iter().any(|l| l.to_bits() == y.to_bits()) {
                labels.push(y);
                lines.push(own.iter().position(|l| l.to_bits() == y.to_bits()).map_or(0, |k| own_lines[k]));
            }
        }
        let n = labels.len();
        self.labels = Dataset {
            weights: None,
            x: Matrix::new((n, 0), vec![0; n + 1], vec![], vec![]),
            labels,
            lines,
            ..self.labels.clone()
        };
    }

    /// One-vs-rest's classes, when a two-class loss meets more than two labels
    /// ([`LabelMap::one_vs_rest`]).
    pub fn one_vs_rest(&self, kind: crate::stdlib::LabelKind) -> Option<LabelMap> {
        LabelMap::one_vs_rest(kind, &self.labels)
    }

    /// The facts a plan's parameters are bound from, with the weights `features` long.
    pub fn facts(&self, features: usize, classes: usize) -> super::DataFacts {
        super::DataFacts {
            rows: self.rows,
            features,
            classes,
            op_rows: 0,
            nnz: self.nnz,
            max_row_norm_sq: Some(self.max_row_norm_sq),
            mean_weight: 1.0,
            max_weight: 1.0,
            gram_norm: None,
        }
    }
}

struct SampleRow {
    label: f64,
    line: u32,
    indices: Vec<u32>,
    values: Vec<f64>,
}

fn sample_dataset(name: &str, rows: Vec<SampleRow>, features: usize) -> Dataset {
    let (mut ptr, mut idx, mut val, mut labels, mut lines) = (vec![0], vec![], vec![], vec![], vec![]);
    for r in rows {
        idx.extend_from_slice(&r.indices);
        val.extend_from_slice(&r.values);
        ptr.push(idx.len());
        labels.push(r.label);
        lines.push(r.line);
    }
    Dataset {
        weights: None,
        x: Matrix::new((labels.len(), features), ptr, idx, val),
        labels,
        lines,
        name: format!("{name} (sample)"),
        bytes: 0,
        max_index_line: 0,
    }
}

fn empty(name: &str) -> Dataset {
    Dataset {
        weights: None,
        x: Matrix::new((0, 0), vec![0], vec![], vec![]),
        labels: vec![],
        lines: vec![],
        name: name.into(),
        bytes: 0,
        max_index_line: 0,
    }
}

/// A streamed file bound to a model: each block's labels mapped, its view `features` wide.
pub struct Streamed {
    pub source: StreamSource,
    pub label_map: LabelMap,
    pub features: usize,
    pub classes: usize,
    /// The rows' weights, given to each block (a weighted model's `--weights`, `--class-weight`).
    pub weights: Option<super::RowWeights>,
}

/// Why a pass over streamed data stopped.
#[derive(Debug)]
pub enum PassError<E> {
    /// The file: unreadable, a bad line, or changed since the scan (a label or feature it did
    /// not have then).
    Data(String),
    /// What the caller's block function returned.
    Stopped(E),
}

impl Streamed {
    /// Calls `f` on every block of one pass in file order, with the block as a plan reads it
    /// and the file line of each of its rows.
    pub fn pass<E>(&self, mut f: impl FnMut(&super::DataView, &[u32]) -> Result<(), E>) -> Result<(), PassError<E>> {
        let data = |e: DataError| {
            let ctx = e.context();
            PassError::Data(if ctx.is_empty() { e.to_string() } else { format!("{e}\n{ctx}") })
        };
        let mut offset = 0;
        for block in self.source.blocks().map_err(data)? {
            let mut block = block.map_err(data)?;
            if let Some(w) = &self.weights {
                block.weights = Some(w.block(offset, &block.labels));
            }
            offset += block.rows();
            if block.features() > self.features {
                return Err(PassError::Data(format!(
                    "{}:{}: feature index {} is beyond the {} features the first pass found: did the file change during the run?",
                    self.source.name,
                    block.max_index_line,
                    block.features(),
                    self.features
                )));
            }
            let y = self.label_map.apply(&block).map_err(|e| PassError::Data(e.to_string()))?;
            let view = block.view(&y, self.features).with_classes(self.classes);
            f(&view, &block.lines).map_err(PassError::Stopped)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
