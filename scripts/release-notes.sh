#!/usr/bin/env bash
# Prints the release notes of VERSION: its section of CHANGELOG.md, without the heading.
#
#   scripts/release-notes.sh 0.1.0        (a leading "v" is accepted)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: scripts/release-notes.sh VERSION}
version=${version#v}
notes=$(awk -v v="$version" '
  index($0, "## [" v "]") == 1 { found = 1; next }
  found && /^## \[/ { exit }
  found && /^\[[^]]*\]: / { exit }
  found { print }
' "$root/CHANGELOG.md")
if [ -z "$(printf '%s' "$notes" | tr -d '[:space:]')" ]; then
  echo "CHANGELOG.md has no notes for version $version (add a \"## [$version] - DATE\" section)" >&2
  exit 1
fi
printf '%s\n' "$notes" | sed -e '/./,$!d'
