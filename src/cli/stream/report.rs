//! What a streamed or distributed run that ended with an answer reports: its `--json` record
//! and the lines it prints.

use super::*;

/// What a streamed run that ended with an answer reports.
pub(super) struct Ran<'a> {
    pub(super) file: &'a crate::source::SourceFile,
    pub(super) source: &'a StreamSource,
    pub(super) scanned: &'a crate::data::stream::Scan,
    pub(super) plan: &'a crate::plan::Plan,
    pub(super) settings: &'a crate::analysis::Settings,
    pub(super) step: &'a super::super::wording::StepOf,
    pub(super) done: &'a crate::exec::stream::StreamOutcome,
    pub(super) switched: Option<&'a str>,
    pub(super) backend: &'static str,
    pub(super) compile_seconds: f64,
    pub(super) scan_seconds: f64,
    pub(super) calibration: Option<&'a crate::exec::calibrate::Calibration>,
    pub(super) features: usize,
    pub(super) intercept: Option<f64>,
    pub(super) tol: Option<f64>,
    pub(super) nnz_per_second: f64,
    /// The ranks of the run, and the bytes this one sent in reductions.
    pub(super) processes: usize,
    pub(super) communicated: u64,
    /// Each rank held its rows in memory (`mpirun` without `--stream`).
    pub(super) resident: bool,
}

/// The streamed run's `--json` record.
pub(super) fn json(r: &Ran, kind: LabelKind) -> serde_json::Value {
    let (outcome, source, scanned) = (&r.done.outcome, r.source, r.scanned);
    let ev = &outcome.eval;
    let stream = serde_json::json!({
        "block_rows": source.block_rows,
        "largest_block": scanned.largest_block,
        "blocks": scanned.blocks,
        "parse_threads": source.workers,
        "bytes": scanned.bytes,
        "passes": 1 + r.done.passes,
        "scan_seconds": r.scan_seconds,
        "epoch_seconds": r.done.epoch_seconds,
        "epoch_nnz_per_second": r.nnz_per_second,
        "order": if r.resident { "seeded permutation" } else { "file" },
        "in_memory": r.resident,
        "cache": source.cached().map(|p| p.display().to_string()),
        "cache_note": scanned.cache.as_ref().map(|n| n.to_string()),
        "calibration_rows": r.calibration.map(|c| c.rows),
        "processes": r.processes,
        "bytes_communicated": r.communicated,
    });
    let mut json = serde_json::json!({
        "model": r.file.name,
        "data": source.name,
        "solver": r.plan.info.solver,
        "solver_note": r.switched,
        "lazy": r.plan.info.lazy,
        "backend": r.backend,
        "compile_seconds": r.compile_seconds,
        "objective": ev.objective,
        "loss": ev.loss,
        "nnz": ev.nnz,
        "nnz_rows": ev.nnz_rows,
        "intercept": r.intercept,
        "features": r.features,
        "rows": scanned.rows,
        "data_nnz": scanned.nnz,
        "epochs": outcome.epochs,
        "status": outcome.status.name(),
        "stopped_by": outcome.rule,
        "gap": outcome.gap,
        "relative_gap": outcome.gap.map(|g| g / ev.objective.abs().max(f64::MIN_POSITIVE)),
        "no_gap_because": outcome.gap.is_none().then_some(no_streamed_gap(r.plan)).flatten(),
        "tol": r.tol,
        "check_seconds": outcome.check_seconds,
        "seed": r.settings.seed,
        "eta0": if r.settings.step_text.is_some() { None } else { r.step.eta0 },
        "n0": r.step.n0,
        "step": r.step.shown.json(),
        "seconds": outcome.seconds,
        "parse_seconds": r.scan_seconds,
        "stream": stream,
    });
    let obj = json.as_object_mut().expect("json object");
    match kind {
        LabelKind::Real => _ = obj.insert("train_mse".into(), ev.mse.into()),
        _ => _ = obj.insert("train_error".into(), ev.error.into()),
    }
    json
}

