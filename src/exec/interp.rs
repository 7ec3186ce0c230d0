//! The reference interpreter: a plain recursive walk over the plan, clear rather than fast.

use super::{Backend, DataView, Fault, State};
use crate::plan::{BinOp, Expr, Index, Plan, Stmt};
use crate::symbolic::compare;

pub struct Interpreter<'p> {
    pub plan: &'p Plan,
}

/// The loop variables in scope.
#[derive(Clone, Copy, Default)]
struct Cursor {
    i: usize,
    j: usize,
    v: f64,
}

impl Backend for Interpreter<'_> {
    fn name(&self) -> &'static str {
        "interpreter"
    }

    fn epoch(&mut self, state: &mut State, data: &DataView, order: &[u32]) -> Result<(), Fault> {
        let plan = self.plan;
        exec(plan, &plan.epoch, state, data, order, &mut Cursor::default())
    }

    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        let plan = self.plan;
        exec(plan, &plan.finish, state, data, &[], &mut Cursor::default())
    }
}

fn exec(
    plan: &Plan,
    body: &[Stmt],
    st: &mut State,
    data: &DataView,
    order: &[u32],
    cur: &mut Cursor,
) -> Result<(), Fault> {
    for s in body {
        match s {
            Stmt::Set(id, e) => st.scalars[id.0] = eval(e, st, cur),
            Stmt::Store(v, idx, e) => {
                let x = eval(e, st, cur);
                let k = index(*idx, cur);
                st.vectors[v.0][k] = x;
            }
            Stmt::ForRows(b) => {
                for &i in order {
                    cur.i = i as usize;
                    exec(plan, b, st, data, order, cur)?;
                }
            }
            Stmt::ForRowNonZeros(b) => {
                let (lo, hi) = (data.indptr[cur.i], data.indptr[cur.i + 1]);
                for k in lo..hi {
                    let j = data.indices[k] as usize;
                    if j >= data.features {
                        continue;
                    }
                    cur.j = j;
                    cur.v = data.values[k];
                    exec(plan, b, st, data, order, cur)?;
                }
            }
            Stmt::ForFeatures(b) => {
                for j in 0..data.features {
                    cur.j = j;
                    exec(plan, b, st, data, order, cur)?;
                }
            }
            Stmt::If(cmp, l, r, b) => {
                if compare(*cmp, eval(l, st, cur), eval(r, st, cur)) {
                    exec(plan, b, st, data, order, cur)?;
                }
            }
            Stmt::Guard(e, what) => {
                let x = eval(e, st, cur);
                if !x.is_finite() {
                    let step = plan.step_counter.map_or(0.0, |t| st.scalars[t.0]);
                    return Err(Fault { what: what.clone(), value: x, step, row: cur.i });
                }
            }
        }
    }
    Ok(())
}

fn index(i: Index, cur: &Cursor) -> usize {
    match i {
        Index::Row => cur.i,
        Index::Feature => cur.j,
    }
}

/// Evaluates an expression (also used by the report, so every back end shares it).
fn eval(e: &Expr, st: &State, cur: &Cursor) -> f64 {
    match e {
        Expr::Const(v) => *v,
        Expr::Scalar(id) => st.scalars[id.0],
        Expr::Load(v, i) => st.vectors[v.0][index(*i, cur)],
        Expr::Value => cur.v,
        Expr::Neg(a) => -eval(a, st, cur),
        Expr::Bin(op, a, b) => {
            let (x, y) = (eval(a, st, cur), eval(b, st, cur));
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
                *slot = eval(a, st, cur);
            }
            f.apply(&vals[..args.len()])
        }
        Expr::Select(cmp, l, r, a, b) => {
            if compare(*cmp, eval(l, st, cur), eval(r, st, cur)) {
                eval(a, st, cur)
            } else {
                eval(b, st, cur)
            }
        }
    }
}

/// Evaluates `e` with the given row / feature in scope (for the report).
pub(crate) fn eval_at(e: &Expr, st: &State, i: usize, j: usize) -> f64 {
    eval(e, st, &Cursor { i, j, v: 0.0 })
}
