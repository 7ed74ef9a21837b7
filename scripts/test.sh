#!/usr/bin/env bash
# Sets up everything the tests need (the real test tools, built from Go modules and cached outside
# the checkout) and runs the whole test suite: formatting, clippy, unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
HELM_DRIFT_TOOLS=$(scripts/tools.sh)
export HELM_DRIFT_TOOLS
HELM_DRIFT_ACTIONLINT=$(scripts/tools.sh --actionlint)
export HELM_DRIFT_ACTIONLINT
echo "test.sh: tools ready in $(( $(date +%s) - start ))s ($HELM_DRIFT_TOOLS)"

# PostgreSQL (Debian's package) for the tests of Helm's sql storage driver; the tests start
# their own private server.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "test.sh: installing PostgreSQL from Debian's packages"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked -- --test-threads "${HELM_DRIFT_TEST_THREADS:-4}"
echo "test.sh: done in $(( $(date +%s) - start ))s"
