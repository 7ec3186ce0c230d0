//! Structural invariants of a plan. The interpreter would only panic on a broken plan; compiled
//! code would read out of bounds, so the JIT refuses any plan that fails these checks.
//!
//! The one rule that keeps native code in bounds: **every axis of a buffer of dimension D is
//! indexed only by the index of D, and only inside a loop that binds it** (i by `perm(m)`,
//! `0..m` or `col(Xc, j)`; j by `perm(d)`, `0..d` or `row(X, i)`; c by `0..k`). A `call` gets
//! a whole buffer or a row of a matrix whose index is in scope. Besides:
//! - every scalar and vector id exists; parameters and labels are never written;
//! - a loop never rebinds an index already bound, and `row(X, i)` / `col(Xc, j)` need i / j;
//! - `perm(·)` only in the epoch (the driver gives its orders to the epoch alone);
//! - `v` only inside `row(X, i)` or `col(Xc, j)`;
//! - every intrinsic call has its arity.

use super::{Expr, Index, Len, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};

#[derive(Clone, Copy, Default)]
struct Scope {
    row: bool,
    feature: bool,
    class: bool,
    /// Inside `row(X, i)` or `col(Xc, j)` (a class loop nested there keeps `v`).
    nonzero: bool,
    /// In the epoch: `perm(·)` has an order.
    epoch: bool,
    /// Inside a loop over the rows, which binds the position q with i.
    step: bool,
}

impl Scope {
    fn has(self, idx: Index) -> bool {
        match idx {
            Index::Row => self.row,
            Index::Feature => self.feature,
            Index::Class => self.class,
            Index::OpRow => false,
            Index::Step => self.step,
        }
    }

    fn bind(self, idx: Index, nonzero: bool) -> Scope {
        let nonzero = self.nonzero || nonzero;
        match idx {
            Index::Row => Scope { row: true, nonzero, ..self },
            Index::Feature => Scope { feature: true, nonzero, ..self },
            Index::Class => Scope { class: true, nonzero, ..self },
            Index::OpRow | Index::Step => self,
        }
    }
}

pub fn verify(plan: &Plan) -> Result<(), String> {
    stmts(plan, &plan.init, Scope::default())?;
    stmts(plan, &plan.epoch, Scope { epoch: true, ..Scope::default() })?;
    stmts(plan, &plan.finish, Scope::default())?;
    let row_scope = Scope { row: true, ..Scope::default() };
    expr(plan, &plan.objective.loss, row_scope)?;
    expr(plan, &plan.objective.dloss, row_scope)?;
    scalar(plan, plan.objective.margin)?;
    // The penalty is evaluated at every w[j], or at every W[j, c] of a multiclass plan.
    let entry = Scope { feature: true, class: plan.objective.softmax, ..Scope::default() };
    expr(plan, &plan.objective.penalty, entry)?;
    if let Some(t) = plan.step_counter {
        scalar(plan, t)?;
    }
    // The driver reads these after every epoch: state that the epoch writes.
    if let Some(a) = plan.active_rows {
        let v = a.flags;
        if plan.vector(v).len != Len::Rows || plan.vector(v).cols.is_some() {
            return Err(format!("`{}` names the active rows but is not a vec[m]", plan.vector(v).name));
        }
        driver_reads(plan, a.returned)?;
    }
    for id in plan
        .estimate
        .into_iter()
        .chain(plan.tolerance)
        .chain(plan.cadence.into_iter().flat_map(|c| [c.visits, c.ready]))
    {
        driver_reads(plan, id)?;
    }
    if let super::Uncertified::Reweighting { change, rounds } = plan.uncertified {
        for id in [change, rounds] {
            driver_reads(plan, id)?;
        }
    }
    if let super::Uncertified::Gradient { norm } = plan.uncertified {
        driver_reads(plan, norm)?;
    }
    Ok(())
}

/// A scalar the driver reads after every epoch: it must exist and be state, which the epoch writes.
fn driver_reads(plan: &Plan, id: ScalarId) -> Result<(), String> {
    scalar(plan, id)?;
    if plan.scalar(id).role != ScalarRole::State {
        return Err(format!("`{}` is read by the driver but is not state", plan.scalar(id).name));
    }
    Ok(())
}

fn scalar(plan: &Plan, id: ScalarId) -> Result<(), String> {
    if id.0 < plan.scalars.len() {
        Ok(())
    } else {
        Err(format!("scalar #{} does not exist", id.0))
    }
}

