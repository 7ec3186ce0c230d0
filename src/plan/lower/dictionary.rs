//! Dictionary learning's plan (Mairal 2013 §4.3; docs/algorithms.md §9): D a mat[d, k] of k atoms,
//! the surrogate's point B beside it, and an epoch that is one runtime call,
//! [`Stmt::Dictionary`]: this epoch's order in mini-batches, each coded exactly, its majorizer
//! averaged into A and B (SMM) and followed by the prox of ϕ on every atom. Both back ends make that one
//! call. No certificate: the cost is not convex; the run ends at its passes.

use super::super::{
    AtomPenalty, DictionaryCall, DictionaryCost, EpochSettings, Len, Majorizer, ParamInit, Plan, PlanInfo, ScalarDecl,
    ScalarId, ScalarRole, Stmt, Uncertified, VecDecl, VecId, VecRole,
};
use crate::analysis::dictionary::DictionaryChoice;
use crate::check::Dictionary;
use crate::runtime::picard::Omega;
use crate::solvers::SolverKind;

/// SMM's n₀ for a dictionary under eq. 5's surrogate: the weight of the first batches against
/// the later ones. 10 found a planted dictionary of 32 atoms where the steps' plain average
/// (n₀ → ∞) is slow to forget the random start.
pub const N0_LINEARIZED: f64 = 10.0;
/// The same under the variational majorizer, whose weights are (n₀ + 1)/(n + n₀).
pub const N0_VARIATIONAL: f64 = 6.0;

/// ϕ on one atom from the model's penalties (the analysis allows at most one of l1 and a group
/// term, whose proxes would not compose).
pub fn atom_penalty(d: &Dictionary) -> AtomPenalty {
    let mut p = AtomPenalty { l1: 0.0, l2: 0.0, group: None, ball: d.ball.as_ref().map(|b| b.radius) };
    for r in &d.penalties {
        let c = r.coef.value;
        match r.def.name.as_str() {
            "l1" => p.l1 += c,
            "l2sq" => p.l2 += c,
            "group_l2" => p.group = Some((Omega::BlockL2, c)),
            "group_linf" => p.group = Some((Omega::BlockLinf, c)),
            _ => {}
        }
    }
    p
}

/// The groups file of the model's group term, if it has one: the operator the driver binds.
pub fn groups_file(d: &Dictionary) -> Option<&str> {
    d.penalties.iter().find_map(|r| match &r.groups {
        Some(crate::check::Operator::Groups(path)) => Some(path.as_str()),
        _ => None,
    })
}

pub fn lower(d: &Dictionary, choice: &DictionaryChoice) -> Plan {
    let penalty = atom_penalty(d);
    let scalar = |name: &str, role: ScalarRole, note: &str| ScalarDecl {
        name: name.into(),
        role,
        init: ParamInit::Value(0.0),
        note: note.into(),
    };
    let scalars = vec![
        scalar("n", ScalarRole::State, "the steps so far (0: the atoms start from signals)"),
        scalar("a", ScalarRole::Local, "unused: the objective has no margin"),
    ];
    let matrix = |name: &str, role: VecRole| VecDecl {
        name: name.into(),
        len: Len::Features,
        cols: Some(Len::Classes),
        role,
        init: 0.0,
    };
    let curvatures =
        VecDecl { name: "A".into(), len: Len::Classes, cols: Some(Len::Classes), role: VecRole::State, init: 0.0 };
    let vectors = vec![matrix(&d.var.name, VecRole::Weights), matrix("B", VecRole::State), curvatures];
    let call = DictionaryCall {
        atoms: VecId(0),
        surrogate: VecId(1),
        curvature: VecId(2),
        steps: ScalarId(0),
        settings: EpochSettings {
            lambda1: d.lambda1,
            lambda2: d.lambda2,
            batch: choice.batch,
            n0: match choice.majorizer {
                Majorizer::Variational => N0_VARIATIONAL,
                Majorizer::Linearized => N0_LINEARIZED,
            },
            majorizer: choice.majorizer,
            penalty,
        },
    };
    let summary = format!(
        "{}·E[sparse_code(x, {}, {}, {})], K = {} atoms; SMM on {} averaging {}, mini-batches of {}",
        crate::symbolic::fmt_num(d.coef.value),
        d.var.name,
        crate::symbolic::fmt_num(d.lambda1),
        crate::symbolic::fmt_num(d.lambda2),
        d.atoms,
        d.var.name,
        choice.majorizer.name(),
        choice.batch
    );
    let mut plan = Plan::empty(PlanInfo { solver: SolverKind::Smm, summary, lazy: false, classification: false });
    plan.scalars = scalars;
    plan.vectors = vectors;
    plan.epoch = vec![Stmt::Dictionary(call)];
    plan.objective.margin = ScalarId(1);
    plan.objective.loss_weight = d.coef.value;
    plan.objective.dictionary = Some(DictionaryCost { lambda1: d.lambda1, lambda2: d.lambda2, penalty });
    plan.uncertified = Uncertified::Caps;
    plan
}
