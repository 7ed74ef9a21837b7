#!/usr/bin/env bash
# The main job on a throwaway local cluster: builds what it needs, starts a local control plane,
# installs the plugin into helm (Helm 4: signed with a key made here, pushed to an OCI registry
# on loopback, installed from it with verification), installs a demo chart, makes drift (including a value edited and
# put back, which leaves the field owned by kubectl: an upgrade that changes it would conflict,
# shown as "taken over", not counted as drift), runs `helm drift check`, `helm drift repair` (and
# `--only` refusing a name that fits objects in two namespaces),
# and a `helm upgrade` that then succeeds, a Flux HelmRelease's own drift rules honoured
# (its replicas left to an autoscaler by check and repair), then shows an expected change (`kubectl rollout
# restart`), that a name proves nothing (edits under Helm's own field manager and under none are
# drift), and `check --explain` (also on an image built from three values, and on a real chart,
# ingress-nginx, edited by hand), all through helm; then
# `helm drift watch` sees an edit (metric, Event, its --ui page) and heals a release that opted
# in (as a ServiceAccount of its namespace), holds its healing during a break-glass pause that
# ends by itself, and heals only once a repair window opens, while a forged release record that asks for
# cluster-admin is not even compared (a record is trusted only for its namespace), and a person's check
# names the binding it asks for while their repair refuses it (--trust-namespace lends a person's
# rights, as the repairs of the hooks' CRD and of the deleted Namespace show); `helm drift guard` warns
# a hand edit at the prompt; a management cluster finds and heals drift on two workload
# clusters (Cluster API Clusters, CAAPH's HelmReleaseProxies) and plans a pull request's
# HelmChartProxy on each; `--hooks` finds a kept hook ConfigMap
# and a pre-install hook CRD edited by hand and repairs them without running the hook; a release
# deleted whole is repaired in a working order; it ends with Markdown for a pull request and the HTML report of the
# whole cluster, printing where it is.
#
#   scripts/demo.sh          run the demo; the cluster keeps running for you to explore
#   scripts/demo.sh down     stop the demo cluster and remove its files
#
# DEMO_HELM=helm3 uses Helm 3 instead of Helm 4.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
state=${HELM_DRIFT_DEMO_DIR:-${TMPDIR:-/tmp}/helm-drift-demo}

down() {
  for pid in "$state/pid" "$state/registry.pid" "$state/eu.pid" "$state/us.pid"; do
    if [ -f "$pid" ]; then kill "$(cat "$pid")" 2>/dev/null || true; fi
  done
  rm -rf "$state"
}
if [ "${1:-}" = "down" ]; then
  down
  echo "demo cluster stopped"
  exit 0
fi

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
# Runs a command until it succeeds; past DEADLINE (seconds since the epoch) prints LOG and fails.
wait_until() {
  local deadline=$1 log=$2
  shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || { cat "$log" >&2; exit 1; }
    sleep 0.2
  done
}
# `helm drift watch ARGS` in the background, output in LOG, in its own process group: helm runs
# the plugin as a child, and stop_watcher stops both.
start_watcher() {
  local log=$1
  shift
  set -m
  # The watcher trusts only what its flags say (not the person's HELM_DRIFT_TRUST_NAMESPACE).
  env -u HELM_DRIFT_TRUST_NAMESPACE "$helm" drift watch "$@" >"$log" 2>&1 &
  watcher=$!
  set +m
}
stop_watcher() { kill -- -"$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; }

say "Building the tools the demo runs (cached; the first build takes a while)"
tools=$("$root/scripts/tools.sh" --demo)
say "Building helm-drift and the local control plane launcher"
(cd "$root" && cargo build --release --locked -p helm-drift -p testcluster --bins)
release="${CARGO_TARGET_DIR:-$root/target}/release"

say "Starting a local control plane (etcd, kube-apiserver, kube-controller-manager)"
down
mkdir -p "$state"
HELM_DRIFT_TOOLS="$tools" nohup "$release/testcluster" "$state/cluster" >"$state/testcluster.log" 2>&1 &
echo $! >"$state/pid"
# Two workload clusters for the fleet at the end, started meanwhile (control planes of their own).
for name in eu us; do
  HELM_DRIFT_TOOLS="$tools" nohup "$release/testcluster" "$state/$name" >"$state/$name.log" 2>&1 &
  echo $! >"$state/$name.pid"
done
deadline=$(( $(date +%s) + 180 ))
until [ -f "$state/cluster/ready" ]; do
  if ! kill -0 "$(cat "$state/pid")" 2>/dev/null || [ "$(date +%s)" -gt "$deadline" ]; then
    echo "the control plane did not start; its log:" >&2
    cat "$state/testcluster.log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "API server at $(cat "$state/cluster/ready")"

export KUBECONFIG="$state/cluster/kubeconfig"
export HELM_CONFIG_HOME="$state/helm/config" HELM_CACHE_HOME="$state/helm/cache"
export HELM_DATA_HOME="$state/helm/data"   # plugins go to $HELM_DATA_HOME/plugins
helm="$tools/${DEMO_HELM:-helm4}"
kubectl="$tools/kubectl"

if [ "${DEMO_HELM:-helm4}" = helm4 ]; then
  say "Installing the plugin the way Helm 4 wants it: signed, from an OCI registry (on loopback), verified"
  command -v gpg >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnupg >/dev/null; }
  export GNUPGHOME="$state/gnupg"
  mkdir -m 700 "$GNUPGHOME"
  printf 'demo passphrase' >"$GNUPGHOME/passphrase"
  signing=(--batch --pinentry-mode loopback --passphrase-file "$GNUPGHOME/passphrase")
  gpg "${signing[@]}" --quick-generate-key "helm-drift demo <demo@helm-drift.invalid>" rsa2048 sign never 2>/dev/null
  # The keyring file Helm reads lives outside GNUPGHOME (gpg would migrate a secring.gpg there).
  gpg "${signing[@]}" --export-secret-keys >"$state/secring.gpg"
  gpg --batch --armor --export >"$state/helm-drift-signing-key.asc"
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case "$(uname -m)" in x86_64 | amd64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=$(uname -m) ;; esac
  package=$(HELM="$helm" "$root/scripts/package-helm4.sh" --out "$state/dist" --key "helm-drift demo" \
    --keyring "$state/secring.gpg" --passphrase-file "$GNUPGHOME/passphrase" \
    --binary "$os-$arch=$release/helm-drift")
  port=5000
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  printf 'version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n' \
    "$state/registry" "$port" >"$state/registry.yml"
  nohup "$tools/registry" serve "$state/registry.yml" >"$state/registry.log" 2>&1 &
  echo $! >"$state/registry.pid"
  deadline=$(( $(date +%s) + 30 ))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    [ "$(date +%s)" -le "$deadline" ] || { cat "$state/registry.log" >&2; exit 1; }
    sleep 0.2
  done
  version=$(basename "$package" .tgz)
  reference="127.0.0.1:$port/helm-plugins/drift:${version#drift-}"
  ORAS="$tools/oras" "$root/scripts/push-plugin.sh" "$package" "$reference" --plain-http >/dev/null
  echo "+ helm plugin install oci://$reference --plain-http --keyring helm-drift-signing-key.asc"
  "$helm" plugin install "oci://$reference" --plain-http --keyring "$state/helm-drift-signing-key.asc"
