//! MPI's processes as ranks (`mpirun -np N optc ...`, built with `--features mpi`): each
//! reduction is an AllReduce, waited for by polling so that a rank that never comes ends the
//! job with a message after the timeout instead of hanging it.
//!
//! An AllReduce cannot tell who is missing, so each rank also tells rank 0 that it arrived: a
//! small message tagged with the reduction's number, sent before the AllReduce (eagerly: it
//! does not wait for the receiver). Once the AllReduce completes, rank 0 takes them in; when it
//! times out, the ranks whose message has not come are the ones it waits for, and it names
//! them. The others wait a little longer before ending the job, so that rank 0's message is the
//! one printed.

use super::{Collective, CollectiveError};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use std::time::{Duration, Instant};

/// The world of the processes `mpirun` started. MPI is finalized when it is dropped.
pub struct World {
    // Dropped last: the communicator is only valid while MPI is initialized.
    world: SimpleCommunicator,
    _universe: mpi::environment::Universe,
    timeout: Duration,
    sent: std::cell::Cell<u64>,
    /// Reductions so far: the tag of the next one's arrival message.
    round: std::cell::Cell<u64>,
}

/// How long a reduction polls without sleeping: a round between ranks that arrive together
/// completes within it, where a 50 µs sleep between polls cost each of CoCoA's thousands of
/// rounds about a millisecond.
const SPIN: Duration = Duration::from_millis(2);

/// How much longer than rank 0 the other ranks wait before they end the job themselves.
const GRACE: Duration = Duration::from_secs(2);

/// Arrival tags cycle below MPI's guaranteed tag bound (32767); every round's messages are taken
/// in before the next, so a tag is never seen twice at once.
const TAGS: u64 = 32_000;

impl World {
    /// MPI's world, when this process is one of several `mpirun` started; None alone (MPI is
    /// then finalized at once, and the run is the one-process run).
    pub fn join(timeout: Duration) -> Option<World> {
        // Not started by a launcher (OpenMPI's mpirun, or a PMI one such as MPICH's or
        // Slurm's): one process, and no singleton MPI start-up to pay for.
        let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"].iter().any(|v| std::env::var_os(v).is_some());
        if !launched {
            return None;
        }
        let universe = mpi::initialize()?;
        let world = universe.world();
        (world.size() > 1).then(|| World { world, _universe: universe, timeout, sent: 0.into(), round: 0.into() })
    }

    fn reduce(&self, values: &mut [f64], op: SystemOperation) -> Result<(), CollectiveError> {
        self.sent.set(self.sent.get() + 8 * values.len() as u64);
        let round = self.round.get();
        self.round.set(round + 1);
        let tag = (round % TAGS) as i32;
        let lead = self.world.rank() == 0;
        if !lead {
            self.world.process_at_rank(0).send_with_tag(&round, tag);
        }
        let send = values.to_vec();
        let deadline = Instant::now() + if lead { self.timeout } else { self.timeout + GRACE };
        mpi::request::scope(|scope| {
            let mut request = self.world.immediate_all_reduce_into(scope, &send[..], values, op);
            let spin_until = Instant::now() + SPIN;
            loop {
                match request.test() {
                    Ok(_) => break,
                    Err(pending) if Instant::now() < deadline => {
                        request = pending;
                        // Each test drives the reduction on: a short wait is answered at once,
                        // a long one (a slow rank) yields the core.
                        if Instant::now() < spin_until {
                            std::thread::yield_now();
                        } else {
                            std::thread::sleep(Duration::from_micros(50));
                        }
                    }
                    // A pending request cannot be dropped: the job ends here, inside the scope.
                    Err(_pending) => self.time_out(tag),
                }
            }
        });
        if lead {
            for r in 1..self.world.size() {
                let _: (u64, _) = self.world.process_at_rank(r).receive_with_tag(tag);
            }
        }
        Ok(())
    }

    /// Ends the job after a reduction's timeout, rank 0 naming the ranks whose arrival message
    /// for this reduction never came.
    fn time_out(&self, tag: i32) -> ! {
        let missing: Vec<usize> = match self.world.rank() {
            0 => (1..self.world.size())
                .filter(|&r| self.world.process_at_rank(r).immediate_probe_with_tag(tag).is_none())
                .map(|r| r as usize)
                .collect(),
            _ => vec![],
        };
        let e = CollectiveError::Timeout { missing, seconds: self.timeout.as_secs_f64() };
        eprintln!("error: rank {} of {}: {e}; ending the job", self.world.rank(), self.world.size());
        self.world.abort(1)
    }
}

impl Collective for World {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn sum(&self, values: &mut [f64]) -> Result<(), CollectiveError> {
        self.reduce(values, SystemOperation::sum())
    }
    fn max(&self, values: &mut [f64]) -> Result<(), CollectiveError> {
        self.reduce(values, SystemOperation::max())
    }
    fn bytes(&self) -> u64 {
        self.sent.get()
    }
    fn abandon(&self, why: &str) {
        eprintln!("error: rank {} of {}: {why}; ending the job", self.world.rank(), self.world.size());
        self.world.abort(1)
    }
}
