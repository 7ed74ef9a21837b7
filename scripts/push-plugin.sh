#!/usr/bin/env bash
# Pushes the Helm 4 plugin package (and its .prov) to an OCI registry the way
# `helm plugin install oci://REGISTRY/REPOSITORY/drift:VERSION` pulls it: artifact type
# application/vnd.helm.plugin.v1+json, one layer per file titled drift-<version>.tgz and
# drift-<version>.tgz.prov (the repository's last segment is the plugin's name: drift).
#
#   scripts/push-plugin.sh PACKAGE REFERENCE [oras flags...]
#   scripts/push-plugin.sh dist/drift-0.1.0.tgz ghcr.io/helm-drift/helm-plugins/drift:0.1.0
#
# ORAS names the oras binary (default: oras on PATH); log in first (`oras login`). The release
# workflow and the tests both run this script.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '6,7p' "$0" | sed 's/^#  //' >&2; exit 1; }
package=$1 reference=$2
shift 2
oras=${ORAS:-oras}
[ -f "$package" ] || { echo "push-plugin.sh: no package at $package" >&2; exit 1; }
case "$reference" in
  */drift:*) ;;
  *) echo "push-plugin.sh: $reference must end in /drift:<version> (Helm takes the plugin's name from it)" >&2; exit 1 ;;
esac
name=$(basename "$package")
files=("$name")
if [ -f "$package.prov" ]; then
  files+=("$name.prov")
else
  echo "push-plugin.sh: warning: no $name.prov; Helm 4 will refuse to install it without --verify=false" >&2
fi
# Layer titles are the paths as given: push from the package's directory so they are bare names.
# Helm pulls only the layer media types application/vnd.oci.image.layer.v1.tar(+gzip).
layers=("$name:application/vnd.oci.image.layer.v1.tar+gzip")
[ ${#files[@]} -eq 1 ] || layers+=("$name.prov:application/vnd.oci.image.layer.v1.tar")
cd "$(dirname "$package")"
"$oras" push "$@" --artifact-type application/vnd.helm.plugin.v1+json "$reference" "${layers[@]}"
