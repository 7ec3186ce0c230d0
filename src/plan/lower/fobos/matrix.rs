//! FOBOS on a multiclass W ∈ ℝ^{d×k}: one softmax gradient step per example, then the prox,
//! O(nnz·k) per step. Example i touches the rows j of W where xᵢⱼ ≠ 0, all k entries of each.
//!
//! The lazy plan is per row of W, by Proposition 4 of Duchi & Singer (2009): for q ∈ {1, 2, ∞}
//! T proxes of λₜ‖·‖_q in a row compose into one prox of (Σₜ λₜ)‖·‖_q. Each of these proxes
//! S(v, τ) is also positively homogeneous, S(c·v, c·τ) = c·S(v, τ), so with ½‖·‖² beside it
//! a step v ↦ S(v, τ₁)/(1 + τ₂) = S(a·v, a·τ₁) composes exactly as the entry-wise elastic net
//! does (see `fobos.rs`): the same stamps, per row j instead of per coordinate, with the row
//! routine (ℓ1/ℓ2 shrink, ℓ1/ℓ∞ prox) in place of the soft-threshold. ℓ1 per entry together
//! with a row norm has no such closed-form composition; that plan is eager, O(d·k) per step,
//! and says so.

use super::super::super::build::*;
use super::super::super::{Expr, Index, Len, Plan, Range, ScalarId, Slice, Stmt, VecId, VecRole};
use super::super::multiclass::{softmax_residual, summary};
use super::{Fobos, Stamps, RESET_L, RESET_SCALE};
use crate::runtime::VectorTerm;
use crate::symbolic::Cmp;

/// The step's prox weights, computed once per example.
struct Taus {
    /// η·l1, for ℓ1 per entry.
    entry: Option<ScalarId>,
    /// η·λ, for the row norm.
    row: Option<ScalarId>,
    /// η·l2.
    l2: Option<ScalarId>,
}

