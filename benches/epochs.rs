//! optc's l1-logistic epochs against the same epochs in plain C (`benches/ref_epochs.c`), in
//! non-zeros per second, single thread, release build:
//!   FOBOS  the lazy stochastic epoch (`--solver fobos`), rows in a seeded random order;
//!   SCD    the first-order coordinate epoch (`solve with scd(newton = 0)`), columns in a
//!          seeded random order, every column (no working set, as one epoch of the plan).
//! Each epoch kind runs from the same start on the same orders through the C loop (compiled here
//! with `cc -O3 -march=native -ffp-contract=off`), optc's JIT kernel and its interpreter, C and
//! JIT alternating in `--rounds` rounds (default 3); the table gives the best epoch of each,
//! JIT / C (the target is ≥ 0.8) and the largest relative difference of the final weights (the
//! arithmetic is the same, so it should be 0, and ≤ 1e-12).
//!
//!     cargo bench --bench epochs [-- --data FILE] [-- --rows N] [-- --epochs N] [-- --rounds N]
//!
//! Data: debian-files.binary.train (--data, default /tmp/files.svm if present, else
//! ../shared/data/debian-files.binary.train.xz) and the generated 1M × 100k set (`--rows` to
//! shrink it). Without a C compiler (`cc`, or $CC) the C column is skipped with a message.

use optc::data::synthetic::{generate, SyntheticSpec};
use optc::data::{read_libsvm, Columns, Dataset, LabelMap};
use optc::exec::driver::RowOrder;
use optc::exec::{interp::Interpreter, jit, Backend, DataView, Orders, State};
use optc::pipeline::{self, CompileOptions};
use optc::plan::Plan;
use optc::source::SourceFile;
use optc::stdlib::{LabelKind, Library};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// λ of both models: small, so that the epochs move many weights (the expensive case).
const LAMBDA: f64 = 1e-6;

fn model(solve: &str) -> String {
    format!(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = {LAMBDA:e}\n\
         minimize E[logistic(y, <x, w>)] + λ·l1(w)\n{solve}\n"
    )
}

fn plan(text: &str, solver: Option<&str>) -> Plan {
    let file = SourceFile::new("bench.opt", text);
    let opts = CompileOptions { solver: solver.map(Into::into), ..CompileOptions::default() };
    let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("model checks");
    pipeline::plan(&c, &opts).expect("model plans")
}

fn param(plan: &Plan, values: &[f64], name: &str) -> f64 {
    plan.scalars.iter().position(|s| s.name == name).map(|k| values[k]).unwrap_or_else(|| {
        panic!("the {} plan has no parameter `{name}`: benches/ref_epochs.c must follow the plan", plan.info.solver)
    })
}

/// One epoch kind through one back end: (best epoch seconds, weights after the first epoch,
/// weights after the last).
fn run_backend(
    backend: &mut dyn Backend,
    plan: &Plan,
    view: &DataView,
    y: &[f64],
    facts: &optc::data::DataFacts,
    orders: &[Vec<u32>],
    by_rows: bool,
) -> (f64, Vec<f64>, Vec<f64>) {
    let mut state = State::new(plan, facts, y);
    backend.init(&mut state, view).expect("init");
    let w = plan.weights().expect("w").0;
    let mut best = f64::INFINITY;
    let mut first = vec![];
    for (e, order) in orders.iter().enumerate() {
        let o = if by_rows { Orders::rows(order) } else { Orders { rows: &[], cols: order, ranks: None } };
        let t = Instant::now();
        backend.epoch(&mut state, view, &o).expect("no divergence");
        best = best.min(t.elapsed().as_secs_f64());
        if e == 0 {
            first = state.vectors[w].clone();
        }
    }
    (best, first, state.vectors[w].clone())
}

/// The C reference: compiled once per process, run on a binary dump of the inputs.
struct CRef {
    exe: PathBuf,
    dir: tempfile::TempDir,
}

impl CRef {
    fn build() -> Result<CRef, String> {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ref_epochs.c");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let exe = dir.path().join("ref_epochs");
        let out = Command::new(&cc)
            .args(["-O3", "-march=native", "-ffp-contract=off", "-o"])
            .arg(&exe)
            .arg(&src)
            .arg("-lm")
            .output()
            .map_err(|e| format!("no C compiler (`{cc}`: {e})"))?;
        if !out.status.success() {
            return Err(format!("`{cc}` failed on {}: {}", src.display(), String::from_utf8_lossy(&out.stderr)));
        }
        Ok(CRef { exe, dir })
    }

