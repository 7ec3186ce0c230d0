//! Names: ASCII aliases of Greek names, the declared parameters, and where a name occurs.

use crate::diagnostics::did_you_mean;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};

/// ASCII spellings of Greek names, accepted wherever a name is.
const ALIASES: [(&str, &str); 14] = [
    ("lambda", "λ"),
    ("gamma", "γ"),
    ("epsilon", "ε"),
    ("eps", "ε"),
    ("alpha", "α"),
    ("beta", "β"),
    ("mu", "μ"),
    ("eta", "η"),
    ("tau", "τ"),
    ("rho", "ρ"),
    ("sigma", "σ"),
    ("delta", "δ"),
    ("theta", "θ"),
    ("kappa", "κ"),
];

/// The Greek spelling of an ASCII alias, or the name itself.
pub fn canonical(name: &str) -> &str {
    ALIASES.iter().find(|(a, _)| *a == name).map_or(name, |(_, g)| g)
}

/// Every spelling of the declared names (Greek and ASCII), for "did you mean" hints.
pub fn spellings(declared: &[String]) -> Vec<(String, String)> {
    let mut out = vec![];
    for d in declared {
        out.push((d.clone(), d.clone()));
        for (ascii, greek) in ALIASES {
            if greek == d {
                out.push((ascii.to_string(), d.clone()));
            }
        }
    }
    out
}

/// The declared name closest to `name`, trying ASCII spellings of Greek names too.
pub fn suggest_param(name: &str, declared: &[String]) -> Option<String> {
    let sp = spellings(declared);
    let hit = did_you_mean(name, sp.iter().map(|(s, _)| s.as_str()))?;
    sp.iter().find(|(s, _)| s == hit).map(|(_, d)| d.clone())
}

/// The parameters a program declares (for validating `--set` before checking).
pub fn declared_params(program: &ast::Program) -> Vec<String> {
    program
        .items
        .iter()
        .filter_map(|i| match i {
            ast::Item::Param(p) => Some(p.name.name.clone()),
            _ => None,
        })
        .collect()
}

/// Finds the declared parameter that `name` (possibly an ASCII alias) refers to.
pub fn resolve_param<'a>(declared: &'a [String], name: &str) -> Option<&'a String> {
    declared.iter().find(|d| *d == name || canonical(d) == canonical(name))
}

/// The span of the first occurrence of a name inside an expression.
pub(super) fn find_name(e: &ast::Expr, name: &str) -> Option<Span> {
    match &e.kind {
        ExprKind::Name(n) if n == name => Some(e.span),
        ExprKind::Neg(a) | ExprKind::Expect(a) => find_name(a, name),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => find_name(a, name).or_else(|| find_name(b, name)),
        ExprKind::Call { args, .. } => args.iter().find_map(|a| find_name(&a.value, name)),
        ExprKind::Apply(m, _) | ExprKind::ApplyT(m, _) => find_name(m, name),
        _ => None,
    }
}
