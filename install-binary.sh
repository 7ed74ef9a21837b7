#!/bin/sh
# Installs the helm-drift binary into $HELM_PLUGIN_DIR/bin; run by Helm's install and update
# hooks (Helm 4 gives hooks only HELM_PLUGIN_NAME and HELM_PLUGIN_DIR), or by hand.
#
# In order:
#   HELM_DRIFT_SKIP_BINARY=1          install nothing (you provide bin/helm-drift yourself)
#   HELM_DRIFT_BUILD_FROM_SOURCE=1    cargo build --release --locked from the plugin directory
#   HELM_DRIFT_ARCHIVE=/path/x.tgz    install from a local release archive (air-gapped); checked
#                                     against HELM_DRIFT_CHECKSUMS=/path/checksums.txt if given
#   a bundled bin/helm-drift          used as it is (not on `update`)
#   a bundled helm-drift              (the Helm 3 release archive, binary at the top) moved
#                                     to bin/helm-drift
#   a bundled bin/<os>-<arch>/helm-drift
#                                     (the signed Helm 4 package carries every platform's)
#                                     copied to bin/helm-drift
#   otherwise                         download the release archive for this OS/arch and the
#                                     checksums file from HELM_DRIFT_BASE_URL (a mirror) or the
#                                     project's releases, verify SHA-256, install
set -eu

dir=${HELM_PLUGIN_DIR:-$(cd "$(dirname "$0")" && pwd)}
bin_dir="$dir/bin"
bin="$bin_dir/helm-drift"
base_url=${HELM_DRIFT_BASE_URL:-https://github.com/helm-drift/helm-drift/releases/download}
tmp=""

say() { echo "helm-drift: $*"; }
fail() {
  echo "helm-drift install: $*" >&2
  exit 1
}
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT INT TERM

# The plugin's version, from plugin.yaml.
version() {
  v=$(sed -n 's/^version:[[:space:]]*["'\'']\{0,1\}\([0-9A-Za-z.+-]*\)["'\'']\{0,1\}[[:space:]]*$/\1/p' "$dir/plugin.yaml" | head -n 1)
  [ -n "$v" ] || fail "no version in $dir/plugin.yaml"
  echo "$v"
}

# linux-amd64, darwin-arm64, ...
platform() {
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  arch=$(uname -m)
  case "$os" in
    linux | darwin) ;;
    *) fail "unsupported operating system \"$os\" (release archives exist for linux and darwin); set HELM_DRIFT_BUILD_FROM_SOURCE=1 to build with cargo" ;;
  esac
  case "$arch" in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail "unsupported architecture \"$arch\" (release archives exist for amd64 and arm64); set HELM_DRIFT_BUILD_FROM_SOURCE=1 to build with cargo" ;;
  esac
  echo "$os-$arch"
}

# download URL FILE, with retries and backoff.
download() {
  if command -v curl >/dev/null 2>&1; then
    get() { curl -fsSL --connect-timeout 10 -o "$2" "$1"; }
  elif command -v wget >/dev/null 2>&1; then
    get() { wget -q -T 10 -O "$2" "$1"; }
  else
    fail "neither curl nor wget is installed: install one, or download the archive yourself and set HELM_DRIFT_ARCHIVE=/path/to/archive"
  fi
  attempt=1
  delay=1
  until get "$1" "$2"; do
    if [ "$attempt" -ge "${HELM_DRIFT_DOWNLOAD_ATTEMPTS:-4}" ]; then
      fail "cannot download $1 (tried $attempt times)"
    fi
    say "download of $1 failed (attempt $attempt); retrying in ${delay}s"
    sleep "$delay"
    attempt=$((attempt + 1))
    delay=$((delay * 2))
  done
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    fail "neither sha256sum nor shasum is installed: cannot verify the download"
  fi
}

# verify ARCHIVE CHECKSUMS-FILE NAME
verify() {
  expected=$(awk -v f="$3" '$2 == f || $2 == "*" f { print $1 }' "$2" | head -n 1)
  [ -n "$expected" ] || fail "no checksum for $3 in the checksums file"
  actual=$(sha256 "$1")
  [ "$expected" = "$actual" ] || fail "checksum mismatch for $3: expected $expected, got $actual; nothing was installed"
}

