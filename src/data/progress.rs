//! Bytes-read feedback while a large data file loads (debian-files takes seconds), drawn only on
//! a terminal, so pipes, `--json` and tests see nothing of it.

use std::io::{self, Read};

/// A reader that advances a spinner showing the bytes read so far (compressed bytes, for a
/// compressed file: that is what the file size on disk says).
pub struct ReadProgress<R> {
    inner: R,
    bar: Option<indicatif::ProgressBar>,
    since_draw: u64,
}

impl<R: Read> ReadProgress<R> {
    pub fn new(inner: R, name: &str, show: bool) -> Self {
        let bar = show.then(|| {
            let b = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
            b.set_style(
                indicatif::ProgressStyle::with_template("{spinner} reading {msg}: {bytes} ({bytes_per_sec})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            b.set_message(name.to_string());
            b
        });
        ReadProgress { inner, bar, since_draw: 0 }
    }
}

impl<R: Read> Read for ReadProgress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(bar) = &self.bar {
            self.since_draw += n as u64;
            // Drawing is rate-limited by indicatif; counting in 1 MiB steps keeps the hot path free.
            if self.since_draw >= 1 << 20 || n == 0 {
                bar.inc(self.since_draw);
                self.since_draw = 0;
            }
        }
        Ok(n)
    }
}

impl<R> Drop for ReadProgress<R> {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
