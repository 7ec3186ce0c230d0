//! The stable text form of a plan: what `optc plan` prints and the snapshot tests pin.
//! One op per line, declarations in plan order, constants printed as a person writes them.

use super::DataFacts;
use super::*;
use crate::symbolic::fmt_num;
use std::fmt::Write as _;

pub fn dump(plan: &Plan, facts: Option<&DataFacts>) -> String {
    let mut o = String::new();
    let kind = match (plan.info.solver.can().lazy, plan.info.lazy) {
        (true, true) => " (lazy)",
        (true, false) => " (eager)",
        _ => "",
    };
    let _ = writeln!(o, "plan {}{kind}  # {}", plan.info.solver, plan.info.summary);
    let columns = if plan.reads_columns() { ", Xc: csc[m, d]" } else { "" };
    let labels = if plan.objective.dictionary.is_some() { "  # the signals, one per row" } else { ", y: vec[m]" };
    let weights = if plan.row_weights().is_some() { ", ω: vec[m]" } else { "" };
    let _ = write!(o, "inputs  X: csr[m, d]{columns}{labels}{weights}");
    if let Some(f) = facts {
        let _ = write!(o, "  # m = {}, d = {}, nnz = {}", f.rows, f.features, f.nnz);
    }
    let _ = writeln!(o);

    let mut first = true;
    for p in plan.scalars.iter().filter(|p| p.role == ScalarRole::Param) {
        let head = if first { "params  " } else { "        " };
        first = false;
        let mut note = p.note.clone();
        let value = match (&p.init, p.init.value(facts)) {
            (ParamInit::Value(v), _) => fmt_num(*v),
            (ParamInit::InverseMaxRowNormSq { .. }, Some(v)) => {
                note.push_str(&format!(", max‖xᵢ‖² = {}", fmt_sig(super::facts::row_norm(facts).unwrap_or(0.0))));
                fmt_sig(v)
            }
            (ParamInit::InverseMaxRowNormSq { scale }, None) => {
                format!("1/({}·max‖xᵢ‖²)", fmt_num(*scale))
            }
            (ParamInit::MaxRowNormSq { .. }, Some(v)) => {
                note.push_str(&format!(", max‖xᵢ‖² = {}", fmt_sig(super::facts::row_norm(facts).unwrap_or(0.0))));
                fmt_sig(v)
            }
            (ParamInit::MaxRowNormSq { scale }, None) => format!("{}·max‖xᵢ‖²", fmt_num(*scale)),
            (ParamInit::Tuned { default, .. }, _) => fmt_num(*default),
            (ParamInit::InverseMaxRowNorm { .. }, Some(v)) => {
                note.push_str(&format!(", max‖xᵢ‖ = {}", fmt_sig(super::facts::row_norm(facts).unwrap_or(0.0).sqrt())));
                fmt_sig(v)
            }
            (ParamInit::InverseMaxRowNorm { scale }, None) => format!("1/({}·max‖xᵢ‖)", fmt_num(*scale)),
            (ParamInit::PerRow { .. }, Some(v)) | (ParamInit::GramNorm { .. }, Some(v)) => fmt_sig(v),
            (ParamInit::PerRow { scale }, None) => format!("{}/m", fmt_num(*scale)),
            (ParamInit::MeanWeight { .. }, Some(v)) => fmt_sig(v),
            (ParamInit::MeanWeight { scale }, None) => format!("{}·Σωᵢ/m", fmt_num(*scale)),
            (ParamInit::MaxWeight { .. }, Some(v)) => fmt_sig(v),
            (ParamInit::MaxWeight { scale }, None) => format!("{}·max ωᵢ", fmt_num(*scale)),
            (ParamInit::GramNorm { scale }, None) => format!("{}·λmax(XᵀX)/m", fmt_num(*scale)),
            (ParamInit::DualStep, Some(v)) => fmt_sig(v),
            (ParamInit::DualStep, None) => "1/λmax(XXᵀ)".into(),
            (ParamInit::NormExponent, Some(v)) => fmt_sig(v),
            (ParamInit::NormExponent, None) => "max(2, 2·ln d)".into(),
        };
        let note = if note.is_empty() { String::new() } else { format!("  # {note}") };
        let _ = writeln!(o, "{head}{} = {value}{note}", p.name);
    }
    let mut first = true;
    for v in &plan.vectors {
        if v.role.is_input() {
            continue;
        }
        let head = if first { "state   " } else { "        " };
        first = false;
        let shape = match v.cols {
            None => format!("vec[{}]", v.len.name()),
            Some(c) => format!("mat[{}, {}]", v.len.name(), c.name()),
        };
        let _ = writeln!(o, "{head}{}: {shape} = {}", v.name, fmt_num(v.init));
    }
    for p in plan.scalars.iter().filter(|p| p.role == ScalarRole::State) {
        let head = if first { "state   " } else { "        " };
        first = false;
        let note = if p.note.is_empty() { String::new() } else { format!("  # {}", p.note) };
        let init = p.init.value(None).map_or("?".into(), fmt_num);
        let _ = writeln!(o, "{head}{}: f64 = {init}{note}", p.name);
    }
    let locals: Vec<&str> =
        plan.scalars.iter().filter(|p| p.role == ScalarRole::Local).map(|p| p.name.as_str()).collect();
    if !locals.is_empty() {
        let _ = writeln!(o, "locals  {}", locals.join(", "));
    }
    if !plan.init.is_empty() {
        let _ = writeln!(o, "init");
        stmts(plan, &plan.init, 1, &mut o);
    }
    let _ = writeln!(o, "epoch");
    stmts(plan, &plan.epoch, 1, &mut o);
    let _ = writeln!(o, "finish");
    if plan.finish.is_empty() {
        let _ = writeln!(o, "  (nothing pending)");
    }
    stmts(plan, &plan.finish, 1, &mut o);
    let obj = &plan.objective;
    let weight = if obj.loss_weight == 1.0 { String::new() } else { format!("{}·", fmt_num(obj.loss_weight)) };
    if let Some(cost) = &obj.dictionary {
        let _ = writeln!(
            o,
            "report  F(D) = {weight}(1/m)·Σᵢ sparse_code(x[i], D) + Σ over the atoms d of ϕ(d), after finish"
        );
        let _ = writeln!(
            o,
            "  sparse_code(x, D) = min over α of ½‖x − Dα‖² + {}·‖α‖₁ + {}·½‖α‖²  # each signal coded exactly",
            fmt_num(cost.lambda1),
            fmt_num(cost.lambda2)
        );
    } else if obj.softmax {
        let _ = writeln!(o, "report  F(W) = {weight}(1/m)·Σᵢ ℓ + Σⱼ,c R(W[j, c]) + Σⱼ T(W[j, ·]), after finish");
        let _ = writeln!(o, "  ℓ = logsumexp(a) - a[y[i]]  # with a = Wᵀx[i], the k scores");
        let _ = writeln!(o, "  R = {}", expr(plan, &obj.penalty, 0));
        let _ = writeln!(o, "  T = {}", obj.vector.map_or("0".into(), |t| t.describe()));
    } else {
        let ridge = if obj.intercept.is_some() && obj.intercept_l2 > 0.0 { " + μ·½b²" } else { "" };
        let _ = writeln!(o, "report  F(w) = {weight}(1/m)·Σᵢ ℓ + Σⱼ R(w[j]){ridge}, after finish");
        let margin = match obj.intercept {
            Some(b) => format!("⟨x[i], w⟩ + {} ({})", plan.scalar(b).name, obj.intercept_words()),
            None => "⟨x[i], w⟩".into(),
        };
        let _ = writeln!(o, "  ℓ = {}  # with {} = {margin}", expr(plan, &obj.loss, 0), plan.scalar(obj.margin).name);
        let _ = writeln!(o, "  R = {}", expr(plan, &obj.penalty, 0));
        if let Some(t) = obj.vector {
            let _ = writeln!(o, "    + {} of the whole vector", t.describe());
        }
        if let Some(c) = &obj.composite {
            let omega = if c.group_blocks {
                "Σ_g ‖(B w)_g‖₂"
            } else if c.omega.name() == "l1" {
                "‖B w‖₁"
            } else {
                "‖B w‖₂"
            };
            let _ = writeln!(o, "    + {}·{omega}, B bound with the data", fmt_num(c.coef));
        }
    }
    match &plan.certificate {
        Some(c) => {
            let conj = match c.conjugate {
                LossConjugate::Logistic => "logistic",
                LossConjugate::Squared => "squared",
                LossConjugate::Hinge => "hinge",
                LossConjugate::SquaredHinge => "squared_hinge",
                LossConjugate::Softmax => "softmax",
                LossConjugate::Huber(_) => "huber",
                LossConjugate::Quantile(_) => "quantile",
                LossConjugate::EpsInsensitive(_) => "eps_insensitive",
                LossConjugate::SquaredEpsInsensitive(_) => "squared_eps_insensitive",
                LossConjugate::Poisson => "poisson",
            };
            let point = match (&obj.dual, obj.dual_only) {
                (Some(u), true) => format!("u[i] = {}, the dual iterate", expr(plan, u, 0)),
                _ if obj.softmax => "u[i] = softmax(a[i]) - e(y[i])".to_string(),
                _ => "u[i] = ℓ′(y[i], a[i])".to_string(),
            };
            let rows = if obj.softmax && c.vector.is_some() { " (T on each row)" } else { "" };
            // What the intercept asks of the dual point (certificate.rs): a free scalar b, its
            // balance at the b optimal for w; free per-class offsets, a balance in ℝᵏ; a
            // penalised b, a term of R* instead.
            let point = match (c.intercept, c.intercept_l2 > 0.0, obj.softmax) {
                (false, ..) => point,
                (true, true, _) => format!("{point}; b's ridge adds (Σᵢ (c/m)·u[i])²/(2μ) to R*"),
                (true, false, true) => format!("{point}, balanced to Σᵢ u[i] = 0 in ℝᵏ inside the simplex"),
                (true, false, false) => format!("{point} at the intercept optimal for w, balanced to Σᵢ u[i] = 0"),
            };
            let _ = writeln!(
                o,
                "check   duality gap (docs/algorithms.md §10): {point}, ℓ* of {conj}, R* of {}{rows}",
                penalty_text(c)
            );
        }
        None => match plan.uncertified {
            Uncertified::Progress => {
                _ = writeln!(o, "check   no closed-form dual here: relative change of F (not a certificate)")
            }
            Uncertified::Caps => {
                _ = writeln!(o, "check   none: F is not convex (no duality gap); the run ends at the epoch cap")
            }
            Uncertified::Reweighting { change, .. } => {
                _ = writeln!(
                    o,
                    "check   none: F is not convex (no duality gap); the run ends when a reweighting leaves {} ≤ tol",
                    plan.scalar(change).name
                )
            }
            Uncertified::Gradient { norm } => {
                _ = writeln!(
                    o,
                    "check   none: no penalty (no duality gap); the run ends when {} = ‖∇F‖/‖∇F(0)‖ ≤ tol",
                    plan.scalar(norm).name
                )
            }
        },
    }
    o
}

