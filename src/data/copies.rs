//! Columns that are exact copies of an earlier column: the same rows, the same values.
//!
//! Text data is full of them: a word or a file name that only ever occurs with another one.
//! debian-files has 1,085,406 columns but only 467,099 distinct ones; debian-desc 180,716 and
//! 139,804; w8a 300 and 267. Under ℓ1 alone a weight may be moved between copies at no cost
//! (Xw and ‖w‖₁ stay the same while the signs agree), so the optimum is not unique and the
//! Hessian on a support that holds two copies is singular. The solvers that know this keep
//! every copy at zero and let the first column of its kind carry the weight (see
//! `exec::copies`).

use super::Columns;

/// For every column, the first column equal to it (itself when none comes before it). Empty
/// columns are nobody's copy: their weight never moves.
#[derive(Clone, Debug, PartialEq)]
pub struct Copies {
    first: Vec<u32>,
    count: usize,
}

impl Copies {
    /// The copies among `columns`: one pass hashing every column's rows and values (on up to
    /// `threads` threads, each a run of columns), a sort by hash, and an exact comparison
    /// within each run of equal hashes, O(nnz + d log d).
    pub fn of(columns: &Columns, threads: usize) -> Copies {
        let (ptr, rows, values) = (columns.ptr(), columns.rows(), columns.values());
        let d = columns.count();
        let entries = |j: usize| ptr[j]..ptr[j + 1];
        let hash = |j: usize| {
            let mut h = 0x9e37_79b9_7f4a_7c15_u64 ^ (ptr[j + 1] - ptr[j]) as u64;
            // FxHash's step an entry, one finaliser a column: a collision only costs a comparison.
            for k in entries(j) {
                h = (h.rotate_left(5) ^ u64::from(rows[k]) ^ values[k].to_bits().rotate_left(32)).wrapping_mul(FX);
            }
            mix(h)
        };
        let same = |a: usize, b: usize| {
            let (ea, eb) = (entries(a), entries(b));
            rows[ea.clone()] == rows[eb.clone()]
                && values[ea].iter().zip(&values[eb]).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        // Each thread hashes a run of columns and keeps the keys in its share of the hashes'
        // range: a run of equal hashes then lies in one share, sorted and compared by one thread.
        let threads = threads.clamp(1, d.max(1));
        let share = |h: u64| ((u128::from(h) * threads as u128) >> 64) as usize;
        let hashed = |run: std::ops::Range<usize>| -> Vec<Vec<(u64, u32)>> {
            let mut shares = vec![vec![]; threads];
            for j in run.filter(|&j| ptr[j + 1] > ptr[j]) {
                let h = hash(j);
                shares[share(h)].push((h, j as u32));
            }
            shares
        };
        // The copies among one share's keys, as (column, first of its kind).
        let found = |mut keyed: Vec<(u64, u32)>| -> Vec<(u32, u32)> {
            keyed.sort_unstable();
            let mut found = vec![];
            for run in keyed.chunk_by(|a, b| a.0 == b.0) {
                // Columns ascending within a run, so the first of each kind is met first.
                let mut kinds: Vec<u32> = vec![];
                for &(_, j) in run {
                    match kinds.iter().find(|&&k| same(k as usize, j as usize)) {
                        Some(&k) => found.push((j, k)),
                        None => kinds.push(j),
                    }
                }
            }
            found
        };
        let cuts: Vec<usize> = (0..=threads).map(|t| d * t / threads).collect();
        let pairs: Vec<(u32, u32)> = std::thread::scope(|scope| {
            let runs: Vec<_> = cuts.windows(2).map(|run| scope.spawn(|| hashed(run[0]..run[1]))).collect();
            let mut shares = vec![vec![]; threads];
            for run in runs {
                // A thread that panicked leaves its columns unmatched: fewer copies, all true.
                for (t, part) in run.join().unwrap_or_default().into_iter().enumerate() {
                    shares[t].extend(part);
                }
            }
            let found: Vec<_> = shares.into_iter().map(|keyed| scope.spawn(|| found(keyed))).collect();
            found.into_iter().flat_map(|f| f.join().unwrap_or_default()).collect()
        });
        let mut first: Vec<u32> = (0..d as u32).collect();
        for &(j, k) in &pairs {
            first[j as usize] = k;
        }
        let count = pairs.len();
        Copies { first, count }
    }

    /// The first column equal to column `j` (`j` itself when it is the first of its kind).
    pub fn first(&self, j: usize) -> usize {
        self.first[j] as usize
    }

    /// Whether column `j` copies an earlier column.
    pub fn is_copy(&self, j: usize) -> bool {
        self.first(j) != j
    }

    /// How many columns copy an earlier one.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Moves the weight of every copy onto the first column of its kind: Xw does not change,
    /// and ‖w‖₁ does not grow (it shrinks where the signs disagreed).
    pub fn fold(&self, w: &mut [f64]) {
        if self.count == 0 {
            return;
        }
        for j in 0..w.len().min(self.first.len()) {
            let k = self.first(j);
            if k != j && w[j] != 0.0 {
                w[k] += w[j];
                w[j] = 0.0;
            }
        }
    }
}

/// FxHash's multiplier.
const FX: u64 = 0x517c_c1b7_2722_0a95;

/// A 64-bit finaliser (splitmix64's): every input bit reaches every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns of a matrix given as dense rows.
    fn columns(dense: &[&[f64]]) -> Columns {
        let (mut indptr, mut indices, mut values) = (vec![0], vec![], vec![]);
        for row in dense {
            for (j, &v) in row.iter().enumerate().filter(|(_, v)| **v != 0.0) {
                indices.push(j as u32);
                values.push(v);
            }
            indptr.push(indices.len());
        }
        Columns::of(&indptr, (&indices).into(), &values, dense[0].len(), 1)
    }

