//! The streamed reader's tests: blocks in file order, the ranks' shares, a bad line, the scan, the block cache.

use super::*;
use std::io::Write;

fn source(text: &str, rows: usize, workers: usize) -> (tempfile::TempDir, StreamSource) {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("d.svm");
    std::fs::File::create(&path).and_then(|mut f| f.write_all(text.as_bytes())).expect("write");
    let s = StreamSource::new(&path, rows, workers).expect("source");
    (dir, s)
}

#[test]
fn blocks_keep_file_order_and_file_lines() {
    let text = "# head\n1 1:1\n-1 2:2\n\n1 3:3\n# c\n# c\n-1 1:4 3:5\n1 2:6\n";
    for workers in [1, 2, 3] {
        let (_d, s) = source(text, 2, workers);
        let blocks: Vec<Dataset> = s.blocks().expect("open").map(|b| b.expect("block")).collect();
        assert!(blocks.iter().all(|b| b.rows() <= 2));
        let lines: Vec<u32> = blocks.iter().flat_map(|b| b.lines.clone()).collect();
        assert_eq!(lines, vec![2, 3, 5, 8, 9]);
        let values: Vec<f64> = blocks.iter().flat_map(|b| b.x.data().to_vec()).collect();
        assert_eq!(values, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }
}

/// The shares of 1–6 ranks tile the file: together, in rank order, they are the whole
/// file's rows with its own line numbers, each row in one share; a compressed file is
/// refused.
#[test]
fn the_ranks_shares_tile_the_file_with_its_line_numbers() {
    let rows = |s: &StreamSource| -> (Vec<u32>, Vec<f64>) {
        let blocks: Vec<Dataset> = s.blocks().expect("open").map(|b| b.expect("block")).collect();
        (
            blocks.iter().flat_map(|b| b.lines.clone()).collect(),
            blocks.iter().flat_map(|b| b.x.data().to_vec()).collect(),
        )
    };
    for text in ["# head\n1 1:1\n-1 2:2\n\n1 3:3\n# c\n# c\n-1 1:4 3:5\n1 2:6\n", "1 1:1\n-1 2:22.5\n1 3:3"] {
        let (_d, whole) = source(text, 2, 2);
        let want = rows(&whole);
        for ranks in 1..=6 {
            let (mut lines, mut values) = (vec![], vec![]);
            for rank in 0..ranks {
                let share = whole.clone().share(rank, ranks).expect("plain text");
                let (l, v) = rows(&share);
                lines.extend(l);
                values.extend(v);
            }
            assert_eq!((&lines, &values), (&want.0, &want.1), "{ranks} ranks");
        }
    }
    let dir = tempfile::tempdir().expect("tmp");
    let gz = dir.path().join("d.svm.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 8, 0, 0, 0]).expect("write");
    let Err(err) = StreamSource::new(&gz, 2, 1).expect("source").share(0, 2) else { panic!("a compressed share") };
    assert!(err.contains("is compressed"), "{err}");
}

#[test]
fn a_bad_line_in_a_later_block_names_its_file_line() {
    let text = "1 1:1\n1 1:1\n1 1:1\n1 1:1\n1 1:1\n1 0:1\n1 1:1\n";
    for workers in [1, 2] {
        let (_d, s) = source(text, 2, workers);
        let err = s.blocks().expect("open").find_map(|b| b.err()).expect("an error");
        let shown = err.to_string();
        assert!(shown.ends_with("d.svm:6:3: feature index 0: indices are 1-based"), "{shown}");
    }
}

#[test]
fn scan_counts_everything_and_samples_at_most_a_block() {
    let mut text = String::new();
    for i in 0..100 {
        text += &format!("{} {}:{}\n", if i % 3 == 0 { 2 } else { 1 }, 1 + i % 7, 1 + i % 4);
    }
    let (_d, s) = source(&text, 16, 2);
    let mut s = s;
    let scan = scan(&mut s, 1).expect("scan");
    assert_eq!((scan.rows, scan.features, scan.nnz, scan.blocks), (100, 7, 100, 7));
    assert_eq!(scan.max_row_norm_sq, 16.0);
    assert_eq!(scan.largest_block, 16);
    assert_eq!(scan.sample.rows(), 100);
    assert!(scan.sample.lines.windows(2).all(|w| w[0] < w[1]));
    let map = scan.label_map(crate::stdlib::LabelKind::Labels).expect("two labels");
    assert_eq!(map.originals, vec![1.0, 2.0]);
}

fn all_blocks(s: &StreamSource) -> Vec<Dataset> {
    s.blocks().expect("open").map(|b| b.expect("block")).collect()
}

fn same_blocks(a: &[Dataset], b: &[Dataset]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.x, y.x);
        assert_eq!((&x.labels, &x.lines, x.bytes, x.max_index_line), (&y.labels, &y.lines, y.bytes, y.max_index_line));
        assert_eq!(x.name, y.name);
    }
}

