//! See optc::fuzz_harness::weights for what an input goes through.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| optc::fuzz_harness::weights(data));
