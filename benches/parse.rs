//! Reader throughput on real LIBSVM files, against a plain strtod C parser in the same run.
//!
//!     cargo bench --bench parse [-- FILE.svm ...]
//!
//! FILEs default to /tmp/desc.svm and /tmp/files.svm (debian-desc and debian-files, binary
//! train sets), decompressed from ../shared/data when those copies are missing. For each file
//! it prints MB of text per second (median of 3) for: `benches/parse_ref.c` compiled with the
//! system `cc -O2` (getline + strtol + strtod into CSR arrays), optc's reader with 1 thread
//! (line by line) and with 2 and N parser threads (blocks), the same text as .xz, .gz and .zst
//! (decompression alone, then decompressing and parsing), and end-to-end `optc run --epochs 1`
//! wall times without a cache, cold (parse + write the cache) and warm (map the cache).
//!
//! The machine may be shared: the load average is printed with each table, and the ratios
//! within a row, measured minutes apart at most, are what to compare.

use optc::data::{open_text, read_libsvm_with, ReadOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const RUNS: usize = 3;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn timed<T>(f: impl FnMut() -> T) -> f64 {
    timed_cpu(f).0
}

/// Median wall and CPU seconds (CPU: this process's user + system time, all threads).
fn timed_cpu<T>(mut f: impl FnMut() -> T) -> (f64, f64) {
    let runs: Vec<(f64, f64)> = (0..RUNS)
        .map(|_| {
            let (t, c) = (Instant::now(), cpu_seconds());
            std::hint::black_box(f());
            (t.elapsed().as_secs_f64(), cpu_seconds() - c)
        })
        .collect();
    (median(runs.iter().map(|r| r.0).collect()), median(runs.iter().map(|r| r.1).collect()))
}

/// utime + stime of this process from /proc/self/stat, in seconds (clock ticks of 1/100 s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |k: usize| f.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The C reference, compiled for this run; None (with a note) without a C compiler.
fn compile_reference(dir: &Path) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/parse_ref.c");
    let exe = dir.join("parse_ref");
    match Command::new("cc").args(["-O2", "-o"]).arg(&exe).arg(&src).status() {
        Ok(s) if s.success() => Some(exe),
        other => {
            eprintln!("no C reference: `cc -O2 {}` failed ({other:?})", src.display());
            None
        }
    }
}

/// What the reference measured: wall and CPU seconds (medians), rows, the sum of the values.
struct Reference {
    wall: f64,
    cpu: f64,
    rows: usize,
    sum: f64,
}

/// The reference's own times (open to last row), median of 3.
fn reference(exe: &Path, file: &Path) -> Option<Reference> {
    let (mut wall, mut cpu) = (vec![], vec![]);
    let mut seen = None;
    for _ in 0..RUNS {
        let out = Command::new(exe).arg(file).output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let f: Vec<&str> = text.split_whitespace().collect();
        wall.push(f.first()?.parse().ok()?);
        cpu.push(f.get(5)?.parse().ok()?);
        seen = Some((f.get(1)?.parse().ok()?, f.get(4)?.parse().ok()?));
    }
    let (rows, sum) = seen?;
    Some(Reference { wall: median(wall), cpu: median(cpu), rows, sum })
}

/// The inputs: the arguments, else the /tmp copies, else copies decompressed from ../shared/data.
fn inputs(tmp: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let args: Vec<PathBuf> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).map(PathBuf::from).collect();
    if !args.is_empty() {
        return args.into_iter().map(|p| (p, None)).collect();
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    let mut out = vec![];
    for (copy, xz) in
        [("/tmp/desc.svm", "debian-desc.binary.train.xz"), ("/tmp/files.svm", "debian-files.binary.train.xz")]
    {
        let xz = shared.join(xz);
        let xz = xz.exists().then_some(xz);
        if Path::new(copy).exists() {
            out.push((PathBuf::from(copy), xz));
        } else if let Some(x) = &xz {
            let plain = tmp.join(Path::new(copy).file_name().expect("a file name"));
            let mut text = vec![];
            open_text(x, false).expect("open").read_to_end(&mut text).expect("decompress");
            std::fs::write(&plain, &text).expect("write the plain copy");
            out.push((plain, xz));
        }
    }
    if out.is_empty() {
        eprintln!("no data: pass LIBSVM files (cargo bench --bench parse -- FILE ...) or keep ../shared/data");
    }
    out
}