else
  say "Installing the plugin into helm ($("$helm" version --short))"
  mkdir -p "$state/plugin/bin"
  cp "$root/plugin.yaml" "$root/install-binary.sh" "$state/plugin/"
  cp "$release/helm-drift" "$state/plugin/bin/"
  "$helm" plugin install "$state/plugin"
fi

say "You trust your own namespaces once: only there does a repair write what a record says with your rights"
echo "$ export HELM_DRIFT_TRUST_NAMESPACE=demo,runtime   (only you write Secrets in them)"
export HELM_DRIFT_TRUST_NAMESPACE=demo,runtime

say "Installing the demo chart as release 'demo' in namespace 'demo'"
"$helm" install demo "$root/tests/charts/basic" --namespace demo --create-namespace

say "helm drift check demo -n demo   (freshly installed: in sync)"
"$helm" drift check demo -n demo

say "Drift made by hand: delete a Deployment, change a Service port, label the Service, edit a ConfigMap value and put it back"
"$kubectl" -n demo delete deployment demo-web
"$kubectl" -n demo patch service demo-web --type json -p '[{"op":"replace","path":"/spec/ports/0/port","value":8081}]'
"$kubectl" -n demo label service demo-web team=someone
"$kubectl" -n demo patch configmap demo-config --type merge -p '{"data":{"greeting":"edited by hand"}}'
"$kubectl" -n demo patch configmap demo-config --type merge -p '{"data":{"greeting":"hello"}}'

say "helm drift check demo -n demo"
code=0
"$helm" drift check demo -n demo || code=$?
echo "exit code: $code (0 in sync, 2 drift found, 1 error)"

say "Who did it: helm drift check --audit-log names the person, from the API server's audit log"
"$kubectl" -n demo create rolebinding alice --clusterrole=edit --user=alice@example.com >/dev/null
echo "$ kubectl -n demo --as alice@example.com patch configmap demo-config ... greeting=edited by alice"
for _ in $(seq 100); do   # until the authorizer knows the new binding
  "$kubectl" -n demo --as alice@example.com patch configmap demo-config --type merge \
    -p '{"data":{"greeting":"edited by alice"}}' >/dev/null 2>&1 && break
  sleep 0.1
done
echo "$ helm drift check demo -n demo --audit-log $state/cluster/audit.log"
"$helm" drift check demo -n demo --audit-log "$state/cluster/audit.log" | tee "$state/audited.txt" || [ $? = 2 ]
grep -q "by alice@example.com via admin" "$state/audited.txt"

say "A CI gate with a typo is not green: helm drift check --all -n demo-typo"
code=0
"$helm" drift check --all -n demo-typo 2>"$state/typo.txt" || code=$?
grep -v 'plugin "drift" exited' "$state/typo.txt" || true
echo "exit code: $code (a selection that matches nothing is an error; --allow-empty lets it pass)"
[ "$code" = 1 ]

say "helm drift accept demo -n demo --dry-run   (what a baseline would accept, one line per drift; nothing written)"
"$helm" drift accept demo -n demo --dry-run --baseline "$state/baseline.yaml"
[ ! -e "$state/baseline.yaml" ]

say "helm drift plan: what the next helm upgrade would do to the cluster as it is now (release 'planned', scaled by hand)"
"$helm" install planned "$root/tests/charts/basic" --namespace demo >/dev/null
"$kubectl" -n demo scale deployment planned-web --replicas=3
code=0
summary="${GITHUB_STEP_SUMMARY:-$state/step-summary.md}"
"$helm" drift plan planned "$root/tests/charts/basic" -n demo --reuse-values --summary-file "$summary" || code=$?
echo "exit code: $code (0 changes nothing, 2 changes something, 3 the upgrade would fail)"
echo "--- the plan as Markdown, appended to the step summary ($summary):"
grep -m 4 -v '^$' "$summary"
if [ "${DEMO_HELM:-helm4}" = helm4 ]; then
  [ "$code" = 3 ]
  echo "$ helm upgrade planned CHART -n demo --reuse-values   (Helm 4 applies server-side: it fails as planned)"
  if "$helm" upgrade planned "$root/tests/charts/basic" --namespace demo --reuse-values >"$state/planned-upgrade.txt" 2>&1; then
    cat "$state/planned-upgrade.txt" >&2; echo "the upgrade did not fail as the plan said" >&2; exit 1
  fi
  grep -o 'conflict with "kubectl".*' "$state/planned-upgrade.txt" | head -1
  echo "$ helm drift repair planned -n demo; helm drift plan ...   (the way out the plan named)"
  "$helm" drift repair planned -n demo >/dev/null
  "$helm" drift plan planned "$root/tests/charts/basic" -n demo --reuse-values
else
  [ "$code" = 2 ]
fi
"$helm" uninstall planned --namespace demo >/dev/null

say "helm drift plan --server-side=true: the switch to server-side apply, planned (release 'switched', installed client-side, scaled by hand)"
if [ "${DEMO_HELM:-helm4}" = helm4 ]; then
  "$helm" install switched "$root/tests/charts/basic" --namespace demo --server-side=false >/dev/null
else
  "$helm" install switched "$root/tests/charts/basic" --namespace demo >/dev/null
