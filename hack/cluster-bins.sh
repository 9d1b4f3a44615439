#!/usr/bin/env bash
# Builds the local control plane's binaries from the Go module proxy and caches
# them per pinned version in ${XDG_CACHE_HOME:-~/.cache}/graphcd/bin, so every
# clone on the machine (CI's fresh clones included) reuses them. A binary is
# rebuilt only when it is missing or its pin changes. Prints the bin directory.
#
#   hack/cluster-bins.sh                      # all of them
#   hack/cluster-bins.sh etcd kube-apiserver  # only these (what a test needs)
#   hack/cluster-bins.sh --check              # exit 1 if any is missing; build nothing
#   hack/cluster-bins.sh gitea                # the forge the ApplicationSet tests run
#                                             # (not part of the control plane)
set -euo pipefail

ETCD_VERSION=v3.7.3
KUBE_VERSION=v1.37.2
KWOK_VERSION=v0.8.0
GITEA_VERSION=v1.27.3

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/graphcd
bin=$cache/bin
mkdir -p "$bin"

if [ "${1:-}" = --check ]; then
	for f in "etcd-$ETCD_VERSION" "kwok-$KWOK_VERSION" kube-{apiserver,controller-manager,scheduler}-"$KUBE_VERSION" "kubectl-$KUBE_VERSION"; do
		[ -x "$bin/$f" ] || exit 1
	done
	exit 0
fi

# One builder at a time per machine: parallel test packages or two clones may
# ask at once, and a k8s build needs ~2.3 GB of memory.
exec 9>"$cache/build.lock"
flock 9

log() { printf 'cluster-bins: %s\n' "$*" >&2; }

# build NAME VERSION CMD... runs CMD with $out set to a temp path, then moves
# the result to $bin/NAME-VERSION atomically.
build() {
	local name=$1 version=$2
	shift 2
	local dest=$bin/$name-$version
	[ -x "$dest" ] && return 0
	if [ -z "${announced:-}" ]; then
		log "building the local control plane into $bin (once per machine, ~25 min on 2 cores)"
		announced=1
	fi
	log "building $name $version"
	local start=$SECONDS
	out=$(mktemp "$bin/.$name.XXXXXX")
	"$@"
	chmod +x "$out"
	mv -f "$out" "$dest"
	log "built $name $version in $((SECONDS - start))s"
}

build_etcd() { (cd "$here/cluster/etcd" && go build -trimpath -o "$out" go.etcd.io/etcd/server/v3); }

kube_ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	kube_ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
done
build_kube() { (cd "$here/cluster/kubernetes" && go build -trimpath -ldflags "$kube_ldflags" -o "$out" "k8s.io/kubernetes/cmd/$1"); }

build_kwok() {
	local gobin
	gobin=$(mktemp -d)
	GOBIN=$gobin go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	mv -f "$gobin/kwok" "$out"
	rmdir "$gobin"
}

# Gitea's module replaces some of its dependencies, so it builds as the
# main module, in its own directory of the module cache (read-only: the
# build writes nothing there). Its templates and locales are read from
# that directory at run time (STATIC_ROOT_PATH), as without the bindata tag.
build_gitea() {
	local dir
	dir=$(cd / && go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	[ -d "$dir" ] || { log "go mod download code.gitea.io/gitea@$GITEA_VERSION gave no directory"; return 1; }
	(cd "$dir" && go build -trimpath -tags 'sqlite sqlite_unlock_notify' \
		-ldflags "-s -w -X code.gitea.io/gitea/modules/setting.AppVer=${GITEA_VERSION#v}" -o "$out" .)
}

all=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok)
wanted=("$@")
[ $# -gt 0 ] || wanted=("${all[@]}")
for name in "${wanted[@]}"; do
	case $name in
	etcd) build etcd "$ETCD_VERSION" build_etcd ;;
	kube-apiserver | kube-controller-manager | kube-scheduler | kubectl) build "$name" "$KUBE_VERSION" build_kube "$name" ;;
	kwok) build kwok "$KWOK_VERSION" build_kwok ;;
	gitea) announced=1 build gitea "$GITEA_VERSION" build_gitea ;;
	*)
		log "unknown binary $name (want some of: ${all[*]} gitea)"
		exit 2
		;;
	esac
done

echo "$bin"
