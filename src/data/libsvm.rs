//! The LIBSVM/svmlight reader: `label idx:val idx:val ... # comment`, 1-based ascending indices.
//!
//! It streams (one line buffer, reused), sniffs gzip/bzip2/xz/zstd by their magic bytes, and
//! stops at the first bad token with the file, line and column and what was wrong, because a
//! silently skipped line (VW's old behaviour) trains on data the user never meant.

mod line;
mod parallel;

use super::Dataset;
use line::{parse_line, LineError, Rows};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// A problem in a data file, with where it is.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{file}: {source}")]
    Io { file: String, source: io::Error },
    #[error("{file}:{line}:{col}: {message}")]
    Bad { file: String, line: usize, col: usize, message: String, text: String },
}

impl DataError {
    /// The offending line with a caret under the column (empty for IO errors).
    pub fn context(&self) -> String {
        match self {
            DataError::Io { .. } => String::new(),
            DataError::Bad { col, text, .. } => {
                let shown: String = text.chars().take(100).collect();
                let caret = " ".repeat(col.saturating_sub(1).min(100));
                format!("  | {shown}\n  | {caret}^")
            }
        }
    }
}

/// Opens a data file (`-` is standard input), transparently decompressing gzip, bzip2, xz or
/// zstd. With `progress`, a spinner on a terminal shows the bytes read.
pub fn open_text(path: &Path, progress: bool) -> Result<Box<dyn BufRead + Send>, DataError> {
    let name = display_name(path);
    let io_err = |e| DataError::Io { file: name.clone(), source: e };
    let raw: Box<dyn Read + Send> =
        if path == Path::new("-") { Box::new(io::stdin()) } else { Box::new(File::open(path).map_err(io_err)?) };
    let raw = super::progress::ReadProgress::new(raw, &name, progress);
    sniff(BufReader::with_capacity(1 << 20, raw)).map_err(io_err)
}

/// Wraps a reader in the decompressor its first bytes call for (or none).
pub fn sniff<R: BufRead + Send + 'static>(mut raw: R) -> io::Result<Box<dyn BufRead + Send>> {
    let magic = raw.fill_buf()?.to_vec();
    let inner: Box<dyn Read + Send> = if magic.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(raw))
    } else if magic.starts_with(b"BZh") {
        Box::new(bzip2::bufread::MultiBzDecoder::new(raw))
    } else if magic.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
        Box::new(xz2::bufread::XzDecoder::new_multi_decoder(raw))
    } else if magic.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        Box::new(zstd::stream::read::Decoder::with_buffer(raw)?)
    } else {
        return Ok(Box::new(raw));
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, inner)))
}

/// How a data path is named in messages (`-` is standard input).
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// How a data file is read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadOptions {
    /// Parser threads; 1 reads line by line on the calling thread, more add a reading thread
    /// that decompresses while they parse.
    pub threads: usize,
    /// Show the bytes read on a terminal.
    pub progress: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { threads: available_threads(), progress: false }
    }
}

/// The cores this process may use (1 when unknown), asked once a process: the standard
/// library reads the cgroup's files on every call, about 30 µs, which a 0.7 ms fit from Python
/// paid each time.
pub fn available_threads() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Bytes of text per block of the parallel reader: large enough that a block's hand-overs
/// cost nothing next to its parse, small enough that a few in flight stay in the caches' reach.
const BLOCK_BYTES: usize = 4 << 20;

pub fn read_libsvm(path: &Path) -> Result<Dataset, DataError> {
    read_libsvm_with(path, &ReadOptions::default())
}

/// As [`read_libsvm`], with the bytes read shown on a terminal when `progress` is on.
pub fn read_libsvm_shown(path: &Path, progress: bool) -> Result<Dataset, DataError> {
    read_libsvm_with(path, &ReadOptions { progress, ..ReadOptions::default() })
}

pub fn read_libsvm_with(path: &Path, opts: &ReadOptions) -> Result<Dataset, DataError> {
    let reader = open_text(path, opts.progress)?;
    read_text(reader, &display_name(path), opts.threads)
}

/// Reads LIBSVM text, sequentially (`threads` ≤ 1) or in parallel blocks: the same Dataset and
/// the same messages either way.
pub fn read_text(reader: Box<dyn BufRead + Send>, name: &str, threads: usize) -> Result<Dataset, DataError> {
    read_text_in(reader, name, threads, BLOCK_BYTES, MAX_LINE_BYTES)
}