    /// Seconds of the best FOBOS and SCD epoch, and the four weight vectors (FOBOS first/last,
    /// SCD first/last).
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        view: &DataView,
        cols: &Columns,
        params: [f64; 5],
        row_orders: &[Vec<u32>],
        col_orders: &[Vec<u32>],
    ) -> (f64, f64, Vec<Vec<f64>>) {
        let input = self.dir.path().join("input.bin");
        let output = self.dir.path().join("output.bin");
        {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&input).expect("temp file"));
            let (m, d) = (view.rows(), view.features);
            let mut put = |b: &[u8]| f.write_all(b).expect("write temp file");
            for v in [m, d, view.indices.len(), row_orders.len()] {
                put(&(v as u64).to_ne_bytes());
            }
            for v in params {
                put(&v.to_ne_bytes());
            }
            view.indptr.iter().for_each(|&p| put(&(p as u64).to_ne_bytes()));
            view.indices.iter().for_each(|j| put(&j.to_ne_bytes()));
            view.values.iter().for_each(|&v| put(&v.to_ne_bytes()));
            view.labels.iter().for_each(|&v| put(&v.to_ne_bytes()));
            cols.ptr().iter().for_each(|&p| put(&(p as u64).to_ne_bytes()));
            cols.rows().iter().for_each(|&i| put(&i.to_ne_bytes()));
            cols.values().iter().for_each(|&v| put(&v.to_ne_bytes()));
            row_orders.iter().flatten().for_each(|&i| put(&i.to_ne_bytes()));
            col_orders.iter().flatten().for_each(|&j| put(&j.to_ne_bytes()));
            f.flush().expect("write temp file");
        }
        let out = Command::new(&self.exe).arg(&input).arg(&output).output().expect("run the C reference");
        assert!(out.status.success(), "C reference failed: {}", String::from_utf8_lossy(&out.stderr));
        let _ = std::fs::remove_file(&input);
        let text = String::from_utf8_lossy(&out.stdout);
        let secs = |kind: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(kind).and_then(|r| r.trim().parse().ok()))
                .unwrap_or_else(|| panic!("C reference printed no `{kind}` time: {text}"))
        };
        let bytes = std::fs::read(&output).expect("C output");
        let _ = std::fs::remove_file(&output);
        let all: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_ne_bytes(c.try_into().expect("8 bytes"))).collect();
        let d = view.features;
        assert_eq!(all.len(), 4 * d, "C output size");
        (secs("fobos"), secs("scd"), all.chunks(d).map(|c| c.to_vec()).collect())
    }
}

/// max |a − b| / max(max |b|, tiny): 0 when the weights are the same.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs())).max(f64::MIN_POSITIVE);
    a.iter().zip(b).fold(0.0f64, |s, (x, y)| s.max((x - y).abs())) / scale
}

struct Line {
    data: String,
    kind: &'static str,
    nnz: usize,
    c: Option<f64>,
    jit: f64,
    interp: f64,
    diff_c: Option<f64>,
    diff_interp: f64,
}

