//! Reader throughput on real LIBSVM files: MB of text per second, plain and compressed.
//!
//!     cargo bench --bench parse [-- DIR]      (DIR defaults to ../shared/data)
//!
//! Each file is decompressed once to a temporary plain copy; both the plain copy and the
//! original (.xz) are then read by optc's reader, best of 3, single thread.

use optc::data::read_libsvm;
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;

fn best_of<T>(n: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..n {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (best, out.expect("ran at least once"))
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| "../shared/data".into());
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("no data directory at {}; pass one: cargo bench --bench parse -- DIR", dir.display());
        return;
    };
    let mut files: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "xz")).collect();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    let tmp = tempfile::tempdir().expect("tmp");
    println!("| file | rows | nnz | text MB | plain s | plain MB/s | .xz s | .xz MB/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for f in files {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut text = vec![];
        optc::data::open_text(&f, false).expect("open").read_to_end(&mut text).expect("decompress");
        let plain = tmp.path().join(name.trim_end_matches(".xz"));
        std::fs::write(&plain, &text).expect("write plain");
        let mb = text.len() as f64 / 1e6;
        let (tp, d) = best_of(3, || read_libsvm(&plain).expect("parses"));
        let (tx, _) = best_of(3, || read_libsvm(&f).expect("parses"));
        println!(
            "| {name} | {} | {} | {mb:.1} | {tp:.3} | {:.0} | {tx:.3} | {:.0} |",
            d.rows(),
            d.nnz(),
            mb / tp,
            mb / tx
        );
        let _ = std::fs::remove_file(&plain);
    }
}
