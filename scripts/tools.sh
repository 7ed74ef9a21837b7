#!/usr/bin/env bash
# Builds the real test tools from Go modules (pinned in scripts/versions.env) into a cache outside
# the checkout, skipping what is already built, and prints the directory that holds them.
#
#   scripts/tools.sh              build what is missing, print the tools directory on stdout
#   scripts/tools.sh --dir        only print the tools directory
#   scripts/tools.sh --demo       build only what scripts/demo.sh uses, print the tools directory
#   scripts/tools.sh --kubernetes VERSION
#                                 build the control plane (kube-apiserver, kube-controller-manager)
#                                 of one version of KUBERNETES_VERSIONS, print its directory (the
#                                 tools directory for the default; kubectl, etcd and Helm stay one)
#   scripts/tools.sh --actionlint build actionlint if missing (its own cache directory, so the
#                                 cluster tools' cache stays valid), print its path
#   scripts/tools.sh --mdbook     install mdBook (cargo, crates.io) if missing, print its path
#
# The Go module proxy is the one `go env GOPROXY` gives (the machine's setting).
#
# Tools: kube-apiserver, kube-controller-manager, kubectl (k8s.io/kubernetes), etcd
# (go.etcd.io/etcd/server/v3), helm3 and helm4 (helm.sh/helm/v3 and /v4); for the install tests
# an OCI registry (github.com/distribution/distribution/v3), oras (oras.land/oras) and the oldest
# Helm 3 releases the plugin supports (helm3.12, helm3.18); Prometheus (github.com/prometheus/
# prometheus, for the dashboard's tests); helmfile (github.com/helmfile/helmfile, for a helmfile
# user's pipeline with `plan`); the stand-ins for Helm SDK controllers (`manager` as CAAPH,
# `helm-controller` as Flux, from tests/standins); and actionlint
# (github.com/rhysd/actionlint) for the release workflows. The install-test tools are built each
# into a directory named after its version and linked into the tools directory, so adding or
# bumping one leaves the cluster tools' cache valid.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"

cache_root=${HELM_DRIFT_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/helm-drift/tools}
key="k8s-${KUBERNETES_VERSION}_etcd-${ETCD_VERSION}_helm-${HELM3_VERSION}-${HELM4_VERSION}"
dir="$cache_root/$key"
bin="$dir/bin"

if [ "${1:-}" = "--dir" ]; then
  echo "$bin"
  exit 0
fi

log() { echo "tools: $*" >&2; }

GOPROXY=$(go env GOPROXY)
export GOPROXY
export GOFLAGS=-mod=mod
export GOTOOLCHAIN=local
export CGO_ENABLED=0

if [ "${1:-}" = "--actionlint" ]; then
  lint="$cache_root/actionlint-${ACTIONLINT_VERSION}/bin"
  if [ ! -x "$lint/actionlint" ]; then
    log "building actionlint from github.com/rhysd/actionlint@${ACTIONLINT_VERSION}"
    mkdir -p "$lint"
    GOBIN="$lint" go install -trimpath -ldflags "-s -w -X main.version=${ACTIONLINT_VERSION}" \
      "github.com/rhysd/actionlint/cmd/actionlint@${ACTIONLINT_VERSION}" >&2
  fi
  echo "$lint/actionlint"
  exit 0
fi
if [ "${1:-}" = "--mdbook" ]; then
  book="$cache_root/mdbook-${MDBOOK_VERSION}"
  if [ ! -x "$book/bin/mdbook" ]; then
    log "installing mdbook ${MDBOOK_VERSION} from crates.io"
    cargo install --locked --quiet mdbook --version "${MDBOOK_VERSION}" --root "$book" >&2
  fi
  echo "$book/bin/mdbook"
  exit 0
fi
mkdir -p "$bin" "$dir/work"

