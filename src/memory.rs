//! How much memory the machine can give a run, asked before a data-sized allocation is made:
//! one valid line (`+1 4294967295:1`) asks for a 34 GB weight vector, and an allocation that
//! fails aborts the process instead of telling the user which line did it.

/// Bytes this process can still allocate without swapping itself to death: MemAvailable plus
/// free swap, capped by the cgroup's limit when there is one. None where it cannot be known
/// (then nothing is refused up front).
pub fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |key: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(key))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    let system = field("MemAvailable:")? + field("SwapFree:").unwrap_or(0);
    Some(match cgroup_headroom() {
        Some(c) => system.min(c),
        None => system,
    })
}

/// memory.max − memory.current of this process's cgroup (v2), if it has a limit.
fn cgroup_headroom() -> Option<u64> {
    let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" (no limit) does not parse
    let current: u64 = read("memory.current")?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// A byte count as a person reads it: `34.4 GB`, `512 kB`.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "kB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_as_a_person_would() {
        assert_eq!(bytes_text(512), "512 bytes");
        assert_eq!(bytes_text(34_359_738_360), "34.4 GB");
        assert_eq!(bytes_text(1_500_000), "1.5 MB");
    }

    #[test]
    fn this_machine_reports_some_memory() {
        let a = available_bytes().expect("Linux has /proc/meminfo");
        assert!(a > 1 << 20, "{a}");
    }
}
