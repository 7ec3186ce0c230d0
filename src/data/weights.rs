//! The rows' weights: a weight file (`--weights FILE`, LIBLINEAR's: one number a line, one line
//! a row) and class weights (`--class-weight LABEL=W`, LIBLINEAR's `-wi`), which multiply them.
//! What is wrong is data: the file, the line and the column, or the label.

use super::{escape_for_message, DataError, Dataset};
use std::io::BufRead;

/// The longest line of a weight file shown in a message.
const SHOWN: usize = 100;

/// Reads one weight a line from `reader` (the file `name`), for a data set of `rows` rows: each
/// a finite number ≥ 0, blank lines and `#` comments skipped, exactly `rows` of them.
pub fn read_weights(reader: impl BufRead, name: &str, rows: usize) -> Result<Vec<f64>, DataError> {
    let mut weights = Vec::with_capacity(rows.min(1 << 24));
    let mut last = 0;
    for (k, line) in reader.split(b'\n').enumerate() {
        let line = line.map_err(|source| DataError::Io { file: name.into(), source })?;
        let number = k + 1;
        last = number;
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        let content = text.split(|&b| b == b'#').next().unwrap_or_default();
        let start = content.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else { continue };
        let end = content.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
        let bad = |col: usize, message: String| DataError::Bad {
            file: name.into(),
            line: number,
            col,
            message,
            text: escape_for_message(text, SHOWN),
        };
        let field = &content[start..end];
        let shown = escape_for_message(field, 40);
        if let Some(gap) = field.iter().position(u8::is_ascii_whitespace) {
            return Err(bad(start + gap + 2, format!("one weight a line, but `{shown}` has more than one field")));
        }
        let value = std::str::from_utf8(field).ok().and_then(|t| t.parse::<f64>().ok());
        let value = match value {
            Some(v) if v.is_finite() && v >= 0.0 => v,
            Some(v) if v.is_finite() => return Err(bad(start + 1, format!("the weight {v} is negative"))),
            Some(_) => return Err(bad(start + 1, format!("the weight `{shown}` is not finite"))),
            None => return Err(bad(start + 1, format!("`{shown}` is not a number"))),
        };
        if weights.len() == rows {
            let message = format!("more weights than the data's {rows} rows");
            return Err(bad(start + 1, message));
        }
        weights.push(value);
    }
    if weights.len() < rows {
        let message = format!("{} weights for the data's {rows} rows", weights.len());
        return Err(DataError::Bad { file: name.into(), line: last.max(1), col: 1, message, text: String::new() });
    }
    Ok(weights)
}

/// A class weight `LABEL=W` that cannot be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClassWeightError {
    #[error("--class-weight {0}: write LABEL=W, a label of the data and a weight ≥ 0 (e.g. `1=5`)")]
    Syntax(String),
    #[error("--class-weight {given}: the data has no label {label} (its labels are {labels})")]
    NoSuchLabel { given: String, label: String, labels: String },
    #[error("--class-weight {given}: the weight must be a finite number ≥ 0")]
    BadWeight { given: String },
    #[error("--class-weight: label {label} is given twice")]
    Twice { label: String },
}

/// `LABEL=W` read: the raw label (as the data file writes labels) and its weight.
pub fn parse_class_weight(given: &str) -> Result<(f64, f64), ClassWeightError> {
    let (label, weight) = given.split_once('=').ok_or_else(|| ClassWeightError::Syntax(given.into()))?;
    let label: f64 = label.trim().parse().map_err(|_| ClassWeightError::Syntax(given.into()))?;
    let weight: f64 = weight.trim().parse().map_err(|_| ClassWeightError::BadWeight { given: given.into() })?;
    if !(weight.is_finite() && weight >= 0.0 && label.is_finite()) {
        return Err(ClassWeightError::BadWeight { given: given.into() });
    }
    Ok((label, weight))
}

/// The rows' weights of a streamed file, whose rows come a block at a time: the weight file's
/// numbers (all of them, m floats beside data that is not held) and the class weights, applied
/// to each block by its raw labels.
#[derive(Clone, Debug, Default)]
pub struct RowWeights {
    pub file: Option<Vec<f64>>,
    pub classes: Vec<(f64, f64)>,
}

impl RowWeights {
    /// The weights of the block whose first row is row `offset` of the file, with these raw
    /// labels.
    pub fn block(&self, offset: usize, labels: &[f64]) -> Vec<f64> {
        labels
            .iter()
            .enumerate()
            .map(|(k, y)| {
                let own = self.file.as_ref().and_then(|f| f.get(offset + k)).copied().unwrap_or(1.0);
                own * self.classes.iter().find(|(l, _)| l == y).map_or(1.0, |(_, c)| *c)
            })
            .collect()
    }

    /// The largest weight any row can have: a bound for the curvature a step size reads.
    pub fn max(&self) -> f64 {
        let own = self.file.as_ref().map_or(1.0, |f| f.iter().copied().fold(0.0, f64::max));
        own * self.classes.iter().map(|(_, c)| *c).fold(1.0, f64::max)
    }
}

