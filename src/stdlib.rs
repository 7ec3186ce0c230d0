//! The library of losses, regularizers and sets, read from `stdlib/*.opt` (embedded in the
//! binary, so `optc` runs from any directory) and from declarations inside a model.

use crate::diagnostics::Problem;
use crate::source::{SourceFile, Span};
use crate::symbolic::{self, Func, Sym};
use crate::syntax::{self, ast};

pub const STDLIB_FILES: [(&str, &str); 2] = [
    ("stdlib/losses.opt", include_str!("../stdlib/losses.opt")),
    ("stdlib/regularizers.opt", include_str!("../stdlib/regularizers.opt")),
];

/// What kind of label a loss reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelKind {
    /// ±1 (0/1 and other two-valued labels are mapped).
    Labels,
    /// Any real number.
    Real,
    /// k distinct labels, mapped to 0..k.
    Classes,
}

impl LabelKind {
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "labels" => LabelKind::Labels,
            "real" => LabelKind::Real,
            "classes" => LabelKind::Classes,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            LabelKind::Labels => "labels",
            LabelKind::Real => "real",
            LabelKind::Classes => "classes",
        }
    }
}

#[derive(Clone, Debug)]
pub struct LossDef {
    pub name: String,
    /// The names the formula gives the label and the margin (`y`, `a`).
    pub label: String,
    pub margin: String,
    pub label_kind: LabelKind,
    /// Multiclass losses take a vector of scores; their formula is not scalar.
    pub multiclass: bool,
    /// ℓ(y, a), stabilised (None for multiclass).
    pub value: Option<Sym>,
    /// ℓ′(y, a) w.r.t. the margin, derived (None for multiclass).
    pub derivative: Option<Sym>,
    /// β ≥ ℓ″ when the loss is smooth.
    pub smooth: Option<f64>,
    /// G ≥ |ℓ′|.
    pub lipschitz: Option<f64>,
    pub formula_text: String,
    /// The names of the constants after the margin (`δ` in `huber(y, a, δ)`), which each call
    /// sets: `value`, `derivative`, `smooth` and `lipschitz` hold numbers only once
    /// [`LossDef::bind`] has set them.
    pub constants: Vec<String>,
    /// The values a call gave the constants, in their order (empty before [`LossDef::bind`]).
    pub bound: Vec<f64>,
    /// ℓ before its constants are set, stabilised: what [`LossDef::known`] compares.
    formula: Option<Sym>,
    /// `smooth` and `lipschitz` as written, when they use a constant.
    bounds: [Option<Sym>; 2],
}

/// The losses whose convex conjugate, and so whose dual, optc knows in closed form: what the
/// duality-gap certificate and the dual solvers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnownLoss {
    Logistic,
    Squared,
    Hinge,
    /// max(0, 1 − y·a)²: LIBLINEAR's L2-loss SVM.
    SquaredHinge,
    Softmax,
    /// Huber's loss of a − y with its constant δ > 0.
    Huber,
    /// The pinball loss at its level τ ∈ (0, 1).
    Quantile,
    /// max(0, |a − y| − ε), ε ≥ 0.
    EpsInsensitive,
    /// max(0, |a − y| − ε)², ε ≥ 0.
    SquaredEpsInsensitive,
    /// exp(a) − y·a on counts y ≥ 0.
    Poisson,
}

impl KnownLoss {
    /// A loss without a bound on ℓ″ that Newton's methods fit, with their line searches: the
    /// solvers that need only ℓ″ (tron, SCD's Newton-type steps) take it as a smooth one.
    pub fn newton_only(self) -> bool {
        self == KnownLoss::Poisson
    }

    /// Where the constants a call gives this loss are what it means, or the first that is not
    /// (its index) and what it must be: δ > 0, τ in (0, 1), ε ≥ 0.
    pub fn constants_hold(self, values: &[f64]) -> Result<(), (usize, &'static str)> {
        let first = values.first().copied().unwrap_or(f64::NAN);
        let (ok, must) = match self {
            KnownLoss::Huber => (first > 0.0, "a number > 0"),
            KnownLoss::Quantile => (first > 0.0 && first < 1.0, "a level strictly between 0 and 1"),
            KnownLoss::EpsInsensitive | KnownLoss::SquaredEpsInsensitive => (first >= 0.0, "a half-width ≥ 0"),
            _ => return Ok(()),
        };
        if ok && first.is_finite() {
            Ok(())
        } else {
            Err((0, must))
        }
    }
}