fi
"$kubectl" -n demo scale deployment switched-web --replicas=3
code=0
"$helm" drift plan switched "$root/tests/charts/basic" -n demo --reuse-values --server-side=true || code=$?
echo "exit code: $code (the first server-side upgrade meets kubectl's replicas)"
[ "$code" = 3 ]
"$helm" uninstall switched --namespace demo >/dev/null

say "helm drift plan --helmrelease: what Flux's helm-controller will do with a HelmRelease (its values, valuesFrom and Kustomize postRenderers)"
"$kubectl" apply -f - >/dev/null <<'CRD'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: helmreleases.helm.toolkit.fluxcd.io}
spec:
  group: helm.toolkit.fluxcd.io
  names: {kind: HelmRelease, listKind: HelmReleaseList, plural: helmreleases, singular: helmrelease}
  scope: Namespaced
  versions:
    - name: v2
      served: true
      storage: true
      subresources: {status: {}}
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
CRD
"$kubectl" wait --for condition=established crd/helmreleases.helm.toolkit.fluxcd.io >/dev/null
"$helm" install podinfo "$root/tests/charts/basic" --namespace demo >/dev/null
"$kubectl" -n demo create configmap podinfo-values --from-literal=values.yaml='greeting: from-flux' >/dev/null
"$kubectl" -n demo apply -f - >/dev/null <<'HR'
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: podinfo}
spec:
  releaseName: podinfo
  chart: {spec: {chart: basic}}
  valuesFrom: [{kind: ConfigMap, name: podinfo-values}]
  values: {replicas: 3}
  postRenderers:
    - kustomize:
        images: [{name: registry.example/web, newTag: "1.1"}]
HR
code=0
HELM_DRIFT_KUSTOMIZE="$kubectl" "$helm" drift plan --helmrelease podinfo "$root/tests/charts/basic" -n demo --trust-namespace demo || code=$?
[ "$code" = 2 ]

say "Flux's own drift rules: the HelmRelease's driftDetection.ignore (replicas an autoscaler owns), honoured by check and repair with no flag"
"$kubectl" -n demo patch helmrelease podinfo --type=merge \
  -p '{"spec":{"driftDetection":{"mode":"enabled","ignore":[{"paths":["/spec/replicas"],"target":{"kind":"Deployment"}}]}}}' >/dev/null
echo "$ kubectl -n demo scale deployment podinfo-web --replicas=5; kubectl -n demo patch configmap podinfo-config (greeting: edited)"
"$kubectl" -n demo scale deployment podinfo-web --replicas=5 >/dev/null
"$kubectl" -n demo patch configmap podinfo-config --type=merge -p '{"data":{"greeting":"edited"}}' >/dev/null
code=0
out=$("$helm" drift check podinfo -n demo -v) || code=$?
printf '%s\n' "$out" | grep -v "^  in sync"
[ "$code" = 2 ]
printf '%s\n' "$out" | grep -q "spec.replicas ignored (HelmRelease demo/podinfo spec.driftDetection.ignore\[0\])"
"$helm" drift repair podinfo -n demo
echo "$ kubectl -n demo get deployment podinfo-web -o jsonpath={.spec.replicas}"
"$kubectl" -n demo get deployment podinfo-web -o jsonpath='{.spec.replicas}'
echo
[ "$("$kubectl" -n demo get deployment podinfo-web -o jsonpath='{.spec.replicas}')" = 5 ]
"$helm" drift check podinfo -n demo
"$helm" uninstall podinfo --namespace demo >/dev/null

