//! One LIBSVM line → one row appended to growing CSR arrays. The sequential reader and the
//! block parser both call [`parse_line`], so the two cannot disagree on what a line means.
//!
//! Most lines are plain `label idx:val ...` with short decimals; a fast path reads those with a
//! hand-rolled index parser and Clinger's exact float fast path. Anything it does not know
//! (comments inside tokens, `qid:`, long mantissas, `inf`, a bad token) makes it give up on
//! the line, undo what it appended, and hand the line to the reference parser, which is the
//! one that words every error. The fast path therefore only has to be right when it succeeds.

/// CSR arrays as rows are read, with what the messages about the largest index need.
#[derive(Debug)]
pub(crate) struct Rows {
    /// Starts with 0; one more entry per row.
    pub indptr: Vec<usize>,
    pub indices: Vec<u32>,
    pub values: Vec<f64>,
    pub labels: Vec<f64>,
    /// The line of each row (relative to the block for the block parser).
    pub lines: Vec<u32>,
    pub max_index: u32,
    /// The line where `max_index` first appears (0 when there is none).
    pub max_index_line: u32,
}

impl Default for Rows {
    fn default() -> Self {
        Rows {
            indptr: vec![0],
            indices: vec![],
            values: vec![],
            labels: vec![],
            lines: vec![],
            max_index: 0,
            max_index_line: 0,
        }
    }
}

impl Rows {
    /// Empties the arrays, keeping their memory (the block parser reuses one `Rows` per slot).
    pub fn clear(&mut self) {
        self.indptr.clear();
        self.indptr.push(0);
        self.indices.clear();
        self.values.clear();
        self.labels.clear();
        self.lines.clear();
        self.max_index = 0;
        self.max_index_line = 0;
    }

    pub fn rows(&self) -> usize {
        self.labels.len()
    }
}

/// What is wrong with a line, at a 1-based column; the caller adds the file and line.
#[derive(Debug, PartialEq)]
pub(crate) struct LineError {
    pub col: usize,
    pub message: String,
}

fn bad(col: usize, message: String) -> LineError {
    LineError { col, message }
}

/// Appends the row of `line` (its text without the `\n`) to `rows`; a blank or comment line
/// appends nothing. On an error `rows` may hold part of the line's entries: the caller stops.
pub(crate) fn parse_line(line: &[u8], line_no: u32, rows: &mut Rows) -> Result<(), LineError> {
    let mark = rows.indices.len();
    if fast_line(line, line_no, rows).is_some() {
        return Ok(());
    }
    rows.indices.truncate(mark);
    rows.values.truncate(mark);
    reference_line(line, line_no, rows)
}

/// The end of a line's content: the first `#` (comment) or `\r` (a CRLF line end, or a lone CR).
#[inline]
fn content_ends(b: u8) -> bool {
    b == b'#' || b == b'\r'
}

#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The common case, or None to let the reference parser decide (it words the errors).
/// Appends entries as it goes; `parse_line` undoes them when it gives up.
#[inline]
fn fast_line(line: &[u8], line_no: u32, rows: &mut Rows) -> Option<()> {
    let n = line.len();
    let mut p = 0;
    while p < n && is_blank(line[p]) {
        p += 1;
    }
    if p == n || content_ends(line[p]) {
        return Some(()); // blank or comment
    }
    let (label, q) = fast_number(line, p)?;
    p = q;
    let mut prev: u32 = 0;
    let (mut max_index, mut max_line) = (rows.max_index, rows.max_index_line);
    loop {
        while p < n && is_blank(line[p]) {
            p += 1;
        }
        if p == n || content_ends(line[p]) {
            break;
        }
        // index: 1 to 10 digits, then ':'
        let (idx, len) = digits(line, p);
        p += len;
        if len == 0 || len > 10 || p >= n || line[p] != b':' || idx == 0 || idx > u32::MAX as u64 || idx as u32 <= prev
        {
            return None;
        }
        let idx = idx as u32;
        let (v, q) = fast_number(line, p + 1)?;
        p = q;
        prev = idx;
        if v != 0.0 {
            if rows.indices.len() == rows.indices.capacity() {
                grow(&mut rows.indices, &mut rows.values).ok()?;
            }
            rows.indices.push(idx - 1);
            rows.values.push(v);
            if idx > max_index {
                max_index = idx;
                max_line = line_no;
            }
        }
    }
    push_row(rows, label, line_no).ok()?;
    rows.max_index = max_index;
    rows.max_index_line = max_line;
    Some(())
}