# build_kubernetes VERSION BIN TOOL...: the k8s.io/kubernetes commands of VERSION into BIN, in a
# scratch module that replaces every staging module (as listed in kubernetes' own go.mod) with
# its published v0.X.Y version.
build_kubernetes() {
  local version=$1 into=$2 missing=()
  shift 2
  for t in "$@"; do [ -x "$into/$t" ] || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "building ${missing[*]} from k8s.io/kubernetes@${version} (cold: tens of minutes)"
  local w="$into/../work/kubernetes" v=${version#v}
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%.*} staging="v0.${v#*.}"
  rm -rf "$w" && mkdir -p "$w" "$into" && cd "$w"
  go mod init helm-drift.test/kubernetes-tools >/dev/null 2>&1
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@${version}" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [ -f "$gomod" ] || { log "could not download the go.mod of k8s.io/kubernetes@${version}"; exit 1; }
  local mods
  mods=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod")
  [ -n "$mods" ] || { log "no staging replace lines found in $gomod"; exit 1; }
  for m in $mods; do go mod edit -replace "$m=$m@$staging"; done
  go mod edit -require "k8s.io/kubernetes@${version}"
  local pkgs=()
  for t in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$t"); done
  go get "${pkgs[@]/%/@${version}}" >&2
  local ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=${version} -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  for t in "${missing[@]}"; do
    go build -trimpath -ldflags "$ldflags" -o "$into/$t.tmp" "k8s.io/kubernetes/cmd/$t" >&2
    mv "$into/$t.tmp" "$into/$t"
    log "built $t ${version}"
  done
  cd / && rm -rf "$w"
}

# etcd's own go.mod has replace lines, so `go install pkg@v` refuses it: build via a scratch module.
build_etcd() {
  [ -x "$bin/etcd" ] && return 0
  log "building etcd from go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
  local w="$dir/work/etcd"
  rm -rf "$w" && mkdir -p "$w" && cd "$w"
  go mod init helm-drift.test/etcd-tools >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >&2
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3 >&2
  mv "$bin/etcd.tmp" "$bin/etcd"
  log "built etcd"
}

# helm v3 and v4 side by side as helm3 and helm4.
build_helm() {
  local major=$1 version=$2 name="helm$1"
  [ -x "$bin/$name" ] && return 0
  log "building $name from helm.sh/helm/v$major@$version"
  local w="$dir/work/$name"
  rm -rf "$w" && mkdir -p "$w"
  GOBIN="$w" go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v$major/internal/version.version=$version -X helm.sh/helm/v$major/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v$major/cmd/helm@$version" >&2
  mv "$w/helm" "$bin/$name"
  log "built $name"
}

