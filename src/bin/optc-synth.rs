//! `optc-synth`: writes the seeded power-law synthetic set (`optc::data::synthetic`) as LIBSVM
//! text, a row at a time, so benchmark files larger than memory can be made. The same
//! arguments always write the same bytes, and the file reads back to the set the benches build
//! in memory from the same spec.
//!
//!     optc-synth --rows 1000000 --features 100000 -o synth-1m.svm
//!     optc-synth --rows 1000 | head

use clap::Parser;
use optc::data::synthetic::{write_libsvm, SyntheticSpec};
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

/// Write a seeded synthetic sparse binary classification set as LIBSVM text.
#[derive(Parser, Debug)]
#[command(name = "optc-synth", version)]
struct Args {
    /// Rows (examples) to write.
    #[arg(long, default_value_t = SyntheticSpec::default().rows)]
    rows: usize,
    /// Features: indices run from 1 to this.
    #[arg(long, default_value_t = SyntheticSpec::default().features)]
    features: usize,
    /// Feature draws per row (repeats merge, so a row has somewhat fewer non-zeros).
    #[arg(long, default_value_t = SyntheticSpec::default().draws_per_row)]
    draws: usize,
    /// Power-law exponent: P(feature j) ∝ 1/j^exponent.
    #[arg(long, default_value_t = SyntheticSpec::default().exponent)]
    exponent: f64,
    /// Seed of the random stream.
    #[arg(long, default_value_t = SyntheticSpec::default().seed)]
    seed: u64,
    /// Output file (default: standard output).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// No summary on standard error.
    #[arg(short, long)]
    quiet: bool,
}

fn main() {
    let args = Args::parse();
    let spec = SyntheticSpec {
        rows: args.rows,
        features: args.features,
        draws_per_row: args.draws,
        exponent: args.exponent,
        seed: args.seed,
    };
    if let Some(why) = spec.invalid() {
        eprintln!("optc-synth: {why}");
        std::process::exit(2);
    }
    let start = Instant::now();
    let (name, result) = match &args.out {
        Some(path) => {
            let file = match std::fs::File::create(path) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("optc-synth: cannot write {}: {e}", path.display());
                    std::process::exit(2);
                }
            };
            (path.display().to_string(), write_to(&spec, file))
        }
        None => ("standard output".to_string(), write_to(&spec, io::stdout().lock())),
    };
    match result {
        Ok(w) if !args.quiet => {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "optc-synth: {} rows × {} features, {} non-zeros, {:.1} MB to {name} in {secs:.1} s ({:.0} MB/s)",
                w.rows,
                spec.features,
                w.nnz,
                w.bytes as f64 / 1e6,
                w.bytes as f64 / 1e6 / secs.max(1e-9)
            );
        }
        Ok(_) => {}
        // A reader that stops early (`| head`) is not an error of ours.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            eprintln!("optc-synth: writing {name}: {e}");
            std::process::exit(1);
        }
    }
}

fn write_to(spec: &SyntheticSpec, sink: impl Write) -> io::Result<optc::data::synthetic::Written> {
    let mut out = BufWriter::with_capacity(1 << 20, sink);
    let written = write_libsvm(spec, &mut out)?;
    out.flush()?;
    Ok(written)
}