impl LossDef {
    /// Which stdlib loss this is: by name, or, for a loss the model declares itself, by its
    /// formula, equal to a stdlib loss's once its label and margin take the stdlib's names. So
    /// the squared hinge a user writes out (examples/l2loss_svm.opt) gets the certificate and
    /// the dual solver of `squared_hinge`; a formula merely close to one gets neither.
    pub fn known(&self) -> Option<KnownLoss> {
        let by_name = |name: &str| match name {
            "logistic" => Some(KnownLoss::Logistic),
            "squared" => Some(KnownLoss::Squared),
            "hinge" => Some(KnownLoss::Hinge),
            "squared_hinge" => Some(KnownLoss::SquaredHinge),
            "softmax" => Some(KnownLoss::Softmax),
            "huber" => Some(KnownLoss::Huber),
            "quantile" => Some(KnownLoss::Quantile),
            "eps_insensitive" => Some(KnownLoss::EpsInsensitive),
            "squared_eps_insensitive" => Some(KnownLoss::SquaredEpsInsensitive),
            "poisson" => Some(KnownLoss::Poisson),
            _ => None,
        };
        let standard = standard_losses();
        if standard.iter().any(|l| l.name == self.name) {
            return by_name(&self.name);
        }
        // The same formula once the names are the stdlib loss's: its constants too, in order.
        // A call's values count as well: `c·½(a − y)²` at c = 1 is `squared`.
        let same = |mine: &Sym, constants: &[String], l: &LossDef, theirs: &Option<Sym>| {
            let renamed = mine.substitute(&|n| {
                let at = |mine: &str, theirs: &str| (n == mine).then(|| Sym::Var(theirs.to_string()));
                at(&self.label, &l.label)
                    .or_else(|| at(&self.margin, &l.margin))
                    .or_else(|| constants.iter().zip(&l.constants).find_map(|(mine, theirs)| at(mine, theirs)))
            });
            theirs.as_ref().is_some_and(|v| symbolic::simplify(&renamed) == *v)
        };
        standard.iter().find_map(|l| {
            let same_kind = l.label_kind == self.label_kind && l.multiclass == self.multiclass;
            let by_formula = l.constants.len() == self.constants.len()
                && self.formula.as_ref().is_some_and(|f| same(f, &self.constants, l, &l.formula));
            let by_value = !self.bound.is_empty()
                && l.constants.is_empty()
                && self.value.as_ref().is_some_and(|v| same(v, &[], l, &l.value));
            (same_kind && (by_formula || by_value)).then(|| by_name(&l.name)).flatten()
        })
    }

    /// This loss with its constants set to `values`, one a constant in their order: the
    /// formula, ℓ′ and the declared β and G then hold numbers. A loss without constants comes
    /// back as it is. Errs with the constant's name and why when a bound it declares is not a
    /// number ≥ 0 at these values (`lipschitz δ` at δ = −1).
    pub fn bind(&self, values: &[f64]) -> Result<LossDef, (String, String)> {
        debug_assert_eq!(values.len(), self.constants.len(), "checked by the caller");
        if self.constants.is_empty() {
            return Ok(self.clone());
        }
        let set =
            |f: &Sym| f.substitute(&|n| self.constants.iter().position(|c| c == n).map(|k| Sym::Const(values[k])));
        let mut bound = self.clone();
        bound.value = self.formula.as_ref().map(|f| symbolic::stabilize(&symbolic::simplify(&set(f))));
        bound.derivative = self.derivative.as_ref().map(|d| symbolic::simplify(&set(d)));
        for (k, (expr, slot)) in self.bounds.iter().zip([&mut bound.smooth, &mut bound.lipschitz]).enumerate() {
            let Some(expr) = expr else { continue };
            let v = symbolic::simplify(&set(expr)).as_const().unwrap_or(f64::NAN);
            if !(v >= 0.0 && v.is_finite()) {
                let attr = ["smooth", "lipschitz"][k];
                let mut names = vec![];
                expr.vars(&mut names);
                let name = names.first().cloned().unwrap_or_default();
                return Err((name, format!("its `{attr}` bound is {v} there, not a number ≥ 0")));
            }
            *slot = Some(v);
        }
        bound.bound = values.to_vec();
        Ok(bound)
    }
}

