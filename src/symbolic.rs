//! Scalar formulas: the losses of the stdlib, their derivatives, step schedules.
//!
//! A loss is declared once, as a formula (`log(1 + exp(-y·a))`); the compiler derives ℓ′ by
//! symbolic differentiation, then simplifies it. Two rewrites keep the result finite for every
//! finite margin: `log(1 + exp(u))` and `log1p(exp(u))` become `softplus(u)`, and the quotient
//! `exp(u)/(1 + exp(u))` becomes `sigmoid(u)`; both are evaluated by the sign of `u`.

use std::fmt;

/// Functions a formula may call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    Exp,
    Log,
    Log1p,
    Sqrt,
    Abs,
    Sign,
    Max,
    Min,
    /// σ(u) = 1/(1 + e^{−u}), computed without overflow.
    Sigmoid,
    /// log(1 + e^{u}), computed without overflow.
    Softplus,
}

impl Func {
    pub fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "exp" => Func::Exp,
            "log" | "ln" => Func::Log,
            "log1p" => Func::Log1p,
            "sqrt" => Func::Sqrt,
            "abs" => Func::Abs,
            "sign" => Func::Sign,
            "max" => Func::Max,
            "min" => Func::Min,
            "sigmoid" | "σ" => Func::Sigmoid,
            "softplus" => Func::Softplus,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Log1p => "log1p",
            Func::Sqrt => "sqrt",
            Func::Abs => "abs",
            Func::Sign => "sign",
            Func::Max => "max",
            Func::Min => "min",
            Func::Sigmoid => "sigmoid",
            Func::Softplus => "softplus",
        }
    }

    pub fn arity(self) -> usize {
        match self {
            Func::Max | Func::Min => 2,
            _ => 1,
        }
    }

    /// The numerical definition shared by every evaluator (interpreter, JIT runtime, reports).
    pub fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            Func::Exp => x.exp(),
            Func::Log => x.ln(),
            Func::Log1p => x.ln_1p(),
            Func::Sqrt => x.sqrt(),
            Func::Abs => x.abs(),
            Func::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Func::Max => {
                if y > x {
                    y
                } else {
                    x
                }
            }
            Func::Min => {
                if y < x {
                    y
                } else {
                    x
                }
            }
            Func::Sigmoid => sigmoid(x),
            Func::Softplus => softplus(x),
        }
    }
}

/// σ(u) evaluated by the sign of u, so that neither branch overflows.
pub fn sigmoid(u: f64) -> f64 {
    if u >= 0.0 {
        1.0 / (1.0 + (-u).exp())
    } else {
        let e = u.exp();
        e / (1.0 + e)
    }
}

/// log(1 + e^u) = max(u, 0) + log1p(e^{−|u|}).
pub fn softplus(u: f64) -> f64 {
    u.max(0.0) + (-u.abs()).exp().ln_1p()
}

/// Comparison used by `Select` (derivatives of max/min, subgradients).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    Gt,
    Lt,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Sym {
    Const(f64),
    Var(String),
    Neg(Box<Sym>),
    Add(Box<Sym>, Box<Sym>),
    Sub(Box<Sym>, Box<Sym>),
    Mul(Box<Sym>, Box<Sym>),
    Div(Box<Sym>, Box<Sym>),
    Pow(Box<Sym>, Box<Sym>),
    Call(Func, Vec<Sym>),
    /// `if l ⋈ r then a else b`.
    Select(Cmp, Box<Sym>, Box<Sym>, Box<Sym>, Box<Sym>),
}

use Sym::*;

pub fn c(v: f64) -> Sym {
    Const(v)
}
pub fn var(n: &str) -> Sym {
    Var(n.to_string())
}
fn b(s: Sym) -> Box<Sym> {
    Box::new(s)
}

impl Sym {
    pub fn is_const(&self, v: f64) -> bool {
        matches!(self, Const(x) if *x == v)
    }

    pub fn as_const(&self) -> Option<f64> {
        match self {
            Const(x) => Some(*x),
            _ => None,
        }
    }

