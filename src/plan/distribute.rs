//! A plan for rows split across ranks (`mpirun -np N optc run`): each rank runs the plan on
//! its own rows, and after every loop over the rows the sums that loop accumulated (a
//! gradient Xᵀu, a Hessian product, F's loss) are added up across the ranks. Every other
//! statement then computes from the same values on every rank, so the iterates are the
//! one-process iterates up to the order of the additions.
//!
//! That holds for batch solvers, whose loops over the rows only add into buffers they do not
//! read (FISTA's gradient, TRON's gradient, Hessian products and line-search sums). A loop that
//! reads what it writes (a stochastic step, a dual coordinate step) is sequential over the
//! rows, and the plan is refused with the reason. Per-row buffers (margins, curvatures) are each
//! rank's own and never sent. An operator B (a composite term's, a group shrink's) acts on w
//! alone: every rank binds its own copy and applies it alike.

use super::walk;
use super::{Expr, Index, Len, Plan, Range, ReduceStep, Reduction, ScalarId, Stmt, VecId};
use std::collections::HashSet;

/// What a loop over the rows writes, besides per-row buffers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Target {
    Scalar(ScalarId),
    Vector(VecId),
}

/// `plan` with its row loops' sums reduced across ranks; Err says, for the user, why its loops
/// over the rows cannot be split.
pub fn distribute(plan: &Plan) -> Result<Plan, String> {
    let solver = plan.info.solver;
    if plan.reads_columns() {
        return Err(format!("`{solver}` walks the columns of X, whose rows are split across the ranks"));
    }
    let mut out = plan.clone();
    let mut next = 0;
    let mut temps = HashSet::new();
    out.init = split(plan, &plan.init, &mut next, &mut temps)?;
    if next > 0 {
        return Err(format!("`{solver}` sums over the rows when it starts"));
    }
    out.epoch = split(plan, &plan.epoch, &mut next, &mut temps)?;
    let before = next;
    out.finish = split(plan, &plan.finish, &mut next, &mut temps)?;
    if next > before {
        return Err(format!("`{solver}` sums over the rows when it finishes"));
    }
    if next == 0 {
        return Err(format!("an epoch of `{solver}` sums nothing over the rows"));
    }
    for body in out.phases() {
        if let Some(t) = read_outside_rows(body, &temps) {
            return Err(format!("`{solver}` reads `{}` of the last row after its loop over the rows", name(plan, t)));
        }
    }
    Ok(out)
}

fn name(plan: &Plan, t: Target) -> &str {
    match t {
        Target::Scalar(id) => &plan.scalar(id).name,
        Target::Vector(v) => &plan.vector(v).name,
    }
}

/// `body` with a clear before and a sum after each loop over the rows that accumulates.
fn split(plan: &Plan, body: &[Stmt], next: &mut usize, temps: &mut HashSet<Target>) -> Result<Vec<Stmt>, String> {
    let mut out = vec![];
    for s in body {
        match s {
            Stmt::For(range @ (Range::Perm(Len::Rows) | Range::Upto(Len::Rows)), inner) => {
                let (sums, own) = sums_of(plan, inner)?;
                temps.extend(own);
                if sums.is_empty() {
                    out.push(s.clone());
                    continue;
                }
                let reduction = |step, id| {
                    let scalars = sums.iter().filter_map(|t| if let Target::Scalar(s) = t { Some(*s) } else { None });
                    let vectors = sums.iter().filter_map(|t| if let Target::Vector(v) = t { Some(*v) } else { None });
                    Stmt::Reduce(Reduction { id, step, scalars: scalars.collect(), vectors: vectors.collect() })
                };
                out.push(reduction(ReduceStep::Clear, *next));
                out.push(Stmt::For(*range, inner.clone()));
                out.push(reduction(ReduceStep::Sum, *next + 1));
                *next += 2;
            }
            Stmt::For(range, inner) => out.push(Stmt::For(*range, split(plan, inner, next, temps)?)),
            Stmt::If(cmp, l, r, inner) => {
                out.push(Stmt::If(*cmp, l.clone(), r.clone(), split(plan, inner, next, temps)?))
            }
            Stmt::Repeat(cap, cmp, l, r, inner) => {
                out.push(Stmt::Repeat(*cap, *cmp, l.clone(), r.clone(), split(plan, inner, next, temps)?))
            }
            // A rank's Hessian would be its own rows': the step is left to the conjugate
            // gradients, whose products are summed over the ranks.
            Stmt::Newton(call) => out.push(Stmt::Set(call.solved, Expr::Const(0.0))),
            // Its Newton steps factor the Hessian of every row, and its line search reads them all.
            Stmt::Alm(_) => return Err("`alm`'s Newton steps read every row at once".into()),
            other => out.push(other.clone()),
        }
    }
    Ok(out)
}