/// The step a run's checks may take besides the plan's own statements, for `optc plan` to
/// print after the plan: the Newton refinement of the certificate's dual point.
pub fn refinement(plan: &Plan) -> Option<String> {
    plan.refines_certificate().then(|| {
        "refine  at a check where F stalls short of tol: proximal Newton steps on a copy of w (its support and the \
         worst violators of optimality, while a dense Hessian holds them), and the dual point at the point they reach; a \
         column solver continues from it when F is lower there\n"
            .to_string()
    })
}

/// r(wⱼ) as the certificate sees it.
fn penalty_text(c: &Certificate) -> String {
    let mut parts = vec![];
    if c.l1 > 0.0 {
        parts.push(format!("{}·|w|", fmt_num(c.l1)));
    }
    if c.l2 > 0.0 {
        parts.push(format!("{}/2·w²", fmt_num(c.l2)));
    }
    if c.lo > f64::NEG_INFINITY || c.hi < f64::INFINITY {
        parts.push(format!("ι[{}, {}]", fmt_num(c.lo), fmt_num(c.hi)));
    }
    if let Some(t) = c.vector {
        parts.push(t.describe());
    }
    if let Some(g) = c.groups {
        parts.push(format!("{}·Σ_g ‖w_g‖₂ (disjoint groups of B)", fmt_num(g)));
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join(" + ")
    }
}

