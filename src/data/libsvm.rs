//! The LIBSVM/svmlight reader: `label idx:val idx:val ... # comment`, 1-based ascending indices.
//!
//! It streams (one line buffer, reused), sniffs gzip/bzip2/xz/zstd by their magic bytes, and
//! stops at the first bad token with the file, line and column and what was wrong, because a
//! silently skipped line (VW's old behaviour) trains on data the user never meant.

use super::Dataset;
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
pub fn open_text(path: &Path, progress: bool) -> Result<Box<dyn BufRead>, DataError> {
    let name = display_name(path);
    let io_err = |e| DataError::Io { file: name.clone(), source: e };
    let raw: Box<dyn Read> =
        if path == Path::new("-") { Box::new(io::stdin()) } else { Box::new(File::open(path).map_err(io_err)?) };
    let raw = super::progress::ReadProgress::new(raw, &name, progress);
    sniff(BufReader::with_capacity(1 << 20, raw)).map_err(io_err)
}

/// Wraps a reader in the decompressor its first bytes call for (or none).
pub fn sniff<R: BufRead + 'static>(mut raw: R) -> io::Result<Box<dyn BufRead>> {
    let magic = raw.fill_buf()?.to_vec();
    let inner: Box<dyn Read> = if magic.starts_with(&[0x1f, 0x8b]) {
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

pub fn read_libsvm(path: &Path) -> Result<Dataset, DataError> {
    read_libsvm_shown(path, false)
}

/// As [`read_libsvm`], with the bytes read shown on a terminal when `progress` is on.
pub fn read_libsvm_shown(path: &Path, progress: bool) -> Result<Dataset, DataError> {
    let reader = open_text(path, progress)?;
    read_libsvm_from(reader, &display_name(path))
}

pub fn read_libsvm_from(mut reader: impl BufRead, name: &str) -> Result<Dataset, DataError> {
    let mut indptr: Vec<usize> = vec![0];
    let mut indices: Vec<u32> = vec![];
    let mut values: Vec<f64> = vec![];
    let mut labels: Vec<f64> = vec![];
    let mut lines: Vec<u32> = vec![];
    let mut max_index: u32 = 0;
    let mut max_index_line: u32 = 0;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut line_no = 0usize;
    let mut bytes = 0u64;

    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut buf)
            .map_err(|e| DataError::Io { file: name.into(), source: e })?;
        if n == 0 {
            break;
        }
        bytes += n as u64;
        line_no += 1;
        let bad = |col: usize, message: String| DataError::Bad {
            file: name.into(),
            line: line_no,
            col,
            message,
            text: super::escape_for_message(buf.trim_ascii_end(), 100),
        };
        if n as u64 == MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            return Err(bad(
                1,
                format!("the line is longer than {} MiB: is this a LIBSVM text file?", MAX_LINE_BYTES >> 20),
            ));
        }
        // Cut the comment and the line end.
        let end = buf.iter().position(|&b| b == b'#' || b == b'\n' || b == b'\r').unwrap_or(buf.len());
        let line = &buf[..end];
        let mut tokens = Tokens { line, pos: 0 };
        let Some((col, label_tok)) = tokens.next() else {
            continue;
        };
        if label_tok.contains(&b':') {
            return Err(bad(col, format!("missing label: the line starts with the feature `{}`", show(label_tok))));
        }
        let label =
            parse_f64(label_tok).ok_or_else(|| bad(col, format!("label `{}` is not a number", show(label_tok))))?;
        if !label.is_finite() {
            return Err(bad(col, format!("label `{}` is not a finite number", show(label_tok))));
        }
        let mut prev: u64 = 0;
        for (col, tok) in tokens {
            let Some(colon) = tok.iter().position(|&b| b == b':') else {
                return Err(bad(col, format!("expected `index:value`, found `{}`", show(tok))));
            };
            let (idx_tok, val_tok) = (&tok[..colon], &tok[colon + 1..]);
            if idx_tok == b"qid" {
                continue; // svmlight query ids carry no feature
            }
            let idx = parse_index(idx_tok)
                .ok_or_else(|| bad(col, format!("feature index `{}` is not a whole number", show(idx_tok))))?;
            if idx == 0 {
                return Err(bad(col, "feature index 0: indices are 1-based".into()));
            }
            if idx <= prev {
                let what = if idx == prev { "repeats" } else { "comes after" };
                return Err(bad(col, format!("feature indices must increase: {idx} {what} {prev}")));
            }
            if idx > u32::MAX as u64 {
                return Err(bad(col, format!("feature index {idx} is larger than {}", u32::MAX)));
            }
            prev = idx;
            let vcol = col + colon + 1;
            let v =
                parse_f64(val_tok).ok_or_else(|| bad(vcol, format!("value `{}` is not a number", show(val_tok))))?;
            if !v.is_finite() {
                return Err(bad(vcol, format!("value `{}` of feature {idx} is not finite", show(val_tok))));
            }
            if v != 0.0 {
                if indices.len() == indices.capacity() {
                    grow(&mut indices, &mut values).map_err(|need| {
                        bad(col, format!("out of memory: holding the data read so far needs {need} more"))
                    })?;
                }
                indices.push((idx - 1) as u32);
                values.push(v);
                if idx as u32 > max_index {
                    max_index = idx as u32;
                    max_index_line = line_no.min(u32::MAX as usize) as u32;
                }
            }
        }
        if labels.len() == labels.capacity() {
            let extra = labels.len().max(1024);
            let need = crate::memory::bytes_text((extra * 16) as u64);
            let no_room = || bad(1, format!("out of memory: holding the rows read so far needs {need} more"));
            indptr.try_reserve(extra).map_err(|_| no_room())?;
            labels.try_reserve(extra).map_err(|_| no_room())?;
            lines.try_reserve(extra).map_err(|_| no_room())?;
        }
        indptr.push(indices.len());
        labels.push(label);
        lines.push(line_no.min(u32::MAX as usize) as u32);
    }
    if labels.is_empty() {
        return Err(DataError::Bad {
            file: name.into(),
            line: line_no.max(1),
            col: 1,
            message: if line_no == 0 {
                "the file is empty: no examples".into()
            } else {
                "no examples: only blank lines and comments".into()
            },
            text: String::new(),
        });
    }
    let m = labels.len();
    let x = sprs::CsMatI::try_new((m, max_index as usize), indptr, indices, values).map_err(|(_, _, _, e)| {
        DataError::Bad {
            file: name.into(),
            line: 1,
            col: 1,
            message: format!("inconsistent matrix: {e}"),
            text: String::new(),
        }
    })?;
    Ok(Dataset { x, labels, lines, name: name.into(), bytes, max_index_line })
}