/// The stdlib's losses, parsed once.
fn standard_losses() -> &'static [LossDef] {
    static LOSSES: std::sync::OnceLock<Vec<LossDef>> = std::sync::OnceLock::new();
    LOSSES.get_or_init(|| Library::standard().losses)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Separability {
    Coordinate,
    Row,
    Group,
    None,
}

impl Separability {
    pub fn describe(self) -> &'static str {
        match self {
            Separability::Coordinate => "separable per coordinate",
            Separability::Row => "separable per row",
            Separability::Group => "separable per group",
            Separability::None => "not separable",
        }
    }
}

/// The proximity operators optc knows how to apply (docs/algorithms.md §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxKind {
    SoftThreshold,
    Scale,
    Elastic,
    ShrinkL2,
    ProxLinf,
    ShrinkL2Rows,
    ProxLinfRows,
    ShrinkL2Groups,
    ProxLinfGroups,
    Svt,
    ReweightedL1,
    Clamp,
    ProjL1Ball,
    ProjL2Ball,
    ProjSimplex,
}

const PROX_NAMES: [(&str, ProxKind, &str); 15] = [
    ("soft_threshold", ProxKind::SoftThreshold, "soft-threshold soft(v, τ)"),
    ("scale", ProxKind::Scale, "scaling v/(1 + τ)"),
    ("elastic", ProxKind::Elastic, "soft(v, τ)/(1 + τα)"),
    ("shrink_l2", ProxKind::ShrinkL2, "ℓ2 shrink max(0, 1 − τ/‖v‖)·v"),
    ("prox_linf", ProxKind::ProxLinf, "ℓ∞ prox v − Π_{‖·‖₁≤τ}(v)"),
    ("shrink_l2_rows", ProxKind::ShrinkL2Rows, "ℓ2 shrink of each row"),
    ("prox_linf_rows", ProxKind::ProxLinfRows, "ℓ∞ prox of each row"),
    ("shrink_l2_groups", ProxKind::ShrinkL2Groups, "ℓ2 shrink of each group"),
    ("prox_linf_groups", ProxKind::ProxLinfGroups, "ℓ∞ prox over the groups (Picard's fixed point)"),
    ("svt", ProxKind::Svt, "singular-value soft-threshold (SVD)"),
    ("reweighted_l1", ProxKind::ReweightedL1, "weighted soft-threshold of the DC surrogate"),
    ("clamp", ProxKind::Clamp, "clamp to the box"),
    ("proj_l1ball", ProxKind::ProjL1Ball, "projection on the ℓ1 ball (sort-based)"),
    ("proj_l2ball", ProxKind::ProjL2Ball, "v·min(1, r/‖v‖)"),
    ("proj_simplex", ProxKind::ProjSimplex, "projection on the simplex"),
];

impl ProxKind {
    pub fn describe(self) -> &'static str {
        PROX_NAMES.iter().find(|p| p.1 == self).map_or("?", |p| p.2)
    }
    pub fn name(self) -> &'static str {
        PROX_NAMES.iter().find(|p| p.1 == self).map_or("?", |p| p.0)
    }
}

/// The type of a regularizer or set parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// The variable (or `B w`).
    Variable,
    /// A group structure from `groups(load(...))`.
    Groups,
    /// A number.
    Scalar,
}

#[derive(Clone, Debug)]
pub struct RegDef {
    pub name: String,
    pub params: Vec<(String, ParamType)>,
    pub convex: bool,
    pub separability: Separability,
    pub prox: ProxKind,
    pub needs_matrix: bool,
    /// f in `sum(f(w))` for coordinate-wise formulas, in terms of the variable and the scalars.
    pub per_coordinate: Option<Sym>,
    pub formula_text: String,
}

#[derive(Clone, Debug)]
pub struct SetDef {
    pub name: String,
    pub params: Vec<String>,
    pub separability: Separability,
    pub prox: ProxKind,
}

#[derive(Clone, Debug, Default)]
pub struct Library {
    pub losses: Vec<LossDef>,
    pub regularizers: Vec<RegDef>,
    pub sets: Vec<SetDef>,
}