    /// Whether `name` occurs in the formula.
    pub fn mentions(&self, name: &str) -> bool {
        match self {
            Const(_) => false,
            Var(v) => v == name,
            Neg(a) => a.mentions(name),
            Add(a, b2) | Sub(a, b2) | Mul(a, b2) | Div(a, b2) | Pow(a, b2) => a.mentions(name) || b2.mentions(name),
            Call(_, args) => args.iter().any(|a| a.mentions(name)),
            Select(_, l, r, x, y) => [l, r, x, y].iter().any(|s| s.mentions(name)),
        }
    }

    /// Every variable name, in first-seen order.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Const(_) => {}
            Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            Neg(a) => a.vars(out),
            Add(a, b2) | Sub(a, b2) | Mul(a, b2) | Div(a, b2) | Pow(a, b2) => {
                a.vars(out);
                b2.vars(out)
            }
            Call(_, args) => args.iter().for_each(|a| a.vars(out)),
            Select(_, l, r, x, y) => [l, r, x, y].iter().for_each(|s| s.vars(out)),
        }
    }

    /// Replaces variables by formulas.
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<Sym>) -> Sym {
        let s = |x: &Sym| b(x.substitute(f));
        match self {
            Const(v) => Const(*v),
            Var(n) => f(n).unwrap_or_else(|| Var(n.clone())),
            Neg(a) => Neg(s(a)),
            Add(x, y) => Add(s(x), s(y)),
            Sub(x, y) => Sub(s(x), s(y)),
            Mul(x, y) => Mul(s(x), s(y)),
            Div(x, y) => Div(s(x), s(y)),
            Pow(x, y) => Pow(s(x), s(y)),
            Call(func, args) => Call(*func, args.iter().map(|a| a.substitute(f)).collect()),
            Select(cmp, l, r, x, y) => Select(*cmp, s(l), s(r), s(x), s(y)),
        }
    }

    /// Evaluates with variable values from `env` (unknown variables are NaN).
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<f64>) -> f64 {
        match self {
            Const(v) => *v,
            Var(n) => env(n).unwrap_or(f64::NAN),
            Neg(a) => -a.eval(env),
            Add(x, y) => x.eval(env) + y.eval(env),
            Sub(x, y) => x.eval(env) - y.eval(env),
            Mul(x, y) => x.eval(env) * y.eval(env),
            Div(x, y) => x.eval(env) / y.eval(env),
            Pow(x, y) => powf(x.eval(env), y.eval(env)),
            Call(f, args) => {
                let a = args.first().map_or(f64::NAN, |a| a.eval(env));
                let b2 = args.get(1).map_or(0.0, |a| a.eval(env));
                f.apply(a, b2)
            }
            Select(cmp, l, r, x, y) => {
                if compare(*cmp, l.eval(env), r.eval(env)) {
                    x.eval(env)
                } else {
                    y.eval(env)
                }
            }
        }
    }
}

/// x^y with exact small integer powers (so `(a - y)²` is a product, not a pow call).
pub fn powf(x: f64, y: f64) -> f64 {
    if y == 2.0 {
        x * x
    } else if y == 1.0 {
        x
    } else if y == 0.0 {
        1.0
    } else {
        x.powf(y)
    }
}

pub fn compare(cmp: Cmp, l: f64, r: f64) -> bool {
    match cmp {
        Cmp::Gt => l > r,
        Cmp::Lt => l < r,
    }
}

// ---------------------------------------------------------------------------------------------
// Differentiation

/// ∂f/∂x, simplified and rewritten to stable forms.
pub fn derivative(f: &Sym, x: &str) -> Sym {
    let f = stabilize(&simplify(f));
    simplify(&stabilize(&simplify(&diff(&f, x))))
}

