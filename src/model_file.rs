//! LIBLINEAR's model-file format, so models move between optc and LIBLINEAR both ways:
//!
//! ```text
//! solver_type L1R_LR
//! nr_class 2
//! label 1 -1
//! nr_feature 123
//! bias -1
//! w
//! 0.25
//! ...
//! ```
//!
//! Binary models hold one weight per feature, for the first label listed (decision > 0 → that
//! label); multiclass models hold K per line, in `label` order; regression models (SVR solver
//! types) have no `label` line and predict the decision value itself.

use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub struct SavedModel {
    pub solver_type: String,
    pub nr_class: usize,
    /// Empty for regression.
    pub labels: Vec<f64>,
    pub nr_feature: usize,
    /// ≥ 0: an extra constant feature of this value (its weight is the last row of `w`).
    pub bias: f64,
    /// Row-major: (nr_feature [+1 with bias]) × nr_w.
    pub w: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    #[error("{file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("{file}:{line}: {message}")]
    Bad { file: String, line: usize, message: String },
}

const REGRESSION: [&str; 3] = ["L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"];

impl SavedModel {
    pub fn is_regression(&self) -> bool {
        REGRESSION.contains(&self.solver_type.as_str())
    }

    /// Weight columns: 1 for binary and regression, K for multiclass (LIBLINEAR's nr_w).
    pub fn nr_w(&self) -> usize {
        if self.nr_class == 2 && self.solver_type != "MCSVM_CS" || self.is_regression() {
            1
        } else {
            self.nr_class
        }
    }

    /// Decision values of one sparse row (0-based indices), ignoring unknown features.
    pub fn decision(&self, indices: crate::data::Indices, values: &[f64]) -> Vec<f64> {
        let nr_w = self.nr_w();
        let mut dec = vec![0.0; nr_w];
        for (j, &v) in indices.iter().zip(values) {
            let j = j as usize;
            if j < self.nr_feature {
                for (c, d) in dec.iter_mut().enumerate() {
                    *d += self.w[j * nr_w + c] * v;
                }
            }
        }
        if self.bias >= 0.0 {
            for (c, d) in dec.iter_mut().enumerate() {
                *d += self.w[self.nr_feature * nr_w + c] * self.bias;
            }
        }
        dec
    }