/// A write `x = x + e` (or `x[i] = x[i] + e`) with `e` free of x: the one form of a sum.
fn accumulates(target: Target, own: &Expr) -> bool {
    let Expr::Bin(super::BinOp::Add, a, b) = own else { return false };
    let is_self = |e: &Expr| match (target, e) {
        (Target::Scalar(s), Expr::Scalar(t)) => s == *t,
        (Target::Vector(v), Expr::Load(u, _) | Expr::LoadAt(u, _, _)) => v == *u,
        _ => false,
    };
    let (x, rest) = if is_self(a) { (a, b) } else { (b, a) };
    is_self(x) && !reads(rest, target)
}

/// Whether `e` reads `target`.
fn reads(e: &Expr, target: Target) -> bool {
    let mut found = false;
    walk::expr(e, &mut |x| {
        found |= match (target, x) {
            (Target::Scalar(s), Expr::Scalar(t)) => s == *t,
            (Target::Vector(v), Expr::Load(u, _) | Expr::LoadAt(u, _, _)) => v == *u,
            _ => false,
        }
    });
    found
}

/// The expressions a statement reads (not those of the statements inside it).
fn own_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Set(_, e) | Stmt::Store(_, _, e) | Stmt::StoreAt(_, _, _, e) | Stmt::Guard(e, _) => vec![e],
        Stmt::If(_, l, r, _) | Stmt::Repeat(_, _, l, r, _) => vec![l, r],
        _ => vec![],
    }
}

fn written(s: &Stmt) -> Option<(Target, &Expr, Option<Index>)> {
    match s {
        Stmt::Set(id, e) => Some((Target::Scalar(*id), e, None)),
        Stmt::Store(v, i, e) | Stmt::StoreAt(v, i, _, e) => Some((Target::Vector(*v), e, Some(*i))),
        _ => None,
    }
}

/// The sums a loop over the rows accumulates, and its per-row temporaries; Err when it writes
/// something that is neither (a value it reads back across rows).
fn sums_of(plan: &Plan, body: &[Stmt]) -> Result<(Vec<Target>, Vec<Target>), String> {
    let solver = plan.info.solver;
    let mut order: Vec<&Stmt> = vec![];
    walk::stmts(body, &mut |s| order.push(s));
    if let Some(s) = order.iter().find(|s| {
        matches!(
            s,
            Stmt::Call(..)
                | Stmt::Picard(_)
                | Stmt::GroupShrink(..)
                | Stmt::Dictionary(_)
                | Stmt::Newton(_)
                | Stmt::Alm(_)
        )
    }) {
        let _ = s;
        return Err(format!("a step of `{solver}` over the rows calls a routine on the whole of a buffer"));
    }
    let mut targets: Vec<Target> = vec![];
    for s in &order {
        if let Some((t, _, _)) = written(s) {
            let per_row = matches!(t, Target::Vector(v) if plan.vector(v).len == Len::Rows);
            if !per_row && !targets.contains(&t) {
                targets.push(t);
            }
        }
    }
    let (mut sums, mut temps) = (vec![], vec![]);
    for t in targets {
        // The first statement that touches t: a write that does not read it makes t a
        // temporary of each row.
        let first =
            order.iter().find(|s| own_exprs(s).iter().any(|e| reads(e, t)) || written(s).is_some_and(|w| w.0 == t));
        let fresh = first.and_then(|s| written(s)).is_some_and(|(w, e, _)| w == t && !reads(e, t));
        if fresh {
            temps.push(t);
            continue;
        }
        let only_sums = order.iter().all(|s| match written(s) {
            Some((w, e, _)) if w == t => accumulates(t, e),
            _ => !own_exprs(s).iter().any(|e| reads(e, t)),
        });
        if !only_sums {
            return Err(format!(
                "a step of `{solver}` over the rows reads `{}`, which the steps before it changed: its steps are sequential, not sums over the rows",
                name(plan, t)
            ));
        }
        sums.push(t);
    }
    // Buffers in plan order: the order a state lays them out in.
    sums.sort_by_key(|t| match t {
        Target::Scalar(s) => (0, s.0),
        Target::Vector(v) => (1, v.0),
    });
    Ok((sums, temps))
}

/// The first per-row temporary that some statement outside every loop over the rows reads: its
/// value there would be the last row's of each rank, not one value.
fn read_outside_rows(body: &[Stmt], temps: &HashSet<Target>) -> Option<Target> {
    for s in body {
        if let Stmt::For(Range::Perm(Len::Rows) | Range::Upto(Len::Rows), _) = s {
            continue;
        }
        for e in own_exprs(s) {
            if let Some(t) = temps.iter().find(|t| reads(e, **t)) {
                // Read after its own write outside the loops is a fresh value.
                if written(s).is_none_or(|w| w.0 != *t || reads(e, *t)) {
                    return Some(*t);
                }
            }
        }
        let inner = match s {
            Stmt::For(_, b) | Stmt::If(_, _, _, b) | Stmt::Repeat(_, _, _, _, b) => Some(b),
            _ => None,
        };
        if let Some(t) = inner.and_then(|b| read_outside_rows(b, temps)) {
            return Some(t);
        }
    }
    None
}