fn diff(f: &Sym, x: &str) -> Sym {
    if !f.mentions(x) {
        return c(0.0);
    }
    match f {
        Const(_) => c(0.0),
        Var(v) => c(if v == x { 1.0 } else { 0.0 }),
        Neg(a) => Neg(b(diff(a, x))),
        Add(u, v) => Add(b(diff(u, x)), b(diff(v, x))),
        Sub(u, v) => Sub(b(diff(u, x)), b(diff(v, x))),
        Mul(u, v) => Add(b(Mul(b(diff(u, x)), v.clone())), b(Mul(u.clone(), b(diff(v, x))))),
        Div(u, v) => {
            if !v.mentions(x) {
                Div(b(diff(u, x)), v.clone())
            } else {
                // (u'v − uv') / v²
                Div(
                    b(Sub(b(Mul(b(diff(u, x)), v.clone())), b(Mul(u.clone(), b(diff(v, x)))))),
                    b(Pow(v.clone(), b(c(2.0)))),
                )
            }
        }
        Pow(u, e) if !e.mentions(x) => {
            // e·u^(e−1)·u'
            Mul(b(Mul(e.clone(), b(Pow(u.clone(), b(Sub(e.clone(), b(c(1.0)))))))), b(diff(u, x)))
        }
        Pow(u, e) => {
            // d(u^e) = u^e·(e'·log u + e·u'/u)
            let t = Add(
                b(Mul(b(diff(e, x)), b(Call(Func::Log, vec![(**u).clone()])))),
                b(Div(b(Mul(e.clone(), b(diff(u, x)))), u.clone())),
            );
            Mul(b(f.clone()), b(t))
        }
        Call(func, args) => {
            let u = &args[0];
            let du = diff(u, x);
            let outer = match func {
                Func::Exp => f.clone(),
                Func::Log => Div(b(c(1.0)), b(u.clone())),
                Func::Log1p => Div(b(c(1.0)), b(Add(b(c(1.0)), b(u.clone())))),
                Func::Sqrt => Div(b(c(0.5)), b(f.clone())),
                Func::Abs => Call(Func::Sign, vec![u.clone()]),
                Func::Sign => c(0.0),
                Func::Sigmoid => Mul(b(f.clone()), b(Sub(b(c(1.0)), b(f.clone())))),
                Func::Softplus => Call(Func::Sigmoid, vec![u.clone()]),
                Func::Max | Func::Min => {
                    // A subgradient: the derivative of the branch that is strictly active, and of
                    // the first argument at a tie (hinge: −y for ya < 1, else 0).
                    let v = &args[1];
                    let cmp = if *func == Func::Max { Cmp::Gt } else { Cmp::Lt };
                    return Select(cmp, b(v.clone()), b(u.clone()), b(diff(v, x)), b(du));
                }
            };
            Mul(b(outer), b(du))
        }
        Select(cmp, l, r, p, q) => Select(*cmp, l.clone(), r.clone(), b(diff(p, x)), b(diff(q, x))),
    }
}

// ---------------------------------------------------------------------------------------------
// Simplification and stable rewrites

/// Constant folding and the algebraic identities that make a derivative readable, repeated
/// until nothing changes. "Nothing changes" compares constants by their bits: a NaN constant
/// (`sqrt(0 - 1)` in a parameter) never equals itself, and `==` would recurse forever.
pub fn simplify(f: &Sym) -> Sym {
    let mut current = f.clone();
    // Each round shrinks the formula or leaves it as it is; the cap only guards that argument.
    for _ in 0..1000 {
        let once = simplify_once(&current);
        if same(&once, &current) {
            return once;
        }
        current = once;
    }
    current
}

/// Structural equality with constants compared bit for bit.
fn same(a: &Sym, b: &Sym) -> bool {
    match (a, b) {
        (Const(x), Const(y)) => x.to_bits() == y.to_bits(),
        (Var(x), Var(y)) => x == y,
        (Neg(x), Neg(y)) => same(x, y),
        (Add(a1, a2), Add(b1, b2))
        | (Sub(a1, a2), Sub(b1, b2))
        | (Mul(a1, a2), Mul(b1, b2))
        | (Div(a1, a2), Div(b1, b2))
        | (Pow(a1, a2), Pow(b1, b2)) => same(a1, b1) && same(a2, b2),
        (Call(f, xs), Call(g, ys)) => f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same(x, y)),
        (Select(c1, l1, r1, p1, q1), Select(c2, l2, r2, p2, q2)) => {
            c1 == c2 && same(l1, l2) && same(r1, r2) && same(p1, p2) && same(q1, q2)
        }
        _ => false,
    }
}

