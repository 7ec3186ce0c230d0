//! Choosing a stochastic solver's free constant on a sample of the rows: FOBOS's η₀, as
//! Bottou's SGD does (the data-dependent default 1/(β·max‖xᵢ‖²) is safe for every example
//! but slow on high-dimensional sparse data, where most features are rare and need larger
//! steps; the candidates are multiples of it by powers of 4), and SMM's n₀ of the weights, as
//! Mairal (2013) does (a grid the plan gives). One pass over ~5% of the rows per candidate
//! picks the value with the lowest sample objective.

use super::driver::RowOrder;
use super::evaluate::evaluate_rows;
use super::{select_backend, DataView, Orders, State};
use crate::data::DataFacts;
use crate::plan::{Expr, ParamInit, Plan, ScalarId, ScalarRole, Stmt};

/// Candidate multiples of the default η₀.
const FACTORS: [f64; 6] = [0.25, 1.0, 4.0, 16.0, 64.0, 256.0];

#[derive(Clone, Debug)]
pub struct Calibration {
    /// The parameter's name in the plan (η0, n0).
    pub param: String,
    pub value: f64,
    pub default: f64,
    pub rows: usize,
    /// (candidate, sample objective), None where the pass diverged.
    pub tried: Vec<(f64, Option<f64>)>,
    pub seconds: f64,
}

/// The plan with its tunable parameter fixed to the best candidate, or None when it has none
/// in use (the user gave `eta0`, `n0` or a `step` schedule).
pub fn calibrate(plan: &Plan, data: &DataView, facts: &DataFacts, seed: u64, jit: bool) -> Option<(Plan, Calibration)> {
    tunable(plan)?;
    let m = data.rows();
    let n = m.min(1000.max(m / 20));
    let mut order = RowOrder::new(m, seed ^ 0x5eed);
    let mut sample: Vec<u32> = order.next_epoch()[..n].to_vec();
    sample.sort_unstable();
    calibrate_on(plan, data, facts, &sample, jit)
}

/// The parameter a calibration would tune: one bound from max‖xᵢ‖² or tuned on a grid, that
/// the epoch reads. Asked before the sample is drawn (a shuffle of every row, 2 ms on 200,000).
fn tunable(plan: &Plan) -> Option<ScalarId> {
    let id = plan
        .scalars
        .iter()
        .position(|s| {
            s.role == ScalarRole::Param
                && matches!(s.init, ParamInit::InverseMaxRowNormSq { .. } | ParamInit::Tuned { .. })
        })
        .map(ScalarId)?;
    uses(&plan.epoch, id).then_some(id)
}

/// As [`calibrate`], on the given rows of `data` (a streamed run's sample is all it holds).
pub fn calibrate_on(
    plan: &Plan,
    data: &DataView,
    facts: &DataFacts,
    sample: &[u32],
    jit: bool,
) -> Option<(Plan, Calibration)> {
    let start = std::time::Instant::now();
    let id = tunable(plan)?;
    let default = plan.scalar(id).init.value(Some(facts))?;
    let candidates: Vec<f64> = match &plan.scalar(id).init {
        ParamInit::Tuned { grid, .. } => grid.to_vec(),
        _ => FACTORS.iter().map(|f| default * f).collect(),
    };
    let n = sample.len();
    let mut tried = vec![];
    for value in candidates {
        let candidate = with_value(plan, id, value, "");
        let mut selected = select_backend(&candidate, facts, jit);
        let mut state = State::new(&candidate, facts, data.labels);
        let orders = Orders::rows(sample);
        let ran = selected
            .backend
            .init(&mut state, data)
            .and_then(|_| selected.backend.epoch(&mut state, data, &orders))
            .and_then(|_| selected.backend.finish(&mut state, data));
        let f =
            ran.ok().map(|_| evaluate_rows(&candidate, &state, data, Some(sample)).objective).filter(|f| f.is_finite());
        tried.push((value, f));
    }
    let best = tried
        .iter()
        .filter_map(|(e, f)| f.map(|f| (*e, f)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(default, |(e, _)| e);
    let note = match plan.scalar(id).init {
        ParamInit::Tuned { .. } => format!("tuned on {n} rows (default {})", crate::symbolic::fmt_num(default)),
        _ => format!("calibrated on {n} rows (default 1/(β·max‖xᵢ‖²) = {})", crate::symbolic::fmt_num(default)),
    };
    let calibrated = with_value(plan, id, best, &note);
    let param = plan.scalar(id).name.clone();
    let seconds = start.elapsed().as_secs_f64();
    Some((calibrated, Calibration { param, value: best, default, rows: n, tried, seconds }))
}

fn with_value(plan: &Plan, id: ScalarId, value: f64, note: &str) -> Plan {
    let mut p = plan.clone();
    p.scalars[id.0].init = ParamInit::Value(value);
    if !note.is_empty() {
        p.scalars[id.0].note = note.into();
    }
    p
}

fn uses(body: &[Stmt], id: ScalarId) -> bool {
    let mut found = false;
    crate::plan::walk::exprs(body, &mut |e| found |= *e == Expr::Scalar(id));
    found
}