impl Library {
    /// The embedded stdlib. It is part of the binary, so a problem in it is a bug in optc.
    /// The standard library: its files parsed and declared once a process, then copied. Parsing
    /// them was most of compiling a model (a fit on housing, 506 × 13, compiles one each time).
    pub fn standard() -> Library {
        static STANDARD: std::sync::OnceLock<Library> = std::sync::OnceLock::new();
        STANDARD.get_or_init(Library::parse_standard).clone()
    }

    fn parse_standard() -> Library {
        let mut lib = Library::default();
        for (name, text) in STDLIB_FILES {
            let file = SourceFile::new(name, text);
            let program =
                syntax::parse(&file).unwrap_or_else(|p| panic!("stdlib {name} does not parse: {}", p.message));
            let problems = lib.declare(&program);
            assert!(problems.is_empty(), "stdlib {name}: {:?}", problems);
        }
        lib
    }

    pub fn loss(&self, name: &str) -> Option<&LossDef> {
        self.losses.iter().find(|l| l.name == name)
    }
    pub fn regularizer(&self, name: &str) -> Option<&RegDef> {
        self.regularizers.iter().find(|l| l.name == name)
    }
    pub fn set(&self, name: &str) -> Option<&SetDef> {
        self.sets.iter().find(|l| l.name == name)
    }

    fn knows(&self, name: &str) -> bool {
        self.loss(name).is_some() || self.regularizer(name).is_some() || self.set(name).is_some()
    }

    /// Adds the declarations of `program`; returns the problems found in them.
    pub fn declare(&mut self, program: &ast::Program) -> Vec<Problem> {
        let mut problems = vec![];
        for item in &program.items {
            let result = match item {
                ast::Item::Loss(d) => self.check_new(&d.name).and_then(|_| loss_def(d)).map(|l| self.losses.push(l)),
                ast::Item::Regularizer(d) => {
                    self.check_new(&d.name).and_then(|_| reg_def(d)).map(|r| self.regularizers.push(r))
                }
                ast::Item::Set(d) => self.check_new(&d.name).and_then(|_| set_def(d)).map(|s| self.sets.push(s)),
                _ => Ok(()),
            };
            if let Err(p) = result {
                problems.push(p);
            }
        }
        problems
    }

    fn check_new(&self, name: &ast::Ident) -> Result<(), Problem> {
        if self.knows(&name.name) {
            return Err(Problem::error(
                "optc::redefined",
                format!("`{}` is already defined by the stdlib", name.name),
                name.span,
                "redefined here",
            )
            .with_help("choose another name for your declaration"));
        }
        Ok(())
    }
}

fn attr<'a>(attrs: &'a [ast::Attr], name: &str) -> Option<&'a ast::Attr> {
    attrs.iter().find(|a| a.name.name == name)
}

/// An attribute's value, simplified: a number, or a formula of `constants` only.
fn attr_formula(attrs: &[ast::Attr], name: &str, constants: &[String]) -> Result<Option<Sym>, Problem> {
    let Some(a) = attr(attrs, name) else {
        return Ok(None);
    };
    let Some(v) = &a.value else {
        return Err(Problem::error("optc::stdlib", format!("`{name}` needs a value"), a.name.span, "value missing"));
    };
    let s = symbolic::simplify(&to_sym(v)?);
    let mut names = vec![];
    s.vars(&mut names);
    if names.iter().all(|n| constants.contains(n)) && (s.as_const().is_some() || !names.is_empty()) {
        return Ok(Some(s));
    }
    let help = if constants.is_empty() {
        "write a number".to_string()
    } else {
        format!("write a number, or a formula of the loss's constants: {}", constants.join(", "))
    };
    Err(Problem::error("optc::stdlib", format!("`{name}` must be a constant"), v.span, "not a constant")
        .with_help(help))
}

fn attr_word<'a>(attrs: &'a [ast::Attr], name: &str) -> Option<(&'a str, Span)> {
    let a = attr(attrs, name)?;
    let v = a.value.as_ref()?;
    v.name().map(|n| (n, v.span))
}

