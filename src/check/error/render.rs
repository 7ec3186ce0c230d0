//! The wording of every check error: the one place that turns a [`CheckError`] into the
//! [`Problem`] the user reads. The snapshots under `tests/snapshots/` pin this text.

use super::{CheckError, Column, Names};
use crate::check::suggest_param;
use crate::diagnostics::Problem;
use crate::stdlib::LabelKind;

const SETS: &str = "sets are Box(lo, hi), NonNeg, L1Ball(r), L2Ball(r), Simplex";
const NON_NEGATIVE: &str = "optc minimizes a sum of non-negative multiples of losses and regularizers";

pub(super) fn render(e: &CheckError) -> Problem {
    use CheckError::*;
    match e {
        Declaration(p) | Formula(p) => p.clone(),

        SecondVariable { span, first } => {
            Problem::error("optc::var", "a model has one variable", *span, "second variable")
                .with_label(*first, "first declared here")
                .with_help("stack the unknowns into one `vec` or `mat`")
        }
        SecondObjective { span, first } => {
            Problem::error("optc::objective", "a model has one `minimize`", *span, "second objective")
                .with_label(*first, "first objective")
        }
        NoObjective { after } => Problem::error(
            "optc::objective",
            "the model has no objective",
            *after,
            "expected `minimize ...` after this",
        )
        .with_help("add a line `minimize E[loss(y, <x, w>)] + λ·reg(w)`"),
        NoFeatures { objective } => {
            Problem::error("optc::data", "the model declares no features", *objective, "uses data")
                .with_help("add `data x: sparse, y: labels` before the objective")
        }
        NoLabels { objective } => {
            Problem::error("optc::data", "the model declares no labels", *objective, "uses labels")
                .with_help("add `y: labels` (or `classes`, `real`) to the `data` line")
        }
        DictionaryModel { span } => Problem::error(
            "optc::dictionary",
            "this command does not take a dictionary-learning model (`sparse_code`) yet",
            *span,
            "a dictionary-learning objective",
        )
        .with_help("`optc check` describes it, `optc plan` prints its plan and `optc run` trains it"),
        DictionaryShape { span, var, features } => Problem::error(
            "optc::dictionary",
            format!("a dictionary is a matrix with one atom of dim({features}) per column"),
            *span,
            "not mat[dim(x), K]",
        )
        .with_help(format!("declare `var {var}: mat[dim({features}), 64]` for 64 atoms")),
        SparseCodeArguments { span, features, var } => Problem::error(
            "optc::dictionary",
            "`sparse_code` takes the signal, the dictionary and two weights ≥ 0",
            *span,
            "not sparse_code(x, D, λ₁, λ₂)",
        )
        .with_help(format!(
            "write `E[sparse_code({features}, {var}, λ₁, λ₂)]`: min over α of ½‖{features} − {var}α‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖²"
        )),
        NotAColumnPenalty { name, span, var } => Problem::error(
            "optc::dictionary",
            format!("`{name}` is not a penalty on the atoms of a dictionary"),
            *span,
            "not applied atom by atom",
        )
        .with_help(format!(
            "a dictionary takes l1({var}), l2sq({var}), group_l2(G, {var}) and group_linf(G, {var}), each summed over the columns of {var}"
        )),
        DictionaryConstraint { span, var } => Problem::error(
            "optc::dictionary",
            "a dictionary's only constraint is a ball for every atom",
            *span,
            "not columns(D) ∈ L2Ball(r)",
        )
        .with_help(format!("write `st columns({var}) ∈ L2Ball(1)`, once")),
        UnboundedAtoms { span, var } => Problem::error(
            "optc::dictionary",
            "nothing bounds the atoms: scaling them up drives every code, and the cost, toward 0",
            *span,
            "no ball and no l2sq",
        )
        .with_help(format!("add `st columns({var}) ∈ L2Ball(1)` (SPAMS's and scikit-learn's constraint) or a `γ·l2sq({var})` term")),
        NoVariable { objective } => {
            Problem::error("optc::var", "the model declares no variable", *objective, "minimizes over nothing")
                .with_help("add `var w: vec[dim(x)]` before the objective")
        }

        ColumnTwice { column, span, first } => {
            let what = match column {
                Column::Features => "features",
                Column::Labels => "labels",
                Column::Weights => "weights",
            };
            Problem::error("optc::data", format!("{what} are declared twice"), *span, "second")
                .with_label(*first, "first")
        }
        UnknownDataKind { kind, span } => {
            Problem::error("optc::data", format!("unknown data kind `{kind}`"), *span, "unknown kind").suggest(
                kind,
                ["sparse", "labels", "classes", "real", "weights"],
                "a data column is `sparse` (features), `labels` (±1), `classes`, `real` or `weights` (one a row)",
            )
        }
        ParamTwice { name, span, first } => {
            Problem::error("optc::param", format!("parameter `{name}` is declared twice"), *span, "again")
                .with_label(*first, "first declared here")
        }
        NanValue { span } => {
            Problem::error("optc::param", "this value is not a number (NaN)", *span, "evaluates to NaN")
        }
        InfiniteValue { span } => Problem::error("optc::param", "this value is infinite", *span, "evaluates to ±∞"),
        DividesByZero { span } => {
            Problem::error("optc::param", "this value is not a finite number", *span, "divides by zero")
                .with_help("a parameter must evaluate to a finite number")
        }
        NotConstant { span } => Problem::error("optc::param", "expected a constant", *span, "not a constant"),
        UnknownName { name, span, declared, free } => {
            let p = Problem::error("optc::name", format!("unknown name `{name}`"), *span, "not a parameter");
            match suggest_param(name, declared) {
                Some(s) => p.with_help(format!("did you mean `{s}`?")),
                None if free.is_empty() => p.with_help("declare it first: `param NAME = VALUE`"),
                None => p.with_help(format!("a value here may use parameters and {}", free.join(", "))),
            }
        }

        VecDimensions { span } => {
            Problem::error("optc::shape", "`vec` takes one dimension", *span, "here").with_help("write `vec[dim(x)]`")
        }
        MatDimensions { span } => Problem::error("optc::shape", "`mat` takes two dimensions", *span, "here")
            .with_help("write `mat[dim(x), classes(y)]`"),
        UnknownVariableType { kind, span } => {
            Problem::error("optc::shape", format!("unknown variable type `{kind}`"), *span, "here").suggest(
                kind,
                ["vec", "mat"],
                "a variable is a `vec[n]` or a `mat[n, k]`",
            )
        }
        DimNotFeatures { span, features } => {
            let p = Problem::error("optc::shape", "`dim` takes the features", *span, "not the features");
            match features {
                Some(f) => p.with_help(format!("write `dim({f})`")),
                None => p.with_help("declare `data x: sparse, y: labels` before the variable"),
            }
        }
        ClassesOfOtherKind { label, kind, span, declared } => Problem::error(
            "optc::shape",
            format!("`classes({label})` needs `{label}: classes`, but `{label}` is `{}`", kind.name()),
            *span,
            "here",
        )
        .with_label(*declared, "declared here")
        .with_help(format!("declare `{label}: classes` in the `data` line")),
        ClassesNotLabels { span } => {
            Problem::error("optc::shape", "`classes` takes the labels", *span, "not the labels")
        }
        NotADimension { span } => Problem::error("optc::shape", "expected a dimension", *span, "not a dimension")
            .with_help("a dimension is `dim(x)`, `classes(y)` or a whole number"),

        NotALoss { span, names: Names { features, label, var } } => {
            Problem::error("optc::loss", "expected a loss inside `E[...]`", *span, "not a loss call")
                .with_help(format!("write `E[logistic({label}, <{features}, {var}>)]`"))
        }
        UnknownLoss { name, span, candidates } => {
            Problem::error("optc::loss", format!("unknown loss `{name}`"), *span, "unknown loss").suggest(
                name,
                candidates.iter().map(String::as_str),
                format!("the losses are {}", quoted_list(candidates)),
            )
        }
        RegularizerInExpectation { name, span, var } => {
            Problem::error("optc::loss", format!("unknown loss `{name}`"), *span, "unknown loss")
                .with_help(format!("`{name}` is a regularizer: write it outside `E[...]`, as `λ·{name}({var})`"))
        }
        LossArity { loss, constants, found, span, names: Names { features, label, var } } => {
            let (n, rest) = (constants.len() + 2, constants.iter().map(|c| format!(", {c}")).collect::<String>());
            let count = if n == 2 { "two arguments".to_string() } else { format!("{n} arguments") };
            let what = if constants.is_empty() { String::new() } else { format!(" (a number or a `param` for {})", constants.join(", ")) };
            Problem::error("optc::loss", format!("`{loss}` takes {count}, found {found}"), *span, "here")
                .with_help(format!("write `{loss}({label}, <{features}, {var}>{rest})`{what}"))
        }
        LossConstant { loss, name, value, why, span } => {
            Problem::error("optc::loss", format!("`{loss}` cannot take {name} = {value}: {why}"), *span, "this value")
                .with_help(format!("give `{name}` a value where the loss is what it declares"))
        }
        LabelArgument { loss, label, span } => {
            Problem::error("optc::loss", "the first argument of a loss is the label", *span, "not the label")
                .with_help(format!("write `{loss}({label}, ...)`"))
        }
        WrongLabelKind { loss, needs, label, declared, span, label_span } => {
            let wanted = match needs {
                LabelKind::Labels => "±1 labels",
                LabelKind::Real => "real targets",
                LabelKind::Classes => "class labels",
            };
            let help = match needs {
                LabelKind::Labels => format!("declare `{label}: labels`, or use `squared` for real targets"),
                LabelKind::Real => format!("declare `{label}: real` or `labels`"),
                LabelKind::Classes => {
                    format!("declare `{label}: classes` and `var W: mat[dim(x), classes({label})]`")
                }
            };
            Problem::error(
                "optc::loss",
                format!(
                    "`{loss}` needs {wanted} (`{label}: {}`), but `{label}` is declared `{}`",
                    needs.name(),
                    declared.name()
                ),
                *span,
                "wrong kind of label",
            )
            .with_label(*label_span, "declared here")
            .with_help(help)
        }
        NotAMargin { span, features, var, intercept } => Problem::error(
            "optc::loss",
            "the second argument of a loss is the margin ⟨x, w⟩",
            *span,
            "not ⟨features, variable⟩",
        )
        .with_help(match intercept {
            Some(b) => format!("write `<{features}, {var}> + {b}`"),
            None => format!("write `<{features}, {var}>`"),
        }),
        MulticlassOnVector { loss, span, var_span, names: Names { features, label, var } } => Problem::error(
            "optc::shape",
            format!("`{loss}` scores every class: it needs a matrix variable"),
            *span,
            "a vector here",
        )
        .with_label(*var_span, "declared as a vector")
        .with_help(format!("declare `var {var}: mat[dim({features})), classes({label})]`").replace("))", ")")),
        ScalarLossOnMatrix { loss, var, span, var_span } => Problem::error(
            "optc::shape",
            format!("`{loss}` takes a scalar margin, but `{var}` is a matrix"),
            *span,
            "scores of every class",
        )
        .with_label(*var_span, "declared as a matrix")
        .with_help("use `softmax` for a matrix of class scores, or declare a `vec`"),

        SecondIntercept { span, first } => {
            Problem::error("optc::var", "a model has one intercept", *span, "second scalar")
                .with_label(*first, "first intercept declared here")
                .with_help("a scalar unknown is the intercept added to every margin; declare one")
        }
        InterceptOnMatrix { span, var, var_span } => Problem::error(
            "optc::var",
            format!("a scalar intercept does not fit the matrix `{var}`: a softmax model needs one per class"),
            *span,
            "one scalar",
        )
        .with_label(*var_span, "declared as a matrix")
        .with_help("declare one per class, `var b: vec[classes(y)]` (tron fits them with `l2sq(W)`), or drop the intercept"),
        WeightsUnused { span, expectation, weights } => Problem::error(
            "optc::data",
            format!("the weights `{weights}` are declared but the loss is not weighted"),
            *span,
            "declared here",
        )
        .with_label(*expectation, "the loss's expectation")
        .with_help(format!("write `E[{weights}·loss(...)]`, or drop `{weights}: weights`")),
        NotWeights { span, weights } => {
            let p = Problem::error(
                "optc::loss",
                "inside `E[...]` only the data's weights may multiply the loss",
                *span,
                "not the weights column",
            );
            match weights {
                Some(s) => p.with_help(format!("write `E[{s}·loss(...)]`; a constant factor goes outside: `c·E[...]`")),
                None => p.with_help(
                    "declare a weights column, `data x: sparse, y: labels, s: weights`, and write `E[s·loss(...)]`; a constant factor goes outside: `c·E[...]`",
                ),
            }
        }
        InterceptUnused { span, margin, names: Names { features, var, .. }, intercept } => Problem::error(
            "optc::var",
            format!("the intercept `{intercept}` is declared but not added to the margin"),
            *span,
            "declared here",
        )
        .with_label(*margin, "the margin")
        .with_help(format!("write `<{features}, {var}> + {intercept}`, or drop `var {intercept}: scalar`")),
        NotAnIntercept { name, span, intercept } => {
            let p = Problem::error(
                "optc::loss",
                format!("`{name}` is added to the margin but is not the intercept"),
                *span,
                "not a declared scalar",
            );
            match intercept {
                Some(b) => p.with_help(format!("the intercept is `{b}`")),
                None => p.with_help(format!("declare it with `var {name}: scalar` to fit an intercept")),
            }
        }
        InterceptRegularized { intercept, span, declared } => Problem::error(
            "optc::var",
            format!("the intercept `{intercept}` takes one penalty, `λ·l2sq({intercept})`, and no constraint"),
            *span,
            "names the intercept",
        )
        .with_label(*declared, "declared here")
        .with_help(format!(
            "drop this term to fit `{intercept}` freely, or write `λ·l2sq({intercept})` to penalise it like a weight (LIBLINEAR's -B 1)"
        )),

        NegativeWeight { span, weight } => {
            let label = match weight {
                Some(w) => format!("weight {w}"),
                None => "negated here".to_string(),
            };
            Problem::error("optc::convexity", "a term has a negative weight", *span, label).with_help(NON_NEGATIVE)
        }
        SubtractedTerm { span } => Problem::error(
            "optc::convexity",
            "a term is subtracted",
            *span,
            "subtracting makes the objective non-convex",
        )
        .with_help("optc minimizes a sum of terms; write `+` and a non-negative weight"),
        TwoDataTerms { span, first } => {
            Problem::error("optc::objective", "the objective has two data terms", *span, "second")
                .with_label(*first, "first")
                .with_help("write one `E[loss(y, <x, w>)]`")
        }
        NoDataTerm { span, names: Names { features, label, var } } => {
            Problem::error("optc::objective", "the objective has no data term", *span, "no `E[...]` here")
                .with_help(format!("add a mean loss over the data: `E[logistic({label}, <{features}, {var}>)] + ...`"))
        }
        ProductOfTerms { span } => {
            Problem::error("optc::objective", "a product of two terms", *span, "second loss or regularizer in one term")
                .with_help("each term is one loss or regularizer, times a constant")
        }
        InDenominator { span } => {
            Problem::error("optc::convexity", "a loss or regularizer in a denominator", *span, "divides by this")
                .with_help("a term is a constant times one loss or regularizer")
        }
        ConstantTerm { span } => {
            Problem::error("optc::objective", "this term is a constant", *span, "no loss or regularizer here")
                .with_help("a term is `E[loss(y, <x, w>)]` or `c·reg(w)`; constants do not change the minimizer")
        }

        UnknownRegularizer { name, span, candidates } => {
            Problem::error("optc::regularizer", format!("unknown regularizer `{name}`"), *span, "unknown regularizer")
                .suggest(
                    name,
                    candidates.iter().map(String::as_str),
                    format!("the regularizers are {}", quoted_list(candidates)),
                )
        }
        LossAsRegularizer { name, span, names: Names { features, label, var } } => {
            Problem::error("optc::regularizer", format!("unknown regularizer `{name}`"), *span, "unknown regularizer")
                .with_help(format!(
                    "`{name}` is a loss: average it over the data, as `E[{name}({label}, <{features}, {var}>)]`"
                ))
        }
        RegularizerArity { regularizer, params, found, span } => Problem::error(
            "optc::regularizer",
            format!("`{regularizer}` takes {} argument(s), found {found}", params.len()),
            *span,
            "here",
        )
        .with_help(format!("write `{regularizer}({})`", params.join(", "))),
        NotComposable { regularizer, span } => Problem::error(
            "optc::composite",
            format!("`{regularizer}` cannot be composed with a matrix"),
            *span,
            "here",
        )
        .with_help("only the convex norms (l1, l2, linf, l2sq, ...) compose as ω(B w)"),
        UndeclaredArgument { name, regularizer, var, span } => Problem::error(
            "optc::name",
            format!("`{name}` is not declared"),
            *span,
            "not declared",
        )
        .with_help(format!(
            "`{regularizer}` takes the variable `{var}`; for an intercept, declare `var {name}: scalar`, add it to the margin (`<x, {var}> + {name}`), and then `{regularizer}({name})` penalises it"
        )),
        NotTheVariable { regularizer, var, span } => Problem::error(
            "optc::regularizer",
            format!("`{regularizer}` regularizes the variable"),
            *span,
            format!("expected `{var}`"),
        )
        .with_help(format!("write `{regularizer}({var})` or `{regularizer}(B {var})` with a matrix B")),
        NotGroups { span } => Problem::error("optc::regularizer", "expected a group structure", *span, "not groups")
            .with_help("write `groups(load(\"groups.txt\"))`"),
        RowsOfVector { regularizer, var, span, var_span } => Problem::error(
            "optc::shape",
            format!("`{regularizer}` ties the rows of a matrix, but `{var}` is a vector"),
            *span,
            "needs a matrix",
        )
        .with_label(*var_span, "declared as a vector")
        .with_help(format!("use `l1({var})` for a vector, or declare `var W: mat[dim(x), classes(y)]`")),
        CenteringOnly { span } => Problem::error(
            "optc::shape",
            "a transposed matrix variable is only taken by `nuclear(center(classes(y)) Wᵀ)`",
            *span,
            "here",
        )
        .with_help("the centred trace norm ‖W(I − 11ᵀ/k)‖_* is spelled `nuclear(center(classes(y)) Wᵀ)`; center's size is W's number of columns"),
        ComposedMatrixVariable { span } => {
            Problem::error("optc::shape", "ω(B W) of a matrix variable is not supported", *span, "here")
                .with_help("compose with a matrix only for a vector variable")
        }
        NegativeScalar { regularizer, param, value, span } => Problem::error(
            "optc::regularizer",
            format!("`{param}` of `{regularizer}` must be ≥ 0, found {value}"),
            *span,
            "here",
        ),
        NotAMatrix { span } => Problem::error("optc::operator", "expected a matrix", *span, "not a matrix")
            .with_help("matrices are `diff(n)`, `incidence(load(\"edges.txt\"))`, `groups(load(\"groups.txt\"))`"),
        OperatorWithoutFile { operator, span } => {
            Problem::error("optc::operator", format!("`{operator}` reads a file"), *span, "here")
                .with_help(format!("write `{operator}(load(\"file.txt\"))`; the path is relative to the model file"))
        }
        UnknownMatrix { name, span } => {
            Problem::error("optc::operator", format!("unknown matrix `{name}`"), *span, "unknown").suggest(
                name,
                ["diff", "incidence", "groups"],
                "matrices are `diff(n)`, `incidence(load(...))` and `groups(load(...))`",
            )
        }

        ConstrainsOther { var, span } => Problem::error(
            "optc::constraint",
            "a constraint restricts the variable",
            *span,
            format!("expected `{var}`"),
        )
        .with_help(format!("write `{var} ∈ SET`, `{var} ≥ c` or `{var} ≤ c`")),
        NotASet { span } => Problem::error("optc::constraint", "expected a set", *span, "not a set").with_help(SETS),
        UnknownSet { name, span, candidates } => {
            Problem::error("optc::constraint", format!("unknown set `{name}`"), *span, "unknown set").suggest(
                name,
                candidates.iter().map(String::as_str),
                SETS,
            )
        }
        SetArity { set, params, found, span } => Problem::error(
            "optc::constraint",
            format!("`{set}` takes {} argument(s), found {found}", params.len()),
            *span,
            "here",
        )
        .with_help(if params.is_empty() {
            format!("write `{set}`")
        } else {
            format!("write `{set}({})`", params.join(", "))
        }),
        EmptyBox { lo, hi, span } => Problem::error(
            "optc::constraint",
            format!("the box [{lo}, {hi}] is empty"),
            *span,
            "lower bound above upper bound",
        )
        .with_help("write `Box(lo, hi)` with lo ≤ hi"),
        NegativeRadius { span } => {
            Problem::error("optc::constraint", "a ball needs a radius ≥ 0", *span, "negative radius")
        }

        UnknownSolver { name, span, candidates } => {
            Problem::error("optc::solver", format!("unknown solver `{name}`"), *span, "unknown solver").suggest(
                name,
                candidates.iter().map(String::as_str),
                format!("solvers are {}", candidates.join(", ")),
            )
        }
    }
}

/// "`a`, `b`, `c`"
fn quoted_list(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
