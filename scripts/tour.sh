#!/usr/bin/env bash
# Writes the book's tour (docs/src/tour.md) from a run of scripts/demo.sh: the page is the demo's
# real output, section by section (a section longer than 25 lines keeps its first 15 and last 10,
# and says how many it left out), with the
# demo's directory shown as $DEMO. Run it after a change to the demo or to what it prints:
#
#   scripts/tour.sh          run the demo (Helm 4) on a throwaway cluster, rewrite the tour, stop it
#
# `release::the_tour_is_a_run_of_the_demo` checks that the tour's sections are the demo's, in order.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=versions.env
. "$root/scripts/versions.env"
dir=$(mktemp -d "${TMPDIR:-/tmp}/helm-drift-tour.XXXXXX")
log="$dir.log"
trap 'HELM_DRIFT_DEMO_DIR="$dir" "$root/scripts/demo.sh" down >/dev/null; rm -f "$log"' EXIT

echo "running the demo (its output in $log)"
if ! HELM_DRIFT_DEMO_DIR="$dir" DEMO_HELM=helm4 "$root/scripts/demo.sh" >"$log" 2>&1; then
  tail -40 "$log" >&2
  echo "the demo failed: the tour is unchanged" >&2
  exit 1
fi

page="$root/docs/src/tour.md"
{
  cat <<EOT
# A tour

\`scripts/demo.sh\` runs helm-drift end to end on a throwaway local control plane (etcd,
kube-apiserver and kube-controller-manager on loopback; no kubelet, so pods stay Pending). It
builds only what it runs, installs the plugin into Helm 4 from a signed package on a loopback OCI
registry, and then shows each capability on real charts with drift made by hand. This page is the
output of one run ($(date -u +%Y-%m-%d), Helm ${HELM4_VERSION#v}, Kubernetes $KUBERNETES_VERSION), section by section, shortened
where a section is long (\`scripts/tour.sh\` writes it); run it yourself and compare.

*Words such as record, writer and engine: see the [glossary](glossary.md).*

\`\`\`sh
scripts/demo.sh          # run it (DEMO_HELM=helm3 for Helm 3); the cluster keeps running
scripts/demo.sh down     # stop it and remove its files
\`\`\`
EOT
  # ANSI colours out, the demo's directory as $DEMO, the checkout as "."; the build and start-up
  # sections and the closing how-to left out.
  sed -e 's/\x1b\[[0-9;]*m//g' -e "s#$dir#\$DEMO#g" -e "s#$root#.#g" "$log" | awk -v limit=25 '
    function flush(   i, n, fence, run, longest) {
      if (title == "") return
      while (count > 0 && lines[count] == "") count--
      printf "\n**%s**\n\n", title
      if (count == 0) return
      longest = 2
      for (i = 1; i <= count; i++) if (match(lines[i], /^`+/) && RLENGTH > longest) longest = RLENGTH
      fence = ""
      for (i = 0; i <= longest; i++) fence = fence "`"
      printf "%stext\n", fence
      # A long section keeps its head and its tail (what was done, and how it ended).
      if (count <= limit) {
        for (i = 1; i <= count; i++) print lines[i]
      } else {
        for (i = 1; i <= 15; i++) print lines[i]
        printf "... (%d lines left out)\n", count - 25
        for (i = count - 9; i <= count; i++) print lines[i]
      }
      print fence
    }
    /^==> / {
      flush()
      title = substr($0, 5); count = 0; started = started || title ~ /^Installing the plugin/
      if (!started) title = ""
      next
    }
    /^The demo cluster is still running/ { flush(); title = ""; exit }
    title != "" { if (count > 0 || $0 != "") lines[++count] = $0 }
    END { flush() }
  '
  cat <<'EOT'

The HTML report the last step writes is one self-contained page (the
[Output formats](output.md) page shows it), and the watcher's page is on the
[watch](commands/watch.md) page.
EOT
} >"$page.new"
mv "$page.new" "$page"
echo "wrote $page ($(grep -c '^\*\*' "$page") sections)"