fn note(s: &Scan) -> String {
    s.cache.as_ref().map(|n| n.to_string()).unwrap_or_default()
}

#[test]
fn a_cache_hands_later_passes_the_blocks_the_text_gave() {
    let text = "# head\n1 1:1.5\n-1 2:2\n\n1 3:3 9:0.25\n# c\n# c\n-1 1:4 3:5\n1 2:6\n-1 4:1e-3\n";
    for workers in [1, 2] {
        let (dir, plain) = source(text, 2, workers);
        let from_text = all_blocks(&plain);
        let caches = dir.path().join("caches");
        let mut cached = plain.clone().with_cache(Some(CacheDir::In(caches.clone())));
        let first = scan(&mut cached, 1).expect("scan");
        assert!(note(&first).starts_with("data cache written to"), "{}", note(&first));
        assert!(cached.cached().is_some_and(|p| p.starts_with(&caches)));
        same_blocks(&all_blocks(&cached), &from_text);
        // A second pass, and a second run, read the same blocks back.
        same_blocks(&all_blocks(&cached), &from_text);
        let mut again = plain.clone().with_cache(Some(CacheDir::In(caches.clone())));
        let second = scan(&mut again, 1).expect("scan");
        assert!(note(&second).starts_with("data read from the cache"), "{}", note(&second));
        assert_eq!((second.rows, second.features, second.nnz), (first.rows, first.features, first.nnz));
        assert_eq!(second.sample.x, first.sample.x);
        same_blocks(&all_blocks(&again), &from_text);
    }
}

#[test]
fn a_cache_that_does_not_match_is_not_read() {
    let text = "1 1:1\n-1 2:2\n1 3:3\n-1 1:4\n1 2:6\n";
    let (dir, plain) = source(text, 2, 1);
    let from_text = all_blocks(&plain);
    let caches = CacheDir::In(dir.path().join("caches"));
    let mut cached = plain.clone().with_cache(Some(caches.clone()));
    scan(&mut cached, 1).expect("scan");
    let log = cached.cached().expect("written").to_path_buf();
    let bytes = std::fs::read(&log).expect("log");
    let rescan = |rows: usize| {
        let mut s = StreamSource { block_rows: rows, ..plain.clone() }.with_cache(Some(caches.clone()));
        let scanned = scan(&mut s, 1).expect("scan");
        (note(&scanned), s)
    };
    // A flipped bit in a block's values, a file cut short, another block size: each is
    // said, the text is read instead and the cache rewritten.
    let mut flipped = bytes.clone();
    let k = flipped.len() - 60;
    flipped[k] ^= 0x10;
    for (damaged, said) in [(flipped, "checksum"), (bytes[..bytes.len() - 1].to_vec(), "cut short")] {
        std::fs::write(&log, damaged).expect("damage");
        let (said_now, s) = rescan(2);
        assert!(said_now.contains(said) && said_now.contains("rewritten"), "{said_now}");
        same_blocks(&all_blocks(&s), &from_text);
        assert_eq!(std::fs::read(&log).expect("log"), bytes, "rewritten as it was");
    }
    // A frame claiming more non-zeros than any block of the log holds is refused before
    // anything is read or allocated for it (the checksum would come only after).
    let start = 64 + std::fs::canonicalize(&plain.path).expect("path").as_os_str().len();
    let mut inflated = bytes.clone();
    let nnz = u64::from_ne_bytes(inflated[start + 8..start + 16].try_into().expect("8 bytes"));
    inflated[start + 8..start + 16].copy_from_slice(&(nnz + 1).to_ne_bytes());
    std::fs::write(&log, inflated).expect("damage");
    let (said, s) = rescan(2);
    assert!(said.contains("the size of the block at byte"), "{said}");
    same_blocks(&all_blocks(&s), &from_text);
    let (said, s) = rescan(3);
    assert!(said.contains("written with --block-rows 2"), "{said}");
    assert!(all_blocks(&s).iter().any(|b| b.rows() == 3));
    // The data file changed: a stale cache is not read.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&plain.path, "1 1:1\n").expect("rewrite");
    let (said, s) = rescan(3);
    assert!(said.contains("stale"), "{said}");
    assert_eq!(all_blocks(&s).len(), 1);
}

#[test]
fn a_cache_that_cannot_be_written_is_said_and_the_text_is_read() {
    let (dir, plain) = source("1 1:1\n-1 2:2\n", 1, 1);
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, "").expect("a file");
    let mut s = plain.clone().with_cache(Some(CacheDir::In(not_a_dir)));
    let scanned = scan(&mut s, 1).expect("scan");
    assert!(note(&scanned).starts_with("no data cache written"), "{}", note(&scanned));
    assert!(s.cached().is_none());
    same_blocks(&all_blocks(&s), &all_blocks(&plain));
}

#[test]
fn standard_input_is_refused() {
    assert!(StreamSource::new(Path::new("-"), 10, 1).is_err());
}
