//! Passes over every row (or column) of the data on several threads: F and the margins at a
//! check, and Xᵀu for the certificate. The work is cut into fixed blocks whatever the thread
//! count, and per-block results are combined in block order, so a run's numbers are
//! bit-identical with `--threads 1` and `--threads N`; only the wall time changes.

use std::ops::Range;

/// Rows (or columns) a block: large enough that a thread's start-up is noise, small enough to
/// split a9a-sized data between two cores.
pub const BLOCK: usize = 4096;

/// Multiply-adds a started thread must have before it pays for its start-up (tens of
/// microseconds: about as long as this many scattered products take): less work runs on the
/// calling thread. A 506-row lasso fitted from Python (housing) spent a third of its 1.5 ms
/// starting threads for its Hessian's two parts and its Xᵀu.
pub const SPAWN_WORK: usize = 100_000;

/// The threads worth starting for `work` multiply-adds: at most `threads`, one per
/// [`SPAWN_WORK`], at least one. The passes' sums never depend on it.
pub fn threads_for(work: usize, threads: usize) -> usize {
    threads.min(work / SPAWN_WORK).max(1)
}

/// `f` on the blocks of `0..n` in order, on up to `threads` threads (each takes a contiguous run
/// of blocks).
pub fn blocks<T: Send>(n: usize, threads: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    blocks_with(n, threads, || (), |_, r| f(r))
}

/// As [`blocks`], each thread with its own scratch from `init` (made once a thread, handed to
/// `f` with every block it takes).
pub fn blocks_with<S, T: Send>(
    n: usize,
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, Range<usize>) -> T + Sync,
) -> Vec<T> {
    let count = n.div_ceil(BLOCK);
    let run = |blocks: Range<usize>| {
        let mut scratch = init();
        blocks.map(|b| f(&mut scratch, b * BLOCK..((b + 1) * BLOCK).min(n))).collect::<Vec<T>>()
    };
    let threads = threads.clamp(1, count.max(1));
    let per = count.div_ceil(threads);
    each(threads, threads, |t| run(t * per..((t + 1) * per).min(count))).into_iter().flatten().collect()
}

/// `f(k)` for every k in `0..count`, in order, on up to `threads` threads (each takes a
/// contiguous run of k): for work already cut into a fixed number of parts.
pub fn each<T: Send>(count: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return (0..count).map(f).collect();
    }
    let per = count.div_ceil(threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let f = &f;
                scope.spawn(move || (t * per..((t + 1) * per).min(count)).map(f).collect::<Vec<T>>())
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// `f(k)` for every k in `0..count` on up to `threads` threads, each taking the next k as soon as
/// it is free, the results in k order: for parts of uneven cost (one-vs-rest's problems, where
/// one class may take ten times another's epochs), which [`each`]'s fixed runs would leave a
/// thread idle on. Which thread ran a part never changes what it returns.
pub fn queued<T: Send>(count: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads.clamp(1, count.max(1));
    if threads == 1 {
        return (0..count).map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (f, next) = (&f, &next);
                scope.spawn(move || {
                    let mut mine = vec![];
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= count {
                            return mine;
                        }
                        mine.push((k, f(k)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    done.sort_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, t)| t).collect()
}

/// Per-part vectors of one length (partial sums of a pass), added in part order: the same sums
/// whatever the thread count that computed the parts.
pub fn add_in_order(parts: Vec<Vec<f64>>) -> Vec<f64> {
    let mut parts = parts.into_iter();
    let mut total = parts.next().unwrap_or_default();
    for part in parts {
        for (x, y) in total.iter_mut().zip(part) {
            *x += y;
        }
    }
    total
}

/// `f(i)` for every i in `0..n`, computed by blocks on up to `threads` threads.
pub fn map<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    blocks(n, threads, |r| r.map(&f).collect::<Vec<T>>()).into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_back_in_order_and_sums_do_not_depend_on_threads() {
        let n = 5 * BLOCK + 17;
        let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 * 1e-3 + 1e-17 * i as f64).collect();
        let sum = |threads| -> f64 { blocks(n, threads, |r| values[r].iter().sum::<f64>()).into_iter().sum() };
        let one = sum(1);
        for threads in [2, 3, 8, 64] {
            assert_eq!(sum(threads).to_bits(), one.to_bits(), "{threads} threads");
            assert_eq!(map(n, threads, |i| i), (0..n).collect::<Vec<_>>());
            assert_eq!(each(5, threads, |k| k * k), vec![0, 1, 4, 9, 16]);
            assert_eq!(queued(5, threads, |k| k * k), vec![0, 1, 4, 9, 16]);
        }
        assert!(blocks(0, 4, |r| r.len()).is_empty());
    }
}
