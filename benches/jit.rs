//! One l1-logistic FOBOS epoch (lazy, O(nnz)) three ways, in non-zeros per second, single
//! thread, release build:
//!   interpreter  — optc's reference back end walking the plan;
//!   JIT          — the Cranelift kernel optc compiles from the same plan;
//!   hand         — the same epoch written by hand in Rust (safe, and with unchecked indexing).
//! All run the same row order from the same start and must end with the same weights.
//!
//!     cargo bench --bench jit [-- --rows N] [-- --data FILE]
//!
//! Data: the largest sparse set of ../shared/data (debian-files.binary.train) if present, and
//! a generated 1M × 100k set with ~80 non-zeros per row and power-law feature frequencies.

use optc::data::synthetic::{generate, SyntheticSpec};
use optc::data::{read_libsvm, Dataset, LabelMap};
use optc::exec::driver::RowOrder;
use optc::exec::{interp::Interpreter, jit, Backend, DataView, Orders, State};
use optc::pipeline::{self, CompileOptions};
use optc::plan::{soft, Plan};
use optc::source::SourceFile;
use optc::stdlib::{LabelKind, Library};
use optc::symbolic::sigmoid;
use std::time::Instant;

const MODEL: &str =
    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-6\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

/// The hand-written epoch: exactly the plan's arithmetic, in plain Rust.
struct Hand {
    w: Vec<f64>,
    last: Vec<f64>,
    big: f64,
    t: f64,
    eta0: f64,
    l1: f64,
}

impl Hand {
    fn epoch(&mut self, d: &DataView, order: &[u32]) {
        for &i in order {
            let i = i as usize;
            self.t += 1.0;
            let eta = self.eta0 / self.t.sqrt();
            let (lo, hi) = (d.indptr[i], d.indptr[i + 1]);
            let (idx, val) = (d.indices.range(lo..hi), &d.values[lo..hi]);
            let mut a = 0.0;
            for (j, &v) in idx.iter().zip(val) {
                let j = j as usize;
                let wj = soft(self.w[j], self.big - self.last[j]);
                self.w[j] = wj;
                a += v * wj;
            }
            let y = d.labels[i];
            let g = -y * sigmoid(-y * a);
            self.big += eta * self.l1;
            let (step, tau) = (eta * g, eta * self.l1);
            for (j, &v) in idx.iter().zip(val) {
                let j = j as usize;
                self.w[j] = soft(self.w[j] - step * v, tau);
                self.last[j] = self.big;
            }
        }
    }

    /// The same with unchecked indexing (the bound a C loop would have).
    fn epoch_unchecked(&mut self, d: &DataView, order: &[u32]) {
        let (w, last) = (self.w.as_mut_slice(), self.last.as_mut_slice());
        for &i in order {
            let i = i as usize;
            self.t += 1.0;
            let eta = self.eta0 / self.t.sqrt();
            let (lo, hi) = (d.indptr[i], d.indptr[i + 1]);
            let (idx, val) = (d.indices.range(lo..hi), &d.values[lo..hi]);
            let mut a = 0.0;
            for (j, &v) in idx.iter().zip(val) {
                // SAFETY: every column index of the data is < d = w.len() = last.len().
                unsafe {
                    let wj = soft(*w.get_unchecked(j as usize), self.big - *last.get_unchecked(j as usize));
                    *w.get_unchecked_mut(j as usize) = wj;
                    a += v * wj;
                }
            }
            let y = d.labels[i];
            let g = -y * sigmoid(-y * a);
            self.big += eta * self.l1;
            let (step, tau) = (eta * g, eta * self.l1);
            for (j, &v) in idx.iter().zip(val) {
                // SAFETY: as above.
                unsafe {
                    let wj = w.get_unchecked_mut(j as usize);
                    *wj = soft(*wj - step * v, tau);
                    *last.get_unchecked_mut(j as usize) = self.big;
                }
            }
        }
    }
}

/// The anchor of the issue: dot + logistic derivative + sparse axpy, no regularizer, no lazy
/// bookkeeping (plain SGD). Not the same objective: it shows what this machine does per non-zero
/// before any prox work.
fn plain_sgd_epoch(w: &mut [f64], d: &DataView, order: &[u32], eta: f64) {
    for &i in order {
        let i = i as usize;
        let (lo, hi) = (d.indptr[i], d.indptr[i + 1]);
        let (idx, val) = (d.indices.range(lo..hi), &d.values[lo..hi]);
        let mut a = 0.0;
        for (j, &v) in idx.iter().zip(val) {
            a += v * w[j as usize];
        }
        let y = d.labels[i];
        let step = eta * -y * sigmoid(-y * a);
        for (j, &v) in idx.iter().zip(val) {
            w[j as usize] -= step * v;
        }
    }
}

fn plan() -> Plan {
    let file = SourceFile::new("bench.opt", MODEL);
    let opts = CompileOptions { solver: Some("fobos".into()), ..CompileOptions::default() };
    let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("model checks");
    pipeline::plan(&c, &opts).expect("model plans")
}