/// The parallel reader with blocks of `block` bytes (tests and the fuzz harness use tiny ones).
pub fn read_in_blocks(
    reader: Box<dyn BufRead + Send>,
    name: &str,
    threads: usize,
    block: usize,
) -> Result<Dataset, DataError> {
    read_text_in(reader, name, threads.max(2), block, MAX_LINE_BYTES)
}

fn read_text_in(
    reader: Box<dyn BufRead + Send>,
    name: &str,
    threads: usize,
    block: usize,
    max_line: u64,
) -> Result<Dataset, DataError> {
    if threads <= 1 {
        read_lines(reader, name, max_line)
    } else {
        parallel::read_blocks(Box::new(reader), name, parallel::Blocks { threads, block: block.max(1), max_line })
    }
}

/// The sequential reader on any buffered text.
pub fn read_libsvm_from(reader: impl BufRead, name: &str) -> Result<Dataset, DataError> {
    read_lines(reader, name, MAX_LINE_BYTES)
}

/// The sequential reader: one line buffer, reused. `max_line` is [`MAX_LINE_BYTES`] but for tests.
fn read_lines(mut reader: impl BufRead, name: &str, max_line: u64) -> Result<Dataset, DataError> {
    let mut rows = Rows::default();
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut line_no = 0usize;
    let mut bytes = 0u64;

    loop {
        buf.clear();
        let n = (&mut reader)
            .take(max_line)
            .read_until(b'\n', &mut buf)
            .map_err(|e| DataError::Io { file: name.into(), source: e })?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        line_no += 1;
        if n as u64 == max_line && buf.last() != Some(&b'\n') {
            return Err(too_long(name, line_no, &buf, max_line));
        }
        let text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        parse_line(text, saturate(line_no), &mut rows).map_err(|e| bad_line(name, line_no, text, e))?;
    }
    finish(rows, name, line_no, bytes)
}

/// A line number as a row records it (saturating: a file of 4 G lines is beyond any message).
fn saturate(line: usize) -> u32 {
    line.min(u32::MAX as usize) as u32
}

/// A bad line as the user sees it: file, line, column, what was wrong, and the line itself.
fn bad_line(name: &str, line: usize, text: &[u8], e: LineError) -> DataError {
    DataError::Bad {
        file: name.into(),
        line,
        col: e.col,
        message: e.message,
        text: super::escape_for_message(text.trim_ascii_end(), 100),
    }
}

/// A line of `max_line` bytes or more without its end (`head` is its start).
fn too_long(name: &str, line: usize, head: &[u8], max_line: u64) -> DataError {
    let message = format!("the line is longer than {} MiB: is this a LIBSVM text file?", max_line >> 20);
    bad_line(name, line, head, LineError { col: 1, message })
}

/// The rows read from a whole file (`lines` lines, `bytes` bytes of text) as a Dataset.
fn finish(rows: Rows, name: &str, lines: usize, bytes: u64) -> Result<Dataset, DataError> {
    if rows.labels.is_empty() {
        return Err(DataError::Bad {
            file: name.into(),
            line: lines.max(1),
            col: 1,
            message: if lines == 0 {
                "the file is empty: no examples".into()
            } else {
                "no examples: only blank lines and comments".into()
            },
            text: String::new(),
        });
    }
    let Rows { indptr, indices, values, labels, lines, max_index, max_index_line } = rows;
    let m = labels.len();
    let x = super::store::csr((m, max_index as usize), indptr, indices, values).map_err(|e| DataError::Bad {
        file: name.into(),
        line: 1,
        col: 1,
        message: format!("inconsistent matrix: {e}"),
        text: String::new(),
    })?;
    Ok(Dataset { weights: None, x, labels, lines, name: name.into(), bytes, max_index_line })
}

