#!/usr/bin/env bash
# One version, one place: Cargo.toml. The others (plugin.yaml, the chart's version and
# appVersion, CHANGELOG.md's section, the install lines of the README and the book, the CI
# recipes) must agree with it.
#
#   scripts/version.sh                 print the version
#   scripts/version.sh --check [TAG]   every place agrees (and TAG is v<version>); else exit 1,
#                                      naming the file at fault
#   scripts/version.sh --set X.Y.Z     write X.Y.Z everywhere (CHANGELOG.md: add its section by hand)
set -euo pipefail
root=${HELM_DRIFT_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
cargo_version() { sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1; }
yaml_value() { sed -n "s/^$2: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *$/\1/p" "$1" | head -n 1; }
version=$(cargo_version)
case "${1:-}" in
  "") echo "$version" ;;
  --check)
    fail=0
    check() { # FILE WHAT FOUND
      if [ "$3" != "$version" ]; then
        echo "$1: $2 is \"$3\", Cargo.toml says \"$version\"" >&2
        fail=1
      fi
    }
    check plugin.yaml version "$(yaml_value "$root/plugin.yaml" version)"
    check packaging/helm4/plugin.yaml version "$(yaml_value "$root/packaging/helm4/plugin.yaml" version)"
    check charts/helm-drift/Chart.yaml version "$(yaml_value "$root/charts/helm-drift/Chart.yaml" version)"
    check charts/helm-drift/Chart.yaml appVersion "$(yaml_value "$root/charts/helm-drift/Chart.yaml" appVersion)"
    check Cargo.lock "the helm-drift package" "$(awk '/^name = "helm-drift"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$root/Cargo.lock")"
    # The install lines and the CI recipes name the release they install.
    for f in README.md docs/src/install.md docs/src/cluster.md docs/src/ci/github-plan.yml docs/src/ci/github-check.yml docs/src/ci/github-gate.yml docs/src/ci/gitlab-ci.yml; do
      [ -f "$root/$f" ] || continue
      other=$(grep -oE '(releases/download/v|drift:|--version v?|drift-)[0-9]+\.[0-9]+\.[0-9]+' "$root/$f" | grep -v "$version\$" | head -n 1 || true)
      if [ -n "$other" ]; then
        echo "$f: installs \"$other\", Cargo.toml says \"$version\"" >&2
        fail=1
      fi
    done
    if ! grep -q "^## \[$version\]" "$root/CHANGELOG.md"; then
      echo "CHANGELOG.md: no \"## [$version]\" section" >&2
      fail=1
    fi
    if [ -n "${2:-}" ] && [ "$2" != "v$version" ]; then
      echo "tag $2 does not match version $version (expected v$version)" >&2
      fail=1
    fi
    exit $fail
    ;;
  --set)
    new=${2:?usage: scripts/version.sh --set X.Y.Z}
    sed -i.bak "0,/^version = \".*\"$/s//version = \"$new\"/" "$root/Cargo.toml"
    sed -i.bak "s/^version: .*/version: \"$new\"/" "$root/plugin.yaml"
    sed -i.bak "s/^version: .*/version: \"$new\"/" "$root/packaging/helm4/plugin.yaml"
    sed -i.bak -e "s/^version: .*/version: $new/" -e "s/^appVersion: .*/appVersion: \"$new\"/" "$root/charts/helm-drift/Chart.yaml"
    awk -v v="$new" '{ print } /^name = "helm-drift"$/ { getline; print "version = \"" v "\"" }' "$root/Cargo.lock" >"$root/Cargo.lock.new"
    mv "$root/Cargo.lock.new" "$root/Cargo.lock"
    for f in README.md docs/src/install.md docs/src/cluster.md docs/src/ci/github-plan.yml docs/src/ci/github-check.yml docs/src/ci/github-gate.yml docs/src/ci/gitlab-ci.yml; do
      [ -f "$root/$f" ] || continue
      sed -i.bak -E -e "s#(releases/download/v|drift:|--version v?|drift-)[0-9]+\.[0-9]+\.[0-9]+#\1$new#g" \
        -e "s#helm-drift [0-9]+\.[0-9]+\.[0-9]+ \(commit#helm-drift $new (commit#g" "$root/$f"
      rm -f "$root/$f.bak"
    done
    rm -f "$root/Cargo.toml.bak" "$root/plugin.yaml.bak" "$root/packaging/helm4/plugin.yaml.bak" "$root/charts/helm-drift/Chart.yaml.bak"
    echo "version $new written; add its section to CHANGELOG.md" >&2
    ;;
  *) echo "usage: scripts/version.sh [--check [TAG] | --set X.Y.Z]" >&2; exit 1 ;;
esac