/// Four significant digits: enough to recognise a data-dependent value.
fn fmt_sig(v: f64) -> String {
    let s = format!("{v:.4e}");
    match s.parse::<f64>() {
        Ok(x) => fmt_num(x),
        Err(_) => s,
    }
}

fn stmts(plan: &Plan, body: &[Stmt], depth: usize, o: &mut String) {
    let pad = "  ".repeat(depth);
    for st in body {
        match st {
            Stmt::Set(id, e) => _ = writeln!(o, "{pad}{} = {}", plan.scalar(*id).name, expr(plan, e, 0)),
            Stmt::Store(v, i, e) => {
                _ = writeln!(o, "{pad}{}[{}] = {}", plan.vector(*v).name, idx(*i), expr(plan, e, 0))
            }
            Stmt::For(range, b) => {
                let head = match range {
                    Range::Perm(l) => format!("{} in perm({})", l.index().name(), l.name()),
                    Range::Upto(l) => format!("{} in 0..{}", l.index().name(), l.name()),
                    Range::RowNonZeros => "(j, v) in row(X, i)".into(),
                    Range::ColNonZeros => "(i, v) in col(Xc, j)".into(),
                };
                let _ = writeln!(o, "{pad}for {head}:");
                stmts(plan, b, depth + 1, o);
            }
            Stmt::If(cmp, l, r, b) => {
                let _ = writeln!(o, "{pad}if {} {} {}:", expr(plan, l, 1), cmp_str(*cmp), expr(plan, r, 1));
                stmts(plan, b, depth + 1, o);
            }
            Stmt::Repeat(cap, cmp, l, r, b) => {
                let (l, r) = (expr(plan, l, 1), expr(plan, r, 1));
                let _ = writeln!(o, "{pad}repeat at most {cap} until {l} {} {r}:", cmp_str(*cmp));
                stmts(plan, b, depth + 1, o);
            }
            Stmt::Guard(e, what) => _ = writeln!(o, "{pad}guard finite({})  # {what}", expr(plan, e, 0)),
            Stmt::StoreAt(v, r, c, e) => {
                _ = writeln!(o, "{pad}{}[{}, {}] = {}", plan.vector(*v).name, r.name(), c.name(), expr(plan, e, 0))
            }
            Stmt::Dictionary(call) => {
                let p = &call.settings.penalty;
                let mut phi = vec![];
                if p.l1 > 0.0 {
                    phi.push(format!("{}·‖d‖₁", fmt_num(p.l1)));
                }
                if p.l2 > 0.0 {
                    phi.push(format!("{}·½‖d‖²", fmt_num(p.l2)));
                }
                if let Some((omega, gamma)) = p.group {
                    phi.push(format!("{}·{}(B d)", fmt_num(gamma), omega.name()));
                }
                let phi = if phi.is_empty() { "0".to_string() } else { phi.join(" + ") };
                let ball = p.ball.map_or(String::new(), |r| format!(", then ‖d‖ ≤ {}", fmt_num(r)));
                let _ = writeln!(
                    o,
                    "{pad}dictionary({}[0..d, 0..k], B = {}, A = {}, n = {}, λ₁ = {}, λ₂ = {}, batch = {}, n₀ = {})  # per batch: codes, then A, B average {}, then each atom d ← prox of ϕ = {phi}{ball}",
                    plan.vector(call.atoms).name,
                    plan.vector(call.surrogate).name,
                    plan.vector(call.curvature).name,
                    plan.scalar(call.steps).name,
                    fmt_num(call.settings.lambda1),
                    fmt_num(call.settings.lambda2),
                    call.settings.batch,
                    fmt_num(call.settings.n0),
                    call.settings.majorizer.name()
                );
            }
            Stmt::Newton(call) => {
                let b = match (call.gradient_b, call.step_b) {
                    (Some(g), Some(st)) => format!(
                        ", b: {} from {}, ridge {}",
                        plan.scalar(st).name,
                        plan.scalar(g).name,
                        expr(plan, &call.ridge_b, 0)
                    ),
                    _ => String::new(),
                };
                let _ = writeln!(
                    o,
                    "{pad}{} = newton({}[0..d] ← −(XᵀDX + ρI)⁻¹{}, D = {}, ρ = {}{b})  # one dense factor where it costs less than {} steps of CG, else {} = 0",
                    plan.scalar(call.solved).name,
                    plan.vector(call.step).name,
                    plan.vector(call.gradient).name,
                    plan.vector(call.curvature).name,
                    expr(plan, &call.ridge, 0),
                    expr(plan, &call.cg_steps, 0),
                    plan.scalar(call.solved).name,
                );
            }
            Stmt::Alm(call) => {
                let b = match call.intercept {
                    Some(b) => format!(", {}, ρ_b = {}", plan.scalar(b).name, expr(plan, &call.ridge_b, 0)),
                    None => String::new(),
                };
                let r#box = match call.row_weights {
                    Some(v) => format!("C·{}", plan.vector(v).name),
                    None => "C".into(),
                };
                let _ = writeln!(
                    o,
                    "{pad}{} = alm({}{b}, {} ∈ [0, {box}], {}, C = {})  # the augmented Lagrangian's subproblem by Newton steps on I + σX̃_JᵀX̃_J, then {} ← clip({} + {}(1 − y·margin)), {} ← 2{}",
                    plan.scalar(call.estimate).name,
                    plan.vector(call.weights).name,
                    plan.vector(call.multipliers).name,
                    plan.scalar(call.sigma).name,
                    expr(plan, &call.cap, 0),
                    plan.vector(call.multipliers).name,
                    plan.vector(call.multipliers).name,
                    plan.scalar(call.sigma).name,
                    plan.scalar(call.sigma).name,
                    plan.scalar(call.sigma).name,
                );
            }
            Stmt::Picard(call) => {
                let _ = writeln!(
                    o,
                    "{pad}picard({}[0..d], dual {}[0..p], ω = {}, γ = {})  # x ← prox_{{γ·ω∘B}}(x): at most {} iterations, until ‖Δz‖ ≤ {}·max(1, ‖z‖)",
                    plan.vector(call.target).name,
                    plan.vector(call.dual).name,
                    call.omega.name(),
                    expr(plan, &call.gamma, 0),
                    call.cap,
                    fmt_num(call.tol)
                );
            }
            Stmt::Reduce(r) => {
                let names: Vec<&str> = r
                    .scalars
                    .iter()
                    .map(|&id| plan.scalar(id).name.as_str())
                    .chain(r.vectors.iter().map(|&v| plan.vector(v).name.as_str()))
                    .collect();
                let what = match r.step {
                    crate::plan::ReduceStep::Clear => "set to 0 on every rank but rank 0",
                    crate::plan::ReduceStep::Sum => "summed over the ranks",
                };
                let _ = writeln!(o, "{pad}ranks: {} {what}", names.join(", "));
            }
            Stmt::GroupShrink(target, gamma) => {
                let _ = writeln!(
                    o,
                    "{pad}group_shrink({}[0..d], γ = {})  # x_g ← max(0, 1 − γ/‖x_g‖)·x_g for each group g of B (disjoint)",
                    plan.vector(*target).name,
                    expr(plan, gamma, 0)
                );
            }
            Stmt::Call(routine, slice, arg) => {
                let decl = plan.vector(slice.buf);
                let part = match (slice.row, decl.cols) {
                    (Some(r), Some(c)) => format!("{}[{}, 0..{}]", decl.name, r.name(), c.name()),
                    (None, Some(c)) => format!("{}[0..{}, 0..{}]", decl.name, decl.len.name(), c.name()),
                    _ => format!("{}[0..{}]", decl.name, decl.len.name()),
                };
                let arg = if *routine == crate::runtime::Routine::ProjSimplex {
                    String::new()
                } else {
                    format!(", {}", expr(plan, arg, 0))
                };
                let _ = writeln!(o, "{pad}call {}({part}{arg})", routine.name());
            }
        }
    }
}

