#!/usr/bin/env bash
# Sets up everything the tests need (the real test tools, built from Go modules and cached outside
# the checkout) and runs the whole test suite: formatting, clippy, unit and integration tests.
#
#   scripts/test.sh                       the whole suite, on the default Kubernetes (CI)
#   scripts/test.sh --kubernetes VERSION  the whole suite on that version of the window
#   scripts/test.sh --kubernetes all      the whole suite on the default, then the integration
#                                         suite on every other version (scripts/versions.env)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=versions.env
. scripts/versions.env
kubernetes=$KUBERNETES_VERSION
if [ "${1:-}" = "--kubernetes" ]; then
  kubernetes=${2:?"--kubernetes VERSION|all: one of $KUBERNETES_VERSIONS, or all"}
  [ "$kubernetes" = all ] || case " $KUBERNETES_VERSIONS " in *" $kubernetes "*) ;; *)
    echo "test.sh: Kubernetes $kubernetes is not in the supported window ($KUBERNETES_VERSIONS)" >&2; exit 1 ;;
  esac
fi

start=$(date +%s)
HELM_DRIFT_TOOLS=$(scripts/tools.sh)
export HELM_DRIFT_TOOLS
HELM_DRIFT_ACTIONLINT=$(scripts/tools.sh --actionlint)
export HELM_DRIFT_ACTIONLINT
HELM_DRIFT_MDBOOK=$(scripts/tools.sh --mdbook)
export HELM_DRIFT_MDBOOK
echo "test.sh: tools ready in $(( $(date +%s) - start ))s ($HELM_DRIFT_TOOLS)"

apt_install() {
  echo "test.sh: installing $1 from Debian's packages"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1" >/dev/null
}
# PostgreSQL for the tests of Helm's sql storage driver (they start their own private server);
# GnuPG for the tests that sign and verify the Helm 4 plugin package with a key they make; git
# for the tests that install the plugin from a repository; headless Chromium (below).
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt_install postgresql
fi
command -v gpg >/dev/null 2>&1 || apt_install gnupg
command -v git >/dev/null 2>&1 || apt_install git
# jq for the README's helmfile pipeline, which the tests run as written.
command -v jq >/dev/null 2>&1 || apt_install jq
# Headless Chromium for the tests that read the HTML report in a real browser.
command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1 \
  || apt_install chromium-headless-shell

# The control plane of VERSION for the tests (none: the tools directory's, the default).
control_plane() {
  if [ "$1" = "$KUBERNETES_VERSION" ]; then unset HELM_DRIFT_CONTROL_PLANE; return; fi
  HELM_DRIFT_CONTROL_PLANE=$(scripts/tools.sh --kubernetes "$1")
  export HELM_DRIFT_CONTROL_PLANE
}
threads=${HELM_DRIFT_TEST_THREADS:-4}
first=$kubernetes
[ "$kubernetes" = all ] && first=$KUBERNETES_VERSION
control_plane "$first"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "test.sh: Kubernetes $first"
cargo test --workspace --locked -- --test-threads "$threads"
if [ "$kubernetes" = all ]; then
  for v in $KUBERNETES_VERSIONS; do
    [ "$v" = "$KUBERNETES_VERSION" ] && continue
    control_plane "$v"
    echo "test.sh: Kubernetes $v (integration suite)"
    cargo test --locked --test integration -- --test-threads "$threads"
  done
fi
echo "test.sh: done in $(( $(date +%s) - start ))s (Kubernetes $kubernetes)"
