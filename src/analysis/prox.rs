//! How the model's terms become one prox per coordinate (or per row of W), or a composite
//! ω∘B solved by Picard, and what keeps a split from applying.

use super::*;

/// The prox the compiled solvers apply: the per-coordinate closed form every coordinate term
/// folds into, then at most one vector routine, where that composition is the exact prox of
/// the sum. It is for ½‖·‖² with anything (prox_{τ(R + μ/2‖·‖²)}(v) = prox_{τR/(1+τμ)}(v/(1+τμ)))
/// and for ℓ1 then the ℓ2 norm (the sparse-group-lasso identity); not for ℓ1 or a box with
/// another vector term, nor for two vector terms (those need Dykstra's splitting).
///
/// For a matrix W (`rows`), the vector terms are the row-wise `l1l2` and `l1inf`, applied to
/// each row; the whole-matrix norms and the balls are not compiled for W.
pub(super) fn split_prox(model: &Model, rows: bool) -> Result<(CoordinateProx, Option<VectorTerm>), SplitBlocker> {
    let mut p = CoordinateProx::NONE;
    let mut vector: Vec<(VectorTerm, String)> = vec![];
    for r in &model.regs {
        if let (Some(Operator::Center(_)), ProxKind::Svt, true) = (&r.operator, r.def.prox, rows) {
            vector.push((VectorTerm::CenteredNuclear(r.coef.value), r.text.clone()));
            continue;
        }
        if r.operator.is_some() {
            return Err(SplitBlocker::Unsupported(r.text.clone()));
        }
        let scalar = |i: usize| r.scalars.get(i).map_or(0.0, |s| s.1);
        match r.def.prox {
            ProxKind::SoftThreshold => p.l1 += r.coef.value,
            ProxKind::Scale => p.l2 += r.coef.value,
            ProxKind::Elastic => {
                p.l1 += r.coef.value;
                p.l2 += r.coef.value * scalar(0);
            }
            ProxKind::ShrinkL2 if !rows => vector.push((VectorTerm::Norm2(r.coef.value), r.text.clone())),
            ProxKind::ProxLinf if !rows => vector.push((VectorTerm::NormInf(r.coef.value), r.text.clone())),
            ProxKind::ShrinkL2Rows if rows => vector.push((VectorTerm::Norm2(r.coef.value), r.text.clone())),
            ProxKind::ProxLinfRows if rows => vector.push((VectorTerm::NormInf(r.coef.value), r.text.clone())),
            ProxKind::Svt if rows => vector.push((VectorTerm::Nuclear(r.coef.value), r.text.clone())),
            ProxKind::ReweightedL1 if p.tangent.is_none() => {
                p.tangent = Some(Tangent { coef: r.coef.value, eps: scalar(0) })
            }
            _ => return Err(SplitBlocker::Unsupported(r.text.clone())),
        }
    }
    for c in &model.constraints {
        match c.set.name.as_str() {
            "Box" => {
                p.lo = p.lo.max(c.args[0]);
                p.hi = p.hi.min(c.args[1]);
            }
            "L1Ball" if !rows => vector.push((VectorTerm::L1Ball(c.args[0]), c.text.clone())),
            "L2Ball" if !rows => vector.push((VectorTerm::L2Ball(c.args[0]), c.text.clone())),
            "Simplex" if !rows => vector.push((VectorTerm::Simplex, c.text.clone())),
            _ => return Err(SplitBlocker::Unsupported(c.text.clone())),
        }
    }
    match vector.as_slice() {
        [] => Ok((p, None)),
        [(term, text)] => {
            if p.has_box() {
                Err(SplitBlocker::NoClosedForm(format!("`{text}` with a box")))
            } else if p.l1 > 0.0 && !matches!(term, VectorTerm::Norm2(_)) {
                Err(SplitBlocker::NoClosedForm(format!("`{text}` with an ℓ1 term")))
            } else {
                Ok((p, Some(*term)))
            }
        }
        [(_, a), (_, b), ..] => Err(SplitBlocker::NoClosedForm(format!("`{a}` with `{b}`"))),
    }
}