/// A line longer than this is not LIBSVM text (a binary file, or one without line ends).
const MAX_LINE_BYTES: u64 = 1 << 30;

/// Doubles the non-zero arrays without aborting when memory runs out; Err holds what it asked for.
fn grow(indices: &mut Vec<u32>, values: &mut Vec<f64>) -> Result<(), String> {
    let extra = indices.len().max(1 << 16);
    let need = || crate::memory::bytes_text((extra * 12) as u64);
    indices.try_reserve_exact(extra).map_err(|_| need())?;
    values.try_reserve_exact(extra).map_err(|_| need())?;
    Ok(())
}

/// Whitespace-separated tokens with their 1-based columns.
struct Tokens<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let l = self.line;
        while self.pos < l.len() && (l[self.pos] == b' ' || l[self.pos] == b'\t') {
            self.pos += 1;
        }
        if self.pos >= l.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < l.len() && l[self.pos] != b' ' && l[self.pos] != b'\t' {
            self.pos += 1;
        }
        Some((start + 1, &l[start..self.pos]))
    }
}

fn parse_index(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in t {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    Some(v)
}

fn parse_f64(t: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(t).ok()?;
    let v: f64 = s.parse().ok()?;
    // Rust accepts "inf"/"NaN" spelled out; callers reject non-finite values with a message.
    Some(v)
}

fn show(t: &[u8]) -> String {
    super::escape_for_message(t, 40)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Dataset, DataError> {
        read_libsvm_from(text.as_bytes(), "t.svm")
    }

    fn err(text: &str) -> String {
        read(text).expect_err("should fail").to_string()
    }

    #[test]
    fn reads_rows_comments_and_blank_lines() {
        let d = read("# header\n+1 1:0.5 3:2\n\n-1 2:1 # trailing\n0 qid:3 4:-1.5e0\r\n").expect("valid");
        assert_eq!((d.rows(), d.features(), d.nnz()), (3, 4, 4));
        assert_eq!(d.labels, vec![1.0, -1.0, 0.0]);
        assert_eq!(d.lines, vec![2, 4, 5]);
        assert_eq!(d.x.indices(), &[0, 2, 1, 3]);
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