/// `v[idx]` (rank 1) or `v[idx, col]` (rank 2, `col` given).
fn access(plan: &Plan, id: VecId, idx: Index, col: Option<Index>, scope: Scope) -> Result<(), String> {
    let v = plan.vectors.get(id.0).ok_or_else(|| format!("vector #{} does not exist", id.0))?;
    match (v.cols, col) {
        (None, Some(_)) => return Err(format!("`{}` is a vector, indexed as a matrix", v.name)),
        (Some(_), None) => return Err(format!("`{}` is a matrix, indexed as a vector", v.name)),
        _ => {}
    }
    for (axis, idx) in [(Some(v.len), idx)].into_iter().chain(col.map(|c| (v.cols, c))) {
        if Some(idx.len()) != axis {
            return Err(format!("`{}` indexed by the wrong loop variable `{}`", v.name, idx.name()));
        }
        if !scope.has(idx) {
            return Err(format!("`{}[{}]` outside a loop over {}", v.name, idx.name(), idx.len().name()));
        }
    }
    Ok(())
}

fn vector(plan: &Plan, id: VecId, idx: Index, scope: Scope) -> Result<(), String> {
    access(plan, id, idx, None, scope)
}

fn stmts(plan: &Plan, body: &[Stmt], scope: Scope) -> Result<(), String> {
    for s in body {
        match s {
            Stmt::Set(id, e) => {
                scalar(plan, *id)?;
                if plan.scalar(*id).role == ScalarRole::Param {
                    return Err(format!("parameter `{}` is assigned", plan.scalar(*id).name));
                }
                expr(plan, e, scope)?;
            }
            Stmt::Store(v, idx, e) => {
                vector(plan, *v, *idx, scope)?;
                if plan.vector(*v).role.is_input() {
                    return Err(format!("the data's `{}` are written", plan.vector(*v).name));
                }
                expr(plan, e, scope)?;
            }
            Stmt::StoreAt(v, r, c, e) => {
                access(plan, *v, *r, Some(*c), scope)?;
                if plan.vector(*v).role.is_input() {
                    return Err(format!("the data's `{}` are written", plan.vector(*v).name));
                }
                expr(plan, e, scope)?;
            }
            Stmt::For(range, b) => {
                let binds = range.binds();
                if scope.has(binds) {
                    return Err(format!("a loop rebinds `{}`", binds.name()));
                }
                if let Some(need) = range.needs() {
                    if !scope.has(need) {
                        return Err(format!("`{}` outside a loop that binds its index", range_name(*range)));
                    }
                }
                if matches!(range, Range::Perm(_)) && !scope.epoch {
                    return Err("`perm(·)` outside the epoch".into());
                }
                if matches!(range, Range::Perm(Len::Classes | Len::OpRows) | Range::Upto(Len::OpRows)) {
                    return Err("the driver orders rows and columns only, and p is walked by the runtime".into());
                }
                let nonzero = matches!(range, Range::RowNonZeros | Range::ColNonZeros);
                let mut inner = scope.bind(binds, nonzero);
                inner.step |= matches!(range, Range::Perm(Len::Rows) | Range::Upto(Len::Rows));
                stmts(plan, b, inner)?;
            }
            Stmt::If(_, l, r, b) => {
                expr(plan, l, scope)?;
                expr(plan, r, scope)?;
                stmts(plan, b, scope)?;
            }
            Stmt::Repeat(cap, _, l, r, b) => {
                if *cap == 0 {
                    return Err("`repeat` with a cap of 0".into());
                }
                stmts(plan, b, scope)?;
                expr(plan, l, scope)?;
                expr(plan, r, scope)?;
            }
            Stmt::Guard(e, _) => expr(plan, e, scope)?,
            Stmt::Dictionary(call) => {
                for v in [call.atoms, call.surrogate] {
                    let decl = plan.vectors.get(v.0).ok_or_else(|| format!("vector #{} does not exist", v.0))?;
                    if decl.len != Len::Features || decl.cols != Some(Len::Classes) || decl.role.is_input() {
                        return Err(format!("`dictionary` on `{}`, which is not a mat[d, k]", decl.name));
                    }
                }
                if call.atoms == call.surrogate {
                    return Err("`dictionary` with the same buffer twice".into());
                }
                let a = plan
                    .vectors
                    .get(call.curvature.0)
                    .ok_or_else(|| format!("vector #{} does not exist", call.curvature.0))?;
                if a.len != Len::Classes || a.cols != Some(Len::Classes) || a.role != VecRole::State {
                    return Err(format!("`dictionary`'s curvature in `{}`, which is not a state mat[k, k]", a.name));
                }
                let decl =
                    plan.scalars.get(call.steps.0).ok_or_else(|| format!("scalar #{} does not exist", call.steps.0))?;
                if decl.role != crate::plan::ScalarRole::State {
                    return Err(format!("`dictionary` writes `{}`, which is not state", decl.name));
                }
                if call.settings.batch == 0 {
                    return Err("`dictionary` with batches of 0".into());
                }
            }
            Stmt::Newton(call) => {
                // The runtime reads D, g and writes s whole: no loop may be open around it.
                if scope.has(Index::Row) || scope.has(Index::Feature) || scope.has(Index::Class) {
                    return Err("`newton` inside a loop".into());
                }
                let lens = [(call.curvature, Len::Rows), (call.gradient, Len::Features), (call.step, Len::Features)];
                for (v, len) in lens {
                    let decl = plan.vectors.get(v.0).ok_or_else(|| format!("vector #{} does not exist", v.0))?;
                    if decl.len != len || decl.cols.is_some() || decl.role.is_input() {
                        return Err(format!("`newton` on `{}`, which is not a state vec[{}]", decl.name, len.name()));
                    }
                }
                if call.step == call.gradient || call.step == call.curvature {
                    return Err("`newton` writes the step into a buffer it reads".into());
                }
                if call.step_b == Some(call.solved) || call.gradient_b == Some(call.solved) {
                    return Err("`newton` with b's scalar as its `solved` flag".into());
                }
                if call.gradient_b.is_some() != call.step_b.is_some() {
                    return Err("`newton` with b's gradient but not its step, or the other way".into());
                }
                for id in call.gradient_b.into_iter().chain(call.step_b).chain([call.solved]) {
                    scalar(plan, id)?;
                    if plan.scalar(id).role == ScalarRole::Param {
                        return Err(format!("`newton` on parameter `{}`", plan.scalar(id).name));
                    }
                }
                expr(plan, &call.ridge, scope)?;
                expr(plan, &call.ridge_b, scope)?;
                expr(plan, &call.cg_steps, scope)?;
            }
            Stmt::Alm(call) => {
                // The runtime reads and writes w, α and the rows whole: no loop may be open.
                if scope.has(Index::Row) || scope.has(Index::Feature) || scope.has(Index::Class) {
                    return Err("`alm` inside a loop".into());
                }
                let roles = [
                    Some((call.weights, Len::Features, VecRole::Weights)),
                    Some((call.multipliers, Len::Rows, VecRole::State)),
                    Some((call.labels, Len::Rows, VecRole::Labels)),
                    call.row_weights.map(|v| (v, Len::Rows, VecRole::RowWeights)),
                ];
                for (v, len, role) in roles.into_iter().flatten() {
                    let decl = plan.vectors.get(v.0).ok_or_else(|| format!("vector #{} does not exist", v.0))?;
                    if decl.len != len || decl.cols.is_some() || decl.role != role {
                        return Err(format!("`alm` on `{}`, which is not a {role:?} vec[{}]", decl.name, len.name()));
                    }
                }
                let written: Vec<ScalarId> = call.intercept.into_iter().chain([call.sigma, call.estimate]).collect();
                if (1..written.len()).any(|k| written[..k].contains(&written[k])) {
                    return Err("`alm` writes one scalar twice (b, σ, its estimate)".into());
                }
                for &id in &written {
                    scalar(plan, id)?;
                    if plan.scalar(id).role != ScalarRole::State {
                        return Err(format!("`alm` writes `{}`, which is not state", plan.scalar(id).name));
                    }
                }
                expr(plan, &call.ridge_b, scope)?;
                expr(plan, &call.cap, scope)?;
            }
            Stmt::Picard(call) => {
                for (v, len) in [(call.target, Len::Features), (call.dual, Len::OpRows)] {
                    let decl = plan.vectors.get(v.0).ok_or_else(|| format!("vector #{} does not exist", v.0))?;
                    if decl.len != len || decl.cols.is_some() || decl.role.is_input() {
                        return Err(format!("`picard` on `{}`, which is not a state vec[{}]", decl.name, len.name()));
                    }
                }
                if call.target == call.dual {
                    return Err("`picard` with the same buffer twice".into());
                }
                if call.cap == 0 {
                    return Err("`picard` with a cap of 0".into());
                }
                expr(plan, &call.gamma, scope)?;
            }
            Stmt::Reduce(r) => {
                for v in &r.vectors {
                    let decl = plan.vectors.get(v.0).ok_or_else(|| format!("vector #{} does not exist", v.0))?;
                    if decl.len == Len::Rows || decl.role.is_input() {
                        return Err(format!(
                            "`{}` is summed over the ranks, but each rank has rows of its own",
                            decl.name
                        ));
                    }
                }
                for id in &r.scalars {
                    let decl = plan.scalars.get(id.0).ok_or_else(|| format!("scalar #{} does not exist", id.0))?;
                    if decl.role == crate::plan::ScalarRole::Param {
                        return Err(format!("`{}` is summed over the ranks, but it is a parameter", decl.name));
                    }
                }
                if scope.step {
                    return Err("a reduction across the ranks inside a loop over the rows".into());
                }
            }
            Stmt::GroupShrink(target, gamma) => {
                let decl = plan.vectors.get(target.0).ok_or_else(|| format!("vector #{} does not exist", target.0))?;
                if decl.len != Len::Features || decl.cols.is_some() || decl.role.is_input() {
                    return Err(format!("`group_shrink` on `{}`, which is not a state vec[d]", decl.name));
                }
                expr(plan, gamma, scope)?;
            }
            Stmt::Call(_, slice, arg) => {
                let decl =
                    plan.vectors.get(slice.buf.0).ok_or_else(|| format!("vector #{} does not exist", slice.buf.0))?;
                if decl.role.is_input() {
                    return Err(format!("the data's `{}` are written", decl.name));
                }
                match (slice.row, decl.cols) {
                    (None, _) => {}
                    (Some(_), None) => return Err(format!("a row of `{}`, which is a vector", decl.name)),
                    (Some(r), Some(_)) => {
                        if r.len() != decl.len {
                            return Err(format!("`{}` indexed by the wrong loop variable `{}`", decl.name, r.name()));
                        }
                        if !scope.has(r) {
                            return Err(format!(
                                "`{}[{}, ·]` outside a loop over {}",
                                decl.name,
                                r.name(),
                                r.len().name()
                            ));
                        }
                    }
                }
                expr(plan, arg, scope)?;
            }
        }
    }
    Ok(())
}

