//! `optc predict SAVED DATA`: LIBLINEAR's `predict`, reading optc's or LIBLINEAR's model files.

use super::run::load_data;
use super::Failure;
use crate::model_file::{fmt_g, write_atomic, SavedModel};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// A model file in LIBLINEAR's format (`optc run --save`, or LIBLINEAR's `train`).
    pub saved_model: PathBuf,
    /// Data to score, LIBSVM/svmlight text (plain or compressed).
    pub data: PathBuf,
    /// Write one predicted label per line (as LIBLINEAR's predict); without it, labels go to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Add the decision value(s) after each label.
    #[arg(long)]
    pub scores: bool,
}

pub fn predict(args: &PredictArgs) -> Result<(), Failure> {
    let model = SavedModel::read(&args.saved_model).map_err(|e| Failure::Input(e.to_string()))?;
    let (data, _) = load_data(&args.data)?;
    let (indptr, indices, values) = data.csr();
    let mut out = String::with_capacity(data.rows() * 4);
    let (mut correct, mut total) = (0usize, 0usize);
    let (mut err, mut sp, mut st, mut spp, mut stt, mut spt) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..data.rows() {
        let (lo, hi) = (indptr[i], indptr[i + 1]);
        let dec = model.decision(&indices[lo..hi], &values[lo..hi]);
        let p = model.predict(&dec);
        let t = data.labels[i];
        out.push_str(&fmt_g(p));
        if args.scores {
            for d in &dec {
                out.push(' ');
                out.push_str(&fmt_g(*d));
            }
        }
        out.push('\n');
        correct += usize::from(p == t);
        total += 1;
        err += (p - t) * (p - t);
        sp += p;
        st += t;
        spp += p * p;
        stt += t * t;
        spt += p * t;
    }
    match &args.out {
        Some(path) => write_atomic(path, out.as_bytes())
            .map_err(|e| Failure::Input(format!("cannot write {}: {e}", path.display())))?,
        None => print!("{out}"),
    }
    let n = total as f64;
    let summary = if model.is_regression() {
        let r2 = ((n * spt - sp * st) * (n * spt - sp * st)) / ((n * spp - sp * sp) * (n * stt - st * st));
        format!(
            "Mean squared error = {} (regression)\nSquared correlation coefficient = {} (regression)",
            fmt_g(err / n),
            fmt_g(r2)
        )
    } else {
        format!("Accuracy = {}% ({correct}/{total})", fmt_g(correct as f64 / n * 100.0))
    };
    if args.out.is_some() {
        println!("{summary}");
    } else {
        eprintln!("{summary}");
    }
    Ok(())
}
