#!/usr/bin/env bash
# Builds the Helm 4 plugin package: one `drift-<version>.tgz` in Helm 4's plugin format
# (packaging/helm4/plugin.yaml) carrying every given platform's binary as bin/<os>-<arch>/helm-drift
# (the install hook copies the right one to bin/helm-drift), made and signed by Helm 4 itself
# (`helm plugin package --sign`), so `helm plugin install` verifies what will run.
#
#   scripts/package-helm4.sh --out DIR --key NAME --keyring SECRET-KEYRING [--passphrase-file F]
#                            [--binary OS-ARCH=PATH]...
#   scripts/package-helm4.sh --out DIR --unsigned [--binary OS-ARCH=PATH]...
#
# Writes DIR/drift-<version>.tgz and, when signed, DIR/drift-<version>.tgz.prov; prints the
# package's path. Without --binary: this machine's release build, for this machine's platform.
# HELM names a Helm 4 binary (default: helm on PATH). The release workflow and the tests both run
# this script; scripts/push-plugin.sh then pushes the package to an OCI registry.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
helm=${HELM:-helm}
out="" key="" keyring="" passphrase="" unsigned=""
binaries=()
usage() {
  sed -n '7,8p' "$0" | sed 's/^#  //' >&2
  exit 1
}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --key) key=$2; shift 2 ;;
    --keyring) keyring=$2; shift 2 ;;
    --passphrase-file) passphrase=$2; shift 2 ;;
    --unsigned) unsigned=1; shift ;;
    --binary) binaries+=("$2"); shift 2 ;;
    *) usage ;;
  esac
done
[ -n "$out" ] || usage
if [ -z "$unsigned" ] && { [ -z "$key" ] || [ -z "$keyring" ]; }; then
  echo "package-helm4.sh: signing needs --key and --keyring (or say --unsigned)" >&2
  exit 1
fi
case "$("$helm" version --short 2>/dev/null)" in
  v4.*) ;;
  *) echo "package-helm4.sh: $helm is not Helm 4 (set HELM=/path/to/helm4)" >&2; exit 1 ;;
esac
if [ ${#binaries[@]} -eq 0 ]; then
  (cd "$root" && cargo build --release --locked --bin helm-drift) >&2
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in x86_64 | amd64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  binaries=("$os-$arch=$root/target/release/helm-drift")
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
plugin="$stage/drift"
mkdir -p "$plugin/bin" "$out"
cp "$root/packaging/helm4/plugin.yaml" "$plugin/plugin.yaml"
cp "$root/install-binary.sh" "$root/plugin.complete" "$root/completion.yaml" "$root/README.md" "$root/LICENSE" "$plugin/"
chmod 755 "$plugin/install-binary.sh" "$plugin/plugin.complete"
for b in "${binaries[@]}"; do
  platform=${b%%=*} path=${b#*=}
  case "$platform" in
    linux-amd64 | linux-arm64 | darwin-amd64 | darwin-arm64) ;;
    *) echo "package-helm4.sh: unknown platform \"$platform\" (linux|darwin-amd64|arm64)" >&2; exit 1 ;;
  esac
  [ -f "$path" ] || { echo "package-helm4.sh: no binary at $path" >&2; exit 1; }
  mkdir -p "$plugin/bin/$platform"
  cp "$path" "$plugin/bin/$platform/helm-drift"
  chmod 755 "$plugin/bin/$platform/helm-drift"
done

args=(plugin package "$plugin" --destination "$out")
if [ -n "$unsigned" ]; then
  args+=(--sign=false)
else
  args+=(--sign --key "$key" --keyring "$keyring")
  [ -z "$passphrase" ] || args+=(--passphrase-file "$passphrase")
fi
"$helm" "${args[@]}" >&2
version=$(sed -n 's/^version:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' "$plugin/plugin.yaml" | head -n 1)
package="$out/drift-$version.tgz"
[ -f "$package" ] || { echo "package-helm4.sh: helm wrote no $package" >&2; exit 1; }
echo "$package"
