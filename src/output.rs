//! Output files (`--save`, `--out`, `--trace`): opened before any work is done, so a bad path
//! costs nothing, and written at the end in one step.
//!
//! A regular file is replaced atomically: a temporary file beside the *real* target (after
//! following symlinks, so the link survives and keeps pointing at the new contents), then a
//! rename. A reader never sees half a model, and a failed run leaves the old file in place. A new
//! file gets 0666 minus the umask, like any file a shell redirection creates; a replaced file
//! keeps its mode and, where the process may set it, its owner. Anything that is not a regular
//! file (a pipe, `/dev/stdout`, a terminal, a process substitution `>(gzip > p.gz)`) is written
//! straight through: renaming over it would replace the device or the link itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why an output path cannot be written; `path` is as the user gave it.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {reason}")]
pub struct OutputError {
    pub path: String,
    pub reason: String,
}

/// An output file, opened and ready to receive its contents once.
#[derive(Debug)]
pub struct OutputFile {
    shown: String,
    target: Target,
}

#[derive(Debug)]
enum Target {
    Stdout,
    /// Not a regular file: written in place.
    Stream(File),
    /// A regular file (or a new one): a temporary file renamed over `real` at the end.
    Replace {
        real: PathBuf,
        tmp: crate::temporary::Temporary,
        keep: Option<Kept>,
    },
}

/// What a replaced file keeps of the one it replaces.
#[derive(Debug, Clone, Copy)]
struct Kept {
    mode: u32,
    uid: u32,
    gid: u32,
}

/// How many symlinks deep a path may go (the kernel's own limit is 40).
const MAX_LINKS: usize = 40;

impl OutputFile {
    /// Opens `path` for writing at the end: `-` is standard output. Fails now, before any work,
    /// if the file could not be written then.
    pub fn prepare(path: &Path) -> Result<OutputFile, OutputError> {
        let shown = path.display().to_string();
        let fail = |reason: String| OutputError { path: shown.clone(), reason };
        if path == Path::new("-") {
            return Ok(OutputFile { shown, target: Target::Stdout });
        }
        let target = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => return Err(fail("it is a folder".into())),
            // `/dev/stdout`, a pipe, `/proc/self/fd/N`: open the path itself, which follows even
            // the kernel's magic links that have no name to resolve to.
            Ok(m) if !m.is_file() => {
                Target::Stream(OpenOptions::new().write(true).open(path).map_err(|e| fail(plain(&e)))?)
            }
            Ok(m) => {
                let real = std::fs::canonicalize(path).map_err(|e| fail(plain(&e)))?;
                // Renaming would succeed over a read-only file in a writable folder; refuse, as a
                // shell's `>` would. Opening without truncating changes nothing.
                OpenOptions::new().write(true).open(&real).map_err(|e| fail(plain(&e)))?;
                let keep = Kept { mode: m.permissions().mode() & 0o7777, uid: m.uid(), gid: m.gid() };
                replace(real, Some(keep)).map_err(fail)?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                replace(final_target(path).map_err(&fail)?, None).map_err(fail)?
            }
            Err(e) => return Err(fail(plain(&e))),
        };
        Ok(OutputFile { shown, target })
    }

    /// Writes the whole contents and, for a regular file, puts it in place.
    pub fn commit(self, contents: &[u8]) -> Result<(), OutputError> {
        let fail = |e: io::Error| OutputError { path: self.shown.clone(), reason: plain(&e) };
        match self.target {
            Target::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(contents).and_then(|_| out.flush()).map_err(fail)
            }
            Target::Stream(mut f) => f.write_all(contents).and_then(|_| f.flush()).map_err(fail),
            Target::Replace { real, mut tmp, keep } => {
                tmp.write_all(contents).map_err(fail)?;
                if let Some(k) = keep {
                    let file = tmp.as_file();
                    file.set_permissions(std::fs::Permissions::from_mode(k.mode)).map_err(fail)?;
                    // Only root may give a file away; anyone else keeps their own ownership,
                    // as with any editor that saves by renaming.
                    let _ = std::os::unix::fs::fchown(file, Some(k.uid), Some(k.gid));
                    if k.mode & 0o6000 != 0 {
                        // chown clears set-id bits; put them back.
                        file.set_permissions(std::fs::Permissions::from_mode(k.mode)).map_err(fail)?;
                    }
                }
                tmp.as_file().sync_all().map_err(fail)?;
                tmp.persist(&real).map_err(|e| fail(e.error))?;
                Ok(())
            }
        }
    }

    /// The path as the user gave it.
    pub fn name(&self) -> &str {
        &self.shown
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout)
    }
}

/// A temporary file in the folder of `real`, created now to prove the folder is writable.
fn replace(real: PathBuf, keep: Option<Kept>) -> Result<Target, String> {
    let dir = match real.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(format!("the folder {} does not exist", dir.display()));
    }
    let name = real.file_name().map_or("out".into(), |n| n.to_string_lossy().into_owned());
    // 0666 here is masked by the umask when the file is created, as for `>` in a shell.
    let tmp = crate::temporary::Temporary::new_in(&dir, &format!(".{name}.tmp"), Some(0o666))
        .map_err(|e| format!("cannot create a file in {}: {}", dir.display(), plain(&e)))?;
    Ok(Target::Replace { real, tmp, keep })
}

/// Where a path that does not exist yet will be created: through any chain of dangling symlinks
/// to the name at its end, so that writing through a link creates its target.
fn final_target(path: &Path) -> Result<PathBuf, String> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|e| plain(&e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err("too many levels of symbolic links".into())
}

/// An IO error without Rust's "(os error N)" suffix.
fn plain(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(k) => s[..k].to_string(),
        None => s,
    }
}