fn measure(name: &str, d: &Dataset, epochs: usize, rounds: usize, c: Option<&CRef>) -> Vec<Line> {
    let y = LabelMap::fit(LabelKind::Labels, d).and_then(|m| m.apply(d)).expect("labels");
    let (indptr, indices, values) = d.csr();
    let cols = optc::data::LazyColumns::built(Columns::of(indptr, indices, values, d.features(), 1));
    let view = d.view(&y, d.features()).with_columns(&cols);
    let facts = d.facts();
    let nnz = d.nnz() as f64;
    let mut order = RowOrder::with_columns(d.rows(), d.features(), 1);
    let (mut row_orders, mut col_orders) = (vec![], vec![]);
    for _ in 0..epochs {
        let o = order.next_orders();
        row_orders.push(o.rows.to_vec());
        col_orders.push(o.cols.to_vec());
    }

    let fobos = plan(&model(""), Some("fobos"));
    let scd = plan(&model("solve with scd(newton = 0)"), None);
    assert_eq!(scd.info.solver, "scd");
    let fp = optc::exec::bound_scalars(&fobos, &facts);
    let sp = optc::exec::bound_scalars(&scd, &facts);
    let params =
        [param(&fobos, &fp, "η0"), param(&fobos, &fp, "l1"), param(&scd, &sp, "κ"), param(&scd, &sp, "c/m"), LAMBDA];

    let kinds = [("FOBOS (lazy)", &fobos, &fp, &row_orders, true), ("SCD (newton = 0)", &scd, &sp, &col_orders, false)];
    // Rounds of C then JIT, the best of each kept: on a machine whose load comes and goes, a
    // slow spell then costs both sides alike, not whichever ran during it.
    let mut c_out: Option<(f64, f64, Vec<Vec<f64>>)> = None;
    let mut jit_out: Vec<(f64, Vec<f64>)> = vec![(f64::INFINITY, vec![]); kinds.len()];
    for _ in 0..rounds {
        if let Some(c) = c {
            let (fs, ss, w) = c.run(&view, cols.get().expect("built"), params, &row_orders, &col_orders);
            c_out = Some(match c_out {
                Some((f0, s0, w0)) => (f0.min(fs), s0.min(ss), w0),
                None => (fs, ss, w),
            });
        }
        for ((_, p, values, orders, by_rows), best) in kinds.iter().zip(&mut jit_out) {
            let kernel = jit::compile(p, values).expect("JIT compiles");
            let (secs, _, last) =
                run_backend(&mut jit::JitBackend { plan: p, kernel }, p, &view, &y, &facts, orders, *by_rows);
            *best = (best.0.min(secs), last);
        }
    }
    let mut lines = vec![];
    for ((kind, p, _, orders, by_rows), (jit_s, jit_last)) in kinds.into_iter().zip(jit_out) {
        // The interpreter is slow: one epoch, compared with the first epoch of the others.
        let (int_s, int_first, _) =
            run_backend(&mut Interpreter { plan: p }, p, &view, &y, &facts, &orders[..1], by_rows);
        let k = if by_rows { 0 } else { 1 };
        let (c_s, diff_c, diff_interp) = match &c_out {
            Some((fs, ss, w)) => {
                let (first, last) = (&w[2 * k], &w[2 * k + 1]);
                (Some(if by_rows { *fs } else { *ss }), Some(rel_diff(&jit_last, last)), rel_diff(&int_first, first))
            }
            None => (None, None, 0.0),
        };
        lines.push(Line {
            data: name.into(),
            kind,
            nnz: d.nnz(),
            c: c_s.map(|s| nnz / s),
            jit: nnz / jit_s,
            interp: nnz / int_s,
            diff_c,
            diff_interp,
        });
    }
    lines
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|p| args.get(p + 1)).cloned();
    let epochs: usize = arg("--epochs").and_then(|e| e.parse().ok()).unwrap_or(3).max(1);
    let rounds: usize = arg("--rounds").and_then(|e| e.parse().ok()).unwrap_or(3).max(1);
    let c = match CRef::build() {
        Ok(c) => Some(c),
        Err(e) => {
            eprintln!("skipping the C reference: {e}");
            None
        }
    };
    let mut lines = vec![];
    let file = arg("--data").unwrap_or_else(|| {
        if Path::new("/tmp/files.svm").exists() {
            "/tmp/files.svm".into()
        } else {
            "../shared/data/debian-files.binary.train.xz".into()
        }
    });
    match read_libsvm(Path::new(&file)) {
        Ok(d) => lines.extend(measure("debian-files.binary.train", &d, epochs, rounds, c.as_ref())),
        Err(e) => eprintln!("skipping {file}: {e}"),
    }
    let spec =
        SyntheticSpec { rows: arg("--rows").and_then(|r| r.parse().ok()).unwrap_or(1_000_000), ..Default::default() };
    let d = generate(&spec);
    lines.extend(measure(&d.name, &d, epochs, rounds, c.as_ref()));

    println!(
        "Best of {epochs} epochs in each of {rounds} rounds of C then JIT (interpreter: 1 epoch), λ = {LAMBDA:e}, nnz/s = the data's non-zeros / epoch seconds.\n"
    );
    println!("| data | epoch | nnz | C nnz/s | JIT nnz/s | interpreter nnz/s | JIT / C | max rel. diff of w: JIT vs C (last epoch), interpreter vs C (first) |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    for l in lines {
        let c = l.c.map_or("(no cc)".into(), |v| format!("{v:.3e}"));
        let ratio = l.c.map_or(String::new(), |v| format!("{:.2}", l.jit / v));
        let diff = l.diff_c.map_or(String::new(), |v| format!("{v:.1e}, {:.1e}", l.diff_interp));
        println!("| {} | {} | {} | {c} | {:.3e} | {:.3e} | {ratio} | {diff} |", l.data, l.kind, l.nnz, l.jit, l.interp);
    }
}