/// 10^0 ..= 10^22: every one exact in an f64 (5^22 < 2^53).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// An optional sign at `p` (stepped over): whether it is a minus.
#[inline]
fn sign(s: &[u8], p: &mut usize) -> bool {
    match s.get(*p) {
        Some(b'-') => {
            *p += 1;
            true
        }
        Some(b'+') => {
            *p += 1;
            false
        }
        _ => false,
    }
}

/// A decimal `[+-]digits[.digits][(e|E)[+-]digits]` at `p`, ending at a blank, the content's end
/// or the line's end: (value, position after it). None for anything else, and for any number
/// outside Clinger's fast path (at most 19 digits with mantissa ≤ 2⁵³, |power of ten| ≤ 22),
/// where one IEEE multiplication or division of two exact values is the correctly rounded
/// result — the same bits as `str::parse::<f64>` (tested).
#[inline]
pub(crate) fn fast_number(s: &[u8], mut p: usize) -> Option<(f64, usize)> {
    let n = s.len();
    let neg = sign(s, &mut p);
    let (mut m, whole) = digits(s, p);
    p += whole;
    let mut frac = 0usize;
    if p < n && s[p] == b'.' {
        let (f, len) = digits(s, p + 1);
        if whole + len > 19 {
            return None;
        }
        m = m * POW10_U64[len] + f;
        frac = len;
        p += 1 + len;
    }
    if whole + frac == 0 || whole + frac > 19 {
        return None;
    }
    let frac = frac as i32;
    let mut exp = 0i32;
    if p < n && (s[p] == b'e' || s[p] == b'E') {
        p += 1;
        let eneg = sign(s, &mut p);
        let start = p;
        while p < n && s[p].is_ascii_digit() && p - start < 4 {
            exp = exp * 10 + (s[p] - b'0') as i32;
            p += 1;
        }
        if p == start {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if p < n && !is_blank(s[p]) && !content_ends(s[p]) {
        return None;
    }
    let e10 = exp - frac;
    if m > 1 << 53 || !(-22..=22).contains(&e10) {
        return None;
    }
    let v = m as f64;
    let v = if e10 >= 0 { v * POW10[e10 as usize] } else { v / POW10[(-e10) as usize] };
    Some((if neg { -v } else { v }, p))
}

/// 10^0 ..= 10^19, the powers a u64 holds.
const POW10_U64: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        t[k] = t[k - 1] * 10;
        k += 1;
    }
    t
};

/// The run of ASCII digits at `p`: (its value, its length). The value wraps past 19 digits;
/// callers refuse such runs by their length. Eight bytes at a time where the line has them
/// (the SWAR conversion of fast_float and simdjson), so a value like `0.0148716` costs two
/// steps rather than eight.
#[inline]
fn digits(s: &[u8], mut p: usize) -> (u64, usize) {
    let start = p;
    let mut v: u64 = 0;
    while let Some(chunk) = s.get(p..p + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let t = u64::from_le_bytes(word) ^ 0x3030_3030_3030_3030;
        // A byte's high bit: set where the byte is not a digit (its value after the XOR ≥ 10).
        let not_digit = (((t & 0x7F7F_7F7F_7F7F_7F7F) + 0x7676_7676_7676_7676) | t) & 0x8080_8080_8080_8080;
        let len = (not_digit.trailing_zeros() / 8) as usize;
        if len == 0 {
            return (v, p - start);
        }
        // The run's first digit is the lowest byte: shifting it up by the missing bytes
        // leaves zeros below, read as leading zeros.
        v = v.wrapping_mul(POW10_U64[len]).wrapping_add(eight_digits(t << (8 * (8 - len))));
        p += len;
        if len < 8 {
            return (v, p - start);
        }
    }
    while p < s.len() && s[p].is_ascii_digit() {
        v = v.wrapping_mul(10).wrapping_add((s[p] - b'0') as u64);
        p += 1;
    }
    (v, p - start)
}

