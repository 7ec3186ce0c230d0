//! The reference interpreter: a plain recursive walk over the plan, clear rather than fast.

use super::{Backend, DataView, Fault, Orders, SharedEpoch, State};
use crate::plan::{BinOp, Dims, Expr, Index, Len, Plan, Range, Stmt};
use crate::symbolic::compare;

pub struct Interpreter<'p> {
    pub plan: &'p Plan,
}

/// The loop variables in scope.
#[derive(Clone, Copy, Default)]
struct Cursor {
    i: usize,
    j: usize,
    c: usize,
    /// The position in the epoch's order (q).
    q: usize,
    v: f64,
}

/// The bound shapes: the size of each dimension and the row width of each buffer (1 for a
/// vector), so `W[j, c]` is `W[j·width + c]`.
pub(crate) struct Env {
    dims: Dims,
    widths: Vec<usize>,
}

impl Env {
    pub(crate) fn new(plan: &Plan, dims: Dims) -> Env {
        Env { dims, widths: plan.vectors.iter().map(|v| v.cols.map_or(1, |c| dims.of(c))).collect() }
    }
}

impl Backend for Interpreter<'_> {
    fn name(&self) -> &'static str {
        "interpreter"
    }

    fn init(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        let plan = self.plan;
        let env = Env::new(plan, data.dims());
        load_row_weights(plan, state, data);
        exec(plan, &env, &plan.init, state, data, &Orders::NONE, &mut Cursor::default())
    }

    fn epoch(&mut self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        SharedEpoch::epoch(self, state, data, orders)
    }

    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        SharedEpoch::finish(self, state, data)
    }

    fn shared(&self) -> Option<Box<dyn SharedEpoch + '_>> {
        Some(Box::new(Interpreter { plan: self.plan }))
    }
}

impl SharedEpoch for Interpreter<'_> {
    fn epoch(&self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        let plan = self.plan;
        let env = Env::new(plan, data.dims());
        load_row_weights(plan, state, data);
        exec(plan, &env, &plan.epoch, state, data, orders, &mut Cursor::default())
    }

    fn finish(&self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        let plan = self.plan;
        let env = Env::new(plan, data.dims());
        load_row_weights(plan, state, data);
        exec(plan, &env, &plan.finish, state, data, &Orders::NONE, &mut Cursor::default())
    }
}

/// The rows' weights a weighted plan reads, from the view (as the JIT reads them in place): a
/// state's copy may be of other rows (a share, a block, the rows before a split).
pub(crate) fn load_row_weights(plan: &Plan, state: &mut State, data: &DataView) {
    if let Some(s) = plan.row_weights() {
        let v = &mut state.vectors[s.0];
        v.clear();
        v.extend((0..data.rows()).map(|i| data.weight(i)));
    }
}

