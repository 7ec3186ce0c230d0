//! Stopping a solve from outside it: a flag another thread (a Ctrl-C handler, a library
//! caller) sets, which the drivers read after every epoch. The run then ends with status
//! `interrupted` and its last iterate, flushed and checked like any other ending.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared cancellation flag; clones share it. `Default` is a flag nobody has set.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks every run that holds this flag to stop after its current epoch.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Clears the flag, for the next run (the REPL's next `:run`).
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Two flags are equal when they are the same flag.
impl PartialEq for Cancel {
    fn eq(&self, other: &Cancel) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag_and_reset_clears_it() {
        let a = Cancel::default();
        let b = a.clone();
        assert!(!b.is_cancelled());
        std::thread::spawn(move || a.cancel()).join().expect("thread");
        assert!(b.is_cancelled());
        b.reset();
        assert!(!b.is_cancelled());
        assert_ne!(b, Cancel::default());
    }
}