    /// The predicted label (regression: the decision value), as LIBLINEAR's `predict`.
    pub fn predict(&self, dec: &[f64]) -> f64 {
        if self.is_regression() {
            return dec[0];
        }
        match self.labels.as_slice() {
            // A model trained on one class (LIBLINEAR writes `nr_class 1`) predicts it always.
            [only] => return *only,
            [first, second, ..] if self.nr_w() == 1 => return if dec[0] > 0.0 { *first } else { *second },
            _ => {}
        }
        let mut best = 0;
        for c in 1..dec.len() {
            if dec[c] > dec[best] {
                best = c;
            }
        }
        self.labels[best]
    }

    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "solver_type {}", self.solver_type);
        let _ = writeln!(o, "nr_class {}", self.nr_class);
        if !self.labels.is_empty() {
            // Every digit: `%g` would write label 1234567 as 1.23457e+06, which LIBLINEAR's
            // `%d` cannot read and which reads back as another label.
            let labels: Vec<String> = self.labels.iter().map(|l| fmt_exact(*l)).collect();
            let _ = writeln!(o, "label {}", labels.join(" "));
        }
        let _ = writeln!(o, "nr_feature {}", self.nr_feature);
        let _ = writeln!(o, "bias {}", fmt_exact(self.bias));
        let _ = writeln!(o, "w");
        for row in self.w.chunks(self.nr_w().max(1)) {
            for v in row {
                let _ = write!(o, "{} ", fmt_exact(*v));
            }
            let _ = writeln!(o);
        }
        o
    }

    /// Why LIBLINEAR cannot load this model, if it cannot: it reads the `label` line as C
    /// `int`s, so a fractional label or one past ±2³¹ stops its `load_model` (optc reads any).
    pub fn liblinear_cannot_read(&self) -> Option<String> {
        let odd: Vec<String> = self
            .labels
            .iter()
            .filter(|l| l.fract() != 0.0 || !(f64::from(i32::MIN)..=f64::from(i32::MAX)).contains(*l))
            .map(|l| fmt_exact(*l))
            .collect();
        (!odd.is_empty()).then(|| {
            let s = if odd.len() > 1 { "s" } else { "" };
            format!("LIBLINEAR reads integer labels only, and cannot load a model with label{s} {}", odd.join(", "))
        })
    }

    pub fn parse(text: &str, file: &str) -> Result<SavedModel, ModelFileError> {
        let bad = |line: usize, message: String| ModelFileError::Bad { file: file.into(), line, message };
        let mut m = SavedModel {
            solver_type: String::new(),
            nr_class: 0,
            labels: vec![],
            nr_feature: 0,
            bias: -1.0,
            w: vec![],
        };
        let mut lines = text.lines().enumerate();
        let mut header_done = false;
        for (k, line) in lines.by_ref() {
            let n = k + 1;
            let mut words = line.split_whitespace();
            let Some(key) = words.next() else { continue };
            let rest: Vec<&str> = words.collect();
            let one = |what: &str| -> Result<&str, ModelFileError> {
                rest.first().copied().ok_or_else(|| bad(n, format!("`{what}` needs a value")))
            };
            match key {
                "solver_type" => m.solver_type = one(key)?.to_string(),
                "nr_class" => {
                    m.nr_class = one(key)?.parse().map_err(|_| bad(n, "`nr_class` is not a whole number".into()))?
                }
                "nr_feature" => {
                    m.nr_feature = one(key)?.parse().map_err(|_| bad(n, "`nr_feature` is not a whole number".into()))?
                }
                "bias" => m.bias = one(key)?.parse().map_err(|_| bad(n, "`bias` is not a number".into()))?,
                "rho" => {}
                "label" => {
                    m.labels = rest
                        .iter()
                        .map(|s| s.parse::<f64>().map_err(|_| bad(n, format!("label `{s}` is not a number"))))
                        .collect::<Result<_, _>>()?
                }
                "w" => {
                    header_done = true;
                    break;
                }
                other => return Err(bad(n, format!("unknown header `{other}` (is this a LIBLINEAR model file?)"))),
            }
        }
        if !header_done {
            return Err(bad(text.lines().count().max(1), "no `w` line: the file ends before the weights".into()));
        }
        if m.solver_type.is_empty() || m.nr_class == 0 {
            return Err(bad(1, "missing `solver_type` or `nr_class`".into()));
        }
        if !m.is_regression() && m.labels.len() != m.nr_class {
            return Err(bad(1, format!("`label` lists {} labels but `nr_class` is {}", m.labels.len(), m.nr_class)));
        }
        let nr_w = m.nr_w();
        let rows = m
            .nr_feature
            .checked_add(usize::from(m.bias >= 0.0))
            .filter(|r| r.checked_mul(nr_w).is_some())
            .ok_or_else(|| bad(1, format!("`nr_feature {}` is too large", m.nr_feature)))?;
        for (k, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let before = m.w.len();
            for tok in line.split_whitespace() {
                m.w.push(tok.parse().map_err(|_| bad(k + 1, format!("weight `{tok}` is not a number")))?);
            }
            if m.w.len() - before != nr_w {
                return Err(bad(
                    k + 1,
                    format!("expected {nr_w} weight(s) on this line, found {}", m.w.len() - before),
                ));
            }
        }
        if m.w.len() != rows * nr_w {
            return Err(bad(
                text.lines().count(),
                format!("expected {rows} weight lines, found {}", m.w.len() / nr_w.max(1)),
            ));
        }
        Ok(m)
    }

    pub fn read(path: &Path) -> Result<SavedModel, ModelFileError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ModelFileError::Io { file: name.clone(), source: e })?;
        SavedModel::parse(&text, &name)
    }
}