# helmfile's go.mod has replace lines (`go install pkg@v` refuses it): a scratch module that
# requires it with the same replace lines, built once into $cache_root/helmfile-VERSION, linked.
build_helmfile() {
  local home="$cache_root/helmfile-$HELMFILE_VERSION/bin"
  if [ ! -x "$home/helmfile" ]; then
    log "building helmfile from github.com/helmfile/helmfile@$HELMFILE_VERSION"
    local w="$cache_root/helmfile-$HELMFILE_VERSION/work"
    rm -rf "$w" && mkdir -p "$w" "$home" && cd "$w"
    go mod init helm-drift.test/helmfile >/dev/null 2>&1
    local gomod
    gomod=$(go mod download -json "github.com/helmfile/helmfile@$HELMFILE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [ -f "$gomod" ] || { log "could not download the go.mod of helmfile@$HELMFILE_VERSION"; exit 1; }
    # Each `old => new version` line of its replace block.
    sed -n '/^replace (/,/^)/s#^[[:space:]]*\([^[:space:]/][^[:space:]]*\) => \([^[:space:]]*\) \(v[^[:space:]]*\).*#\1=\2@\3#p' "$gomod" |
      while read -r r; do go mod edit -replace "$r"; done
    go get "github.com/helmfile/helmfile@$HELMFILE_VERSION" >&2
    go build -trimpath -ldflags "-s -w -X go.szostok.io/version.version=$HELMFILE_VERSION" -o "$home/helmfile" \
      github.com/helmfile/helmfile >&2
    cd / && rm -rf "$w"
    log "built helmfile"
  fi
  ln -sfn "$home/helmfile" "$bin/helmfile"
}

# go install NAME VERSION PACKAGE [LDFLAGS]: built once into $cache_root/NAME-VERSION, linked as
# $bin/NAME.
build_linked() {
  local name=$1 version=$2 package=$3 ldflags="-s -w ${4:-}"
  local home="$cache_root/$name-$version/bin"
  if [ ! -x "$home/$name" ]; then
    log "building $name from $package@$version"
    local w="$cache_root/$name-$version/work"
    rm -rf "$w" && mkdir -p "$w" "$home"
    GOBIN="$w" go install -trimpath -ldflags "$ldflags" "$package@$version" >&2
    mv "$w/$(basename "$package")" "$home/$name"
    rm -rf "$w"
    log "built $name"
  fi
  ln -sfn "$home/$name" "$bin/$name"
}

# Stand-ins for Helm SDK controllers (tests/standins/*/main.go): `manager`, the Cluster API
# add-on provider's Helm 3 SDK install/upgrade, and `helm-controller`, Helm 4's command tree with
# Flux's field manager. Each is built in a scratch module from its source and the pinned Helm
# module, once per source and version into $cache_root/standin-NAME-VERSION-HASH, and linked.
build_standin() {
  local name=$1 source=$2 module=$3 version=$4
  local src="$here/../tests/standins/$source/main.go" hash
  hash=$(sha256sum "$src" | cut -c1-12)
  local home="$cache_root/standin-$name-$version-$hash/bin"
  if [ ! -x "$home/$name" ]; then
    log "building the $name stand-in from tests/standins/$source and $module@$version"
    local w="$cache_root/standin-$name-$version-$hash/work"
    rm -rf "$w" && mkdir -p "$w" "$home" && cd "$w"
    go mod init "helm-drift.test/standin-$source" >/dev/null 2>&1
    cp "$src" main.go
    go get "$module@$version" >&2
    go mod tidy >&2
    go build -trimpath -ldflags "-s -w" -o "$home/$name.tmp" . >&2
    mv "$home/$name.tmp" "$home/$name"
    cd / && rm -rf "$w"
    log "built the $name stand-in"
  fi
  ln -sfn "$home/$name" "$bin/$name"
}

start=$(date +%s)
case "${1:-}" in
  --kubernetes)
    version=${2:?"--kubernetes VERSION: one of $KUBERNETES_VERSIONS"}
    case " $KUBERNETES_VERSIONS " in *" $version "*) ;; *)
      log "Kubernetes $version is not in the supported window ($KUBERNETES_VERSIONS)"; exit 1 ;;
    esac
    if [ "$version" = "$KUBERNETES_VERSION" ]; then
      build_kubernetes "$version" "$bin" kube-apiserver kube-controller-manager kubectl
      echo "$bin"
    else
      home="$cache_root/kubernetes-$version/bin"
      build_kubernetes "$version" "$home" kube-apiserver kube-controller-manager
      echo "$home"
    fi
    exit 0
    ;;
  --demo)
    # What scripts/demo.sh runs: the control plane, kubectl, its Helm, the OCI registry and oras,
    # helmfile and the Cluster API add-on provider's stand-in. The rest is the test suite's.
    if [ "${DEMO_HELM:-helm4}" = helm3 ]; then build_helm 3 "$HELM3_VERSION"; else build_helm 4 "$HELM4_VERSION"; fi
    build_etcd
    build_kubernetes "$KUBERNETES_VERSION" "$bin" kube-apiserver kube-controller-manager kubectl
    build_linked registry "$DISTRIBUTION_VERSION" github.com/distribution/distribution/v3/cmd/registry
    build_linked oras "$ORAS_VERSION" oras.land/oras/cmd/oras
    build_helmfile
    build_standin manager caaph helm.sh/helm/v3 "$HELM3_VERSION"
    log "demo tools ready in $bin ($(( $(date +%s) - start ))s)"
    echo "$bin"
    exit 0
    ;;
esac
build_helm 3 "$HELM3_VERSION"
build_helm 4 "$HELM4_VERSION"
build_etcd
build_kubernetes "$KUBERNETES_VERSION" "$bin" kube-apiserver kube-controller-manager kubectl
build_linked registry "$DISTRIBUTION_VERSION" github.com/distribution/distribution/v3/cmd/registry
build_linked oras "$ORAS_VERSION" oras.land/oras/cmd/oras
build_linked prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/prometheus
build_helmfile
build_standin manager caaph helm.sh/helm/v3 "$HELM3_VERSION"
build_standin helm-controller flux helm.sh/helm/v4 "$HELM4_VERSION"
for v in $HELM3_OLDER_VERSIONS; do
  short=${v#v}
  build_linked "helm${short%.*}" "$v" helm.sh/helm/v3/cmd/helm \
    "-X helm.sh/helm/v3/internal/version.version=$v -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
done
log "tools ready in $bin ($(( $(date +%s) - start ))s)"
echo "$bin"
