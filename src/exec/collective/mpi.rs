//! MPI's processes as ranks (`mpirun -np N optc ...`, built with `--features mpi`): each
//! reduction is an AllReduce, waited for by polling so that a rank that never comes ends the
//! job with a message after the timeout instead of hanging it.

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
        let send = values.to_vec();
        let deadline = Instant::now() + self.timeout;
        let done = mpi::request::scope(|scope| {
            let mut request = self.world.immediate_all_reduce_into(scope, &send[..], values, op);
            loop {
                match request.test() {
                    Ok(_) => return true,
                    Err(pending) if Instant::now() < deadline => {
                        request = pending;
                        std::thread::sleep(Duration::from_micros(50));
                    }
                    Err(pending) => {
                        // A pending request cannot be dropped; the job ends here.
                        std::mem::forget(pending);
                        return false;
                    }
                }
            }
        });
        if done {
            return Ok(());
        }
        let e = CollectiveError::Timeout { missing: vec![], seconds: self.timeout.as_secs_f64() };
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
}