fn range_name(r: Range) -> &'static str {
    match r {
        Range::RowNonZeros => "row(X, i)",
        Range::ColNonZeros => "col(Xc, j)",
        Range::Perm(_) => "perm",
        Range::Upto(_) => "0..n",
    }
}

fn expr(plan: &Plan, e: &Expr, scope: Scope) -> Result<(), String> {
    match e {
        Expr::Const(_) => Ok(()),
        Expr::Scalar(id) => scalar(plan, *id),
        Expr::Load(v, idx) => vector(plan, *v, *idx, scope),
        Expr::LoadAt(v, r, c) => access(plan, *v, *r, Some(*c), scope),
        Expr::Idx(idx) if scope.has(*idx) => Ok(()),
        Expr::Idx(idx) => Err(format!("`{}` outside a loop over {}", idx.name(), idx.len().name())),
        Expr::Value if scope.nonzero => Ok(()),
        Expr::Value => Err("`v` outside `row(X, i)` or `col(Xc, j)`".into()),
        Expr::Neg(a) => expr(plan, a, scope),
        Expr::Bin(_, a, b) => {
            expr(plan, a, scope)?;
            expr(plan, b, scope)
        }
        Expr::Call(f, args) => {
            if args.len() != f.arity() {
                return Err(format!("`{}` takes {} argument(s), given {}", f.name(), f.arity(), args.len()));
            }
            args.iter().try_for_each(|a| expr(plan, a, scope))
        }
        Expr::Select(_, l, r, a, b) => [l, r, a, b].iter().try_for_each(|x| expr(plan, x, scope)),
        Expr::CatchUp(c) => {
            // The history buffers are read whole, by position in the epoch: vec[m] each.
            for v in [c.sums, c.logs] {
                let decl = plan.vectors.get(v.0).ok_or("catch_up: unknown buffer")?;
                if decl.len != Len::Rows || decl.cols.is_some() {
                    return Err(format!("catch_up: `{}` must be a vec[m] (one entry per step)", decl.name));
                }
            }
            c.operands().into_iter().try_for_each(|x| expr(plan, x, scope))
        }
    }
}
