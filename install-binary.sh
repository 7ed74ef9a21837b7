#!/bin/sh
# Installs the helm-drift binary into $HELM_PLUGIN_DIR/bin, run by Helm's install/update hooks.
#
#   - a binary already bundled at $HELM_PLUGIN_DIR/bin/helm-drift is used as it is;
#   - HELM_DRIFT_BUILD_FROM_SOURCE=1 builds it with `cargo build --release --locked` from the
#     plugin directory (a directory or git install holds the source);
#   - HELM_DRIFT_SKIP_BINARY=1 skips the binary install altogether.
set -eu

dir=${HELM_PLUGIN_DIR:-$(cd "$(dirname "$0")" && pwd)}
bin="$dir/bin/helm-drift"

fail() { echo "helm-drift install: $*" >&2; exit 1; }

if [ "${HELM_DRIFT_SKIP_BINARY:-}" = "1" ]; then
  echo "helm-drift: skipping the binary install (HELM_DRIFT_SKIP_BINARY=1)"
  exit 0
fi

if [ "${HELM_DRIFT_BUILD_FROM_SOURCE:-}" = "1" ]; then
  command -v cargo >/dev/null 2>&1 || fail "HELM_DRIFT_BUILD_FROM_SOURCE=1 needs cargo on PATH"
  [ -f "$dir/Cargo.toml" ] || fail "no Cargo.toml in $dir: install the plugin from a source directory or git"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$dir" && CARGO_TARGET_DIR="$tmp" cargo build --release --locked --bin helm-drift) >&2 \
    || fail "cargo build failed"
  mkdir -p "$dir/bin"
  cp "$tmp/release/helm-drift" "$bin.tmp" && mv "$bin.tmp" "$bin"
  echo "helm-drift: built $bin from source"
  exit 0
fi

if [ -x "$bin" ]; then
  echo "helm-drift: using the bundled binary $bin"
  exit 0
fi

fail "no binary at $bin. Set HELM_DRIFT_BUILD_FROM_SOURCE=1 to build it with cargo"
