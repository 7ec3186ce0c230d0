//! What the checker finds wrong, as data: one variant per kind of mistake, holding the spans,
//! names and numbers the report needs and no wording. The wording lives in one place,
//! [`render`], so that tests can match kinds while the snapshots pin the text.

mod render;

use crate::diagnostics::Problem;
use crate::source::Span;
use crate::stdlib::LabelKind;

/// The model's own names, which hints spell out ("write `E[logistic(y, <x, w>)]`").
#[derive(Clone, Debug, PartialEq)]
pub struct Names {
    pub features: String,
    pub label: String,
    pub var: String,
}

/// A `data` column that can be declared only once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Features,
    Labels,
    Weights,
}

#[derive(Clone, Debug)]
pub enum CheckError {
    /// A loss, regularizer or set declared in the model, rejected by the stdlib (which words
    /// its own problems).
    Declaration(Problem),
    /// A scalar formula the stdlib cannot read (it words its own problems).
    Formula(Problem),

    // The model as a whole
    SecondVariable {
        span: Span,
        first: Span,
    },
    SecondObjective {
        span: Span,
        first: Span,
    },
    NoObjective {
        after: Span,
    },
    NoFeatures {
        objective: Span,
    },
    NoLabels {
        objective: Span,
    },
    NoVariable {
        objective: Span,
    },

    // Dictionary learning (`sparse_code`)
    /// A command that takes supervised models was given a dictionary model.
    DictionaryModel {
        span: Span,
    },
    DictionaryShape {
        span: Span,
        var: String,
        features: String,
    },
    SparseCodeArguments {
        span: Span,
        features: String,
        var: String,
    },
    NotAColumnPenalty {
        name: String,
        span: Span,
        var: String,
    },
    DictionaryConstraint {
        span: Span,
        var: String,
    },
    UnboundedAtoms {
        span: Span,
        var: String,
    },

    // Declarations and constants
    ColumnTwice {
        column: Column,
        span: Span,
        first: Span,
    },
    UnknownDataKind {
        kind: String,
        span: Span,
    },
    ParamTwice {
        name: String,
        span: Span,
        first: Span,
    },
    NanValue {
        span: Span,
    },
    InfiniteValue {
        span: Span,
    },
    DividesByZero {
        span: Span,
    },
    NotConstant {
        span: Span,
    },
    /// `free` are the non-parameter names allowed here (like `t` in solver options).
    UnknownName {
        name: String,
        span: Span,
        declared: Vec<String>,
        free: Vec<String>,
    },

    // Shapes of the variable
    VecDimensions {
        span: Span,
    },
    MatDimensions {
        span: Span,
    },
    UnknownVariableType {
        kind: String,
        span: Span,
    },
    /// `dim(..)` of something other than the features (`None` when none are declared).
    DimNotFeatures {
        span: Span,
        features: Option<String>,
    },
    /// `classes(y)` of labels declared as another kind.
    ClassesOfOtherKind {
        label: String,
        kind: LabelKind,
        span: Span,
        declared: Span,
    },
    ClassesNotLabels {
        span: Span,
    },
    NotADimension {
        span: Span,
    },

    // The intercept
    SecondIntercept {
        span: Span,
        first: Span,
    },
    /// `var b: scalar` beside a matrix W.
    InterceptOnMatrix {
        span: Span,
        var: String,
        var_span: Span,
    },
    /// Declared, but the margin does not add it.
    /// `s: weights` declared, but the loss is not `E[s·loss(...)]`.
    WeightsUnused {
        span: Span,
        expectation: Span,
        weights: String,
    },
    /// A factor inside `E[...]` other than the declared weights column.
    NotWeights {
        span: Span,
        /// The declared weights column, if any.
        weights: Option<String>,
    },
    InterceptUnused {
        span: Span,
        margin: Span,
        names: Names,
        intercept: String,
    },
    /// `<x, w> + c` with `c` not a declared intercept.
    NotAnIntercept {
        name: String,
        span: Span,
        intercept: Option<String>,
    },
    /// A regularizer or constraint names the intercept.
    InterceptRegularized {
        intercept: String,
        span: Span,
        declared: Span,
    },

