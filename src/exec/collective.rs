//! The processes of one distributed solve, as a solver sees them: its rank, how many there are,
//! and elementwise sums and maxima of f64 arrays across all of them (an AllReduce). A solver
//! written against [`Collective`] runs alone ([`Alone`]: every reduction is the identity), on
//! ranks that are threads of one process ([`Threads`], which the tests use to check that the
//! reduced sums give one process's answer), or on MPI's processes (the `mpi` feature).
//!
//! Every rank makes the same reductions in the same order with arrays of the same length: a
//! solver's control flow must not depend on anything rank-local, which is why a failure on one
//! rank travels as a flag inside the next reduction rather than as an early return.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
pub use self::mpi::World;

/// How long a rank waits in a reduction for the others: longer than any pass's imbalance
/// between ranks (`OPTC_RANK_TIMEOUT`, seconds, overrides it).
pub const RANK_TIMEOUT: Duration = Duration::from_secs(600);

/// The ranks this process runs with: MPI's world when `mpirun` started several (a build with
/// the `mpi` feature), else [`Alone`].
pub fn launched() -> Box<dyn Collective> {
    #[cfg(feature = "mpi")]
    {
        let timeout = std::env::var("OPTC_RANK_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(RANK_TIMEOUT, Duration::from_secs_f64);
        if let Some(world) = World::join(timeout) {
            return Box::new(world);
        }
    }
    Box::new(Alone)
}

/// How many processes the launcher that started this one (OpenMPI's mpirun, or a PMI one such
/// as Slurm's) says there are, from its environment: 1 without one. Read without starting MPI,
/// so any build can tell that it runs as one of several.
pub fn launcher_size() -> usize {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .unwrap_or(1)
}

/// Why a reduction did not complete.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CollectiveError {
    /// Some ranks did not reach the reduction in time: they are named, so a hung or dead rank
    /// is found rather than waited for forever.
    #[error("{} did not reach the reduction within {:.0} s", list(.missing), .seconds)]
    Timeout { missing: Vec<usize>, seconds: f64 },
    /// Ranks called one reduction with arrays of different lengths: a bug in the solver.
    #[error("the ranks reduced arrays of different lengths ({0} and {1})")]
    Mismatch(usize, usize),
    /// The transport failed (MPI's message).
    #[error("{0}")]
    Transport(String),
    /// A rank stopped where the others may wait for it in a reduction ([`Collective::abandon`]).
    #[error("rank {0} stopped: {1}")]
    Abandoned(usize, String),
}