fn loss_def(d: &ast::FormulaDecl) -> Result<LossDef, Problem> {
    if d.params.len() < 2 {
        return Err(Problem::error(
            "optc::stdlib",
            "a loss takes the label and the margin, then any constants",
            d.name.span,
            "declared here",
        )
        .with_help("write `loss NAME(y: labels, a) = ...`, or `loss NAME(y: labels, a, h) = ...` with a constant h"));
    }
    let label = &d.params[0];
    let margin = &d.params[1];
    let constants: Vec<String> = d.params[2..].iter().map(|p| p.name.name.clone()).collect();
    if let Some(p) = d.params[2..].iter().find(|p| p.ty.is_some()) {
        return Err(Problem::error("optc::stdlib", "a loss's constant has no type", p.name.span, "typed here")
            .with_help(format!("write `{}` alone: a constant is a number the call gives", p.name.name)));
    }
    let mut names: Vec<&str> = d.params.iter().map(|p| p.name.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(Problem::error(
            "optc::stdlib",
            format!("`{}` names two parameters", w[0]),
            d.name.span,
            "declared here",
        )
        .with_help("give each parameter its own name"));
    }
    let label_kind = match &label.ty {
        None => LabelKind::Real,
        Some(t) => LabelKind::from_name(&t.name).ok_or_else(|| {
            Problem::error("optc::stdlib", format!("unknown label type `{}`", t.name), t.span, "here")
                .with_help("label types are `labels`, `real` and `classes`")
        })?,
    };
    let multiclass = margin.ty.as_ref().is_some_and(|t| t.name == "scores");
    let (value, derivative) = if multiclass {
        (None, None)
    } else {
        let f = to_sym(&d.body)?;
        let allowed: Vec<&str> = d.params.iter().map(|p| p.name.name.as_str()).collect();
        check_free_names(&f, &allowed, &d.body)?;
        let value = symbolic::stabilize(&symbolic::simplify(&f));
        let derivative = symbolic::derivative(&f, &margin.name.name);
        (Some(value), Some(derivative))
    };
    if multiclass && !constants.is_empty() {
        return Err(Problem::error(
            "optc::stdlib",
            "a multiclass loss takes no constants",
            d.name.span,
            "declared here",
        )
        .with_help("declare it with the label and the scores only"));
    }
    let bounds = [attr_formula(&d.attrs, "smooth", &constants)?, attr_formula(&d.attrs, "lipschitz", &constants)?];
    let number = |b: &Option<Sym>| b.as_ref().and_then(Sym::as_const);
    Ok(LossDef {
        name: d.name.name.clone(),
        label: label.name.name.clone(),
        margin: margin.name.name.clone(),
        label_kind,
        multiclass,
        formula: value.clone(),
        value,
        derivative,
        smooth: number(&bounds[0]),
        lipschitz: number(&bounds[1]),
        formula_text: expr_text(&d.body),
        constants,
        bound: vec![],
        bounds,
    })
}

/// A formula may only use its declared parameters.
fn check_free_names(f: &Sym, allowed: &[&str], at: &ast::Expr) -> Result<(), Problem> {
    let mut names = vec![];
    f.vars(&mut names);
    match names.iter().find(|n| !allowed.contains(&n.as_str())) {
        None => Ok(()),
        Some(n) => Err(Problem::error(
            "optc::formula",
            format!("unknown name `{n}` in the formula"),
            at.span,
            "in this formula",
        )
        .with_help(format!("a formula may use only its parameters: {}", allowed.join(", ")))),
    }
}

fn separability(attrs: &[ast::Attr], at: Span) -> Result<Separability, Problem> {
    match attr_word(attrs, "separable") {
        None => Ok(Separability::None),
        Some(("coordinate", _)) => Ok(Separability::Coordinate),
        Some(("row", _)) => Ok(Separability::Row),
        Some(("group", _)) => Ok(Separability::Group),
        Some(("none", _)) => Ok(Separability::None),
        Some((w, sp)) => Err(Problem::error("optc::stdlib", format!("unknown separability `{w}`"), sp, "here")
            .with_help("use `coordinate`, `row`, `group` or `none`")),
    }
    .map_err(|p: Problem| if p.labels.is_empty() { p.with_label(at, "") } else { p })
}