fn simplify_once(f: &Sym) -> Sym {
    match f {
        Const(_) | Var(_) => f.clone(),
        Neg(a) => match simplify_once(a) {
            Const(v) => c(-v),
            Neg(x) => *x,
            Mul(x, y) if x.as_const().is_some() => Mul(b(c(-x.as_const().unwrap_or(0.0))), y),
            a => Neg(b(a)),
        },
        Add(x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            match (&x, &y) {
                (Const(p), Const(q)) => c(p + q),
                (_, _) if x.is_const(0.0) => y,
                (_, _) if y.is_const(0.0) => x,
                (_, Neg(n)) => Sub(b(x), n.clone()),
                _ => Add(b(x), b(y)),
            }
        }
        Sub(x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            match (&x, &y) {
                (Const(p), Const(q)) => c(p - q),
                (_, _) if y.is_const(0.0) => x,
                (_, _) if x.is_const(0.0) => Neg(b(y)),
                (_, Neg(n)) => Add(b(x), n.clone()),
                _ => Sub(b(x), b(y)),
            }
        }
        Mul(x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            match (&x, &y) {
                (Const(p), Const(q)) => c(p * q),
                _ if x.is_const(0.0) || y.is_const(0.0) => c(0.0),
                _ if x.is_const(1.0) => y,
                _ if y.is_const(1.0) => x,
                _ if x.is_const(-1.0) => Neg(b(y)),
                _ if y.is_const(-1.0) => Neg(b(x)),
                // constants to the left, and gathered: p·(q·z) → (pq)·z
                (Const(p), Mul(q, z)) if q.as_const().is_some() => {
                    Mul(b(c(p * q.as_const().unwrap_or(1.0))), z.clone())
                }
                (_, Const(_)) => Mul(b(y), b(x)),
                // a variable before a compound factor: y·σ(u) rather than σ(u)·y
                (Call(..) | Select(..), Var(_)) => Mul(b(y), b(x)),
                (Neg(n), _) => Neg(b(Mul(n.clone(), b(y)))),
                (_, Neg(n)) => Neg(b(Mul(b(x), n.clone()))),
                // p·(z/q) with constants → (p/q)·z
                (Const(p), Div(z, q)) if q.as_const().is_some() => {
                    Mul(b(c(p / q.as_const().unwrap_or(1.0))), z.clone())
                }
                _ => Mul(b(x), b(y)),
            }
        }
        Div(x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            match (&x, &y) {
                (Const(p), Const(q)) if *q != 0.0 => c(p / q),
                _ if x.is_const(0.0) => c(0.0),
                _ if y.is_const(1.0) => x,
                _ => Div(b(x), b(y)),
            }
        }
        Pow(x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            match (&x, &y) {
                (Const(p), Const(q)) => c(powf(*p, *q)),
                _ if y.is_const(1.0) => x,
                _ if y.is_const(0.0) => c(1.0),
                _ => Pow(b(x), b(y)),
            }
        }
        Call(func, args) => {
            let args: Vec<Sym> = args.iter().map(simplify_once).collect();
            if args.iter().all(|a| a.as_const().is_some()) && args.len() == func.arity() {
                let a = args[0].as_const().unwrap_or(f64::NAN);
                let b2 = args.get(1).and_then(Sym::as_const).unwrap_or(0.0);
                return c(func.apply(a, b2));
            }
            Call(*func, args)
        }
        Select(cmp, l, r, x, y) => {
            let (x, y) = (simplify_once(x), simplify_once(y));
            if x == y {
                return x;
            }
            Select(*cmp, b(simplify_once(l)), b(simplify_once(r)), b(x), b(y))
        }
    }
}