impl Fobos<'_> {
    pub(super) fn lower_matrix(mut self, rows: Option<VectorTerm>) -> Plan {
        let p = self.prox;
        let (j, cl) = (Index::Feature, Index::Class);
        let lazy = self.b.plan.info.lazy;
        self.b.plan.info.classification = true;
        self.b.plan.info.summary = format!(
            "{}; {}",
            summary(self.model, p, rows),
            if lazy {
                "lazy per row of W: the proxes a row missed are caught up in one (Duchi & Singer, Prop. 4)"
            } else if self.opts.lazy {
                "eager, every row's prox every step: ℓ1 per entry with a row norm has no one-step catch-up"
            } else {
                "eager reference: every row's prox every step"
            }
        );
        let y = self.b.vector("y", Len::Rows, VecRole::Labels, 0.0);
        // The rows' weights ωᵢ: each step's residual carries ωᵢ.
        let sw = self.model.loss.weighted.then(|| self.b.vector("ω", Len::Rows, VecRole::RowWeights, 1.0));
        let w = self.b.matrix("W", Len::Features, Len::Classes, VecRole::Weights, crate::plan::clamp(0.0, p.lo, p.hi));

        let l1 = (p.l1 > 0.0).then(|| self.b.param("l1", p.l1, "weight of Σ|W[j, c]| in the prox"));
        let lr = rows.map(|t| self.b.param("λr", t.arg(1.0), "weight of the row norm Σⱼ‖W[j, ·]‖ in the prox"));
        let l2 = (p.l2 > 0.0).then(|| self.b.param("l2", p.l2, "weight of ½‖W‖² in the prox"));
        let c = self.model.loss.coef.value;
        let eta0 = self.eta0();

        let t = self.b.state("t", "step counter");
        self.b.plan.step_counter = Some(t);
        // The shrinking norm the stamps compose: ℓ1 per entry or the row norm (never both
        // when lazy).
        let stamps = self.stamps(lazy, l1.or(lr), l2);
        let sc = self.b.vector("s", Len::Classes, VecRole::State, 0.0);
        let eta = self.b.local("η");
        let taus = Taus {
            entry: l1.map(|_| self.b.local("τ1")),
            row: lr.map(|_| self.b.local("τr")),
            l2: l2.map(|_| self.b.local("τ2")),
        };
        let top = self.b.local("top");
        let z = self.b.local("Z");
        let (ca, cb) = (self.b.local("A"), self.b.local("B"));

        let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
        let ld = || Expr::LoadAt(w, j, cl);

        // ---- one step
        let mut step = vec![Stmt::Set(t, add(s(t), k(1.0))), Stmt::Set(eta, self.schedule(eta0, t))];
        for (tau, weight) in [(taus.entry, l1), (taus.row, lr), (taus.l2, l2)] {
            if let (Some(tau), Some(weight)) = (tau, weight) {
                step.push(Stmt::Set(tau, mul(s(eta), s(weight))));
            }
        }
        // The scores sᵢ = Wᵀxᵢ, catching each touched row up first.
        step.push(classes(vec![Stmt::Store(sc, cl, k(0.0))]));
        let mut read = self.catch_up_row(&stamps, w, rows, ca, cb);
        read.push(classes(vec![Stmt::Store(sc, cl, add(at(sc, cl), mul(Expr::Value, ld())))]));
        step.push(each(Range::RowNonZeros, read));
        if let Stamps::Scaled { scale } = stamps {
            step.push(classes(vec![Stmt::Store(sc, cl, mul(s(scale), at(sc, cl)))]));
            // Wᵀx = s·Uᵀx
        }
        let weight = (c != 1.0).then(|| s(self.b.param("c", c, "weight of the loss term")));
        let weight = match (weight, sw) {
            (Some(c), Some(sw)) => Some(mul(c, at(sw, Index::Row))),
            (None, Some(sw)) => Some(at(sw, Index::Row)),
            (weight, None) => weight,
        };
        step.extend(softmax_residual(y, sc, top, z, weight));
        // W[j, ·] −= η·xᵢⱼ·(pᵢ − e_{yᵢ}) on the touched rows.
        let descend = |step_size: ScalarId| {
            classes(vec![Stmt::StoreAt(w, j, cl, sub(ld(), mul(mul(s(step_size), Expr::Value), at(sc, cl))))])
        };
        if let Stamps::Scaled { scale } = stamps {
            // W = s·U: every row decays by 1/(1 + τ2) through s; a touched row's U moves by η/s.
            let step_u = self.b.local("δ");
            step.push(Stmt::Set(step_u, div(s(eta), s(scale))));
            step.push(Stmt::Set(scale, div(s(scale), add(k(1.0), s(taus.l2.expect("scaled stamps need l2"))))));
            step.push(each(Range::RowNonZeros, vec![descend(step_u)]));
            step.push(Stmt::If(Cmp::Lt, s(scale), k(RESET_SCALE), self.flush_rows(&stamps, w, rows, ca, cb)));
        } else if lazy {
            step.extend(self.advance(&stamps, taus.entry.or(taus.row), taus.l2));
            let mut write = vec![descend(eta)];
            write.extend(self.row_prox(w, rows, &taus));
            write.extend(self.stamp(&stamps));
            step.push(each(Range::RowNonZeros, write));
            if let Stamps::Affine { l, .. } = stamps {
                step.push(Stmt::If(Cmp::Gt, s(l), k(RESET_L), self.flush_rows(&stamps, w, rows, ca, cb)));
            }
        } else {
            step.push(each(Range::RowNonZeros, vec![descend(eta)]));
            step.push(each(Range::Upto(Len::Features), self.row_prox(w, rows, &taus)));
        }
        self.b.plan.epoch = vec![each(Range::Perm(Len::Rows), step)];
        self.b.plan.finish = self.flush_rows(&stamps, w, rows, ca, cb);
        self.b.report_multiclass(self.model, w, z);
        self.b.plan
    }

    /// This step's prox on row j: ℓ1 (and the box) per entry, the row norm, then ½‖·‖²'s
    /// 1/(1 + τ2) (which commutes with the positively homogeneous norms, see the module docs).
    fn row_prox(&self, w: VecId, rows: Option<VectorTerm>, taus: &Taus) -> Vec<Stmt> {
        let (j, cl) = (Index::Feature, Index::Class);
        let classes = |body: Vec<Stmt>| each(Range::Upto(Len::Classes), body);
        let ld = Expr::LoadAt(w, j, cl);
        let Some(term) = rows else {
            let prox = self.prox_only(ld.clone(), taus.entry, taus.l2);
            return if prox == ld { vec![] } else { vec![classes(vec![Stmt::StoreAt(w, j, cl, prox)])] };
        };
        let mut out = vec![];
        if let Some(tau1) = taus.entry {
            out.push(classes(vec![Stmt::StoreAt(w, j, cl, soft(ld.clone(), s(tau1)))]));
        }
        let tau_row = taus.row.expect("a row term has its weight");
        out.push(Stmt::Call(term.routine(), Slice { buf: w, row: Some(j) }, s(tau_row)));
        if let Some(tau2) = taus.l2 {
            out.push(classes(vec![Stmt::StoreAt(w, j, cl, div(ld, add(k(1.0), s(tau2))))]));
        }
        out
    }

    /// Row j caught up on the proxes it missed: v ↦ S(A·v, B), with A and B computed once
    /// into the locals `ca`, `cb` for the k entries.
    fn catch_up_row(
        &self,
        stamps: &Stamps,
        w: VecId,
        rows: Option<VectorTerm>,
        ca: ScalarId,
        cb: ScalarId,
    ) -> Vec<Stmt> {
        let (j, cl) = (Index::Feature, Index::Class);
        let Some((a, b)) = self.pending(stamps) else {
            return vec![];
        };
        let ld = Expr::LoadAt(w, j, cl);
        let mut out = vec![];
        let scaled = match a {
            Some(a) => {
                out.push(Stmt::Set(ca, a));
                mul(s(ca), ld)
            }
            None => ld,
        };
        if let Some(b) = &b {
            out.push(Stmt::Set(cb, b.clone()));
        }
        match rows {
            None => {
                let e = match b {
                    Some(_) => soft(scaled, s(cb)),
                    None => scaled,
                };
                out.push(each(Range::Upto(Len::Classes), vec![Stmt::StoreAt(w, j, cl, self.boxed(e))]));
            }
            Some(term) => {
                if scaled != Expr::LoadAt(w, j, cl) {
                    out.push(each(Range::Upto(Len::Classes), vec![Stmt::StoreAt(w, j, cl, scaled)]));
                }
                if b.is_some() {
                    out.push(Stmt::Call(term.routine(), Slice { buf: w, row: Some(j) }, s(cb)));
                }
            }
        }
        out
    }

    /// Every row caught up and stamped (the end of a run, and before a sum would overflow).
    fn flush_rows(&self, stamps: &Stamps, w: VecId, rows: Option<VectorTerm>, ca: ScalarId, cb: ScalarId) -> Vec<Stmt> {
        let (j, cl) = (Index::Feature, Index::Class);
        if let Stamps::Scaled { scale } = *stamps {
            let fold = Stmt::StoreAt(w, j, cl, mul(s(scale), Expr::LoadAt(w, j, cl)));
            return vec![
                each(Range::Upto(Len::Features), vec![each(Range::Upto(Len::Classes), vec![fold])]),
                Stmt::Set(scale, k(1.0)),
            ];
        }
        let body = self.catch_up_row(stamps, w, rows, ca, cb);
        if body.is_empty() {
            return vec![];
        }
        self.flush_with(stamps, body)
    }
}