fn prox(attrs: &[ast::Attr], at: Span) -> Result<ProxKind, Problem> {
    let Some((w, sp)) = attr_word(attrs, "prox") else {
        return Err(Problem::error("optc::stdlib", "a regularizer must name its prox", at, "no `prox` attribute")
            .with_help(format!("known proxes: {}", PROX_NAMES.map(|p| p.0).join(", "))));
    };
    PROX_NAMES.iter().find(|p| p.0 == w).map(|p| p.1).ok_or_else(|| {
        let p = Problem::error("optc::stdlib", format!("unknown prox `{w}`"), sp, "not a prox optc implements");
        p.suggest(w, PROX_NAMES.iter().map(|p| p.0), format!("known proxes: {}", PROX_NAMES.map(|p| p.0).join(", ")))
    })
}

fn reg_def(d: &ast::FormulaDecl) -> Result<RegDef, Problem> {
    let mut params = vec![];
    for (k, p) in d.params.iter().enumerate() {
        let ty = match p.ty.as_ref().map(|t| t.name.as_str()) {
            Some("groups") => ParamType::Groups,
            _ if k == 0 || (k == 1 && matches!(params.first(), Some((_, ParamType::Groups)))) => ParamType::Variable,
            _ => ParamType::Scalar,
        };
        params.push((p.name.name.clone(), ty));
    }
    // `sum(f(w))` with f a scalar formula of the variable and the scalar parameters.
    let per_coordinate = match &d.body.kind {
        ast::ExprKind::Call { func, args } if func.name == "sum" && args.len() == 1 => to_sym(&args[0].value).ok(),
        _ => None,
    };
    Ok(RegDef {
        name: d.name.name.clone(),
        params,
        convex: attr(&d.attrs, "nonconvex").is_none(),
        separability: separability(&d.attrs, d.name.span)?,
        prox: prox(&d.attrs, d.name.span)?,
        needs_matrix: attr_word(&d.attrs, "shape").is_some_and(|(w, _)| w == "mat"),
        per_coordinate,
        formula_text: expr_text(&d.body),
    })
}

fn set_def(d: &ast::SetDecl) -> Result<SetDef, Problem> {
    Ok(SetDef {
        name: d.name.name.clone(),
        params: d.params.iter().map(|p| p.name.name.clone()).collect(),
        separability: separability(&d.attrs, d.name.span)?,
        prox: prox(&d.attrs, d.name.span)?,
    })
}

/// A scalar formula from the AST (numbers, names, arithmetic, known functions).
pub fn to_sym(e: &ast::Expr) -> Result<Sym, Problem> {
    use ast::{BinOp, ExprKind};
    let bx = Box::new;
    Ok(match &e.kind {
        ExprKind::Number(v) => Sym::Const(*v),
        ExprKind::Name(n) => Sym::Var(n.clone()),
        ExprKind::Neg(a) => Sym::Neg(bx(to_sym(a)?)),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (bx(to_sym(a)?), bx(to_sym(b)?));
            match op {
                BinOp::Add => Sym::Add(a, b),
                BinOp::Sub => Sym::Sub(a, b),
                BinOp::Mul => Sym::Mul(a, b),
                BinOp::Div => Sym::Div(a, b),
                BinOp::Pow => Sym::Pow(a, b),
            }
        }
        ExprKind::Call { func, args } => {
            let f = Func::from_name(&func.name).ok_or_else(|| {
                let p = Problem::error(
                    "optc::formula",
                    format!("unknown function `{}` in a scalar formula", func.name),
                    func.span,
                    "unknown function",
                );
                let known = ["exp", "log", "log1p", "sqrt", "abs", "sign", "max", "min", "sigmoid", "softplus"];
                p.suggest(&func.name, known, format!("scalar functions are {}", known.join(", ")))
            })?;
            if args.len() != f.arity() {
                return Err(Problem::error(
                    "optc::formula",
                    format!("`{}` takes {} argument(s), found {}", func.name, f.arity(), args.len()),
                    e.span,
                    "here",
                ));
            }
            Sym::Call(f, args.iter().map(|a| to_sym(&a.value)).collect::<Result<_, _>>()?)
        }
        _ => {
            return Err(Problem::error(
                "optc::formula",
                "this is not a scalar formula",
                e.span,
                "only numbers, names, + - · / ^ and scalar functions are allowed here",
            ))
        }
    })
}

