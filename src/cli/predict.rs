//! `optc predict SAVED DATA`: LIBLINEAR's `predict`, reading optc's or LIBLINEAR's model files.

use super::inputs::load_data;
use super::outputs::{commit_output, prepare_output};
use super::Failure;
use crate::model_file::{fmt_exact, fmt_g, fmt_g17, SavedModel};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// A model file in LIBLINEAR's format (`optc run --save`, or LIBLINEAR's `train`).
    pub saved_model: PathBuf,
    /// Data to score, LIBSVM/svmlight text (plain or compressed); `-` for stdin.
    pub data: PathBuf,
    /// Write one predicted label per line (as LIBLINEAR's predict); without it, labels go to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Add the decision value(s) after each label.
    #[arg(long)]
    pub scores: bool,
    /// No accuracy line and no warnings (LIBLINEAR's `predict -q`).
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn predict(args: &PredictArgs) -> Result<(), Failure> {
    super::inputs::readable("model file", &args.saved_model)?;
    // A saved dictionary: the codes of the signals, not labels.
    if let Ok(text) = std::fs::read_to_string(&args.saved_model) {
        if super::dictionary::SavedDictionary::is(&text) {
            let saved = super::dictionary::SavedDictionary::parse(&text, &args.saved_model)?;
            let out_file = prepare_output(args.out.as_ref())?;
            let (data, _, _) = load_data(&args.data, "data file", !args.quiet, &Default::default())?;
            let codes = super::dictionary::predict(&saved, &data, args.quiet);
            return match out_file {
                Some(f) => commit_output(Some(f), || codes),
                // A reader that stops early (`| head`) is not an error.
                None => match std::io::Write::write_all(&mut std::io::stdout().lock(), codes.as_bytes()) {
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::Input(e.to_string())),
                    _ => Ok(()),
                },
            };
        }
    }
    let model = SavedModel::read(&args.saved_model).map_err(|e| Failure::Input(e.to_string()))?;
    let out_file = prepare_output(args.out.as_ref())?;
    let (data, _, _) = load_data(&args.data, "data file", !args.quiet, &Default::default())?;
    if !args.quiet {
        for w in warnings(&model, &data) {
            eprintln!("warning: {w}");
        }
    }
    let (indptr, indices, values) = data.csr();
    let mut out = String::with_capacity(data.rows() * 4);
    let (mut correct, mut total) = (0usize, 0usize);
    let (mut err, mut sp, mut st, mut spp, mut stt, mut spt) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..data.rows() {
        let (lo, hi) = (indptr[i], indptr[i + 1]);
        let dec = model.decision(indices.range(lo..hi), &values[lo..hi]);
        let p = model.predict(&dec);
        let t = data.labels[i];
        // `%.17g`, as LIBLINEAR's predict writes it, so the two prediction files are the same
        // bytes (and a regression's values keep every bit).
        out.push_str(&fmt_g17(p));
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
    let to_file = out_file.as_ref().is_some_and(|o| !o.is_stdout());
    match out_file {
        Some(_) => commit_output(out_file, || out)?,
        None => print!("{out}"),
    }
    if args.quiet {
        return Ok(());
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
    if to_file {
        println!("{summary}");
    } else {
        eprintln!("{summary}");
    }
    Ok(())
}

/// What LIBLINEAR's predict passes over in silence: features the model never saw (ignored, as
/// LIBLINEAR does) and labels it cannot predict (those rows can only count as errors).
fn warnings(model: &SavedModel, data: &crate::data::Dataset) -> Vec<String> {
    let mut out = vec![];
    if data.features() > model.nr_feature {
        out.push(format!(
            "{} has features up to {} but the model has {}; the extra features are ignored (as LIBLINEAR does)",
            data.name,
            data.features(),
            model.nr_feature
        ));
    }
    if !model.is_regression() {
        let mut unseen: Vec<f64> = vec![];
        let mut first_line = 0;
        for (k, y) in data.labels.iter().enumerate() {
            if !model.labels.contains(y) && !unseen.contains(y) {
                if unseen.is_empty() {
                    first_line = data.lines[k];
                }
                unseen.push(*y);
            }
        }
        if !unseen.is_empty() {
            // Every digit: `%g` shows 1234567 and 1234570 alike.
            let shown: Vec<String> = unseen.iter().take(5).map(|v| fmt_exact(*v)).collect();
            let known: Vec<String> = model.labels.iter().map(|v| fmt_exact(*v)).collect();
            out.push(format!(
                "{}:{first_line}: label{} {}{} never seen by the model (its labels: {}); such rows count as errors",
                data.name,
                if unseen.len() > 1 { "s" } else { "" },
                shown.join(", "),
                if unseen.len() > 5 { ", …" } else { "" },
                known.join(", ")
            ));
        }
    }
    out
}