/// One composite term — `ω(B w)` with ω = ℓ1 or ℓ2, or `group_l2(groups(...), w)` — beside
/// ½‖·‖² terms only, whose scaling composes with any prox: prox_{τ(R + μ/2‖·‖²)}(v) =
/// prox_{τR/(1+τμ)}(v/(1+τμ)). Its prox is the Picard fixed point, or the closed-form shrink of
/// each group for `group_l2` over groups `files` shows disjoint (docs/algorithms.md §3: when ω is
/// separable and B a selection, the fixed point is reached in one step).
pub(super) fn composite_prox(model: &Model, files: &FileFacts) -> Option<(CoordinateProx, Composite)> {
    use crate::runtime::picard::Omega;
    if !model.constraints.is_empty() {
        return None;
    }
    let spec = |op: &Operator| match op {
        Operator::Diff(crate::check::Dim::Fixed(n)) => Some(OperatorSpec::Diff(Some(*n))),
        Operator::Diff(_) => Some(OperatorSpec::Diff(None)),
        Operator::Incidence(p) => Some(OperatorSpec::Incidence(p.clone())),
        Operator::Groups(p) => Some(OperatorSpec::Groups(p.clone())),
        Operator::Center(_) => None,
    };
    let mut p = CoordinateProx::NONE;
    let mut found = None;
    for r in &model.regs {
        let (omega, operator, group_blocks) = match (&r.operator, &r.groups, r.def.prox) {
            (None, None, ProxKind::Scale) => {
                p.l2 += r.coef.value;
                continue;
            }
            (Some(op), None, ProxKind::SoftThreshold) => (Omega::L1, spec(op)?, false),
            (Some(op), None, ProxKind::ShrinkL2) => (Omega::BlockL2, spec(op)?, false),
            (None, Some(g), ProxKind::ShrinkL2Groups) => (Omega::BlockL2, spec(g)?, true),
            (None, Some(g), ProxKind::ProxLinfGroups) => (Omega::BlockLinf, spec(g)?, true),
            _ => return None,
        };
        if found.is_some() {
            return None;
        }
        // The closed-form shrink is group ℓ2's; group ℓ∞ takes the fixed point either way.
        let shrink = omega == Omega::BlockL2 && group_blocks && disjoint_groups(r, files);
        let prox = if shrink { CompositeProx::GroupShrink } else { CompositeProx::Picard };
        found = Some(Composite { omega, coef: r.coef.value, operator, group_blocks, prox });
    }
    found.map(|c| (p, c))
}

/// Why the DC solvers cannot run a non-convex model, if they cannot: they take `logeps` through
/// its tangent, beside terms that fold into the per-coordinate prox, and their surrogates of the
/// loss need its curvature bound.
pub(super) fn dc_blocker(
    split: &Result<(CoordinateProx, Option<VectorTerm>), SplitBlocker>,
    loss: &crate::stdlib::LossDef,
) -> Option<String> {
    if loss.smooth.is_none() {
        return Some(format!(
            "the DC solvers majorize the loss by quadratics and need a smooth one; `{}` is not smooth",
            loss.name
        ));
    }
    match split {
        Ok((CoordinateProx { tangent: Some(t), .. }, None)) if !(t.eps > 0.0 && t.eps.is_finite()) => Some(format!(
            "`logeps` needs a positive, finite ε: with ε = {} the penalty is unbounded at w = 0",
            fmt_num(t.eps)
        )),
        Ok((CoordinateProx { tangent: Some(_), .. }, None)) => None,
        _ => Some(
            "the DC solver runs one `logeps` term beside per-coordinate convex terms only (l1, l2sq, elastic, a box)"
                .into(),
        ),
    }
}

/// Why the terms do not fold into [`split_prox`]'s form.
pub(super) enum SplitBlocker {
    /// A term whose prox is not compiled (rows, groups, nuclear, ω∘B, logeps).
    Unsupported(String),
    /// Terms each compiled, whose sum has no closed-form prox here.
    NoClosedForm(String),
}

/// Which operator B a composite term names; built when the data is bound (its size depends on
/// d, and `load(...)` files are read then, relative to the model file).
#[derive(Clone, Debug, PartialEq)]
pub enum OperatorSpec {
    /// `diff(n)`; None for `diff(dim(x))`.
    Diff(Option<usize>),
    /// `incidence(load(path))`
    Incidence(String),
    /// `groups(load(path))`
    Groups(String),
}

/// A composite term coef·ω(B w) (or `group_l2`, ω = Σ_g ‖·‖₂ over stacked group selections).
#[derive(Clone, Debug, PartialEq)]
pub struct Composite {
    pub omega: crate::runtime::picard::Omega,
    pub coef: f64,
    pub operator: OperatorSpec,
    /// ω sums ‖·‖₂ over the groups of B's rows (`group_l2`), rather than over all of them at
    /// once (`l2(B w)`); for ℓ1 every row is its own block.
    pub group_blocks: bool,
    pub prox: CompositeProx,
}

/// How the prox of a composite term is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompositeProx {
    /// The Picard fixed point (the plan's `Stmt::Picard`): right for any B.
    Picard,
    /// `group_l2` over groups its file showed disjoint: the closed-form shrink of each group
    /// (the plan's `Stmt::GroupShrink`). Binding the operator checks that they still are.
    GroupShrink,
}
