//! F(w), the mean loss, sparsity and errors of flushed weights, from the plan's own objective
//! formulas: the same code whatever back end produced the weights. A loss that the certificate
//! names is taken in closed form ([`crate::plan::LossConjugate::loss`]), any other through the
//! interpreter.

use super::interp::{eval_at, eval_entry, Env};
use super::{DataView, State};
use crate::plan::{LossConjugate, Plan};

#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// F(w) in docs/algorithms.md's normalisation (on the data given).
    pub objective: f64,
    /// (1/m)·Σᵢ ωᵢ·ℓ(yᵢ, ⟨xᵢ, w⟩): without the term's coefficient c, with the rows' weights ωᵢ
    /// (1 when the loss is not weighted).
    pub loss: f64,
    pub nnz: usize,
    /// Multiclass: the rows of W (features) with a non-zero weight for some class.
    pub nnz_rows: Option<usize>,
    /// Fraction of misclassified rows (classification).
    pub error: Option<f64>,
    /// Mean squared error of the margin (regression).
    pub mse: Option<f64>,
}

/// ⟨xᵢ, w⟩ (without the intercept), ignoring features beyond the weights (test data may have more).
pub fn margin(data: &DataView, w: &[f64], i: usize) -> f64 {
    let row = data.indptr[i]..data.indptr[i + 1];
    if super::linalg::full_row(&row, w.len(), |k| data.indices[k]) {
        return super::linalg::dot(&data.values[row], w);
    }
    let mut a = 0.0;
    for k in row {
        let j = data.indices[k] as usize;
        if j < w.len() {
            a += data.values[k] * w[j];
        }
    }
    a
}

/// Evaluates flushed weights in `state` on `data` (training or held-out rows).
pub fn evaluate(plan: &Plan, state: &State, data: &DataView) -> Evaluation {
    evaluate_rows(plan, state, data, None)
}

/// As [`evaluate`], also handing back every row's margin ⟨xᵢ, w⟩ (the certificate reuses them
/// instead of making another pass over the data).
pub fn evaluate_with_margins(plan: &Plan, state: &State, data: &DataView) -> (Evaluation, Vec<f64>) {
    let mut margins = Vec::with_capacity(data.rows());
    let eval = evaluate_impl(plan, state, data, None, Some(&mut margins), closed_form(plan));
    (eval, margins)
}

/// As [`evaluate`], on the given rows only (all rows for None).
pub fn evaluate_rows(plan: &Plan, state: &State, data: &DataView, rows: Option<&[u32]>) -> Evaluation {
    evaluate_impl(plan, state, data, rows, None, closed_form(plan))
}

/// The rows an evaluation covers: those given, or all of them.
fn chosen_rows<'a>(data: &DataView, rows: Option<&'a [u32]>) -> std::borrow::Cow<'a, [u32]> {
    match rows {
        Some(r) => std::borrow::Cow::Borrowed(r),
        None => std::borrow::Cow::Owned((0..data.rows() as u32).collect()),
    }
}

/// As [`evaluate`], every row's loss through the interpreter from the plan's formula, even where
/// a closed form is known: what the closed forms are held to (tests/backends.rs).
pub fn evaluate_interpreted(plan: &Plan, state: &State, data: &DataView) -> Evaluation {
    evaluate_impl(plan, state, data, None, None, None)
}

/// The loss in closed form where the plan's certificate names a stdlib loss (the model cannot
/// redefine those, and a declared loss whose formula is a stdlib one's is recognised as it:
/// `LossDef::known`); None for any other declared loss, and for softmax, whose report is its own.
fn closed_form(plan: &Plan) -> Option<LossConjugate> {
    plan.certificate.map(|c| c.conjugate).filter(|&k| k != LossConjugate::Softmax)
}