    // The loss
    NotALoss {
        span: Span,
        names: Names,
    },
    UnknownLoss {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    RegularizerInExpectation {
        name: String,
        span: Span,
        var: String,
    },
    LossArity {
        loss: String,
        /// The names of its constants after the margin.
        constants: Vec<String>,
        found: usize,
        span: Span,
        names: Names,
    },
    /// A loss's constant at a value where the loss is not what it declares.
    LossConstant {
        loss: String,
        name: String,
        value: f64,
        why: String,
        span: Span,
    },
    LabelArgument {
        loss: String,
        label: String,
        span: Span,
    },
    WrongLabelKind {
        loss: String,
        needs: LabelKind,
        label: String,
        declared: LabelKind,
        span: Span,
        label_span: Span,
    },
    NotAMargin {
        span: Span,
        features: String,
        var: String,
        /// The intercept's name, when one is declared: the help then adds it.
        intercept: Option<String>,
    },
    MulticlassOnVector {
        loss: String,
        span: Span,
        var_span: Span,
        names: Names,
    },
    ScalarLossOnMatrix {
        loss: String,
        var: String,
        span: Span,
        var_span: Span,
    },

    // The objective's terms
    /// `weight` is `None` when the term is negated rather than weighted.
    NegativeWeight {
        span: Span,
        weight: Option<f64>,
    },
    SubtractedTerm {
        span: Span,
    },
    TwoDataTerms {
        span: Span,
        first: Span,
    },
    NoDataTerm {
        span: Span,
        names: Names,
    },
    ProductOfTerms {
        span: Span,
    },
    InDenominator {
        span: Span,
    },
    ConstantTerm {
        span: Span,
    },

    // Regularizers and their matrices
    UnknownRegularizer {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    LossAsRegularizer {
        name: String,
        span: Span,
        names: Names,
    },
    RegularizerArity {
        regularizer: String,
        params: Vec<String>,
        found: usize,
        span: Span,
    },
    NotComposable {
        regularizer: String,
        span: Span,
    },
    /// A regularizer's argument names nothing the model declares.
    UndeclaredArgument {
        name: String,
        regularizer: String,
        var: String,
        span: Span,
    },
    NotTheVariable {
        regularizer: String,
        var: String,
        span: Span,
    },
    NotGroups {
        span: Span,
    },
    RowsOfVector {
        regularizer: String,
        var: String,
        span: Span,
        var_span: Span,
    },
    ComposedMatrixVariable {
        span: Span,
    },
    /// `B Wᵀ` other than `nuclear(center(k) Wᵀ)`, or `center(k)` of the wrong size.
    CenteringOnly {
        span: Span,
    },
    NegativeScalar {
        regularizer: String,
        param: String,
        value: f64,
        span: Span,
    },
    NotAMatrix {
        span: Span,
    },
    OperatorWithoutFile {
        operator: String,
        span: Span,
    },
    UnknownMatrix {
        name: String,
        span: Span,
    },

    // Constraints
    ConstrainsOther {
        var: String,
        span: Span,
    },
    NotASet {
        span: Span,
    },
    UnknownSet {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
    SetArity {
        set: String,
        params: Vec<String>,
        found: usize,
        span: Span,
    },
    EmptyBox {
        lo: f64,
        hi: f64,
        span: Span,
    },
    NegativeRadius {
        span: Span,
    },

    // `solve with`
    UnknownSolver {
        name: String,
        span: Span,
        candidates: Vec<String>,
    },
}

impl CheckError {
    /// The problem the user sees.
    pub fn to_problem(&self) -> Problem {
        render::render(self)
    }

    /// Where the report points first; reports are ordered by it.
    pub fn span(&self) -> Span {
        self.to_problem().primary_span()
    }
}
