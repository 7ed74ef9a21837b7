//! Fuzzes the manifest parser: splitting, YAML 1.1 conversion and object identity.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = helm_drift::fuzzing::from_manifest(text);
    }
});
