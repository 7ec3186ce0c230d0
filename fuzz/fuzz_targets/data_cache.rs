//! See optc::fuzz_harness::data_cache for what an input goes through.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| optc::fuzz_harness::data_cache(data));
