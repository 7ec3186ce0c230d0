//! The temporary files optc writes beside a file it replaces (an output, a cache), and what
//! becomes of them when a run is cut short. Each is named `.optc-PID-…` after the process that
//! writes it and listed while it lives: an interrupt or a termination removes the listed ones
//! before the process ends ([`remove_all`]), and a later run removes those a killed process
//! (`kill -9`, the OOM killer) could not ([`sweep`]). A temporary file that becomes its final
//! file ([`Temporary::persist`]) leaves the list first, so the removal never touches a result.

use std::fs::{self, File};
use std::io::{self, Write};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files of this process that exist now.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// What every temporary file's name begins with.
const PREFIX: &str = ".optc-";

/// A temporary file in a folder, removed when dropped unless persisted.
#[derive(Debug)]
pub struct Temporary {
    file: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Temporary {
    /// A new temporary file in `dir`, its name ending in `suffix`, created with `mode` (masked
    /// by the umask) when given. The temporary files of dead processes in `dir` are removed
    /// first.
    pub fn new_in(dir: &Path, suffix: &str, mode: Option<u32>) -> io::Result<Temporary> {
        sweep(dir);
        let prefix = format!("{PREFIX}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(suffix);
        #[cfg(unix)]
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(fs::Permissions::from_mode(mode));
        }
        #[cfg(not(unix))]
        let _ = mode;
        let file = builder.tempfile_in(dir)?;
        let path = file.path().to_path_buf();
        if let Ok(mut live) = LIVE.lock() {
            live.push(path.clone());
        }
        Ok(Temporary { file: Some(file), path })
    }

    /// Renames it over `to`: it is no longer temporary.
    pub fn persist(mut self, to: &Path) -> Result<File, tempfile::PersistError> {
        self.forget();
        self.file.take().expect("a live temporary file").persist(to)
    }

    fn forget(&self) {
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|p| p != &self.path);
        }
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        self.forget();
    }
}

impl Deref for Temporary {
    type Target = tempfile::NamedTempFile;
    fn deref(&self) -> &tempfile::NamedTempFile {
        self.file.as_ref().expect("a live temporary file")
    }
}

impl DerefMut for Temporary {
    fn deref_mut(&mut self) -> &mut tempfile::NamedTempFile {
        self.file.as_mut().expect("a live temporary file")
    }
}

impl Write for Temporary {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (**self).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
}

/// Removes every temporary file this process has open, for a process about to end on a signal
/// (its destructors will not run).
pub fn remove_all() {
    if let Ok(live) = LIVE.lock() {
        for path in live.iter() {
            let _ = fs::remove_file(path);
        }
    }
}

/// Removes the temporary files in `dir` whose writer is no longer running: named `.optc-PID-…`
/// for a PID with no `/proc/PID`. Where there is no `/proc` nothing is removed.
pub fn sweep(dir: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)?.split_once('-')?.0.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry is the process's: `remove_all` in one test would remove another's live
    /// temporary (seen as a failure of the first test below under `cargo test`'s threads).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_dead_writers_file_is_swept_and_a_live_ones_is_not() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().expect("tmp");
        // PID 4194304 is above Linux's largest (2²²): never running.
        let dead = dir.path().join(".optc-4194304-abc.cache");
        let mine = Temporary::new_in(dir.path(), ".cache", None).expect("temporary");
        let other = dir.path().join(".optc-notapid-x");
        fs::write(&dead, b"x").expect("write");
        fs::write(&other, b"x").expect("write");
        sweep(dir.path());
        assert!(!dead.exists() || !Path::new("/proc/self").exists());
        assert!(mine.path().exists() && other.exists());
        let path = mine.path().to_path_buf();
        drop(mine);
        assert!(!path.exists());
    }

    #[test]
    fn a_persisted_file_leaves_the_list() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir().expect("tmp");
        let mut t = Temporary::new_in(dir.path(), ".out", None).expect("temporary");
        t.write_all(b"kept").expect("write");
        let to = dir.path().join("result");
        t.persist(&to).expect("persist");
        remove_all();
        assert_eq!(fs::read(&to).expect("result"), b"kept");
    }
}
