fn main() {
    restore_sigpipe();
    std::process::exit(optc::cli::main());
}

/// A reader that goes away (`optc predict … | head -1`) ends optc as it ends `cat` or `git
/// log`: quietly, by SIGPIPE. Rust's runtime ignores SIGPIPE, so a write to the closed pipe
/// would instead return an error that `print!` turns into a panic. Only the binary does this;
/// the library leaves its host's signal handling alone.
#[cfg(unix)]
#[allow(unsafe_code)]
fn restore_sigpipe() {
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE, and `signal` has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn restore_sigpipe() {}