fn exec(
    plan: &Plan,
    env: &Env,
    body: &[Stmt],
    st: &mut State,
    data: &DataView,
    orders: &Orders,
    cur: &mut Cursor,
) -> Result<(), Fault> {
    for s in body {
        match s {
            Stmt::Set(id, e) => st.scalars[id.0] = eval(env, e, st, cur),
            Stmt::Picard(call) => {
                let gamma = eval(env, &call.gamma, st, cur);
                let op = data.operator.expect("the driver binds the operator for plans that use it");
                // Two buffers of one state: take the dual out while the target is borrowed.
                let mut dual = std::mem::take(&mut st.vectors[call.dual.0]);
                let x = &mut st.vectors[call.target.0];
                crate::runtime::picard::prox(op, call.omega, x, &mut dual, gamma, call.tol, call.cap);
                st.vectors[call.dual.0] = dual;
            }
            Stmt::Newton(call) => {
                let ridge = eval(env, &call.ridge, st, cur);
                let ridge_b = eval(env, &call.ridge_b, st, cur);
                let cg_steps = eval(env, &call.cg_steps, st, cur);
                let b = call.gradient_b.map(|g| (st.scalars[g.0], ridge_b));
                let (d, g) = (&st.vectors[call.curvature.0], &st.vectors[call.gradient.0]);
                let found = crate::exec::linalg::newton_statement(data, d, g, (ridge, cg_steps), b);
                st.scalars[call.solved.0] = if found.is_some() { 1.0 } else { 0.0 };
                if let Some((step, step_b)) = found {
                    st.vectors[call.step.0].copy_from_slice(&step);
                    if let Some(id) = call.step_b {
                        st.scalars[id.0] = step_b;
                    }
                }
            }
            Stmt::Alm(call) => {
                let ridge_b = eval(env, &call.ridge_b, st, cur);
                let cap = eval(env, &call.cap, st, cur);
                // The buffers and scalars it moves taken out of the state while the inputs are read.
                let mut w = std::mem::take(&mut st.vectors[call.weights.0]);
                let mut alpha = std::mem::take(&mut st.vectors[call.multipliers.0]);
                let mut sigma = st.scalars[call.sigma.0];
                let mut b = call.intercept.map(|b| st.scalars[b.0]);
                let rows = super::alm::Rows {
                    labels: &st.vectors[call.labels.0],
                    weights: call.row_weights.map(|v| &st.vectors[v.0][..]),
                    cap,
                };
                let it = super::alm::Iterate {
                    w: &mut w,
                    b: b.as_mut().map(|b| (b, ridge_b)),
                    alpha: &mut alpha,
                    sigma: &mut sigma,
                };
                st.scalars[call.estimate.0] = super::alm::epoch(data, &rows, it);
                st.vectors[call.weights.0] = w;
                st.vectors[call.multipliers.0] = alpha;
                st.scalars[call.sigma.0] = sigma;
                if let (Some(id), Some(b)) = (call.intercept, b) {
                    st.scalars[id.0] = b;
                }
            }
            Stmt::Dictionary(call) => {
                let k = env.dims.classes;
                let x = crate::runtime::dictionary::Signals {
                    indptr: data.indptr,
                    indices: data.indices,
                    values: data.values,
                };
                // Two buffers and two scalars of one state: the buffers taken out while both move.
                let mut atoms = std::mem::take(&mut st.vectors[call.atoms.0]);
                let mut surrogate = std::mem::take(&mut st.vectors[call.surrogate.0]);
                let mut a = std::mem::take(&mut st.vectors[call.curvature.0]);
                let mut n = st.scalars[call.steps.0];
                let moving = crate::runtime::dictionary::EpochState {
                    atoms: &mut atoms,
                    surrogate: &mut surrogate,
                    curvature: &mut a,
                    steps: &mut n,
                };
                crate::runtime::dictionary::epoch(
                    moving,
                    x,
                    orders.rows,
                    (data.features, k),
                    &call.settings,
                    data.operator,
                    data.threads,
                );
                st.vectors[call.atoms.0] = atoms;
                st.vectors[call.surrogate.0] = surrogate;
                st.vectors[call.curvature.0] = a;
                st.scalars[call.steps.0] = n;
            }
            Stmt::Reduce(r) => {
                if let Some(ranks) = orders.ranks {
                    let mut bufs: Vec<&mut [f64]> = st
                        .vectors
                        .iter_mut()
                        .enumerate()
                        .filter(|(k, _)| r.vectors.contains(&crate::plan::VecId(*k)))
                        .map(|(_, v)| v.as_mut_slice())
                        .collect();
                    super::collective::reduce_state(ranks, r, &mut st.scalars, &mut bufs)
                        .map_err(|e| Fault::across_ranks(&e))?;
                }
            }
            Stmt::GroupShrink(target, gamma) => {
                let gamma = eval(env, gamma, st, cur);
                let op = data.operator.expect("the driver binds the operator for plans that use it");
                crate::runtime::groups::shrink(op, &mut st.vectors[target.0], gamma);
            }
            Stmt::Store(v, idx, e) => {
                let x = eval(env, e, st, cur);
                let k = index(*idx, cur);
                st.vectors[v.0][k] = x;
            }
            Stmt::StoreAt(v, r, c, e) => {
                let x = eval(env, e, st, cur);
                let k = index(*r, cur) * env.widths[v.0] + index(*c, cur);
                st.vectors[v.0][k] = x;
            }
            Stmt::For(range, b) => match range {
                Range::Perm(len) => {
                    let order = if *len == Len::Rows { orders.rows } else { orders.cols };
                    for (q, &k) in order.iter().enumerate() {
                        cur.q = q;
                        set(cur, len.index(), k as usize);
                        exec(plan, env, b, st, data, orders, cur)?;
                    }
                }
                Range::Upto(len) => {
                    for k in 0..env.dims.of(*len) {
                        cur.q = k;
                        set(cur, len.index(), k);
                        exec(plan, env, b, st, data, orders, cur)?;
                    }
                }
                Range::RowNonZeros => {
                    let (lo, hi) = (data.indptr[cur.i], data.indptr[cur.i + 1]);
                    for k in lo..hi {
                        let j = data.indices[k] as usize;
                        if j >= data.features {
                            continue;
                        }
                        cur.j = j;
                        cur.v = data.values[k];
                        exec(plan, env, b, st, data, orders, cur)?;
                    }
                }
                Range::ColNonZeros => {
                    let c = data.csc().expect("the driver binds columns for plans that read them");
                    for k in c.ptr()[cur.j]..c.ptr()[cur.j + 1] {
                        cur.i = c.rows()[k] as usize;
                        cur.v = c.values()[k];
                        exec(plan, env, b, st, data, orders, cur)?;
                    }
                }
            },
            Stmt::If(cmp, l, r, b) => {
                if compare(*cmp, eval(env, l, st, cur), eval(env, r, st, cur)) {
                    exec(plan, env, b, st, data, orders, cur)?;
                }
            }
            Stmt::Repeat(cap, cmp, l, r, b) => {
                for _ in 0..*cap {
                    exec(plan, env, b, st, data, orders, cur)?;
                    if compare(*cmp, eval(env, l, st, cur), eval(env, r, st, cur)) {
                        break;
                    }
                }
            }
            Stmt::Guard(e, what) => {
                let x = eval(env, e, st, cur);
                if !x.is_finite() {
                    let step = plan.step_counter.map_or(0.0, |t| st.scalars[t.0]);
                    return Err(Fault { what: what.clone(), value: x, step, row: cur.i });
                }
            }
            Stmt::Call(routine, slice, arg) => {
                let a = eval(env, arg, st, cur);
                let buf = &mut st.vectors[slice.buf.0];
                match slice.row {
                    None => routine.apply_shaped(buf, env.widths[slice.buf.0], a),
                    Some(r) => {
                        let width = env.widths[slice.buf.0];
                        let start = index(r, cur) * width;
                        routine.apply(&mut buf[start..start + width], a);
                    }
                }
            }
        }
    }
    Ok(())
}

