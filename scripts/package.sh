#!/usr/bin/env bash
# Builds the release archive for this machine's platform and the checksums file, in the layout
# both `helm plugin install <archive URL or file>` (Helm 3 and 4) and install-binary.sh use:
#
#   dist/helm-drift-<os>-<arch>.tgz   plugin.yaml, install-binary.sh, plugin.complete,
#                                     completion.yaml, README.md and the helm-drift binary, all
#                                     at the top and no directory entry: Helm 3's archive
#                                     installer wants plugin.yaml there, and it extracts into a
#                                     cache directory it never empties, with mkdir for each
#                                     directory entry, so an archive with one fails to install a
#                                     second time ("mkdir .../bin: file exists"). The install
#                                     hook moves the binary into bin/.
#   dist/helm-drift-checksums.txt     sha256sum lines for every archive in dist/
#
#   scripts/package.sh [--binary PATH] [--out DIR]
#
# Other targets: build on that platform (or with `cargo build --release --target T` and a linker
# for T) and pass --binary; archives are named linux-amd64, linux-arm64, darwin-amd64,
# darwin-arm64, matching install-binary.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/dist"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: scripts/package.sh [--binary PATH] [--out DIR]" >&2; exit 1 ;;
  esac
done
if [ -z "$binary" ]; then
  (cd "$root" && cargo build --release --locked --bin helm-drift)
  binary="$root/target/release/helm-drift"
fi
os=$(uname -s | tr '[:upper:]' '[:lower:]')
case "$(uname -m)" in x86_64 | amd64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
cp "$root/plugin.yaml" "$root/install-binary.sh" "$root/plugin.complete" "$root/completion.yaml" "$root/README.md" "$stage/"
cp "$binary" "$stage/helm-drift"
chmod 755 "$stage/helm-drift" "$stage/install-binary.sh" "$stage/plugin.complete"
archive="$out/helm-drift-$os-$arch.tgz"
# Files only, without a leading "./" (no directory entry at all, see above).
tar -czf "$archive" -C "$stage" plugin.yaml install-binary.sh plugin.complete completion.yaml README.md helm-drift
(cd "$out" && sha256sum helm-drift-*.tgz >helm-drift-checksums.txt)
echo "$archive"
