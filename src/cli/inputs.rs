//! Reading a data file for a command: LIBSVM text, through `--cache` when asked.

use super::session::DataOptions;
use super::Failure;
use crate::data::cache::CacheNote;
use crate::data::{read_libsvm_with, DataError, Dataset, ReadOptions};
use std::path::Path;
use std::time::Instant;

/// Reads a data file (`-`: standard input), with the time it took and, with `--cache`, what
/// the cache did; with `progress`, the bytes read are shown on a terminal.
pub(crate) fn load_data(
    path: &Path,
    role: &str,
    progress: bool,
    opts: &DataOptions,
) -> Result<(Dataset, f64, Option<CacheNote>), Failure> {
    readable(role, path)?;
    let start = Instant::now();
    let read = ReadOptions { threads: opts.threads(), progress };
    let parse = || read_libsvm_with(path, &read);
    let (d, note) = match opts.cache_dir() {
        Some(dir) => {
            let (d, note) = crate::data::cache::load(path, &dir, parse).map_err(data_failure)?;
            (d, Some(note))
        }
        None => (parse().map_err(data_failure)?, None),
    };
    Ok((d, start.elapsed().as_secs_f64(), note))
}

/// Ok when the file a command was given as its `role` ("data file", "test file", …) can be
/// opened (or is `-`, standard input); else the input error that names the role, the file and
/// the reason in plain words.
pub(crate) fn readable(role: &str, path: &Path) -> Result<(), Failure> {
    if path == Path::new("-") {
        return Ok(());
    }
    let why = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => "it is a folder".to_string(),
        Ok(_) => match std::fs::File::open(path) {
            Ok(_) => return Ok(()),
            Err(e) => crate::data::io_reason(&e),
        },
        Err(e) => crate::data::io_reason(&e),
    };
    Err(Failure::Input(format!("cannot read {role} {}: {why}", path.display())))
}

pub(crate) fn data_failure(e: DataError) -> Failure {
    let ctx = e.context();
    if ctx.is_empty() {
        Failure::Input(e.to_string())
    } else {
        Failure::Input(format!("{e}\n{ctx}"))
    }
}