fn evaluate_impl(
    plan: &Plan,
    state: &State,
    data: &DataView,
    rows: Option<&[u32]>,
    mut margins: Option<&mut Vec<f64>>,
    closed: Option<LossConjugate>,
) -> Evaluation {
    if plan.objective.softmax {
        return evaluate_softmax(plan, state, data, rows, margins);
    }
    if let Some(cost) = &plan.objective.dictionary {
        return evaluate_dictionary(plan, cost, state, data, rows);
    }
    let w = state.weights(plan);
    let intercept = state.intercept(plan);
    let obj = &plan.objective;
    // A scratch state whose labels are this data's and whose margin slot we set per row.
    let env = Env::new(plan, data.dims());
    let mut scratch = State { scalars: state.scalars.clone(), vectors: plan.vectors.iter().map(|_| vec![]).collect() };
    if let Some(y) = plan.labels() {
        scratch.vectors[y.0] = data.labels.to_vec();
    }
    let rows = chosen_rows(data, rows);
    let rows: &[u32] = &rows;
    let m = rows.len();
    let keep = margins.is_some();
    // A cold start's first check (the working set's) needs no pass over the non-zeros.
    let zero = w.iter().all(|v| *v == 0.0);
    // Block by block (see [`super::passes`]): the loss, the errors, the squared errors and the
    // margins of each block's rows.
    let parts = super::passes::blocks_with(
        m,
        data.threads,
        || scratch.clone(),
        |scratch, block| {
            let (mut loss, mut wrong, mut sq, mut out) =
                (0.0, 0usize, 0.0, Vec::with_capacity(if keep { block.len() } else { 0 }));
            for &i in &rows[block] {
                let i = i as usize;
                let a = if zero { 0.0 } else { margin(data, w, i) } + intercept;
                if keep {
                    out.push(a);
                }
                let y = data.labels[i];
                let l = match closed {
                    Some(kind) => kind.loss(y, a),
                    None => {
                        scratch.scalars[obj.margin.0] = a;
                        eval_at(&env, &obj.loss, scratch, i, 0)
                    }
                };
                loss += data.weight(i) * l;
                let predicted = if a > 0.0 { 1.0 } else { -1.0 };
                wrong += usize::from(predicted != y);
                sq += (a - y) * (a - y);
            }
            (loss, wrong, sq, out)
        },
    );
    let (mut loss, mut wrong, mut sq) = (0.0, 0usize, 0.0);
    for (l, e, s, out) in parts {
        (loss, wrong, sq) = (loss + l, wrong + e, sq + s);
        if let Some(all) = margins.as_deref_mut() {
            all.extend(out);
        }
    }
    let loss = if m > 0 { loss / m as f64 } else { 0.0 };
    let composite = match (&obj.composite, data.operator) {
        (Some(c), Some(op)) => c.coef * op.omega_value(c.omega, w),
        (Some(_), None) => f64::NAN,
        (None, _) => 0.0,
    };
    // By blocks of features too: text data has a million of them, each through the interpreter.
    let penalty: f64 = super::passes::blocks(w.len(), data.threads, |block| {
        block.map(|j| eval_at(&env, &obj.penalty, state, 0, j)).sum::<f64>()
    })
    .into_iter()
    .sum::<f64>()
        + obj.vector.map_or(0.0, |t| t.value(w))
        + composite
        + 0.5 * obj.intercept_l2 * intercept * intercept;
    let classification = plan.info.classification;
    Evaluation {
        objective: obj.loss_weight * loss + penalty,
        loss,
        nnz: w.iter().filter(|v| **v != 0.0).count(),
        nnz_rows: None,
        error: classification.then(|| wrong as f64 / m.max(1) as f64),
        mse: (!classification).then(|| sq / m.max(1) as f64),
    }
}

