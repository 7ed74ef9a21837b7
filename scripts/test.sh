#!/usr/bin/env bash
# Sets up everything the tests need (the real test tools, built from Go modules and cached outside
# the checkout) and runs the whole test suite: formatting, clippy, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
HELM_DRIFT_TOOLS=$(scripts/tools.sh)
export HELM_DRIFT_TOOLS
echo "test.sh: tools ready in $(( $(date +%s) - start ))s ($HELM_DRIFT_TOOLS)"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked -- --test-threads "${HELM_DRIFT_TEST_THREADS:-4}"
echo "test.sh: done in $(( $(date +%s) - start ))s"