/// The expression as a person would write it (for reports).
pub fn expr_text(e: &ast::Expr) -> String {
    use ast::{BinOp, ExprKind};
    match &e.kind {
        ExprKind::Number(v) => symbolic::fmt_num(*v),
        ExprKind::Str(s) => format!("\"{s}\""),
        ExprKind::Name(n) => n.clone(),
        ExprKind::Neg(a) => format!("-{}", wrap(a)),
        ExprKind::Binary(op, a, b) => {
            let o = match op {
                BinOp::Add => " + ",
                BinOp::Sub => " - ",
                BinOp::Mul => "·",
                BinOp::Div => "/",
                BinOp::Pow => "^",
            };
            match op {
                BinOp::Add | BinOp::Sub => format!("{}{o}{}", expr_text(a), expr_text(b)),
                _ => format!("{}{o}{}", wrap(a), wrap(b)),
            }
        }
        ExprKind::Call { func, args } => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match &a.name {
                    Some(n) => format!("{} = {}", n.name, expr_text(&a.value)),
                    None => expr_text(&a.value),
                })
                .collect();
            format!("{}({})", func.name, args.join(", "))
        }
        ExprKind::Expect(a) => format!("E[{}]", expr_text(a)),
        ExprKind::Inner(a, b) => format!("⟨{}, {}⟩", a.name, b.name),
        ExprKind::Apply(m, v) => format!("{} {}", expr_text(m), v.name),
        ExprKind::ApplyT(m, v) => format!("{} {}ᵀ", expr_text(m), v.name),
        ExprKind::Index(a, i) => format!("{}[{}]", expr_text(a), expr_text(i)),
    }
}

