//! MPI's processes as ranks (`mpirun -np N optc ...`, built with `--features mpi`): each
//! reduction is an AllReduce, waited for by polling so that a rank that never comes ends the
//! job with a message after the timeout instead of hanging it.
//!
//! An AllReduce cannot tell who is missing, so when rank 0 times out it calls the roll: a small
//! message to every other rank, which a rank waiting in the reduction answers from its polling
//! loop. The ranks that do not answer within a second are the ones the reduction waits for (not
//! there yet, stopped, or stopped halfway through their part of it), and rank 0 names them. The
//! others wait a little longer before ending the job, so that rank 0's message is the one
//! printed. A message that a rank arrived, sent before each AllReduce, could not tell a rank
//! stopped inside the AllReduce from one that finished its part, and cost every round N − 1
//! messages.

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
}

/// How long a reduction polls without sleeping: a round between ranks that arrive together
/// completes within it, where a 50 µs sleep between polls cost each of CoCoA's thousands of
/// rounds about a millisecond.
const SPIN: Duration = Duration::from_millis(2);

/// How much longer than rank 0 the other ranks wait before they end the job themselves.
const GRACE: Duration = Duration::from_secs(2);

/// How long rank 0 waits for the answers to its roll call: well within [`GRACE`], so the ranks
/// that answer are still waiting when it ends the job.
const ROLL_CALL: Duration = Duration::from_secs(1);

/// The tags of the roll call and of its answers: nothing else is sent point to point.
const CALL: i32 = 1;
const ANSWER: i32 = 2;

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
        (world.size() > 1).then(|| World { world, _universe: universe, timeout, sent: 0.into() })
    }

    fn reduce(&self, values: &mut [f64], op: SystemOperation) -> Result<(), CollectiveError> {
        self.sent.set(self.sent.get() + 8 * values.len() as u64);
        let lead = self.world.rank() == 0;
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
                            if !lead {
                                self.answer_roll_call();
                            }
                        }
                    }
                    // A pending request cannot be dropped: the job ends here, inside the scope.
                    Err(_pending) => self.time_out(),
                }
            }
        });
        Ok(())
    }

    /// Answers rank 0's roll call if it has come: this rank is here, waiting in the reduction.
    fn answer_roll_call(&self) {
        let lead = self.world.process_at_rank(0);
        if lead.immediate_probe_with_tag(CALL).is_some() {
            let _: (u8, _) = lead.receive_with_tag(CALL);
            lead.send_with_tag(&1u8, ANSWER);
        }
    }

    /// Ends the job after a reduction's timeout, rank 0 naming the ranks that did not answer
    /// its roll call.
    fn time_out(&self) -> ! {
        let missing: Vec<usize> = match self.world.rank() {
            0 => self.roll_call(),
            _ => vec![],
        };
        let e = CollectiveError::Timeout { missing, seconds: self.timeout.as_secs_f64() };
        eprintln!("error: rank {} of {}: {e}; ending the job", self.world.rank(), self.world.size());
        self.world.abort(1)
    }

    /// Rank 0 asks every other rank whether it is waiting in the reduction, and returns those
    /// that do not answer within [`ROLL_CALL`].
    fn roll_call(&self) -> Vec<usize> {
        let others = 1..self.world.size();
        for r in others.clone() {
            // One byte goes out eagerly: the send returns whether or not the rank is listening.
            self.world.process_at_rank(r).send_with_tag(&0u8, CALL);
        }
        let mut silent: Vec<i32> = others.collect();
        let until = Instant::now() + ROLL_CALL;
        while !silent.is_empty() && Instant::now() < until {
            silent.retain(|&r| self.world.process_at_rank(r).immediate_probe_with_tag(ANSWER).is_none());
            std::thread::sleep(Duration::from_millis(1));
        }
        silent.into_iter().map(|r| r as usize).collect()
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
