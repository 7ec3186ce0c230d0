//! What the ranks of one `optc run` do together (under `mpirun`; alone each is the step itself):
//! a step that fails on any rank fails on all of them, said once, and a check that every rank
//! was started with the same model and options.

use super::args::RunArgs;
use super::Failure;

/// A step every rank takes: Ok when it succeeded on all of them. A rank that failed says why
/// (its message names its file and line) and the others stop quietly with its exit code, or 1;
/// when every rank failed with a message (a typo in the model, a solver that diverges on the
/// summed gradient), rank 0 alone says it, rather than N copies. Every rank then waits for the
/// messages to be printed: mpirun ends the job as soon as one rank exits with an error, and a
/// rank with nothing to say would otherwise cut the others short.
pub(super) fn together<T>(
    ranks: &dyn crate::exec::collective::Collective,
    step: Result<T, Failure>,
) -> Result<T, Failure> {
    if ranks.size() == 1 {
        return step;
    }
    let speaks = |e: &Failure| !matches!(e, Failure::Reported | Failure::Said(_) | Failure::Interrupted);
    let failed = f64::from(u8::from(step.is_err()));
    let speaking = f64::from(u8::from(matches!(&step, Err(e) if speaks(e))));
    // Maxima: whether any rank failed, and (of the negative) whether every rank has a message.
    let mut flags = [failed, -speaking];
    let reduced = |e| Failure::Input(format!("the ranks could not reduce: {e}"));
    ranks.max(&mut flags).map_err(reduced)?;
    let (any, all_speak) = (flags[0] > 0.0, -flags[1] > 0.0);
    let outcome = match step {
        Err(e) if speaks(&e) && (ranks.rank() == 0 || !all_speak) => {
            let code = e.code();
            e.say();
            Err(Failure::Said(code))
        }
        Err(e) => Err(e.said()),
        Ok(_) if any => Err(Failure::Said(1)),
        Ok(t) => Ok(t),
    };
    if any {
        ranks.max(&mut [0.0]).map_err(reduced)?;
    }
    outcome
}

/// Refuses ranks started with different models or options before any work: a hash of the
/// model's text and the arguments, compared by its maximum and minimum over the ranks.
pub(super) fn same_everywhere(
    ranks: &dyn crate::exec::collective::Collective,
    args: &RunArgs,
    model: &str,
) -> Result<(), Failure> {
    use std::hash::{Hash, Hasher};
    if ranks.size() == 1 {
        return Ok(());
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (model, format!("{args:?}")).hash(&mut h);
    // 53 bits: exact in an f64.
    let mine = (h.finish() >> 11) as f64;
    let mut both = [mine, -mine];
    ranks.max(&mut both).map_err(|e| Failure::Input(format!("the ranks could not reduce: {e}")))?;
    if both[0] != -both[1] {
        return Err(Failure::Usage(format!(
            "rank {}: the ranks were started with different models or options; every rank must run the same command",
            ranks.rank()
        )));
    }
    Ok(())
}
