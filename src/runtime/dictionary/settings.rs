//! What the plan hands SMM's dictionary epoch and its cost besides the buffers: λ₁ and λ₂, the
//! batch, n₀, the majorizer, and ϕ on one atom.

/// What the plan's dictionary cost (`Objective::dictionary`) evaluates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DictionaryCost {
    pub lambda1: f64,
    pub lambda2: f64,
    pub penalty: AtomPenalty,
}

/// The majorizer SMM averages on a dictionary ([`super::Dictionary::step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Majorizer {
    /// Each batch's own cost at its codes, a quadratic in D (A = mean ααᵀ, B = mean αxᵀ),
    /// minimised with ϕ by one sweep of block coordinate descent over the atoms.
    Variational,
    /// Mairal 2013's eq. 5: the proximal-gradient surrogate, one curvature per atom
    /// (`solve with smm(linearize = 1)`).
    Linearized,
}

impl Majorizer {
    /// The name `optc plan` and `optc check` print.
    pub fn name(self) -> &'static str {
        match self {
            Majorizer::Variational => "the batches' own costs at their codes (variational)",
            Majorizer::Linearized => "the proximal-gradient surrogate (eq. 5)",
        }
    }

    /// Its code in the JIT's call (and back).
    pub fn code(self) -> i64 {
        match self {
            Majorizer::Variational => 0,
            Majorizer::Linearized => 1,
        }
    }

    pub fn from_code(code: i64) -> Majorizer {
        if code == 1 {
            Majorizer::Linearized
        } else {
            Majorizer::Variational
        }
    }
}

/// ϕ on one atom: l1·‖d‖₁ + (l2/2)‖d‖² + γ·ω(B d) over the bound operator's groups, then the
/// ball ‖d‖ ≤ r. The prox is the composition (see [`super::prox_atom`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomPenalty {
    pub l1: f64,
    pub l2: f64,
    pub group: Option<(crate::runtime::picard::Omega, f64)>,
    pub ball: Option<f64>,
}

/// What one epoch of SMM on a dictionary ([`super::epoch`]) takes of the plan's call besides its
/// buffers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EpochSettings {
    pub lambda1: f64,
    pub lambda2: f64,
    pub batch: usize,
    /// n₀ of SMM's weights ([`super::weight`]).
    pub n0: f64,
    pub majorizer: Majorizer,
    pub penalty: AtomPenalty,
}