fn set(cur: &mut Cursor, idx: Index, k: usize) {
    match idx {
        Index::Row => cur.i = k,
        Index::Feature => cur.j = k,
        Index::Class => cur.c = k,
        Index::Step => cur.q = k,
        Index::OpRow => unreachable!("verify: p is walked by the runtime only"),
    }
}

fn index(i: Index, cur: &Cursor) -> usize {
    match i {
        Index::Row => cur.i,
        Index::Feature => cur.j,
        Index::Class => cur.c,
        Index::Step => cur.q,
        Index::OpRow => unreachable!("verify: p is walked by the runtime only"),
    }
}

/// Evaluates an expression (also used by the report, so every back end shares it).
fn eval(env: &Env, e: &Expr, st: &State, cur: &Cursor) -> f64 {
    let eval = |e: &Expr| eval(env, e, st, cur);
    match e {
        Expr::Const(v) => *v,
        Expr::Scalar(id) => st.scalars[id.0],
        Expr::Load(v, i) => st.vectors[v.0][index(*i, cur)],
        Expr::LoadAt(v, r, c) => st.vectors[v.0][index(*r, cur) * env.widths[v.0] + index(*c, cur)],
        Expr::Idx(i) => index(*i, cur) as f64,
        Expr::Value => cur.v,
        Expr::Neg(a) => -eval(a),
        Expr::Bin(op, a, b) => {
            let (x, y) = (eval(a), eval(b));
            match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
            }
        }
        Expr::Call(f, args) => {
            let mut vals = [0.0; 3];
            for (slot, a) in vals.iter_mut().zip(args) {
                *slot = eval(a);
            }
            f.apply(&vals[..args.len()])
        }
        Expr::Select(cmp, l, r, a, b) => {
            if compare(*cmp, eval(l), eval(r)) {
                eval(a)
            } else {
                eval(b)
            }
        }
        Expr::CatchUp(c) => {
            let [value, from, to, sums_to, logs_to, tau] = c.operands().map(eval);
            let (sums, logs) = (&st.vectors[c.sums.0], &st.vectors[c.logs.0]);
            crate::runtime::smm::l1_catch_up(value, from, to, sums, logs, sums_to, logs_to, tau)
        }
    }
}

/// Evaluates `e` with the given row / feature in scope (for the report).
pub(crate) fn eval_at(env: &Env, e: &Expr, st: &State, i: usize, j: usize) -> f64 {
    eval(env, e, st, &Cursor { i, j, c: 0, q: i, v: 0.0 })
}

/// Evaluates `e` with feature j and class c in scope (a multiclass penalty at W[j, c]).
pub(crate) fn eval_entry(env: &Env, e: &Expr, st: &State, j: usize, c: usize) -> f64 {
    eval(env, e, st, &Cursor { i: 0, j, c, q: 0, v: 0.0 })
}
