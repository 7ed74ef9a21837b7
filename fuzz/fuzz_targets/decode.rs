//! Fuzzes the release decoder (base64 → gzip → JSON): any input is a value or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = helm_drift::fuzzing::decode(data);
    // Also as the inner layers: valid base64 around arbitrary (gzip or JSON) bytes.
    use base64::Engine;
    let wrapped = base64::engine::general_purpose::STANDARD.encode(data);
    let _ = helm_drift::fuzzing::decode(wrapped.as_bytes());
});
