//! Expressions → Cranelift values: constants, scalars and loads, arithmetic, selects, the
//! inlined intrinsics and the runtime's calls, and the float compares conditions use.

use super::*;

impl PlanTranslator<'_, '_> {
    pub(super) fn compare(&mut self, cmp: Cmp, l: &Expr, r: &Expr) -> Value {
        let (l, r) = (self.translate_expr(l), self.translate_expr(r));
        self.fcmp(cmp, l, r)
    }

    pub(super) fn fcmp(&mut self, cmp: Cmp, l: Value, r: Value) -> Value {
        let cc = match cmp {
            Cmp::Gt => FloatCC::GreaterThan,
            Cmp::Lt => FloatCC::LessThan,
        };
        self.b.ins().fcmp(cc, l, r)
    }

    pub(super) fn translate_expr(&mut self, e: &Expr) -> Value {
        match e {
            Expr::Const(c) => self.b.ins().f64const(*c),
            Expr::Scalar(id) => self.translate_scalar(*id),
            Expr::Load(v, idx) => {
                if let Some(x) = self.stored.get(&(v.0, *idx, None)) {
                    return *x;
                }
                let addr = self.element(self.bases[v.0], *idx, 8);
                self.b.ins().load(types::F64, trusted(), addr, 0)
            }
            Expr::LoadAt(v, r, c) => {
                if let Some(x) = self.stored.get(&(v.0, *r, Some(*c))) {
                    return *x;
                }
                let addr = self.entry(*v, *r, *c);
                self.b.ins().load(types::F64, trusted(), addr, 0)
            }
            Expr::Idx(idx) => {
                let k = self.index_value(*idx);
                self.b.ins().fcvt_from_uint(types::F64, k)
            }
            Expr::Value => self.v.expect("verify: v inside row(X, i)"),
            Expr::Neg(a) => {
                let x = self.translate_expr(a);
                self.b.ins().fneg(x)
            }
            Expr::Bin(op, a, c) => {
                let (x, y) = (self.translate_expr(a), self.translate_expr(c));
                match op {
                    BinOp::Add => self.b.ins().fadd(x, y),
                    BinOp::Sub => self.b.ins().fsub(x, y),
                    BinOp::Mul => self.b.ins().fmul(x, y),
                    BinOp::Div => self.b.ins().fdiv(x, y),
                }
            }
            Expr::Call(f, args) => {
                let xs: Vec<Value> = args.iter().map(|a| self.translate_expr(a)).collect();
                self.translate_call(*f, &xs)
            }
            Expr::Select(cmp, l, r, a, c) => {
                let test = self.compare(*cmp, l, r);
                let (x, y) = (self.translate_expr(a), self.translate_expr(c));
                self.b.ins().select(test, x, y)
            }
            Expr::CatchUp(c) => {
                // The two history buffers by base pointer, with m, their verified length.
                let ops: Vec<Value> = c.operands().into_iter().map(|x| self.translate_expr(x)).collect();
                let (sums, logs, rows) = (self.bases[c.sums.0], self.bases[c.logs.0], self.data.rows);
                let fref = self.imports.catch_up.expect("imported for plans that catch up");
                let call = self.b.ins().call(fref, &[ops[0], ops[1], ops[2], sums, logs, rows, ops[3], ops[4], ops[5]]);
                self.b.inst_results(call)[0]
            }
        }
    }

    pub(super) fn translate_scalar(&mut self, id: ScalarId) -> Value {
        match self.scalars[id.0] {
            Some(var) => self.b.use_var(var),
            None => self.b.ins().f64const(self.params[id.0]),
        }
    }

    /// Intrinsics, each written to evaluate exactly as `Intrinsic::apply` does.
    pub(super) fn translate_call(&mut self, f: Intrinsic, x: &[Value]) -> Value {
        match f {
            // soft(v, τ) = v > τ ? v − τ : (v < −τ ? v + τ : 0), tested as v − τ > 0 and
            // v + τ < 0: the same predicates in IEEE arithmetic (a non-zero exact difference
            // never rounds to 0 and negation is exact; NaN fails both), without negating τ.
            Intrinsic::Soft => {
                let (v, tau) = (x[0], x[1]);
                let down = self.b.ins().fsub(v, tau);
                let up = self.b.ins().fadd(v, tau);
                let zero = self.b.ins().f64const(0.0);
                let above = self.b.ins().fcmp(FloatCC::GreaterThan, down, zero);
                let below = self.b.ins().fcmp(FloatCC::LessThan, up, zero);
                let inner = self.b.ins().select(below, up, zero);
                self.b.ins().select(above, down, inner)
            }
            // clamp(v, lo, hi) = v < lo ? lo : (v > hi ? hi : v)
            Intrinsic::Clamp => {
                let (v, lo, hi) = (x[0], x[1], x[2]);
                let under = self.b.ins().fcmp(FloatCC::LessThan, v, lo);
                let over = self.b.ins().fcmp(FloatCC::GreaterThan, v, hi);
                let inner = self.b.ins().select(over, hi, v);
                self.b.ins().select(under, lo, inner)
            }
            Intrinsic::Func(func) => match func {
                Func::Sqrt => self.b.ins().sqrt(x[0]),
                Func::Abs => self.b.ins().fabs(x[0]),
                // max(x, y) = y > x ? y : x;  min(x, y) = y < x ? y : x
                Func::Max | Func::Min => {
                    let cc = if func == Func::Max { FloatCC::GreaterThan } else { FloatCC::LessThan };
                    let c = self.b.ins().fcmp(cc, x[1], x[0]);
                    self.b.ins().select(c, x[1], x[0])
                }
                Func::Sign => {
                    let zero = self.b.ins().f64const(0.0);
                    let one = self.b.ins().f64const(1.0);
                    let minus = self.b.ins().f64const(-1.0);
                    let pos = self.b.ins().fcmp(FloatCC::GreaterThan, x[0], zero);
                    let neg = self.b.ins().fcmp(FloatCC::LessThan, x[0], zero);
                    let inner = self.b.ins().select(neg, minus, zero);
                    self.b.ins().select(pos, one, inner)
                }
                Func::Exp | Func::Log | Func::Log1p | Func::Sigmoid | Func::Softplus => {
                    let fref = self.imports.funcs[&func];
                    let call = self.b.ins().call(fref, &[x[0]]);
                    self.b.inst_results(call)[0]
                }
            },
        }
    }
}