    #[test]
    fn a_copy_points_at_the_first_column_of_its_kind() {
        // Columns 0, 2 and 4 are equal; 1 has their rows but another value; 3 and 5 are empty;
        // 6 equals 1.
        let c = columns(&[
            &[1.0, 2.0, 1.0, 0.0, 1.0, 0.0, 2.0],
            &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            &[3.0, 3.0, 3.0, 0.0, 3.0, 0.0, 3.0],
        ]);
        let copies = Copies::of(&c, 1);
        let first: Vec<usize> = (0..7).map(|j| copies.first(j)).collect();
        assert_eq!(first, [0, 1, 0, 3, 0, 5, 1]);
        assert_eq!(copies.count(), 3);
        assert!(copies.is_copy(4) && !copies.is_copy(1) && !copies.is_copy(5));
    }

    /// Any thread count finds the copies one thread finds, on 400 columns of which every third
    /// repeats one of the first 60.
    #[test]
    fn copies_do_not_depend_on_threads() {
        let (rows, d) = (50, 400);
        let column = |j: usize| if j % 3 == 2 { j % 60 } else { j };
        let dense: Vec<Vec<f64>> = (0..rows)
            .map(|i| {
                (0..d)
                    .map(|j| if (i * 7 + column(j) * 13) % 5 == 0 { (1 + column(j) % 4) as f64 } else { 0.0 })
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = dense.iter().map(|r| r.as_slice()).collect();
        let c = columns(&refs);
        let one = Copies::of(&c, 1);
        assert!(one.count() > 100, "{} copies", one.count());
        let col = |j: usize| dense.iter().map(|r| r[j]).collect::<Vec<f64>>();
        for j in 0..d {
            let empty = col(j).iter().all(|&v| v == 0.0);
            let first = if empty { j } else { (0..=j).find(|&k| col(k) == col(j)).unwrap_or(j) };
            assert_eq!(one.first(j), first, "column {j}");
        }
        for threads in [2, 3, 8] {
            assert_eq!(Copies::of(&c, threads), one, "{threads} threads");
        }
    }

    #[test]
    fn columns_differing_in_one_row_are_not_copies() {
        let c = columns(&[&[1.0, 1.0], &[1.0, 0.0], &[0.0, 1.0]]);
        assert_eq!(Copies::of(&c, 1).count(), 0);
    }

    #[test]
    fn folding_keeps_xw_and_does_not_grow_the_l1_norm() {
        let dense: [&[f64]; 3] = [&[1.0, 2.0, 1.0, 1.0], &[0.0, 1.0, 0.0, 0.0], &[4.0, 0.0, 4.0, 4.0]];
        let copies = Copies::of(&columns(&dense), 2);
        let xw = |w: &[f64]| dense.iter().map(|r| r.iter().zip(w).map(|(a, b)| a * b).sum::<f64>()).collect::<Vec<_>>();
        let mut w = vec![0.5, -1.0, 0.25, -2.0];
        let before = (xw(&w), w.iter().map(|v: &f64| v.abs()).sum::<f64>());
        copies.fold(&mut w);
        assert_eq!(w, [-1.25, -1.0, 0.0, 0.0]);
        assert_eq!(xw(&w), before.0);
        assert!(w.iter().map(|v| v.abs()).sum::<f64>() < before.1);
    }
}