fn wrap(e: &ast::Expr) -> String {
    match &e.kind {
        ast::ExprKind::Binary(ast::BinOp::Add | ast::BinOp::Sub, ..) => {
            format!("({})", expr_text(e))
        }
        _ => expr_text(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdlib_loads() {
        let lib = Library::standard();
        assert_eq!(lib.losses.len(), 10);
        assert!(lib.loss("huber").is_some_and(|l| l.constants == ["δ"]));
        assert!(lib.regularizer("l1inf").is_some_and(|r| r.needs_matrix));
        assert!(lib.regularizer("logeps").is_some_and(|r| !r.convex));
        assert!(lib.loss("softmax").is_some_and(|l| l.multiclass));
    }

    /// The declared β and G must bound the derived derivatives: ℓ″ ≤ β (by finite differences of
    /// ℓ′) and |ℓ′| ≤ G, over margins from −50 to 50, for both labels, and for a loss with
    /// constants at a few values of them.
    #[test]
    fn declared_constants_bound_the_derived_derivatives() {
        let lib = Library::standard();
        let bound = lib.losses.iter().filter(|l| !l.multiclass).flat_map(|l| {
            let values: &[f64] = if l.constants.is_empty() { &[f64::NAN] } else { &[0.05, 0.7, 3.0] };
            values.iter().map(|&v| l.bind(&vec![v; l.constants.len()]).expect("binds")).collect::<Vec<_>>()
        });
        for loss in bound {
            let d = loss.derivative.as_ref().expect("scalar loss has a derivative");
            let ys: &[f64] = if loss.label_kind == LabelKind::Labels { &[-1.0, 1.0] } else { &[-2.0, 0.0, 3.0] };
            for &y in ys {
                let at = |a: f64| d.eval(&|n| Some(if n == loss.label { y } else { a }));
                let mut a = -50.0;
                while a <= 50.0 {
                    let g = at(a);
                    if let Some(gmax) = loss.lipschitz {
                        assert!(g.abs() <= gmax + 1e-12, "{}: |ℓ′({y}, {a})| = {g} > {gmax}", loss.name);
                    }
                    if let Some(beta) = loss.smooth {
                        let h = 1e-4;
                        let curv = (at(a + h) - at(a - h)) / (2.0 * h);
                        assert!(curv <= beta + 1e-6, "{}: ℓ″({y}, {a}) = {curv} > β = {beta}", loss.name);
                    }
                    a += 0.37;
                }
            }
        }
    }

    #[test]
    fn derived_derivatives_match_the_textbook_ones() {
        let lib = Library::standard();
        let eval = |name: &str, y: f64, a: f64| {
            let l = lib.loss(name).expect("loss exists");
            l.derivative.as_ref().expect("derivative").eval(&|n| Some(if n == l.label { y } else { a }))
        };
        for &(y, a) in &[(1.0f64, 0.3f64), (-1.0, 2.0), (1.0, -1e3), (-1.0, 1e300), (1.0, -1e300)] {
            let want = -y / (1.0 + (y * a).exp());
            let got = eval("logistic", y, a);
            assert!((got - want).abs() <= 1e-15 + 1e-12 * want.abs(), "logistic ℓ′({y},{a}) = {got}, want {want}");
            let hinge = if y * a < 1.0 { -y } else { 0.0 };
            assert_eq!(eval("hinge", y, a), hinge, "hinge ℓ′({y},{a})");
        }
        assert_eq!(eval("hinge", 1.0, 1.0), 0.0, "hinge at the kink takes 0, as docs/algorithms.md §1");
        assert_eq!(eval("squared", 2.5, 4.0), 1.5);
        // Huber's at δ = 0.7: the residual clamped to [−δ, δ].
        let huber = lib.loss("huber").expect("huber").bind(&[0.7]).expect("binds");
        let slope = |y: f64, a: f64| {
            huber.derivative.as_ref().expect("ℓ′").eval(&|n| Some(if n == huber.label { y } else { a }))
        };
        for &(y, a) in &[(1.0f64, 0.3f64), (-2.0, 5.0), (3.0, -1e3), (0.5, 1.2), (0.0, 0.0)] {
            assert_eq!(slope(y, a), (a - y).clamp(-0.7, 0.7), "huber ℓ′({y},{a})");
        }
        for &(y, a) in &[(1.0f64, 0.3f64), (-1.0, 2.0), (1.0, 1.0), (-1.0, -0.25), (1.0, -1e3)] {
            let want = -2.0 * y * (1.0 - y * a).max(0.0);
            assert_eq!(eval("squared_hinge", y, a), want, "squared hinge ℓ′({y},{a})");
        }
    }

    /// A loss a model declares is known by its formula, whatever it names its label and margin;
    /// a different formula, or the same one over other labels, is not.
    #[test]
    fn declared_losses_are_known_by_their_formula() {
        let declared = |text: &str| {
            let file = SourceFile::new("m.opt", text);
            let program = syntax::parse(&file).expect("parses");
            let mut lib = Library::default();
            assert!(lib.declare(&program).is_empty());
            lib.losses.pop().expect("one loss").known()
        };
        assert_eq!(declared("loss sqhinge(y: labels, a) = max(0, 1 - y·a)²\n"), Some(KnownLoss::SquaredHinge));
        assert_eq!(declared("loss sq(t: labels, z) = max(0, 1 - t·z)^2\n"), Some(KnownLoss::SquaredHinge));
        assert_eq!(declared("loss lg(y: labels, a) = log(1 + exp(-y·a))\n"), Some(KnownLoss::Logistic));
        assert_eq!(declared("loss cubic(y: labels, a) = max(0, 1 - y·a)^3\n"), None);
        assert_eq!(declared("loss half(y: labels, a) = ½·max(0, 1 - y·a)²\n"), None);
        assert_eq!(declared("loss sqr(y: real, a) = max(0, 1 - y·a)²\n"), None);
        let declared_with = |text: &str, values: &[f64]| {
            let program = syntax::parse(&SourceFile::new("m.opt", text)).expect("parses");
            let mut lib = Library::default();
            assert!(lib.declare(&program).is_empty());
            lib.losses.pop().expect("one loss").bind(values).expect("binds").known()
        };
        // With constants: known by the formula with the constants renamed, or by the value a
        // call gives it.
        assert_eq!(declared_with("loss sc(y: real, a, c) = c·(a - y)²\n", &[0.5]), Some(KnownLoss::Squared));
        assert_eq!(declared_with("loss sc(y: real, a, c) = c·(a - y)²\n", &[2.0]), None);
        assert_eq!(declared("loss sc(y: real, a, c) = c·(a - y)²\n"), None);
        let lib = Library::standard();
        for (name, kind) in [("hinge", KnownLoss::Hinge), ("squared_hinge", KnownLoss::SquaredHinge)] {
            assert_eq!(lib.loss(name).and_then(LossDef::known), Some(kind));
        }
    }
}