/// Rewrites overflow-prone forms into softplus / sigmoid (bottom-up).
pub fn stabilize(f: &Sym) -> Sym {
    let f = match f {
        Const(_) | Var(_) => f.clone(),
        Neg(a) => Neg(b(stabilize(a))),
        Add(x, y) => Add(b(stabilize(x)), b(stabilize(y))),
        Sub(x, y) => Sub(b(stabilize(x)), b(stabilize(y))),
        Mul(x, y) => Mul(b(stabilize(x)), b(stabilize(y))),
        Div(x, y) => Div(b(stabilize(x)), b(stabilize(y))),
        Pow(x, y) => Pow(b(stabilize(x)), b(stabilize(y))),
        Call(func, args) => Call(*func, args.iter().map(stabilize).collect()),
        Select(cmp, l, r, x, y) => Select(*cmp, b(stabilize(l)), b(stabilize(r)), b(stabilize(x)), b(stabilize(y))),
    };
    match &f {
        // log1p(exp(u)) → softplus(u)
        Call(Func::Log1p, args) => match &args[0] {
            Call(Func::Exp, u) => Call(Func::Softplus, u.clone()),
            _ => f,
        },
        // log(1 + exp(u)) → softplus(u)
        Call(Func::Log, args) => match one_plus_exp(&args[0]) {
            Some(u) => Call(Func::Softplus, vec![u]),
            None => f,
        },
        // exp(u) / (1 + exp(u)) → sigmoid(u);  1 / (1 + exp(−u)) → sigmoid(u)
        Div(num, den) => match (&**num, one_plus_exp(den)) {
            (Call(Func::Exp, u), Some(v)) if u[0] == v => Call(Func::Sigmoid, vec![v]),
            (n, Some(v)) if n.is_const(1.0) => Call(Func::Sigmoid, vec![simplify(&Neg(b(v)))]),
            _ => f,
        },
        // (1/(1 + exp(u)))·exp(u) and exp(u)·(1/(1 + exp(u))) → sigmoid(u), as differentiating
        // log1p(exp(u)) by the chain rule produces.
        Mul(x, y) => {
            let as_sigmoid = |p: &Sym, q: &Sym| -> Option<Sym> {
                if let (Div(n, d), Call(Func::Exp, u)) = (p, q) {
                    if n.is_const(1.0) && one_plus_exp(d).as_ref() == Some(&u[0]) {
                        return Some(Call(Func::Sigmoid, vec![u[0].clone()]));
                    }
                }
                None
            };
            as_sigmoid(x, y).or_else(|| as_sigmoid(y, x)).unwrap_or(f)
        }
        _ => f,
    }
}

fn one_plus_exp(s: &Sym) -> Option<Sym> {
    match s {
        Add(x, y) if x.is_const(1.0) => match &**y {
            Call(Func::Exp, u) => Some(u[0].clone()),
            _ => None,
        },
        Add(x, y) if y.is_const(1.0) => match &**x {
            Call(Func::Exp, u) => Some(u[0].clone()),
            _ => None,
        },
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Printing

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_sym(self, 0, f)
    }
}

fn prec(s: &Sym) -> u8 {
    match s {
        Add(..) | Sub(..) => 1,
        Mul(..) | Div(..) => 2,
        Neg(..) => 3,
        Pow(..) => 4,
        Const(v) if *v < 0.0 => 3,
        _ => 5,
    }
}