# Unpacks an archive and moves its bin/helm-drift into place in one step.
install_archive() {
  tar -xzf "$1" -C "$tmp/unpacked" || fail "cannot unpack $1"
  found=$(find "$tmp/unpacked" -type f -name helm-drift | head -n 1)
  [ -n "$found" ] || fail "no helm-drift binary in $1"
  mkdir -p "$bin_dir"
  cp "$found" "$bin.partial"
  chmod 755 "$bin.partial"
  mv -f "$bin.partial" "$bin"
  say "installed $bin"
}

if [ "${HELM_DRIFT_SKIP_BINARY:-}" = "1" ]; then
  say "skipping the binary install (HELM_DRIFT_SKIP_BINARY=1)"
  exit 0
fi

if [ "${HELM_DRIFT_BUILD_FROM_SOURCE:-}" = "1" ]; then
  command -v cargo >/dev/null 2>&1 || fail "HELM_DRIFT_BUILD_FROM_SOURCE=1 needs cargo on PATH"
  [ -f "$dir/Cargo.toml" ] || fail "no Cargo.toml in $dir: build from source needs a directory or git install"
  tmp=$(mktemp -d)
  (cd "$dir" && CARGO_TARGET_DIR="$tmp" cargo build --release --locked --bin helm-drift) >&2 || fail "cargo build failed"
  mkdir -p "$bin_dir"
  cp "$tmp/release/helm-drift" "$bin.partial"
  mv -f "$bin.partial" "$bin"
  say "built $bin from source"
  exit 0
fi

tmp=$(mktemp -d)
mkdir -p "$tmp/unpacked"

if [ -n "${HELM_DRIFT_ARCHIVE:-}" ]; then
  [ -f "$HELM_DRIFT_ARCHIVE" ] || fail "HELM_DRIFT_ARCHIVE=$HELM_DRIFT_ARCHIVE: no such file"
  if [ -n "${HELM_DRIFT_CHECKSUMS:-}" ]; then
    verify "$HELM_DRIFT_ARCHIVE" "$HELM_DRIFT_CHECKSUMS" "$(basename "$HELM_DRIFT_ARCHIVE")"
  fi
  install_archive "$HELM_DRIFT_ARCHIVE"
  exit 0
fi

if [ -x "$bin" ] && [ "${1:-}" != "update" ]; then
  say "using the bundled binary $bin"
  exit 0
fi

# The Helm 3 release archive: no directory inside (see scripts/package.sh), so the binary
# comes at the top.
if [ -f "$dir/helm-drift" ] && [ ! -d "$dir/helm-drift" ]; then
  mkdir -p "$bin_dir"
  chmod 755 "$dir/helm-drift"
  mv -f "$dir/helm-drift" "$bin"
  say "using the bundled binary (moved to $bin)"
  exit 0
fi

# The Helm 4 package: Helm verified the package (binaries included) before this hook runs.
if [ -d "$bin_dir" ] && ls "$bin_dir"/*/helm-drift >/dev/null 2>&1; then
  bundled="$bin_dir/$(platform)/helm-drift"
  [ -f "$bundled" ] || fail "this package carries no binary for $(platform) (it has: $(cd "$bin_dir" && ls -d -- */ | tr -d / | tr '\n' ' '))"
  cp "$bundled" "$bin.partial"
  chmod 755 "$bin.partial"
  mv -f "$bin.partial" "$bin"
  say "using the bundled binary for $(platform)"
  exit 0
fi

name="helm-drift-$(platform).tgz"
url="${base_url%/}/v$(version)"
say "downloading $url/$name"
download "$url/$name" "$tmp/$name"
download "$url/helm-drift-checksums.txt" "$tmp/checksums.txt"
verify "$tmp/$name" "$tmp/checksums.txt" "$name"
install_archive "$tmp/$name"