/// The streamed run's report for people, `weights` of them.
pub(super) fn human(r: &Ran, weights: usize) -> String {
    let (outcome, source, scanned, features) = (&r.done.outcome, r.source, r.scanned, r.features);
    let ev = &outcome.eval;
    let solver = r.plan.info.solver;
    let mut s = format!(
        "optc: {solver}{} on {} ({}) — {} rows × {features} features, {} non-zeros (first pass {:.2} s, {} blocks of ≤ {} rows)\n",
        if r.plan.info.lazy && solver.can().lazy { " (lazy)" } else { "" },
        source.name,
        if r.resident { "each rank's rows in memory" } else { "streamed" },
        scanned.rows,
        scanned.nnz,
        r.scan_seconds,
        scanned.blocks,
        source.block_rows,
    );
    s += &format!(
        "  epochs       {} ({}; {})\n",
        outcome.epochs,
        match (r.resident, r.plan.reductions().is_empty()) {
            _ if r.backend == "native" =>
                "proximal Newton iterations, the working set's Hessian summed across the ranks",
            (true, false) => "batch iterations, sums over the rows added up across the ranks",
            (true, true) => "each rank's rows in a seeded order, the states averaged after each",
            (false, _) => "rows in file order",
        },
        match r.step.shown {
            StepShown::Eta0(None) => format!("seed {}", r.settings.seed),
            _ => format!("step {}", r.step.shown.text()),
        }
    );
    s += &format!("  objective    F = {:.6}  (mean loss {:.6})\n", ev.objective, ev.loss);
    match (outcome.gap, no_streamed_gap(r.plan)) {
        (Some(g), _) => {
            s +=
                &format!("  gap          {g:.2e}  (relative {:.2e}: F − F* ≤ gap, certified)\n", g / ev.objective.abs())
        }
        (None, why) => s += &format!("  gap          none: {}\n", why.unwrap_or("not computed")),
    }
    s += &format!("  status       {}: {}\n", outcome.status.name(), outcome.rule);
    s += &format!("  nnz          {} of {weights} weights\n", ev.nnz);
    if let Some(b) = r.intercept {
        let words = r.plan.objective.intercept_words();
        s += &format!("  intercept    b = {}  ({words})\n", super::super::wording::sig6(b));
    }
    if let Some(e) = ev.error {
        s += &format!("  train error  {:.2}%\n", 100.0 * e);
    }
    if let Some(e) = ev.mse {
        s += &format!("  train mse    {e:.6}\n");
    }
    s += &match r.resident {
        true => format!(
            "  time         {:.3} s to solve: {} passes over the rows, epochs at {:.2e} non-zeros/s\n",
            outcome.seconds, r.done.passes, r.nnz_per_second
        ),
        false => format!(
            "  time         {:.3} s to solve: {} passes over the file, epochs at {:.2e} non-zeros/s (reading included)\n",
            outcome.seconds, r.done.passes, r.nnz_per_second
        ),
    };
    s += &match source.cached() {
        _ if r.resident => format!("  memory       the state (d = {features}) and this rank's rows"),
        Some(c) => format!(
            "  memory       the state (d = {features}) and at most 3 blocks of ≤ {} rows (passes read the cache {})",
            source.block_rows,
            c.display()
        ),
        None => format!(
            "  memory       the state (d = {features}) and at most {} blocks of ≤ {} rows ({} parse threads)",
            3 * source.workers + 2,
            source.block_rows,
            source.workers
        ),
    };
    if r.processes > 1 {
        s += &format!(
            "\n  processes    {}, each {} its own shard; rank 0 sent {} bytes in reductions ({:.0} an epoch)",
            r.processes,
            if r.resident { "holding" } else { "streaming" },
            r.communicated,
            r.communicated as f64 / outcome.epochs.max(1) as f64
        );
    }
    s
}