/// Class weights `LABEL=W` read for data whose distinct raw labels are `labels`: a label given
/// twice, or one the data does not have (the message lists the first 20), refused.
pub fn class_weights_of(given: &[String], labels: &[f64]) -> Result<Vec<(f64, f64)>, ClassWeightError> {
    let mut classes: Vec<(f64, f64)> = vec![];
    for g in given {
        let (label, weight) = parse_class_weight(g)?;
        if classes.iter().any(|(l, _)| *l == label) {
            return Err(ClassWeightError::Twice { label: fmt_label(label) });
        }
        if !labels.contains(&label) {
            let mut sorted = labels.to_vec();
            sorted.sort_by(f64::total_cmp);
            let more = if sorted.len() > 20 { ", …" } else { "" };
            let labels = sorted.iter().take(20).map(|&l| fmt_label(l)).collect::<Vec<_>>().join(", ") + more;
            return Err(ClassWeightError::NoSuchLabel { given: g.clone(), label: fmt_label(label), labels });
        }
        classes.push((label, weight));
    }
    Ok(classes)
}

impl Dataset {
    /// Multiplies each row's weight (1 when it has none) by its class's weight in `classes`
    /// (raw labels; a label not listed keeps its weights). A label the data does not have is
    /// named, and so is a label listed twice; nothing is changed then.
    pub fn apply_class_weights(&mut self, given: &[String]) -> Result<(), ClassWeightError> {
        let mut labels: Vec<f64> = self.labels.clone();
        labels.sort_by(f64::total_cmp);
        labels.dedup();
        let classes = class_weights_of(given, &labels)?;
        if classes.is_empty() {
            return Ok(());
        }
        let mut weights = self.weights.take().unwrap_or_else(|| vec![1.0; self.rows()]);
        for (w, y) in weights.iter_mut().zip(&self.labels) {
            if let Some((_, c)) = classes.iter().find(|(l, _)| l == y) {
                *w *= c;
            }
        }
        self.weights = Some(weights);
        Ok(())
    }
}

fn fmt_label(l: f64) -> String {
    crate::symbolic::fmt_num(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, rows: usize) -> Result<Vec<f64>, DataError> {
        read_weights(text.as_bytes(), "w.txt", rows)
    }

    fn place(e: DataError) -> (usize, usize, String) {
        match e {
            DataError::Bad { line, col, message, .. } => (line, col, message),
            DataError::Io { .. } => panic!("not an IO error here"),
        }
    }

    #[test]
    fn a_weight_file_is_one_number_a_row() {
        assert_eq!(read("1\n0.5\n\n# a comment\n  2e0  \r\n0\n", 4).unwrap(), vec![1.0, 0.5, 2.0, 0.0]);
    }

    #[test]
    fn a_bad_weight_is_named_by_line_and_column() {
        assert_eq!(place(read("1\n -2\n", 2).unwrap_err()), (2, 2, "the weight -2 is negative".into()));
        assert_eq!(place(read("1\nnan\n", 2).unwrap_err()).0, 2);
        assert_eq!(place(read("1\ninf\n", 2).unwrap_err()).2, "the weight `inf` is not finite");
        assert_eq!(place(read("x\n1\n", 2).unwrap_err()), (1, 1, "`x` is not a number".into()));
        assert_eq!(place(read("1 2\n", 1).unwrap_err()).1, 3);
        assert_eq!(place(read("1\n2\n3\n", 2).unwrap_err()), (3, 1, "more weights than the data's 2 rows".into()));
        assert_eq!(place(read("1\n", 3).unwrap_err()).2, "1 weights for the data's 3 rows");
    }

    #[test]
    fn class_weights_multiply_the_rows_weights() {
        let x = crate::data::store::csr((3, 1), vec![0, 1, 2, 3], vec![0, 0, 0], vec![1.0, 1.0, 1.0]).unwrap();
        let mut d = Dataset {
            x,
            labels: vec![1.0, -1.0, 1.0],
            weights: Some(vec![2.0, 3.0, 0.5]),
            lines: vec![1, 2, 3],
            name: "d".into(),
            bytes: 0,
            max_index_line: 0,
        };
        d.apply_class_weights(&["1=4".into()]).unwrap();
        assert_eq!(d.weights.as_deref(), Some(&[8.0, 3.0, 2.0][..]));
        let e = d.apply_class_weights(&["2=1".into()]).unwrap_err();
        assert!(e.to_string().contains("no label 2 (its labels are -1, 1)"), "{e}");
        assert!(matches!(d.apply_class_weights(&["1=-1".into()]), Err(ClassWeightError::BadWeight { .. })));
        assert!(matches!(d.apply_class_weights(&["1".into()]), Err(ClassWeightError::Syntax(_))));
        assert!(matches!(d.apply_class_weights(&["1=1".into(), "1=2".into()]), Err(ClassWeightError::Twice { .. })));
        // Every label counts, however many there are; the message lists the first 20.
        let x = crate::data::store::csr((25, 1), (0..=25).collect(), vec![0; 25], vec![1.0; 25]).unwrap();
        let labels: Vec<f64> = (1..=25).map(f64::from).collect();
        let mut many =
            Dataset { x, labels, weights: None, lines: vec![0; 25], name: "d".into(), bytes: 0, max_index_line: 0 };
        many.apply_class_weights(&["25=2".into()]).expect("label 25 is there");
        let e = many.apply_class_weights(&["26=2".into()]).unwrap_err().to_string();
        assert!(e.contains("1, 2, 3") && e.ends_with("20, …)"), "{e}");
        assert_eq!(d.weights.as_deref(), Some(&[8.0, 3.0, 2.0][..]), "a refused class weight changes nothing");
    }
}
