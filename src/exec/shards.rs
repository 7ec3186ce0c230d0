//! Sharded stochastic epochs (`--shards K`), iterative parameter mixing (McDonald, Hall & Mann,
//! "Distributed training strategies for the structured perceptron", 2010; Zinkevich, Weimer,
//! Smola & Li, "Parallelized stochastic gradient descent", 2010): the epoch's seeded
//! permutation of the rows is cut into K contiguous shards, K threads each run the plan's epoch
//! over one shard from the same state and flush it, and the K flushed states are averaged.
//!
//! Why averaging and not lock-free (Hogwild) updates of one shared w: a lazy plan keeps
//! per-coordinate bookkeeping (FOBOS's Λlast, the pending shrinkage Λ) that concurrent writers
//! would tear, and an average of states is the same numbers for the same K and seed on any
//! machine, so a sharded run is as reproducible as a plain one. Each thread's clock (the step
//! counter) advances by its shard only: the steps decay as for a run over m/K rows an epoch.
//!
//! Only plans whose every state entry is a running quantity that may be averaged take shards:
//! FOBOS and AdaGrad, whose flushed state is w with its bookkeeping caught up, the step counter,
//! the pending shrinkage and AdaGrad's per-coordinate sums. Truncated gradient (its counter of
//! steps since the last shrink would average to a fraction), SMM's per-epoch history, SMIDAS's
//! dual vector and the column and batch solvers do not.

use super::{DataView, Fault, Orders, SharedEpoch, State};
use crate::plan::{Len, Plan, ScalarRole};
use crate::solvers::{self, SolverKind};

/// The most shards an epoch may be cut into: a thread and a copy of the state each.
pub const MAX_SHARDS: usize = 64;

/// Why the solver named `solver` cannot take shards, or Ok: the command line's refusal, before
/// any plan is made, and the driver's.
pub fn takes(solver: SolverKind) -> Result<(), String> {
    if solver.can().shards {
        return Ok(());
    }
    Err(format!(
        "`{solver}` does not take shards; they average the epochs of the stochastic solvers {}",
        solvers::that_can(|c| c.shards).iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(" and ")
    ))
}

/// Why `plan` cannot take shards, or Ok.
pub fn applies(plan: &Plan) -> Result<(), String> {
    let solver = plan.info.solver;
    takes(solver)?;
    if !plan.permutes(Len::Rows) || plan.permutes(Len::Features) {
        return Err(format!("this `{solver}` plan does not walk the rows, so its epochs cannot be cut into shards"));
    }
    Ok(())
}

/// One sharded epoch from `state` over the rows of `order`, cut into `k` contiguous shards (their
/// sizes differ by one at most): the average of the k flushed states. A fault in any shard stops
/// the epoch (the first shard's, in shard order).
pub fn epoch(
    plan: &Plan,
    code: &dyn SharedEpoch,
    state: &State,
    data: &DataView,
    order: &[u32],
    k: usize,
) -> Result<State, Fault> {
    let k = k.clamp(1, order.len().max(1));
    let cut = |s: usize| order.len() * s / k;
    // One shard a thread.
    let states = super::passes::each(k, k, |s| -> Result<State, Fault> {
        let mut own = state.clone();
        code.epoch(&mut own, data, &Orders::rows(&order[cut(s)..cut(s + 1)]))?;
        code.finish(&mut own, data)?;
        Ok(own)
    });
    Ok(mix(plan, &states.into_iter().collect::<Result<Vec<_>, _>>()?))
}

/// The average of flushed states: every state scalar, the weights and every state vector (the
/// labels and the parameters are the same in all of them). Summed in shard order, so the result
/// does not depend on which thread finished first.
pub fn mix(plan: &Plan, states: &[State]) -> State {
    let mut out = states[0].clone();
    let k = states.len() as f64;
    for (id, decl) in plan.scalars.iter().enumerate() {
        if decl.role == ScalarRole::State {
            out.scalars[id] = states.iter().map(|s| s.scalars[id]).sum::<f64>() / k;
        }
    }
    for (id, decl) in plan.vectors.iter().enumerate() {
        if decl.role.is_input() {
            continue;
        }
        for (e, slot) in out.vectors[id].iter_mut().enumerate() {
            *slot = states.iter().map(|s| s.vectors[id][e]).sum::<f64>() / k;
        }
    }
    out
}
