//! The files a command writes (opened before any work, replaced atomically) and what goes in
//! the trace and the plot.

use super::args::RunArgs;
use super::Failure;
use crate::exec::driver;
use crate::output::OutputFile;
use crate::stdlib::LabelKind;
use std::path::{Path, PathBuf};

/// The files a run writes, opened before any work.
pub(crate) struct Outputs {
    pub save: Option<OutputFile>,
    pub trace: Option<OutputFile>,
    pub plot: Option<OutputFile>,
}

impl Outputs {
    /// Opens `--save`, `--trace` and `--plot`; at most one of them, or `--json`, may be
    /// standard output.
    pub(super) fn prepare(args: &RunArgs) -> Result<Outputs, Failure> {
        let out = Outputs {
            save: prepare_output(args.save.as_ref())?,
            trace: prepare_output(args.trace.as_ref())?,
            plot: prepare_output(args.plot.as_ref())?,
        };
        let to_stdout =
            [&out.save, &out.trace, &out.plot].iter().filter(|o| o.as_ref().is_some_and(|o| o.is_stdout())).count();
        if to_stdout + usize::from(args.json) > 1 {
            return Err(Failure::Usage(
                "only one of --json, --save -, --trace - and --plot - can write to standard output".into(),
            ));
        }
        Ok(out)
    }
}

/// Opens every output file before any work, so a bad path costs nothing (exit 2).
pub(crate) fn prepare_output(path: Option<&PathBuf>) -> Result<Option<OutputFile>, Failure> {
    path.map(|p| OutputFile::prepare(p).map_err(|e| Failure::Usage(e.to_string()))).transpose()
}

/// Writes a prepared output file.
pub(crate) fn commit_output(out: Option<OutputFile>, contents: impl FnOnce() -> String) -> Result<(), Failure> {
    match out {
        Some(o) => o.commit(contents().as_bytes()).map_err(|e| Failure::Input(e.to_string())),
        None => Ok(()),
    }
}

/// The trace as CSV: one row per epoch; the test columns are empty without --test.
pub(crate) fn trace_csv(trace: &[driver::TracePoint], kind: LabelKind) -> String {
    let test_metric = if kind == LabelKind::Real { "test_mse" } else { "test_error" };
    let mut csv = format!("epoch,seconds,objective,loss,nnz,gap,{test_metric},test_loss\n");
    for p in trace {
        let gap = p.gap.map_or(String::new(), |g| format!("{g:.6e}"));
        let (metric, loss) = match &p.test {
            Some(t) => (t.error.or(t.mse).map_or(String::new(), |v| format!("{v:.6e}")), format!("{:.17e}", t.loss)),
            None => (String::new(), String::new()),
        };
        csv.push_str(&format!(
            "{},{:.6},{:.17e},{:.17e},{},{gap},{metric},{loss}\n",
            p.epoch, p.seconds, p.eval.objective, p.eval.loss, p.eval.nnz
        ));
    }
    csv
}

/// A file's own name, for a figure's title (folders would crowd it); the whole path when it has
/// none.
pub(crate) fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Draws the trace for `--plot`, titled by the files' own names (folders would crowd the title).
pub(crate) fn write_plot(
    out: Option<OutputFile>,
    model: &str,
    data: &str,
    solver: &str,
    trace: &[driver::TracePoint],
    kind: LabelKind,
) -> Result<(), Failure> {
    let Some(out) = out else { return Ok(()) };
    let title = format!("{} on {}: {solver}, {} epochs", file_name(model), file_name(data), trace.len());
    let rows: Vec<crate::plot::TraceRow> = trace
        .iter()
        .map(|p| crate::plot::TraceRow {
            epoch: p.epoch,
            seconds: p.seconds,
            objective: p.eval.objective,
            gap: p.gap,
            test: p.test.as_ref().and_then(|t| t.error.or(t.mse)),
        })
        .collect();
    let svg = crate::plot::plot_trace(&title, &rows, kind == LabelKind::Real)
        .map_err(|e| Failure::Input(format!("{}: {e}", out.name())))?;
    commit_output(Some(out), || svg)
}