/// Eight digit values (0..=9), the most significant in the lowest byte → their number.
#[inline]
fn eight_digits(t: u64) -> u64 {
    let v = (t & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let v = (v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// Appends a finished row (its entries already pushed), growing the row arrays fallibly.
fn push_row(rows: &mut Rows, label: f64, line_no: u32) -> Result<(), String> {
    if rows.labels.len() == rows.labels.capacity() {
        let extra = rows.labels.len().max(1024);
        let need = || crate::memory::bytes_text((extra * 16) as u64);
        rows.indptr.try_reserve(extra).map_err(|_| need())?;
        rows.labels.try_reserve(extra).map_err(|_| need())?;
        rows.lines.try_reserve(extra).map_err(|_| need())?;
    }
    rows.indptr.push(rows.indices.len());
    rows.labels.push(label);
    rows.lines.push(line_no);
    Ok(())
}

/// Doubles the non-zero arrays without aborting when memory runs out; Err holds what it asked for.
pub(crate) fn grow(indices: &mut Vec<u32>, values: &mut Vec<f64>) -> Result<(), String> {
    let extra = indices.len().max(1 << 16);
    let need = || crate::memory::bytes_text((extra * 12) as u64);
    indices.try_reserve_exact(extra).map_err(|_| need())?;
    values.try_reserve_exact(extra).map_err(|_| need())?;
    Ok(())
}

/// The reference parser: tokens split at blanks, each checked and worded on its own.
fn reference_line(buf: &[u8], line_no: u32, rows: &mut Rows) -> Result<(), LineError> {
    // Cut the comment and the line end.
    let end = buf.iter().position(|&b| b == b'#' || b == b'\n' || b == b'\r').unwrap_or(buf.len());
    let line = &buf[..end];
    let mut tokens = Tokens { line, pos: 0 };
    let Some((col, label_tok)) = tokens.next() else {
        return Ok(());
    };
    if label_tok.contains(&b':') {
        return Err(bad(col, format!("missing label: the line starts with the feature `{}`", show(label_tok))));
    }
    let label = parse_f64(label_tok).ok_or_else(|| bad(col, format!("label `{}` is not a number", show(label_tok))))?;
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
        let v = parse_f64(val_tok).ok_or_else(|| bad(vcol, format!("value `{}` is not a number", show(val_tok))))?;
        if !v.is_finite() {
            return Err(bad(vcol, format!("value `{}` of feature {idx} is not finite", show(val_tok))));
        }
        if v != 0.0 {
            if rows.indices.len() == rows.indices.capacity() {
                grow(&mut rows.indices, &mut rows.values).map_err(|need| {
                    bad(col, format!("out of memory: holding the data read so far needs {need} more"))
                })?;
            }
            rows.indices.push((idx - 1) as u32);
            rows.values.push(v);
            if idx as u32 > rows.max_index {
                rows.max_index = idx as u32;
                rows.max_index_line = line_no;
            }
        }
    }
    push_row(rows, label, line_no)
        .map_err(|need| bad(1, format!("out of memory: holding the rows read so far needs {need} more")))
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
        while self.pos < l.len() && is_blank(l[self.pos]) {
            self.pos += 1;
        }
        if self.pos >= l.len() {
            return None;
        }
        let start = self.pos;
        while self.pos < l.len() && !is_blank(l[self.pos]) {
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

pub(crate) fn parse_f64(t: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(t).ok()?;
    let v: f64 = s.parse().ok()?;
    // Rust accepts "inf"/"NaN" spelled out; callers reject non-finite values with a message.
    Some(v)
}

fn show(t: &[u8]) -> String {
    crate::data::escape_for_message(t, 40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Whatever the fast path accepts, it reads to the bits Rust's parser gives.
    fn agrees(token: &str) {
        if let Some((v, end)) = fast_number(token.as_bytes(), 0) {
            assert_eq!(end, token.len(), "{token}");
            let want: f64 = token.parse().unwrap_or_else(|_| panic!("fast path took `{token}`, std refuses it"));
            assert_eq!(v.to_bits(), want.to_bits(), "{token}");
        }
    }

    #[test]
    fn the_fast_path_reads_what_std_reads_bit_for_bit() {
        for t in [
            "0",
            "-0",
            "+0",
            "1",
            "-1",
            "+1",
            "0.5",
            ".5",
            "5.",
            "-.5",
            "1e5",
            "1E-5",
            "1e+22",
            "1e22",
            "1e-22",
            "1e23",
            "0.1",
            "0.3",
            "2.2250738585072014e-308",
            "9007199254740993",
            "9007199254740992",
            "123456789012345678",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "e5",
            "1e",
            "1e+",
            ".",
            "-",
            "+",
            "--1",
            "1.2.3",
            "1_0",
            "0x10",
            "inf",
            "nan",
            "1e0000",
            "1e00001",
            "4503599627370497.5",
            "0.166193",
            "0.0148716",
            "179769313486231570000000000000000000000",
        ] {
            agrees(t);
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200_000 {
            let mant: u64 = rng.gen_range(0..u64::MAX) >> rng.gen_range(0..64);
            let digits = mant.to_string();
            let cut = rng.gen_range(0..=digits.len());
            let mut t = String::new();
            match rng.gen_range(0..3) {
                0 => t.push('-'),
                1 => t.push('+'),
                _ => {}
            }
            t.push_str(&digits[..cut]);
            if rng.gen_bool(0.7) {
                t.push('.');
            }
            t.push_str(&digits[cut..]);
            if rng.gen_bool(0.3) {
                t.push_str(&format!("e{}", rng.gen_range(-30..30)));
            }
            agrees(&t);
        }
        // Printed doubles (what LIBSVM writers emit) must take the fast path and round-trip.
        for _ in 0..100_000 {
            let v: f64 = rng.gen_range(-10.0..10.0);
            for t in [format!("{v:.6}"), format!("{v:.3e}"), format!("{:.5}", v / 1000.0)] {
                assert!(fast_number(t.as_bytes(), 0).is_some(), "{t} should be fast");
                agrees(&t);
            }
        }
    }

    #[test]
    fn digit_runs_read_alike_in_words_and_bytes() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100_000 {
            let len = rng.gen_range(0..24);
            let t: String = (0..len).map(|_| if rng.gen_bool(0.9) { rng.gen_range('0'..='9') } else { ' ' }).collect();
            let p = rng.gen_range(0..=len);
            let run: String = t[p..].chars().take_while(|c| c.is_ascii_digit()).collect();
            let (v, n) = digits(t.as_bytes(), p);
            assert_eq!(n, run.len(), "{t:?} at {p}");
            if n <= 19 {
                assert_eq!(v, run.parse::<u64>().unwrap_or(0), "{t:?} at {p}");
            }
        }
    }

    #[test]
    fn the_fast_path_ends_numbers_where_tokens_end() {
        assert_eq!(fast_number(b"1.5 2", 0), Some((1.5, 3)));
        assert_eq!(fast_number(b"1.5#c", 0), Some((1.5, 3)));
        assert_eq!(fast_number(b"1.5\r", 0), Some((1.5, 3)));
        assert_eq!(fast_number(b"1.5:2", 0), None);
        assert_eq!(fast_number(b"1.5x", 0), None);
    }

    fn rows_of(lines: &[&str], fast: bool) -> Result<Rows, (usize, LineError)> {
        let mut rows = Rows::default();
        for (k, l) in lines.iter().enumerate() {
            let r = if fast {
                parse_line(l.as_bytes(), k as u32 + 1, &mut rows)
            } else {
                reference_line(l.as_bytes(), k as u32 + 1, &mut rows)
            };
            r.map_err(|e| (k, e))?;
        }
        Ok(rows)
    }

    /// Lines the fast path takes and lines it hands over give the reference parser's rows.
    #[test]
    fn parse_line_matches_the_reference_parser() {
        let lines = [
            "+1 1:0.5 3:2",
            "",
            "  # comment",
            "-1 2:1 # trailing",
            "0 qid:3 4:-1.5e0\r",
            "1\t5:1e-300 6:0 7:-0",
            "2 8:1#x",
            "3 00009:2.50",
            "-2.5e3 10:12345678901234567890 11:.5 12:5.",
        ];
        let a = rows_of(&lines, true).expect("valid");
        let b = rows_of(&lines, false).expect("valid");
        assert_eq!(a.indptr, b.indptr);
        assert_eq!(a.indices, b.indices);
        assert_eq!(
            a.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            b.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(a.labels, b.labels);
        assert_eq!(a.lines, b.lines);
        assert_eq!((a.max_index, a.max_index_line), (b.max_index, b.max_index_line));
        assert_eq!((a.max_index, a.max_index_line), (12, 9));
        for wrong in
            ["1 3:2 2:1", "1 3:2 3:1", "1 0:1", "1 5", "1 1:2:3", "1:2 3:4", "x 1:2", "1 4294967296:1", "1 1:inf"]
        {
            let e = rows_of(&[wrong], true).expect_err(wrong);
            assert_eq!(e, rows_of(&[wrong], false).expect_err(wrong), "{wrong}");
        }
    }
}