/// The ranks named, or "a rank" where the transport cannot tell which (MPI's AllReduce).
fn list(ranks: &[usize]) -> String {
    match ranks {
        [] => "a rank".into(),
        [one] => format!("rank {one}"),
        more => format!("ranks {}", more.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// A group of ranks that reduce together.
pub trait Collective {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Replaces `values` with their elementwise sum over the ranks, on every rank.
    fn sum(&self, values: &mut [f64]) -> Result<(), CollectiveError>;
    /// Replaces `values` with their elementwise maximum over the ranks, on every rank.
    fn max(&self, values: &mut [f64]) -> Result<(), CollectiveError>;
    /// The bytes this rank has sent in reductions so far: for n floats, 8·n, what an
    /// AllReduce's payload is (the transport's own traffic, 2·(N − 1)/N times that in a ring,
    /// is the transport's).
    fn bytes(&self) -> u64;
    /// Ends the job from this rank, which stops where the others may be waiting for it inside a
    /// reduction it will never reach (a fault in the middle of an epoch whose sums are reduced):
    /// under MPI the job is aborted with `why` (mpirun then ends every rank) rather than left
    /// to the reduction's timeout; threads get an error at their next reduction.
    fn abandon(&self, why: &str);

    /// `values` averaged over the ranks.
    fn mean(&self, values: &mut [f64]) -> Result<(), CollectiveError> {
        self.sum(values)?;
        let n = self.size() as f64;
        values.iter_mut().for_each(|v| *v /= n);
        Ok(())
    }
}

/// Carries out a plan's reduction ([`crate::plan::distribute`]) on the state it names:
/// `scalars` the plan's scalars, `vectors` the buffers of `r.vectors`, in that order. The sum is
/// one AllReduce of the scalars and the buffers laid end to end.
pub fn reduce_state(
    ranks: &dyn Collective,
    r: &crate::plan::Reduction,
    scalars: &mut [f64],
    vectors: &mut [&mut [f64]],
) -> Result<(), CollectiveError> {
    if ranks.size() == 1 {
        return Ok(());
    }
    match r.step {
        crate::plan::ReduceStep::Clear => {
            if ranks.rank() > 0 {
                r.scalars.iter().for_each(|s| scalars[s.0] = 0.0);
                vectors.iter_mut().for_each(|v| v.fill(0.0));
            }
            Ok(())
        }
        crate::plan::ReduceStep::Sum => {
            let mut flat: Vec<f64> = r.scalars.iter().map(|s| scalars[s.0]).collect();
            vectors.iter().for_each(|v| flat.extend_from_slice(v));
            ranks.sum(&mut flat)?;
            r.scalars.iter().zip(&flat).for_each(|(s, &x)| scalars[s.0] = x);
            let mut at = r.scalars.len();
            for v in vectors.iter_mut() {
                v.copy_from_slice(&flat[at..at + v.len()]);
                at += v.len();
            }
            Ok(())
        }
    }
}

/// One process alone: every reduction is the identity.
#[derive(Clone, Copy, Debug, Default)]
pub struct Alone;

impl Collective for Alone {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn sum(&self, _: &mut [f64]) -> Result<(), CollectiveError> {
        Ok(())
    }
    fn max(&self, _: &mut [f64]) -> Result<(), CollectiveError> {
        Ok(())
    }
    fn bytes(&self) -> u64 {
        0
    }
    fn abandon(&self, _: &str) {}
}

/// Ranks that are threads of one process, reducing through shared memory: [`Threads::group`]
/// makes one handle a rank. The reduction is in rank order, so its sums are the same bits on
/// every run.
pub struct Threads {
    rank: usize,
    shared: Arc<Round>,
    timeout: Duration,
    sent: std::sync::atomic::AtomicU64,
}

/// One reduction at a time: the ranks' arrays as they arrive, and a generation counter that
/// tells a rank its round is over.
struct Round {
    size: usize,
    slots: Mutex<Slots>,
    done: Condvar,
}

struct Slots {
    arrays: Vec<Option<Vec<f64>>>,
    result: Vec<f64>,
    generation: u64,
    failed: Option<CollectiveError>,
}

impl Threads {
    /// `size` ranks whose reductions wait at most `timeout` for the others.
    pub fn group(size: usize, timeout: Duration) -> Vec<Threads> {
        let shared = Arc::new(Round {
            size,
            slots: Mutex::new(Slots { arrays: vec![None; size], result: vec![], generation: 0, failed: None }),
            done: Condvar::new(),
        });
        (0..size).map(|rank| Threads { rank, shared: Arc::clone(&shared), timeout, sent: 0.into() }).collect()
    }

    fn reduce(&self, values: &mut [f64], op: fn(f64, f64) -> f64) -> Result<(), CollectiveError> {
        self.sent.fetch_add(8 * values.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let round = &self.shared;
        let mut slots = round.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = &slots.failed {
            return Err(e.clone());
        }
        let generation = slots.generation;
        slots.arrays[self.rank] = Some(values.to_vec());
        if slots.arrays.iter().all(Option::is_some) {
            let arrays: Vec<Vec<f64>> = slots.arrays.iter_mut().map(|a| a.take().unwrap_or_default()).collect();
            if let Some(other) = arrays.iter().find(|a| a.len() != values.len()) {
                slots.failed = Some(CollectiveError::Mismatch(values.len(), other.len()));
            } else {
                let mut result = arrays[0].clone();
                for a in &arrays[1..] {
                    result.iter_mut().zip(a).for_each(|(r, v)| *r = op(*r, *v));
                }
                slots.result = result;
            }
            slots.generation += 1;
            round.done.notify_all();
        } else {
            let deadline = Instant::now() + self.timeout;
            while slots.generation == generation && slots.failed.is_none() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    let missing = (0..round.size).filter(|&r| slots.arrays[r].is_none()).collect();
                    let e = CollectiveError::Timeout { missing, seconds: self.timeout.as_secs_f64() };
                    slots.failed = Some(e.clone());
                    round.done.notify_all();
                    return Err(e);
                }
                slots = round.done.wait_timeout(slots, left).unwrap_or_else(|e| e.into_inner()).0;
            }
        }
        if let Some(e) = &slots.failed {
            return Err(e.clone());
        }
        values.copy_from_slice(&slots.result);
        Ok(())
    }
}

impl Collective for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn sum(&self, values: &mut [f64]) -> Result<(), CollectiveError> {
        self.reduce(values, |a, b| a + b)
    }
    fn max(&self, values: &mut [f64]) -> Result<(), CollectiveError> {
        self.reduce(values, f64::max)
    }
    fn bytes(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn abandon(&self, why: &str) {
        let mut slots = self.shared.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.failed.get_or_insert(CollectiveError::Abandoned(self.rank, why.to_string()));
        self.shared.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_sum_and_max_in_rank_order_on_every_rank() {
        let ranks = Threads::group(3, Duration::from_secs(10));
        let got: Vec<(Vec<f64>, Vec<f64>, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = ranks
                .iter()
                .map(|r| {
                    s.spawn(move || {
                        let k = r.rank() as f64;
                        let mut a = vec![k, 1.0, 0.1 * k];
                        r.sum(&mut a).expect("sum");
                        let mut b = vec![k, -k];
                        r.max(&mut b).expect("max");
                        let mut c = vec![2.0 * k];
                        r.mean(&mut c).expect("mean");
                        a.extend(c);
                        (a, b, r.bytes())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        for (a, b, bytes) in &got {
            assert_eq!(a, &vec![3.0, 3.0, 0.0 + 0.1 + 0.2, 2.0]);
            assert_eq!(b, &vec![2.0, 0.0]);
            assert_eq!(*bytes, 8 * 6);
        }
    }

    #[test]
    fn a_rank_that_never_arrives_is_named_and_nobody_waits_forever() {
        let ranks = Threads::group(3, Duration::from_millis(200));
        let errors: Vec<CollectiveError> = std::thread::scope(|s| {
            // Rank 1 never reduces.
            let handles: Vec<_> =
                [&ranks[0], &ranks[2]].map(|r| s.spawn(move || r.sum(&mut [1.0]).expect_err("times out"))).into();
            handles.into_iter().map(|h| h.join().expect("no panic")).collect()
        });
        for e in errors {
            assert!(matches!(&e, CollectiveError::Timeout { missing, .. } if missing == &[1]), "{e}");
            assert!(e.to_string().contains("rank 1 did not reach"), "{e}");
        }
    }

    #[test]
    fn alone_is_the_identity() {
        let mut v = vec![1.5, -2.0];
        Alone.sum(&mut v).expect("sum");
        Alone.mean(&mut v).expect("mean");
        assert_eq!((v, Alone.size(), Alone.bytes()), (vec![1.5, -2.0], 1, 0));
    }
}