/// The multiclass report: scores aᵢ = Wᵀxᵢ, ℓ = logsumexp(aᵢ) − a_{yᵢ} computed stably, the
/// prediction the class of the largest score, the per-entry penalty at every W[j, c] and the
/// row term on every row. `margins` receives the k scores of each row.
fn evaluate_softmax(
    plan: &Plan,
    state: &State,
    data: &DataView,
    rows: Option<&[u32]>,
    mut margins: Option<&mut Vec<f64>>,
) -> Evaluation {
    let w = state.weights(plan);
    let features = data.features;
    let k = w.len().checked_div(features).unwrap_or(0);
    let obj = &plan.objective;
    let env = Env::new(plan, crate::plan::Dims { classes: k, ..data.dims() });
    let rows = chosen_rows(data, rows);
    let rows: &[u32] = &rows;
    let (mut loss, mut wrong) = (0.0, 0usize);
    let mut scores = vec![0.0; k];
    // Per-class intercepts start every row's scores (k of them: their buffer is a vec[k]).
    let mut offsets: Vec<f64> = obj.class_intercept.map_or_else(Vec::new, |b| state.vectors[b.0].clone());
    offsets.resize(k, 0.0);
    for &i in rows {
        let i = i as usize;
        scores.copy_from_slice(&offsets);
        for p in data.indptr[i]..data.indptr[i + 1] {
            let j = data.indices[p] as usize;
            if j < features {
                for (s, wc) in scores.iter_mut().zip(&w[j * k..(j + 1) * k]) {
                    *s += data.values[p] * wc;
                }
            }
        }
        if let Some(out) = margins.as_deref_mut() {
            out.extend_from_slice(&scores);
        }
        let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = top + scores.iter().map(|s| (s - top).exp()).sum::<f64>().ln();
        let y = data.labels[i] as usize;
        loss += data.weight(i) * (lse - scores.get(y).copied().unwrap_or(f64::NAN));
        // The first of the largest scores, as LIBLINEAR's predict breaks ties.
        let best = (0..k).fold(0, |b, c| if scores[c] > scores[b] { c } else { b });
        wrong += usize::from(best != y);
    }
    let m = rows.len();
    let loss = if m > 0 { loss / m as f64 } else { 0.0 };
    let mut penalty = 0.0;
    for j in 0..features {
        for c in 0..k {
            penalty += eval_entry(&env, &obj.penalty, state, j, c);
        }
    }
    if let (Some(t), true) = (obj.vector, k > 0) {
        penalty += t.value_shaped(w, k);
    }
    Evaluation {
        objective: obj.loss_weight * loss + penalty,
        loss,
        nnz: w.iter().filter(|v| **v != 0.0).count(),
        nnz_rows: Some(if k > 0 { w.chunks(k).filter(|r| r.iter().any(|v| *v != 0.0)).count() } else { 0 }),
        error: Some(wrong as f64 / m.max(1) as f64),
        mse: None,
    }
}

/// F(D) = c·mean sparse_code(xᵢ, D, λ₁, λ₂) + ϕ(D) of a dictionary plan: every signal coded.
/// `loss` is the mean cost; `nnz` counts D's non-zero entries.
fn evaluate_dictionary(
    plan: &Plan,
    cost: &crate::plan::DictionaryCost,
    state: &State,
    data: &DataView,
    rows: Option<&[u32]>,
) -> Evaluation {
    let d = state.weights(plan);
    let x = crate::runtime::dictionary::Signals { indptr: data.indptr, indices: data.indices, values: data.values };
    let (mean, penalty) = crate::runtime::dictionary::cost(
        d,
        x,
        rows,
        (data.features, data.dims().classes),
        cost,
        data.operator,
        data.threads,
    );
    Evaluation {
        objective: plan.objective.loss_weight * mean + penalty,
        loss: mean,
        nnz: d.iter().filter(|v| **v != 0.0).count(),
        nnz_rows: None,
        error: None,
        mse: None,
    }
}

#[cfg(test)]
mod tests {
    /// A dense row's margin is its sparse sum: rows of every column beside a row of one, and
    /// rows of every column read against fewer weights (a test set with more features), whose
    /// extra column is left out.
    #[test]
    fn dense_rows_have_the_margins_of_sparse_ones() {
        let (indptr, indices) = ([0, 3, 4, 7], [0u32, 1, 2, 1, 0, 1, 2]);
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let labels = [0.0; 3];
        let data = super::DataView::new(&indptr, &indices, &values, &labels, 3);
        let margin = |w: &[f64], i| super::margin(&data, w, i);
        let w = [1.0, 10.0, 100.0];
        assert_eq!([margin(&w, 0), margin(&w, 1), margin(&w, 2)], [321.0, 40.0, 765.0]);
        assert_eq!([margin(&w[..2], 0), margin(&w[..2], 2)], [21.0, 65.0]);
    }
}