fn idx(i: Index) -> &'static str {
    i.name()
}

fn cmp_str(c: crate::symbolic::Cmp) -> &'static str {
    match c {
        crate::symbolic::Cmp::Gt => ">",
        crate::symbolic::Cmp::Lt => "<",
    }
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Bin(BinOp::Add | BinOp::Sub, ..) => 1,
        Expr::Bin(BinOp::Mul | BinOp::Div, ..) => 2,
        Expr::Neg(_) => 3,
        Expr::Const(v) if *v < 0.0 => 3,
        Expr::Select(..) => 0,
        _ => 5,
    }
}

pub fn expr(plan: &Plan, e: &Expr, outer: u8) -> String {
    let p = prec(e);
    let s = match e {
        Expr::Const(v) => fmt_num(*v),
        Expr::Scalar(id) => plan.scalar(*id).name.clone(),
        Expr::Load(v, i) => format!("{}[{}]", plan.vector(*v).name, idx(*i)),
        Expr::LoadAt(v, r, c) => format!("{}[{}, {}]", plan.vector(*v).name, r.name(), c.name()),
        Expr::Idx(i) => i.name().into(),
        Expr::Value => "v".into(),
        // −(x·y) prints as −x·y: IEEE negation commutes with the product exactly.
        Expr::Neg(a) => {
            format!("-{}", expr(plan, a, if matches!(**a, Expr::Bin(BinOp::Mul | BinOp::Div, ..)) { 2 } else { 3 }))
        }
        Expr::Bin(op, a, b) => {
            let (sym, lp, rp) = match op {
                BinOp::Add => ("+", 1, 2),
                BinOp::Sub => ("-", 1, 2),
                BinOp::Mul => ("*", 2, 3),
                BinOp::Div => ("/", 2, 3),
            };
            format!("{} {sym} {}", expr(plan, a, lp), expr(plan, b, rp))
        }
        Expr::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| expr(plan, a, 0)).collect();
            format!("{}({})", f.name(), args.join(", "))
        }
        Expr::CatchUp(c) => format!(
            "smm_catch_up({}, steps {}..{}, {}, {}, τ = {})",
            expr(plan, &c.value, 0),
            expr(plan, &c.from, 1),
            expr(plan, &c.to, 1),
            plan.vector(c.sums).name,
            plan.vector(c.logs).name,
            expr(plan, &c.tau, 0)
        ),
        Expr::Select(cmp, l, r, a, b) => format!(
            "if {} {} {} then {} else {}",
            expr(plan, l, 1),
            cmp_str(*cmp),
            expr(plan, r, 1),
            expr(plan, a, 1),
            expr(plan, b, 1)
        ),
    };
    if p < outer {
        format!("({s})")
    } else {
        s
    }
}
