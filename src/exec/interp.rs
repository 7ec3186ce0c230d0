//! The reference interpreter: a plain recursive walk over the plan, clear rather than fast.

use super::{Backend, DataView, Fault, Orders, State};
use crate::plan::{BinOp, Expr, Index, Len, Plan, Range, Stmt};
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

    fn init(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        let plan = self.plan;
        exec(plan, &plan.init, state, data, &Orders::NONE, &mut Cursor::default())
    }

    fn epoch(&mut self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        let plan = self.plan;
        exec(plan, &plan.epoch, state, data, orders, &mut Cursor::default())
    }

    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        let plan = self.plan;
        exec(plan, &plan.finish, state, data, &Orders::NONE, &mut Cursor::default())
    }
}

fn exec(
    plan: &Plan,
    body: &[Stmt],
    st: &mut State,
    data: &DataView,
    orders: &Orders,
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
            Stmt::For(range, b) => match range {
                Range::Perm(len) => {
                    let order = if *len == Len::Rows { orders.rows } else { orders.cols };
                    for &k in order {
                        set(cur, len.index(), k as usize);
                        exec(plan, b, st, data, orders, cur)?;
                    }
                }
                Range::Upto(len) => {
                    let n = if *len == Len::Rows { data.rows() } else { data.features };
                    for k in 0..n {
                        set(cur, len.index(), k);
                        exec(plan, b, st, data, orders, cur)?;
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
                        exec(plan, b, st, data, orders, cur)?;
                    }
                }
                Range::ColNonZeros => {
                    let c = data.csc.expect("the driver binds columns for plans that read them");
                    for k in c.ptr[cur.j]..c.ptr[cur.j + 1] {
                        cur.i = c.rows[k] as usize;
                        cur.v = c.values[k];
                        exec(plan, b, st, data, orders, cur)?;
                    }
                }
            },
            Stmt::If(cmp, l, r, b) => {
                if compare(*cmp, eval(l, st, cur), eval(r, st, cur)) {
                    exec(plan, b, st, data, orders, cur)?;
                }
            }
            Stmt::Repeat(cap, cmp, l, r, b) => {
                for _ in 0..*cap {
                    exec(plan, b, st, data, orders, cur)?;
                    if compare(*cmp, eval(l, st, cur), eval(r, st, cur)) {
                        break;
                    }
                }
            }
            Stmt::Guard(e, what) => {
                let x = eval(e, st, cur);
                if !x.is_finite() {
                    let step = plan.step_counter.map_or(0.0, |t| st.scalars[t.0]);
                    return Err(Fault { what: what.clone(), value: x, step, row: cur.i });
                }
            }
            Stmt::Call(routine, v, arg) => {
                let a = eval(arg, st, cur);
                routine.apply(&mut st.vectors[v.0], a);
            }
        }
    }
    Ok(())
}

fn set(cur: &mut Cursor, idx: Index, k: usize) {
    match idx {
        Index::Row => cur.i = k,
        Index::Feature => cur.j = k,
    }
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
