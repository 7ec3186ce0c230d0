//! The reader takes plain, gzip, bzip2, xz and zstd files alike (sniffed by magic bytes).

mod common;

use optc::data::read_libsvm;
use std::io::Write;

#[test]
fn compressed_files_read_the_same_rows() {
    let plain = common::fixture("binary.svm");
    let text = std::fs::read(&plain).expect("fixture");
    let want = read_libsvm(&plain).expect("plain");
    let dir = tempfile::tempdir().expect("tmp");
    type Compress = Box<dyn Fn(&[u8]) -> Vec<u8>>;
    let compressors: Vec<(&str, Compress)> = vec![
        (
            "gz",
            Box::new(|b| {
                let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::default());
                e.write_all(b).unwrap();
                e.finish().unwrap()
            }),
        ),
        (
            "bz2",
            Box::new(|b| {
                let mut e = bzip2::write::BzEncoder::new(vec![], bzip2::Compression::default());
                e.write_all(b).unwrap();
                e.finish().unwrap()
            }),
        ),
        (
            "xz",
            Box::new(|b| {
                let mut e = xz2::write::XzEncoder::new(vec![], 6);
                e.write_all(b).unwrap();
                e.finish().unwrap()
            }),
        ),
        ("zst", Box::new(|b| zstd::encode_all(b, 3).unwrap())),
    ];
    for (ext, compress) in compressors {
        let p = dir.path().join(format!("binary.svm.{ext}"));
        std::fs::write(&p, compress(&text)).expect("write");
        let got = read_libsvm(&p).unwrap_or_else(|e| panic!("{ext}: {e}"));
        assert_eq!(got.x, want.x, "{ext}");
        assert_eq!(got.labels, want.labels, "{ext}");
        assert_eq!(got.bytes, text.len() as u64, "{ext}");
    }
}

#[test]
fn a_truncated_archive_is_an_error_not_a_panic() {
    let text = std::fs::read(common::fixture("binary.svm")).expect("fixture");
    let mut e = flate2::write::GzEncoder::new(vec![], flate2::Compression::default());
    e.write_all(&text).unwrap();
    let gz = e.finish().unwrap();
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("cut.svm.gz");
    std::fs::write(&p, &gz[..gz.len() / 2]).expect("write");
    let err = read_libsvm(&p).expect_err("truncated");
    assert!(err.to_string().contains("cut.svm.gz"), "{err}");
}

/// `--holdout`'s split: the parts partition the rows (each row once, in file order, with its
/// label and line), the held-out size is the fraction rounded and never empties a side, the
/// feature count is kept, and the seed picks the rows.
#[test]
fn a_split_partitions_the_rows() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/binary.svm");
    let d = read_libsvm(&path).expect("fixture");
    let (rest, held) = d.split(0.2, 1);
    assert_eq!((rest.rows(), held.rows()), (160, 40));
    assert_eq!((rest.features(), held.features()), (d.features(), d.features()));
    let mut lines: Vec<u32> = rest.lines.iter().chain(&held.lines).copied().collect();
    lines.sort_unstable();
    assert_eq!(lines, d.lines);
    for part in [&rest, &held] {
        assert!(part.lines.windows(2).all(|w| w[0] < w[1]), "file order");
        for (i, line) in part.lines.iter().enumerate() {
            let k = d.lines.iter().position(|l| l == line).expect("a row of the file");
            assert_eq!(part.labels[i], d.labels[k]);
            assert_eq!(part.x.row(i), d.x.row(k));
        }
    }
    assert_ne!(d.split(0.2, 2).1.lines, held.lines, "another seed, other rows");
    assert_eq!(d.split(0.0, 1).1.rows(), 1);
    assert_eq!(d.split(1.0, 1).0.rows(), 1);
}