/// A float that reads back exactly (shortest round-trip digits), in a form strtod accepts.
pub fn fmt_exact(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if (1e-4..1e16).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// C's `%g`: 6 significant digits, trailing zeros removed, exponent form outside [1e-4, 1e6).
pub fn fmt_g(v: f64) -> String {
    fmt_g_digits(v, 6)
}

/// C's `%.17g`, which LIBLINEAR's predict (since 2.21) writes its predictions with: a
/// regression model's values to the last bit, and a label of seven digits or more as digits
/// rather than `%g`'s rounded exponent form.
pub fn fmt_g17(v: f64) -> String {
    fmt_g_digits(v, 17)
}

/// C's `%.{digits}g` for `digits` ≥ 1.
fn fmt_g_digits(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    // The exponent as `%e` at this precision rounds it, which decides the form, as in C.
    let exp = format!("{:.*e}", digits - 1, v);
    let (mantissa, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let p = digits as i32;
    if (-4..p).contains(&e) {
        let decimals = (p - 1 - e).max(0) as usize;
        let s = format!("{v:.decimals$}");
        trim_zeros(&s)
    } else {
        let m = trim_zeros(mantissa);
        format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_c() {
        for (v, want) in [
            (1.0, "1"),
            (-1.0, "-1"),
            (84.98587310361772, "84.9859"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1234567.0, "1.23457e+06"),
            (100000.0, "100000"),
            (2.5, "2.5"),
        ] {
            assert_eq!(fmt_g(v), want, "{v}");
        }
    }

    /// Exact ties round to even, as glibc's printf does.
    #[test]
    fn ties_round_as_c_does() {
        for (v, digits, want) in [(123456.5, 6, "123456"), (0.125, 2, "0.12"), (2.5, 1, "2"), (1.5, 1, "2")] {
            assert_eq!(fmt_g_digits(v, digits), want, "%.{digits}g of {v}");
        }
    }

    /// Expected strings from glibc's printf("%.17g").
    #[test]
    fn g17_format_matches_c() {
        for (v, want) in [
            (3.0, "3"),
            (-1.0, "-1"),
            (1234567.0, "1234567"),
            (1e6, "1000000"),
            (0.1, "0.10000000000000001"),
            (-0.24946692839886797, "-0.24946692839886797"),
            (1.1329806639047268, "1.1329806639047268"),
            (2.5, "2.5"),
            (1e17, "1e+17"),
            (12345678901234567.0, "12345678901234568"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (5e-324, "4.9406564584124654e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-1.5e-300, "-1.5000000000000001e-300"),
            (0.0, "0"),
        ] {
            assert_eq!(fmt_g17(v), want, "{v}");
        }
    }

    /// `%g` wrote label 1234567 as `1.23457e+06`: optc read it back as another label and
    /// LIBLINEAR not at all.
    #[test]
    fn labels_are_written_with_every_digit() {
        let mut m = SavedModel::parse(
            "solver_type L1R_LR\nnr_class 2\nlabel 1234567 1000000\nnr_feature 1\nbias -1\nw\n0.5\n",
            "m",
        )
        .expect("valid");
        assert!(m.to_text().contains("\nlabel 1234567 1000000\n"), "{}", m.to_text());
        assert_eq!(m.liblinear_cannot_read(), None);
        m.labels = vec![2.5, 1.0];
        assert_eq!(SavedModel::parse(&m.to_text(), "m").expect("optc reads it").labels, vec![2.5, 1.0]);
        assert_eq!(
            m.liblinear_cannot_read().as_deref(),
            Some("LIBLINEAR reads integer labels only, and cannot load a model with label 2.5")
        );
        m.labels = vec![3e9, 0.5];
        assert!(m.liblinear_cannot_read().is_some_and(|w| w.ends_with("labels 3000000000, 0.5")));
    }

    /// Found by fuzzing: `nr_feature` near usize::MAX overflowed the row count.
    #[test]
    fn a_huge_feature_count_is_an_error() {
        let text = format!("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature {}\nbias 1\nw\n", usize::MAX);
        let e = SavedModel::parse(&text, "m").unwrap_err().to_string();
        assert!(e.contains("is too large"), "{e}");
    }

    /// Found by fuzzing: a one-class model (`nr_class 1`) made predict index a second label.
    #[test]
    fn a_one_class_model_predicts_its_class() {
        let m = SavedModel::parse("solver_type L1R_LR\nnr_class 1\nlabel 7\nnr_feature 1\nbias -1\nw\n0.5\n", "m")
            .expect("valid");
        assert_eq!(m.predict(&m.decision((&[0]).into(), &[1.0])), 7.0);
        assert_eq!(m.predict(&m.decision((&[0]).into(), &[-1.0])), 7.0);
    }

    /// A file written by LIBLINEAR 2.x (`%.17g` weights with trailing spaces).
    #[test]
    fn reads_liblinear_files() {
        let text =
            "solver_type L2R_LR\nnr_class 2\nlabel -1 1\nnr_feature 3\nbias -1\nw\n0.10000000000000001 \n-2 \n0 \n";
        let m = SavedModel::parse(text, "m").expect("valid");
        assert_eq!(m.w, vec![0.1, -2.0, 0.0]);
        let dec = m.decision((&[0, 1]).into(), &[1.0, 1.0]);
        assert_eq!(dec, vec![-1.9]);
        assert_eq!(m.predict(&dec), 1.0, "decision ≤ 0 → the second label");
        let back = SavedModel::parse(&m.to_text(), "m").expect("round trip");
        assert_eq!(back, m);
    }

    #[test]
    fn bad_model_files_say_where() {
        let e = SavedModel::parse("solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n1\n", "m")
            .unwrap_err();
        assert_eq!(e.to_string(), "m:7: expected 2 weight lines, found 1");
        let e = SavedModel::parse("solver L2R_LR\n", "m").unwrap_err();
        assert_eq!(e.to_string(), "m:1: unknown header `solver` (is this a LIBLINEAR model file?)");
    }
}