fn main() {
    let tmp = tempfile::tempdir().expect("tmp");
    let reference_exe = compile_reference(tmp.path());
    let cores = optc::data::available_threads();
    let files = inputs(tmp.path());
    let read = |p: &Path, threads: usize| {
        read_libsvm_with(p, &ReadOptions { threads, progress: false }).unwrap_or_else(|e| panic!("{e}"))
    };

    let more = cores > 2;
    println!("Plain text: MB/s of wall time, and in brackets MB per CPU second (median of {RUNS}; {cores} cores; load average {})\n", load());
    println!(
        "| file | MB | rows | nnz | C strtod | optc 1 thread | optc 2 threads |{} 2 threads / C (wall) | 1 thread / C (CPU) |",
        if more { format!(" optc {cores} threads |") } else { String::new() }
    );
    println!("|---|---:|---:|---:|---:|---:|---:|{}---:|---:|", if more { "---:|" } else { "" });
    for (file, _) in &files {
        let mb = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let d = read(file, 1);
        let c = reference_exe.as_deref().and_then(|exe| reference(exe, file));
        if let Some(r) = &c {
            let ours: f64 = d.csr().2.iter().sum();
            assert_eq!(r.rows, d.rows(), "the C reference read other rows");
            assert!((ours - r.sum).abs() <= 1e-9 * r.sum.abs().max(1.0), "the C reference read other values");
        }
        let t1 = timed_cpu(|| read(file, 1));
        let t2 = timed_cpu(|| read(file, 2));
        let cell = |(wall, cpu): (f64, f64)| format!("{:.0} ({:.0})", mb / wall, mb / cpu);
        let (c_cell, ratios) = match &c {
            Some(r) => (cell((r.wall, r.cpu)), format!("{:.2} | {:.2}", r.wall / t2.0, r.cpu / t1.1)),
            None => ("–".into(), "– | –".into()),
        };
        let n_cell = if more { format!(" {} |", cell(timed_cpu(|| read(file, cores)))) } else { String::new() };
        println!(
            "| {} | {mb:.1} | {} | {} | {c_cell} | {} | {} |{n_cell} {ratios} |",
            file.display(),
            d.rows(),
            d.nnz(),
            cell(t1),
            cell(t2),
        );
    }
    if std::env::var_os("PARSE_BENCH_PLAIN_ONLY").is_some() {
        return;
    }

    println!("\nCompressed input, MB/s of decompressed text (median of {RUNS}; load average {})\n", load());
    println!("| file | decompress only | parse, 1 thread | parse, 2 threads |");
    println!("|---|---:|---:|---:|");
    for (file, xz) in &files {
        let text = std::fs::read(file).expect("read");
        let mb = text.len() as f64 / 1e6;
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let gz = tmp.path().join(format!("{name}.gz"));
        let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::default());
        e.write_all(&text).expect("gzip");
        std::fs::write(&gz, e.finish().expect("gzip")).expect("write .gz");
        let zst = tmp.path().join(format!("{name}.zst"));
        std::fs::write(&zst, zstd::encode_all(&text[..], 3).expect("zstd")).expect("write .zst");
        drop(text);
        for compressed in xz.iter().chain([&gz, &zst]) {
            let decompress = timed(|| {
                let mut n = 0u64;
                let mut r = open_text(compressed, false).expect("open");
                let mut buf = vec![0u8; 1 << 20];
                while let Ok(k) = r.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    n += k as u64;
                }
                n
            });
            let rate = |t: f64| format!("{:.0}", mb / t);
            println!(
                "| {} | {} | {} | {} |",
                compressed.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                rate(decompress),
                rate(timed(|| read(compressed, 1))),
                rate(timed(|| read(compressed, 2))),
            );
        }
        let _ = std::fs::remove_file(&gz);
        let _ = std::fs::remove_file(&zst);
    }

    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l1_logistic.opt");
    let optc = env!("CARGO_BIN_EXE_optc");
    println!(
        "\nEnd to end, `optc run examples/l1_logistic.opt FILE --epochs 1 --json`, wall seconds and the \
         report's parse_seconds (median of {RUNS}; load average {})\n",
        load()
    );
    println!("| file | no cache | --cache, cold (parse + write) | --cache, warm (mapped) | warm / no cache |");
    println!("|---|---:|---:|---:|---:|");
    let cache_dir = tmp.path().join("cache");
    for (file, _) in &files {
        let run = |cache: bool| {
            let mut c = Command::new(optc);
            c.arg("run").arg(&model).arg(file).args(["--epochs", "1", "--json"]);
            if cache {
                c.arg(format!("--cache={}", cache_dir.display()));
            }
            let t = Instant::now();
            let out = c.output().expect("optc runs");
            let wall = t.elapsed().as_secs_f64();
            assert!(out.status.success(), "optc run failed: {}", String::from_utf8_lossy(&out.stderr));
            let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
            (wall, report["parse_seconds"].as_f64().unwrap_or(f64::NAN))
        };
        let both = |runs: Vec<(f64, f64)>| {
            (median(runs.iter().map(|r| r.0).collect()), median(runs.iter().map(|r| r.1).collect()))
        };
        let plain = both((0..RUNS).map(|_| run(false)).collect());
        let cold = both(
            (0..RUNS)
                .map(|_| {
                    let _ = std::fs::remove_dir_all(&cache_dir);
                    run(true)
                })
                .collect(),
        );
        let warm = both((0..RUNS).map(|_| run(true)).collect());
        let cell = |(wall, read): (f64, f64)| format!("{wall:.2} (read {read:.3})");
        println!(
            "| {} | {} | {} | {} | {:.2} |",
            file.display(),
            cell(plain),
            cell(cold),
            cell(warm),
            warm.0 / plain.0
        );
        let _ = std::fs::remove_dir_all(&cache_dir);
    }
}