struct Row {
    name: String,
    rows: usize,
    nnz: usize,
    interp: f64,
    jit: f64,
    hand: f64,
    hand_unchecked: f64,
    plain: f64,
}

fn measure(name: &str, d: &Dataset, epochs: usize) -> Row {
    let plan = plan();
    let y = LabelMap::fit(LabelKind::Labels, d).and_then(|m| m.apply(d)).expect("labels");
    let view = d.view(&y, d.features());
    let facts = d.facts();
    let nnz = d.nnz() as f64;
    let orders: Vec<Vec<u32>> = {
        let mut o = RowOrder::new(d.rows(), 1);
        (0..epochs).map(|_| o.next_epoch().to_vec()).collect()
    };

    // Each contender: best epoch time over `epochs` epochs from the same start.
    let time_backend = |backend: &mut dyn Backend, n: usize| -> (f64, State) {
        let mut state = State::new(&plan, &facts, &y);
        let mut best = f64::INFINITY;
        for order in orders.iter().take(n) {
            let t = Instant::now();
            backend.epoch(&mut state, &view, &Orders::rows(order)).expect("no divergence");
            best = best.min(t.elapsed().as_secs_f64());
        }
        (nnz / best, state)
    };
    let (interp, s_interp) = time_backend(&mut Interpreter { plan: &plan }, 1);
    let kernel = jit::compile(&plan, &optc::exec::bound_scalars(&plan, &facts)).expect("JIT compiles");
    let (jit, s_jit) = time_backend(&mut jit::JitBackend { plan: &plan, kernel }, epochs);

    let params = optc::exec::bound_scalars(&plan, &facts);
    let find = |n: &str| plan.scalars.iter().position(|s| s.name == n).map(|k| params[k]).expect("param");
    let new_hand = || Hand {
        w: vec![0.0; d.features()],
        last: vec![0.0; d.features()],
        big: 0.0,
        t: 0.0,
        eta0: find("η0"),
        l1: find("l1"),
    };
    let time_hand = |unchecked: bool| -> (f64, Hand) {
        let mut h = new_hand();
        let mut best = f64::INFINITY;
        for order in &orders {
            let t = Instant::now();
            if unchecked {
                h.epoch_unchecked(&view, order);
            } else {
                h.epoch(&view, order);
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        (nnz / best, h)
    };
    let (hand, h) = time_hand(false);
    let (hand_unchecked, hu) = time_hand(true);
    let plain = {
        let mut w = vec![0.0; d.features()];
        let mut best = f64::INFINITY;
        for order in &orders {
            let t = Instant::now();
            plain_sgd_epoch(&mut w, &view, order, 0.1);
            best = best.min(t.elapsed().as_secs_f64());
        }
        std::hint::black_box(&w);
        nnz / best
    };

    // Same arithmetic, same order: the weights after the first epoch agree bit for bit, and
    // after all epochs the JIT and the hand loops agree.
    let w = plan.weights().expect("w").0;
    let mut one = new_hand();
    one.epoch(&view, &orders[0]);
    assert!(s_interp.vectors[w].iter().zip(&one.w).all(|(a, b)| a.to_bits() == b.to_bits()), "interpreter ≠ hand");
    assert!(s_jit.vectors[w].iter().zip(&h.w).all(|(a, b)| a.to_bits() == b.to_bits()), "JIT ≠ hand");
    assert!(hu.w.iter().zip(&h.w).all(|(a, b)| a.to_bits() == b.to_bits()), "unchecked ≠ hand");
    Row { name: name.into(), rows: d.rows(), nnz: d.nnz(), interp, jit, hand, hand_unchecked, plain }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|p| args.get(p + 1)).cloned();
    let mut rows = vec![];
    let file = arg("--data").unwrap_or_else(|| "../shared/data/debian-files.binary.train.xz".into());
    match read_libsvm(std::path::Path::new(&file)) {
        Ok(d) => rows.push(measure(&file.rsplit('/').next().unwrap_or(&file).replace(".xz", ""), &d, 5)),
        Err(e) => eprintln!("skipping {file}: {e}"),
    }
    let spec =
        SyntheticSpec { rows: arg("--rows").and_then(|r| r.parse().ok()).unwrap_or(1_000_000), ..Default::default() };
    let t = Instant::now();
    let d = generate(&spec);
    eprintln!("generated {} in {:.1} s", d.name, t.elapsed().as_secs_f64());
    rows.push(measure(&d.name, &d, 5));

    println!("| data | rows | nnz | interpreter nnz/s | JIT nnz/s | hand (safe) nnz/s | hand (unchecked) nnz/s | JIT / interpreter | hand (best) / JIT | plain SGD, no prox (reference) nnz/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {} | {:.3e} | {:.3e} | {:.3e} | {:.3e} | {:.2}× | {:.2}× | {:.3e} |",
            r.name,
            r.rows,
            r.nnz,
            r.interp,
            r.jit,
            r.hand,
            r.hand_unchecked,
            r.jit / r.interp,
            r.hand.max(r.hand_unchecked) / r.jit,
            r.plain
        );
    }
}