fn write_sym(s: &Sym, outer: u8, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let p = prec(s);
    if p < outer {
        write!(f, "(")?;
    }
    match s {
        Const(v) => write!(f, "{}", fmt_num(*v))?,
        Var(n) => write!(f, "{n}")?,
        Neg(a) => {
            // −(x·y) prints as −x·y: IEEE negation commutes with the product exactly.
            write!(f, "-")?;
            write_sym(a, if matches!(**a, Mul(..) | Div(..)) { 2 } else { 3 }, f)?
        }
        Add(x, y) => {
            write_sym(x, 1, f)?;
            write!(f, " + ")?;
            write_sym(y, 2, f)?
        }
        Sub(x, y) => {
            write_sym(x, 1, f)?;
            write!(f, " - ")?;
            write_sym(y, 2, f)?
        }
        Mul(x, y) => {
            write_sym(x, 2, f)?;
            write!(f, " * ")?;
            write_sym(y, 3, f)?
        }
        Div(x, y) => {
            write_sym(x, 2, f)?;
            write!(f, " / ")?;
            write_sym(y, 3, f)?
        }
        Pow(x, y) => {
            write_sym(x, 5, f)?;
            write!(f, "^")?;
            write_sym(y, 4, f)?
        }
        Call(func, args) => {
            write!(f, "{}(", func.name())?;
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    write!(f, ", ")?;
                }
                write_sym(a, 0, f)?;
            }
            write!(f, ")")?
        }
        Select(cmp, l, r, x, y) => {
            write!(f, "if ")?;
            write_sym(l, 1, f)?;
            write!(f, " {} ", if *cmp == Cmp::Gt { ">" } else { "<" })?;
            write_sym(r, 1, f)?;
            write!(f, " then ")?;
            write_sym(x, 1, f)?;
            write!(f, " else ")?;
            write_sym(y, 1, f)?
        }
    }
    if p < outer {
        write!(f, ")")?;
    }
    Ok(())
}

/// Six significant digits, written as a person writes them: a fitted value (an intercept)
/// that four would round to a whole number (12.0009, not 12).
pub fn sig6(v: f64) -> String {
    format!("{v:.5e}").parse::<f64>().map_or_else(|_| fmt_num(v), fmt_num)
}

/// Numbers as a person writes them: `0.25`, `1e-4`, `2`.
pub fn fmt_num(v: f64) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let plain = format!("{v}");
    let sci = format!("{v:e}");
    if sci.len() < plain.len() {
        sci
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logistic() -> Sym {
        // log(1 + exp(-y·a))
        Call(Func::Log, vec![Add(b(c(1.0)), b(Call(Func::Exp, vec![Mul(b(Neg(b(var("y")))), b(var("a")))])))])
    }

    #[test]
    fn logistic_derivative_is_a_stable_sigmoid() {
        let d = derivative(&logistic(), "a");
        assert!(format!("{d}").contains("sigmoid"), "{d}");
        for &y in &[-1.0, 1.0] {
            for &a in &[-1e300, -1e3, -30.0, -1.0, 0.0, 0.5, 1e3, 1e300] {
                let got = d.eval(&|n| Some(if n == "y" { y } else { a }));
                let want = -y / (1.0 + (y * a).exp());
                assert!(got.is_finite(), "ℓ′({y}, {a}) = {got}");
                assert!((got - want).abs() <= 1e-15 + 1e-12 * want.abs(), "ℓ′({y}, {a}) = {got}, want {want}");
            }
        }
    }

    #[test]
    fn logistic_value_is_stable() {
        let f = stabilize(&simplify(&logistic()));
        let v = f.eval(&|n| Some(if n == "y" { 1.0 } else { -1e3 }));
        assert!((v - 1e3).abs() < 1e-9, "{v}");
    }

    #[test]
    fn product_rule_matches_finite_differences() {
        // f = a²·exp(a)/(1 + a²)
        let a = || var("a");
        let f = Div(
            b(Mul(b(Pow(b(a()), b(c(2.0)))), b(Call(Func::Exp, vec![a()])))),
            b(Add(b(c(1.0)), b(Pow(b(a()), b(c(2.0)))))),
        );
        let d = derivative(&f, "a");
        for &x in &[-2.0, -0.3, 0.7, 1.9] {
            let h = 1e-6;
            let fd = (f.eval(&|_| Some(x + h)) - f.eval(&|_| Some(x - h))) / (2.0 * h);
            let got = d.eval(&|_| Some(x));
            assert!((fd - got).abs() < 1e-6 * (1.0 + fd.abs()), "x={x}: {got} vs {fd}");
        }
    }
}