/// A line longer than this is not LIBSVM text (a binary file, or one without line ends).
const MAX_LINE_BYTES: u64 = 1 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Dataset, DataError> {
        read_libsvm_from(text.as_bytes(), "t.svm")
    }

    /// The message, checked to be the parallel reader's too (with blocks of a few bytes).
    fn err(text: &str) -> String {
        let e = read(text).expect_err("should fail");
        for block in [1, 5, 64] {
            let p = in_blocks(text.as_bytes(), 2, block, MAX_LINE_BYTES).expect_err("parallel too");
            assert_eq!((p.to_string(), p.context()), (e.to_string(), e.context()), "block {block}");
        }
        e.to_string()
    }

    fn in_blocks(text: &[u8], threads: usize, block: usize, max_line: u64) -> Result<Dataset, DataError> {
        read_text_in(Box::new(io::Cursor::new(text.to_vec())), "t.svm", threads, block, max_line)
    }

    fn same(a: &Dataset, b: &Dataset) {
        assert_eq!(a.x.shape(), b.x.shape());
        assert_eq!(a.csr().0, b.csr().0);
        assert_eq!(a.csr().1, b.csr().1);
        let bits = |d: &Dataset| d.csr().2.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(a), bits(b));
        assert_eq!(
            a.labels.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.labels.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!((&a.lines, a.bytes, a.max_index_line), (&b.lines, b.bytes, b.max_index_line));
    }

    /// Generated text with everything a file may hold: comments, blank lines, CRLF and lone CR,
    /// tabs, qid, numbers the fast path hands over, long lines, and no final line end.
    fn messy_text(seed: u64, lines: usize) -> Vec<u8> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut out = String::new();
        for _ in 0..lines {
            match rng.gen_range(0..20) {
                0 => out.push_str("# a comment 1:2\n"),
                1 => out.push('\n'),
                2 => out.push_str("   \t \r\n"),
                _ => {
                    let label = ["+1", "-1", "1", "0", "2.5", "-0", "1e1"][rng.gen_range(0..7)];
                    out.push_str(label);
                    if rng.gen_bool(0.1) {
                        out.push_str(" qid:7");
                    }
                    let mut j = 0u64;
                    let most = if rng.gen_bool(0.05) { 400 } else { 12 };
                    for _ in 0..rng.gen_range(0..most) {
                        j += rng.gen_range(1..50);
                        let sep = if rng.gen_bool(0.1) { "\t" } else { " " };
                        let v = match rng.gen_range(0..6) {
                            0 => format!("{}", rng.gen_range(-5..5)),
                            1 => format!("{:.6}", rng.gen_range(-1.0..1.0)),
                            2 => format!("{:e}", rng.gen_range(-1e-3..1e-3)),
                            3 => format!("{}", rng.gen::<f64>()),
                            4 => "0.1234567890123456789012".into(),
                            _ => format!("{:.3}", rng.gen_range(0.0..2.0)),
                        };
                        out.push_str(&format!("{sep}{j}:{v}"));
                    }
                    out.push_str(["\n", "\n", "\n", "\r\n", " # c\n", "\r\n", "\t\n"][rng.gen_range(0..7)]);
                }
            }
        }
        if seed % 2 == 1 {
            out.push_str("-1 3:1"); // no line end
        }
        out.into_bytes()
    }

    #[test]
    fn the_parallel_reader_gives_the_sequential_readers_dataset() {
        for seed in 0..6 {
            let text = messy_text(seed, 3000);
            let want = read_lines(io::Cursor::new(&text), "t.svm", MAX_LINE_BYTES).expect("valid");
            assert!(want.rows() > 2000);
            for (threads, block) in [(2, 1), (2, 7), (3, 100), (2, 4096), (4, 1 << 20), (1, 0)] {
                let got = in_blocks(&text, threads, block, MAX_LINE_BYTES).expect("valid");
                same(&got, &want);
            }
        }
    }

    #[test]
    fn the_parallel_reader_names_the_first_bad_line_of_the_file() {
        let text = messy_text(3, 3000);
        let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        for (at, wrong) in
            [(1, "1 2:x"), (1500, "1 3:1 2:1"), (2999, "1:1"), (2000, "1 4294967296:1"), (10, "1 1:1e999")]
        {
            let mut t = lines.clone();
            t[at - 1] = wrong.as_bytes();
            if at + 5 < t.len() {
                t[at + 5] = b"q"; // a later bad line must not be the one reported
            }
            let t = t.join(&b'\n');
            let want = read_lines(io::Cursor::new(&t), "t.svm", MAX_LINE_BYTES).expect_err("bad");
            assert!(want.to_string().starts_with(&format!("t.svm:{at}:")), "{want}");
            for (threads, block) in [(2, 1), (2, 333), (3, 1 << 16)] {
                let got = in_blocks(&t, threads, block, MAX_LINE_BYTES).expect_err("bad");
                assert_eq!((got.to_string(), got.context()), (want.to_string(), want.context()));
            }
        }
    }

    #[test]
    fn a_line_too_long_is_refused_alike() {
        let max = 3 << 20;
        let ok_len = "1 1:2 ".repeat(600_000);
        for text in [
            format!("1 1:1\n{}\n1 2:1\n", "1 1:2 ".repeat(600_000)),
            format!("1 1:1\n{}", "x".repeat(max as usize)),
            format!("1 1:1\n{}", "x".repeat(max as usize - 1)),
            format!("{}\n", &ok_len[..max as usize - 1]),
            format!("{}\n", &ok_len[..max as usize]),
        ] {
            let want = read_lines(io::Cursor::new(text.as_bytes()), "t.svm", max);
            for block in [1000, 1 << 20, 8 << 20] {
                let got = in_blocks(text.as_bytes(), 2, block, max);
                match (&got, &want) {
                    (Ok(a), Ok(b)) => same(a, b),
                    (Err(a), Err(b)) => assert_eq!((a.to_string(), a.context()), (b.to_string(), b.context())),
                    _ => panic!("{:?} vs {:?}", got.as_ref().map(|d| d.rows()), want.as_ref().map(|d| d.rows())),
                }
            }
        }
    }

    /// A read error after some lines: the lines before it are checked first, then the error.
    #[test]
    fn a_read_error_comes_after_the_lines_read_whole() {
        struct Failing(io::Cursor<Vec<u8>>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let k = buf.len().min(10);
                let n = self.0.read(&mut buf[..k])?;
                if n == 0 {
                    Err(io::Error::other("disk on fire"))
                } else {
                    Ok(n)
                }
            }
        }
        for text in ["1 1:1\n2 2:2\n3 3", "1 1:1\nx\n2 2:2"] {
            let open = || io::BufReader::with_capacity(16, Failing(io::Cursor::new(text.as_bytes().to_vec())));
            let want = read_lines(open(), "t.svm", MAX_LINE_BYTES).expect_err("fails").to_string();
            let got = read_text_in(Box::new(open()), "t.svm", 2, 4, MAX_LINE_BYTES).expect_err("fails").to_string();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn reads_rows_comments_and_blank_lines() {
        let d = read("# header\n+1 1:0.5 3:2\n\n-1 2:1 # trailing\n0 qid:3 4:-1.5e0\r\n").expect("valid");
        assert_eq!((d.rows(), d.features(), d.nnz()), (3, 4, 4));
        assert_eq!(d.labels, vec![1.0, -1.0, 0.0]);
        assert_eq!(d.lines, vec![2, 4, 5]);
        assert_eq!(d.x.indices().to_vec(), [0, 2, 1, 3]);
        assert_eq!(d.max_row_norm_sq(), 4.25);
    }

    #[test]
    fn bad_data_names_line_column_and_problem() {
        assert_eq!(err("1 1:2\n1 0:3\n"), "t.svm:2:3: feature index 0: indices are 1-based");
        assert_eq!(err("1 3:2 2:1\n"), "t.svm:1:7: feature indices must increase: 2 comes after 3");
        assert_eq!(err("1 3:2 3:1\n"), "t.svm:1:7: feature indices must increase: 3 repeats 3");
        assert_eq!(err("1 3:abc\n"), "t.svm:1:5: value `abc` is not a number");
        assert_eq!(err("1 3:nan\n"), "t.svm:1:5: value `nan` of feature 3 is not finite");
        assert_eq!(err("1:2 3:4\n"), "t.svm:1:1: missing label: the line starts with the feature `1:2`");
        assert_eq!(err("x 1:2\n"), "t.svm:1:1: label `x` is not a number");
        assert_eq!(err("NaN 1:2\n"), "t.svm:1:1: label `NaN` is not a finite number");
        assert_eq!(err("1 a:2\n"), "t.svm:1:3: feature index `a` is not a whole number");
        assert_eq!(err("1 5\n"), "t.svm:1:3: expected `index:value`, found `5`");
        assert_eq!(err(""), "t.svm:1:1: the file is empty: no examples");
        assert_eq!(err("# only\n\n"), "t.svm:2:1: no examples: only blank lines and comments");
    }

    #[test]
    fn context_points_at_the_column() {
        let e = read("1 2:1 1:1\n").expect_err("descending");
        assert_eq!(e.context(), "  | 1 2:1 1:1\n  |       ^");
    }
}