say "helm drift plan in a helmfile pipeline: the plan page's script as written (release 'piped', helmfile's values, scaled by hand)"
command -v jq >/dev/null 2>&1 || { [ "$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null; } || true
if command -v jq >/dev/null 2>&1; then
  pipe="$state/helmfile"
  mkdir -p "$pipe/bin"
  ln -sfn "$helm" "$pipe/bin/helm"
  ln -sfn "$tools/helmfile" "$pipe/bin/helmfile"
  printf 'releases:\n  - name: piped\n    namespace: demo\n    chart: %s\n    values: [values.yaml]\n' "$root/tests/charts/basic" >"$pipe/helmfile.yaml"
  printf 'replicas: 3\n' >"$pipe/values.yaml"
  "$helm" install piped "$root/tests/charts/basic" --namespace demo >/dev/null
  "$kubectl" -n demo scale deployment piped-web --replicas=5 >/dev/null
  # The bash block after "**In a helmfile pipeline**" on the plan page of the book, run as it stands there.
  awk '/^\*\*In a helmfile pipeline\*\*/ {f = 1} f && /^```bash$/ {b = 1; next} b && /^```$/ {exit} b' "$root/docs/src/commands/plan.md" >"$pipe/plan.sh"
  code=0
  (cd "$pipe" && PATH="$pipe/bin:$PATH" GITHUB_STEP_SUMMARY="$summary" bash plan.sh 2>/dev/null) || code=$?
  if [ "${DEMO_HELM:-helm4}" = helm4 ]; then
    echo "the pipeline's exit code: $code (Helm 4 would conflict on the scale: the job fails before helmfile sync runs)"
    [ "$code" = 1 ]
  else
    echo "the pipeline's exit code: $code (Helm 3 writes the chart's replicas back: the job passes)"
    [ "$code" = 0 ]
  fi
  "$helm" uninstall piped --namespace demo >/dev/null
else
  echo "(jq is not installed and cannot be here: the plan page's helmfile pipeline needs it; skipped)"
fi

say "helm drift repair demo -n demo --remove-foreign --dry-run   (the plan, validated by server dry-runs)"
"$helm" drift repair demo -n demo --remove-foreign --dry-run || true

say "helm drift repair demo -n demo   (same revision: helm history is unchanged; the label added by hand is kept, so drift remains: exit 2)"
code=0
"$helm" drift repair demo -n demo || code=$?
echo "exit code: $code"
[ "$code" = 2 ]
say "helm drift repair demo -n demo --remove-foreign   (the label too: in sync, exit 0)"
"$helm" drift repair demo -n demo --remove-foreign
"$helm" history demo -n demo

say "helm upgrade demo --set greeting=upgraded   (Helm owns its fields again: no conflict)"
"$helm" upgrade demo "$root/tests/charts/basic" --namespace demo --reuse-values --set greeting=upgraded
"$helm" drift check demo -n demo

say "Accepted means accepted: a scale accepted into a baseline stays while repair puts back an edited ConfigMap"
"$kubectl" -n demo scale deployment/demo-web --replicas=3 >/dev/null
"$helm" drift accept demo -n demo --baseline "$state/accepted.yaml"
"$kubectl" -n demo patch configmap demo-config --type merge -p '{"data":{"greeting":"edited by hand"}}' >/dev/null
"$helm" drift repair demo -n demo --baseline "$state/accepted.yaml"
kept=$("$kubectl" -n demo get deployment demo-web -o jsonpath='{.spec.replicas}')
echo "replicas: $kept (accepted, kept); greeting: $("$kubectl" -n demo get configmap demo-config -o jsonpath='{.data.greeting}')"
[ "$kept" = 3 ]
echo "+ helm drift repair demo -n demo --include-accepted   (everything back, the accepted scale too)"
"$helm" drift repair demo -n demo --include-accepted >/dev/null

say "kubectl rollout restart is expected, not drift (shown with -v)"
"$kubectl" -n demo rollout restart deployment/demo-web
"$helm" drift check demo -n demo -v

say "A name proves nothing: a container added under Helm's own field manager, a key added with managedFields cleared (owned by nobody): both drift"
"$kubectl" -n demo patch deployment demo-web --field-manager=helm -p '{"spec":{"template":{"spec":{"containers":[{"name":"miner","image":"registry.example/miner:1"}]}}}}'
"$kubectl" -n demo patch configmap demo-config --type json -p '[{"op":"add","path":"/data/planted","value":"x"},{"op":"replace","path":"/metadata/managedFields","value":[{}]}]'
code=0
"$helm" drift check demo -n demo || code=$?
echo "exit code: $code"
[ "$code" = 2 ]
"$helm" drift repair demo -n demo --remove-foreign

say "A namespace's records count only for that namespace: a tenant of 'tenant' claims release 'demo' of 'demo' (a record with its own image, a HelmRelease and its status)"
"$kubectl" create namespace tenant >/dev/null
manifest='---\n# Source: basic/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: demo-web\n  namespace: demo\nspec:\n  selector:\n    matchLabels: {app: demo-web}\n  template:\n    metadata:\n      labels: {app: demo-web}\n    spec:\n      containers: [{name: web, image: evil.example/miner:1}]\n'
record=$(printf '{"name":"demo","namespace":"demo","version":7,"info":{"status":"deployed"},"chart":{"metadata":{"name":"basic","version":"0.1.0"}},"manifest":"%s"}' "$manifest" | gzip -c | base64 -w0)
"$kubectl" -n tenant create secret generic sh.helm.release.v1.demo.v7 --type helm.sh/release.v1 \
  --from-literal=release="$record" >/dev/null
"$kubectl" -n tenant label secret sh.helm.release.v1.demo.v7 owner=helm name=demo status=deployed version=7 \
  helm-drift.io/repair=true >/dev/null
"$kubectl" -n tenant apply -f - >/dev/null <<'HR'
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: demo}
spec: {suspend: true, releaseName: demo, targetNamespace: demo, chart: {spec: {chart: basic}}}
HR
"$kubectl" -n tenant patch helmrelease demo --subresource=status --type=merge \
  -p '{"status":{"history":[{"name":"demo","namespace":"demo","version":7,"status":"deployed"}]}}' >/dev/null
echo "$ helm drift check demo -n tenant   (demo holds its own record of 'demo': a conflicting claim, refused)"
"$helm" drift check demo -n tenant 2>&1 || [ $? = 1 ]
echo "$ helm drift check -A   (the operator's gate: the claim is named and counted as an error, exit 1)"
"$helm" drift check -A 2>&1 | grep -E "conflicting claim|demo: " || true
"$kubectl" delete namespace tenant --wait=false >/dev/null

say "What admission adds is no drift: a default IngressClass names an Ingress's class at admission; the read-only engine reads that class (release 'admitted', upgraded once)"
"$kubectl" apply -f - >/dev/null <<'IC'
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: demo-default
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec: {controller: example.invalid/ingress}
IC
for _ in $(seq 100); do
  class=$("$kubectl" -n demo create ingress probe --rule=a.invalid/=b:80 --dry-run=server -o jsonpath='{.spec.ingressClassName}')
  [ "$class" = demo-default ] && break
  sleep 0.2
done
"$helm" install admitted "$root/tests/charts/defaulted" --namespace demo >/dev/null
"$helm" upgrade admitted "$root/tests/charts/defaulted" --namespace demo --set port=8080 >/dev/null
echo "$ kubectl -n demo get ingress admitted-web -o jsonpath={.spec.ingressClassName}"
"$kubectl" -n demo get ingress admitted-web -o jsonpath='{.spec.ingressClassName}'
echo
"$helm" drift check admitted -n demo --read-only
"$helm" uninstall admitted --namespace demo >/dev/null
"$kubectl" delete ingressclass demo-default >/dev/null

say "Scaled by hand: helm drift check --explain says which value makes it permanent"
"$kubectl" -n demo scale deployment demo-web --replicas=3
"$helm" drift check demo -n demo --explain || true

say "An image built from three values (podinfo's shape): --explain traces the field to the one value to set"
"$helm" install shop "$root/tests/charts/shaped" --namespace demo
"$kubectl" -n demo set image deployment/shop-shaped podinfo=registry.example/team/podinfo:6.6.0
"$helm" drift check shop -n demo --explain || true
"$helm" uninstall shop --namespace demo

say "A real chart (ingress-nginx): an argument and a variable added by hand; --explain names the chart's extraArgs and extraEnvs"
"$helm" install edge "$root/tests/charts/ingress-nginx" --namespace demo \
  --set controller.admissionWebhooks.enabled=false --set controller.ingressClassResource.name=demo-nginx >/dev/null
"$kubectl" -n demo set env deployment/edge-ingress-nginx-controller DEBUG=1
"$kubectl" -n demo patch deployment edge-ingress-nginx-controller --type json \
  -p '[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--v=5"}]'
"$helm" drift check edge -n demo --explain >"$state/edge.txt" 2>/dev/null || [ $? = 2 ]
sed -n '/explain:/,$p' "$state/edge.txt"
grep -q "controller.extraEnvs" "$state/edge.txt"
"$helm" uninstall edge --namespace demo >/dev/null

say "helm drift watch: always on (metrics, an Event once per drift, self-healing for releases that opt in)"
"$helm" install healed "$root/tests/charts/basic" --namespace demo --labels helm-drift.io/repair=true >/dev/null
echo "$ kubectl -n demo apply -f forged-record.yaml   (anyone who may create a Secret in 'demo' can write"
echo "  a release record: this one opts in to repair and asks for a ClusterRoleBinding to cluster-admin)"
manifest='---\n# Source: intruder/templates/crb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: demo-intruder-is-admin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: ServiceAccount\n  name: default\n  namespace: demo\n'
record=$(printf '{"name":"intruder","namespace":"demo","version":1,"info":{"status":"deployed"},"manifest":"%s"}' "$manifest" | gzip | base64 -w0)
"$kubectl" -n demo create secret generic sh.helm.release.v1.intruder.v1 --type helm.sh/release.v1 --from-literal=release="$record" >/dev/null
"$kubectl" -n demo label secret sh.helm.release.v1.intruder.v1 owner=helm name=intruder status=deployed version=1 helm-drift.io/repair=true >/dev/null
echo "$ env -u HELM_DRIFT_TRUST_NAMESPACE helm drift check intruder -n demo   (a person's check names what a record asks for outside its namespace)"
env -u HELM_DRIFT_TRUST_NAMESPACE "$helm" drift check intruder -n demo | tee "$state/intruder.txt" || [ $? = 2 ]
grep -q "outside the release's namespace: ClusterRoleBinding demo-intruder-is-admin" "$state/intruder.txt"
echo "$ env -u HELM_DRIFT_TRUST_NAMESPACE helm drift repair intruder -n demo   (a person who does not trust demo: refused, their rights are not lent to whoever wrote the record)"
if env -u HELM_DRIFT_TRUST_NAMESPACE "$helm" drift repair intruder -n demo >"$state/intruder-repair.txt" 2>&1; then
  cat "$state/intruder-repair.txt" >&2; echo "the forged record was repaired with the person's rights" >&2; exit 1
fi
grep -i 'refused' "$state/intruder-repair.txt" | head -2
grep -q -- "--trust-namespace demo" "$state/intruder-repair.txt"
if "$kubectl" get clusterrolebinding demo-intruder-is-admin >/dev/null 2>&1; then echo "the binding exists" >&2; exit 1; fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
get() { python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$port$1" 2>/dev/null; }
echo "$ kubectl -n demo create serviceaccount healer; kubectl -n demo create rolebinding healer --clusterrole=edit ..."
echo "  (a record in an untrusted namespace is repaired only as one of its ServiceAccounts)"
"$kubectl" -n demo create serviceaccount healer >/dev/null
"$kubectl" -n demo create rolebinding healer --clusterrole=edit --serviceaccount=demo:healer >/dev/null
echo "$ helm drift watch -n demo --all --repair --repair-service-account healer --ui"
"$kubectl" create namespace helm-drift >/dev/null   # the watcher's own namespace: where pauses live
start_watcher "$state/watch.log" -n demo --all --metrics-address "127.0.0.1:$port" --repair --repair-cooldown 1s \
  --repair-service-account healer --pause-namespace helm-drift --ui
ready() { get /readyz >/dev/null; }
greeting() { "$kubectl" -n demo get configmap healed-config -o 'jsonpath={.data.greeting}'; }
greeted() { [ "$(greeting)" = hello ]; }
says() { get /metrics | grep -q "$1"; }   # a line of the metrics matches $1
wait_until $(( $(date +%s) + 60 )) "$state/watch.log" ready
echo "$ kubectl -n demo patch configmap healed-config ... greeting=edited   (release 'healed' opted in)"
"$kubectl" -n demo patch configmap healed-config --type merge -p '{"data":{"greeting":"edited"}}'
healed_and_intruder_excluded() {
  greeted && says 'helm_drift_repairs_total{result="applied"} 1' && says 'release="intruder",verdict="excluded"} 1'
}
wait_until $(( $(date +%s) + 60 )) "$state/watch.log" healed_and_intruder_excluded
echo "$ curl http://127.0.0.1:$port/drifts.json   (each drift's life: when it appeared, who made it, how it ended)"
get /drifts.json | head -c 700; echo
echo "$ helm drift pause healed -n demo --for 8s --reason 'INC-1: kept by hand'   (break-glass: written in the"
echo "  watcher's namespace, helm-drift, once its watcher announces there that it reads pauses; no other namespace's word is taken)"
"$helm" drift pause healed -n demo --for 8s --reason "INC-1: kept by hand"
"$kubectl" -n demo patch configmap healed-config --type merge -p '{"data":{"greeting":"kept by hand"}}'
deadline=$(( $(date +%s) + 60 ))
wait_until "$deadline" "$state/watch.log" says '^helm_drift_release_paused{namespace="demo",release="healed"}'
get /metrics | grep -E '^helm_drift_release_paused'
"$kubectl" -n demo get events --field-selector reason=DriftPaused -o custom-columns=REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message
echo "greeting while paused: $(greeting)"
wait_until "$deadline" "$state/watch.log" greeted
echo "--- the pause ended by itself: healed (greeting=hello)"
echo "--- the watcher's log"
cat "$state/watch.log"
echo "--- its metrics (curl http://127.0.0.1:$port/metrics)"
get /metrics | grep -E '^helm_drift_(release_drifted|repairs_total|events_total)'
get /metrics | grep -E '^helm_drift_objects.*release="intruder"'
echo "--- the Events"
"$kubectl" -n demo get events --field-selector reason!=Scheduled -o custom-columns=REASON:.reason,OBJECT:.involvedObject.name,MESSAGE:.message | grep -E 'REASON|Drift'
if "$kubectl" get clusterrolebinding demo-intruder-is-admin >/dev/null 2>&1; then
  echo "the forged record's ClusterRoleBinding exists" >&2; exit 1
fi
echo "--- no ClusterRoleBinding demo-intruder-is-admin: a record is trusted only for its own namespace, so the"
echo "    forged record's cluster-scoped object was not even compared, let alone written (see the Security page of the book)"
get / >"$state/watch.html"
echo "--- the watcher's page (--ui) as it was: file://$state/watch.html"
stop_watcher

say "Repair windows (Argo CD's sync windows): self-healing only while a maintenance window is open"
window="* $(date -u -d '+10 seconds' +%H:%M:%S)-$(date -u -d '+1 hour' +%H:%M:%S) UTC"
echo "$ helm drift watch healed -n demo --repair --repair-window '$window'   (opens in 10 s)"
start_watcher "$state/window.log" healed -n demo --metrics-address "127.0.0.1:$port" --repair --repair-cooldown 1s \
  --repair-service-account healer --repair-window "$window"
deadline=$(( $(date +%s) + 60 ))
wait_until "$deadline" "$state/window.log" ready
"$kubectl" -n demo patch configmap healed-config --type merge -p '{"data":{"greeting":"edited before the window"}}' >/dev/null
wait_until "$deadline" "$state/window.log" says '^helm_drift_repair_window_opens_timestamp_seconds{namespace="demo",release="healed"}'
grep 'repair waits for its window' "$state/window.log" | head -1
get /metrics | grep -E '^helm_drift_repair_window_opens_timestamp_seconds'
echo "greeting before the window opens: $(greeting)"
wait_until "$deadline" "$state/window.log" greeted
echo "--- the window opened at $(date -u +%H:%M:%S): healed (greeting=hello)"
stop_watcher

say "helm drift guard: the next hand edit is warned at the prompt (a ValidatingAdmissionPolicy, no webhook)"
# Waits (30 s at most) until a dry-run edit meets the guard (yes) or no longer does (no): the API
# server applies a policy, and stops applying a removed one, a moment after it is written.
await_guard() {
  local deadline=$(( $(date +%s) + 30 )) answers
  while :; do
    answers=no
    "$kubectl" -n demo patch configmap healed-config --type merge --dry-run=server -p '{"data":{"probe":"1"}}' 2>&1 \
      | grep -q ValidatingAdmissionPolicy && answers=yes
    [ "$answers" = "$1" ] && return 0
    [ "$(date +%s)" -lt "$deadline" ] || { echo "$2" >&2; exit 1; }
    sleep 0.5
  done
}
"$helm" drift guard install --all -n demo
await_guard yes "the guard never answered"
echo "$ kubectl -n demo patch configmap healed-config ... greeting=by-hand"
"$kubectl" -n demo patch configmap healed-config --type merge -p '{"data":{"greeting":"by-hand"}}' 2>&1 | tee "$state/guard.out"
grep -q "managed by Helm release healed" "$state/guard.out"
echo "$ helm drift check healed -n demo     # the release line names the guard covering it"
"$helm" drift check healed -n demo >"$state/guarded.txt" 2>/dev/null || [ $? = 2 ]
head -3 "$state/guarded.txt"
grep -q "guard: warn" "$state/guarded.txt"
"$helm" drift guard remove -n demo
# So that no later step of the demo meets the removed guard's warning again.
await_guard no "the removed guard still answers"
echo "(a removed guard stops warning once the API server has seen the deletion, within a second or two)"

say "A backup restored (as Velero does): re-created objects hold the server's defaults under another name, not drift"
"$helm" install restored "$root/tests/charts/basic" --namespace demo >/dev/null
for object in deployment/restored-web service/restored-web; do
  echo "$ kubectl -n demo get $object -o json > backup.json; kubectl delete $object; kubectl create -f backup.json --field-manager=velero-server"
  "$kubectl" -n demo get "$object" -o json >"$state/backup.json"
  "$kubectl" -n demo delete "$object" --wait=true >/dev/null
  "$kubectl" create -f "$state/backup.json" --field-manager=velero-server >/dev/null
done
"$helm" drift check restored -n demo | tee "$state/restored.txt"
grep -q "re-created by velero-server" "$state/restored.txt"
echo "exit code 0: taken over is not drift (--strict counts it); repair --remove-foreign removes none of the server's values"
"$helm" uninstall restored --namespace demo >/dev/null

say "Hooks Helm keeps after they ran (a ConfigMap, a pre-install CRD): --hooks finds them edited, repair --hooks puts them back without running the hook"
"$helm" install hooked "$root/tests/charts/hooked" --namespace demo >/dev/null
echo "$ kubectl -n demo patch configmap hooked-hook ...; kubectl patch crd probes.hooked.demo.drift.test ...   (by hand)"
"$kubectl" -n demo patch configmap hooked-hook --type merge -p '{"data":{"ran":"edited"}}' >/dev/null
"$kubectl" patch crd probes.hooked.demo.drift.test --type merge -p '{"spec":{"names":{"shortNames":["edited"]}}}' >/dev/null
echo "$ helm drift check hooked -n demo   (without --hooks, hooks are not compared)"
"$helm" drift check hooked -n demo
echo "$ helm drift check hooked -n demo --hooks"
"$helm" drift check hooked -n demo --hooks 2>/dev/null | tee "$state/hooks.txt" || [ $? = 2 ]
grep -q "hooks (objects Helm keeps after their hook ran)" "$state/hooks.txt"
echo "$ helm drift repair hooked -n demo --hooks --trust-namespace demo   (the CRD is cluster-scoped: trusted)"
"$helm" drift repair hooked -n demo --hooks --trust-namespace demo
"$helm" history hooked -n demo | tail -n +2 | wc -l | grep -qx 1   # still one revision: no hook ran
echo "still revision 1: the hook ConfigMap and the CRD were patched in place, no hook ran"
"$helm" uninstall hooked --namespace demo >/dev/null
"$kubectl" delete crd probes.hooked.demo.drift.test >/dev/null   # Helm never deletes a CRD hook

say "Repair in a working order: a release whose Namespace, CRD, ServiceAccount and Deployment were all deleted, put back in one run"
"$helm" install ordered "$root/tests/charts/ordered" --namespace demo >/dev/null
echo "$ kubectl delete deployment ordered-app serviceaccount ordered-runner crd gizmos.ordered.drift.test namespace ordered-extra"
"$kubectl" -n demo delete deployment ordered-app >/dev/null
"$kubectl" -n demo delete serviceaccount ordered-runner >/dev/null
"$kubectl" delete crd gizmos.ordered.drift.test --wait=true >/dev/null
"$kubectl" delete namespace ordered-extra --wait=true --timeout=120s >/dev/null
echo "$ env -u HELM_DRIFT_TRUST_NAMESPACE helm drift repair ordered -n demo   (refused: nothing is written on the word of a namespace you do not trust)"
env -u HELM_DRIFT_TRUST_NAMESPACE "$helm" drift repair ordered -n demo >"$state/ordered-refused.txt" 2>&1 || [ $? = 1 ]
grep -q -- "--trust-namespace demo" "$state/ordered-refused.txt"
echo "$ helm drift repair ordered -n demo --trust-namespace demo   (the Namespace and the CRD first, the rest once they are served)"
"$helm" drift repair ordered -n demo --trust-namespace demo | tee "$state/ordered.txt"
grep -q "recreate Namespace ordered-extra: applied" "$state/ordered.txt"
"$helm" uninstall ordered --namespace demo >/dev/null

say "Namesakes: a ConfigMap 'dup' in two namespaces of one release; repair --only names exactly one"
"$kubectl" create namespace demo-twin >/dev/null
"$helm" install twins "$root/tests/charts/namesakes" --namespace demo --set otherNamespace=demo-twin >/dev/null
for ns in demo demo-twin; do
  "$kubectl" -n "$ns" patch configmap dup --type merge -p '{"data":{"greeting":"edited"}}' >/dev/null
done
echo "$ helm drift repair twins -n demo --only ConfigMap/dup   (refused: it names both; nothing written)"
"$helm" drift repair twins -n demo --only ConfigMap/dup >"$state/twins-refused.txt" 2>&1 || [ $? = 1 ]
cat "$state/twins-refused.txt"
grep -q "names 2 objects of release twins in different namespaces" "$state/twins-refused.txt"
echo "$ helm drift repair twins -n demo --only demo/ConfigMap/dup   (that one alone: its namesake still drifts, exit 2)"
"$helm" drift repair twins -n demo --only demo/ConfigMap/dup | tee "$state/twins.txt" || [ "${PIPESTATUS[0]}" = 2 ]
grep -q "repair ConfigMap demo/dup: applied" "$state/twins.txt"
"$helm" uninstall twins --namespace demo >/dev/null
"$kubectl" delete namespace demo-twin --wait=false >/dev/null

say "One watcher for a fleet: a Cluster API management cluster (this one) finds and heals drift on two workload clusters"
for name in eu us; do
  deadline=$(( $(date +%s) + 180 ))
  until [ -f "$state/$name/ready" ]; do
    if ! kill -0 "$(cat "$state/$name.pid")" 2>/dev/null || [ "$(date +%s)" -gt "$deadline" ]; then
      echo "workload cluster $name did not start; its log:" >&2; cat "$state/$name.log" >&2; exit 1
    fi
    sleep 0.5
  done
  echo "workload cluster $name: API server at $(cat "$state/$name/ready")"
  # What Cluster API writes: the kubeconfig with every credential inline.
  "$kubectl" --kubeconfig "$state/$name/kubeconfig" config view --raw --flatten --minify >"$state/$name-inline.kubeconfig"
  # Installed as CAAPH installs it: Helm 3's SDK from a binary named `manager` (tests/standins/caaph),
  # so every field is owned by `manager`, not `helm`.
  KUBECONFIG="$state/$name/kubeconfig" "$tools/manager" -n runtime install runtime "$root/tests/charts/basic" >/dev/null
done
echo "(each workload cluster's release installed as CAAPH installs it: Helm 3's SDK, field manager \`manager\`)"
"$kubectl" apply --server-side -f "$root/tests/fixtures/cluster-api/cluster.x-k8s.io_clusters.yaml" >/dev/null
for crd in helmchartproxies helmreleaseproxies; do
  "$kubectl" apply --server-side -f "$root/tests/fixtures/cluster-api-addon-provider-helm/addons.cluster.x-k8s.io_$crd.yaml" >/dev/null
done
for _ in $(seq 300); do  # served within a minute: polled, not waited on blindly
  "$kubectl" get --raw /apis/cluster.x-k8s.io/v1beta2 >/dev/null 2>&1 \
    && "$kubectl" get --raw /apis/addons.cluster.x-k8s.io/v1alpha1 2>/dev/null | grep -q helmreleaseproxies && break
  sleep 0.2
done
"$kubectl" create namespace fleet >/dev/null
echo "$ kubectl -n fleet apply -f clusters.yaml   (what Cluster API and CAAPH write: Clusters, kubeconfig Secrets,"
echo "  a HelmChartProxy annotated helm-drift.io/repair=true, one HelmReleaseProxy per cluster)"
printf 'apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmChartProxy\nmetadata: {name: runtime, namespace: fleet, annotations: {helm-drift.io/repair: "true"}}\nspec: {clusterSelector: {matchLabels: {fleet: runtime}}, chartName: basic, repoURL: "oci://registry.invalid/charts"}\n' \
  | "$kubectl" apply -f - >/dev/null
for name in eu us; do
  printf 'apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: %s, namespace: fleet, labels: {fleet: runtime}}\nspec: {clusterNetwork: {pods: {cidrBlocks: [10.0.0.0/16]}}}\n' "$name" | "$kubectl" apply -f - >/dev/null
  "$kubectl" -n fleet patch cluster.cluster.x-k8s.io "$name" --subresource=status --type=merge \
    -p '{"status":{"initialization":{"controlPlaneInitialized":true}}}' >/dev/null
  "$kubectl" -n fleet create secret generic "$name-kubeconfig" --from-file=value="$state/$name-inline.kubeconfig" >/dev/null
  printf 'apiVersion: addons.cluster.x-k8s.io/v1alpha1\nkind: HelmReleaseProxy\nmetadata: {name: runtime-%s, namespace: fleet, labels: {helmreleaseproxy.addons.cluster.x-k8s.io/helmchartproxy-name: runtime}}\nspec: {clusterRef: {name: %s}, chartName: basic, repoURL: "oci://registry.invalid/charts", releaseName: runtime, namespace: runtime}\n' "$name" "$name" \
    | "$kubectl" apply -f - >/dev/null
  "$kubectl" -n fleet patch helmreleaseproxy.addons.cluster.x-k8s.io "runtime-$name" --subresource=status --type=merge \
    -p '{"status":{"revision":1,"status":"deployed"}}' >/dev/null
done
echo "$ kubectl --kubeconfig eu delete configmap runtime-config; kubectl --kubeconfig us patch configmap runtime-config ..."
KUBECONFIG="$state/eu/kubeconfig" "$kubectl" -n runtime delete configmap runtime-config >/dev/null
KUBECONFIG="$state/us/kubeconfig" "$kubectl" -n runtime patch configmap runtime-config --type merge -p '{"data":{"greeting":"edited on us"}}' >/dev/null
echo "$ helm drift check runtime -n runtime --clusters capi --clusters-namespace fleet   (from the management cluster's kubeconfig alone)"
"$helm" drift check runtime -n runtime --clusters capi --clusters-namespace fleet | tee "$state/fleet.txt" || [ $? = 2 ]
grep -q "cluster fleet/eu" "$state/fleet.txt" && grep -q "cluster fleet/us" "$state/fleet.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "$ helm drift watch runtime -n runtime --clusters capi --clusters-namespace fleet --repair --trust-namespace runtime"
start_watcher "$state/fleet-watch.log" runtime -n runtime --clusters capi --clusters-namespace fleet --clusters-interval 2s \
  --lease-namespace fleet --repair --trust-namespace runtime --metrics-address "127.0.0.1:$port"
fleet_healed() {
  [ "$(KUBECONFIG="$state/eu/kubeconfig" "$kubectl" -n runtime get configmap runtime-config -o 'jsonpath={.data.greeting}' 2>/dev/null)" = hello ] \
    && [ "$(KUBECONFIG="$state/us/kubeconfig" "$kubectl" -n runtime get configmap runtime-config -o 'jsonpath={.data.greeting}')" = hello ] \
    && [ "$("$kubectl" -n fleet get events --field-selector reason=DriftDetected,involvedObject.kind=HelmReleaseProxy -o name | wc -l)" -ge 2 ]
}
wait_until $(( $(date +%s) + 90 )) "$state/fleet-watch.log" fleet_healed
echo "--- healed on both workload clusters with each one's kubeconfig (no new Helm revision there):"
for name in eu us; do
  echo "$name: greeting=$(KUBECONFIG="$state/$name/kubeconfig" "$kubectl" -n runtime get configmap runtime-config -o 'jsonpath={.data.greeting}')," \
    "revisions: $(KUBECONFIG="$state/$name/kubeconfig" "$helm" history runtime -n runtime -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
done
echo "--- the Events on the HelmReleaseProxies, in the management cluster (kubectl -n fleet get events)"
"$kubectl" -n fleet get events --field-selector involvedObject.kind=HelmReleaseProxy -o custom-columns=REASON:.reason,PROXY:.involvedObject.name,MESSAGE:.message
echo "--- the fleet's metrics, each series with its cluster (curl http://127.0.0.1:$port/metrics)"
python3 -c 'import sys,urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "http://127.0.0.1:$port/metrics" \
  | grep -E '^helm_drift_(cluster_up|release_proxy|repairs_total\{.*applied)'
stop_watcher
echo "$ kubectl --kubeconfig eu patch configmap runtime-config ...; helm drift repair runtime -n runtime --clusters capi --clusters-namespace fleet --cluster fleet/eu"
KUBECONFIG="$state/eu/kubeconfig" "$kubectl" -n runtime patch configmap runtime-config --type merge -p '{"data":{"greeting":"edited on eu"}}' >/dev/null
"$helm" drift repair runtime -n runtime --clusters capi --clusters-namespace fleet --cluster fleet/eu
[ "$(KUBECONFIG="$state/eu/kubeconfig" "$kubectl" -n runtime get configmap runtime-config -o 'jsonpath={.data.greeting}')" = hello ]
echo "--- repaired on fleet/eu by a person, from the same inventory check reads, as CAAPH's writer:"
KUBECONFIG="$state/eu/kubeconfig" "$helm" drift check runtime -n runtime -v | grep "writer:"
echo "$ (CAAPH's next upgrade on fleet/eu, the HelmChartProxy's values changed: greeting=next)"
KUBECONFIG="$state/eu/kubeconfig" "$tools/manager" -n runtime upgrade runtime "$root/tests/charts/basic" --set greeting=next
[ "$(KUBECONFIG="$state/eu/kubeconfig" "$kubectl" -n runtime get configmap runtime-config -o 'jsonpath={.data.greeting}')" = next ]
echo "--- it lands: no conflict with what helm-drift wrote"

say "helm drift plan --helmchartproxy: a pull request's HelmChartProxy, planned on every workload cluster it selects"
cat >"$state/runtime-pr.yaml" <<'EOF2'
apiVersion: addons.cluster.x-k8s.io/v1alpha1
kind: HelmChartProxy
metadata: {name: runtime, namespace: fleet}
spec:
  clusterSelector: {matchLabels: {fleet: runtime}}
  chartName: basic
  repoURL: oci://registry.invalid/charts
  releaseName: runtime
  namespace: runtime
  valuesTemplate: |
    greeting: hello from {{ .Cluster.metadata.name }}
EOF2
echo "$ cat runtime-pr.yaml   (the pull request: each cluster's greeting from its Cluster's name)"
sed -n '/valuesTemplate/,$p' "$state/runtime-pr.yaml"
echo "$ helm drift plan --helmchartproxy-file runtime-pr.yaml -n fleet ./charts/basic   (exit 2: it changes something)"
"$helm" drift plan --helmchartproxy-file "$state/runtime-pr.yaml" -n fleet "$root/tests/charts/basic" 2>/dev/null | tee "$state/hcp-plan.txt" || [ "${PIPESTATUS[0]}" = 2 ]
grep -q 'cluster fleet/eu: upgrade' "$state/hcp-plan.txt" && grep -q '"hello from us"' "$state/hcp-plan.txt"

say "Pictures: Markdown for a pull request, and one self-contained HTML report of the whole cluster"
# Exit code 2 (drift) is expected here; helm says so on stderr, which is left out.
"$helm" drift check demo -n demo -o markdown 2>/dev/null || [ $? = 2 ]
"$helm" drift check -A -o html >"$state/drift-report.html" 2>/dev/null || [ $? = 2 ]
grep -q 'helm drift: drift found' "$state/drift-report.html"
echo "The HTML report: file://$state/drift-report.html   (open it in a browser; no network needed)"

cat <<EOT

The demo cluster is still running. To use it from your shell:
  export KUBECONFIG=$KUBECONFIG
  export HELM_CONFIG_HOME=$HELM_CONFIG_HOME HELM_DATA_HOME=$HELM_DATA_HOME HELM_CACHE_HOME=$HELM_CACHE_HOME
  export PATH=$tools:\$PATH     # kubectl and ${DEMO_HELM:-helm4}
  ${DEMO_HELM:-helm4} drift check demo -n demo
Stop it with: scripts/demo.sh down
EOT
[ "$code" = 2 ]
