#!/usr/bin/env bash
# Builds Argo CD's one binary (application controller, repository server,
# ... chosen by the name it runs as, or ARGOCD_BINARY_NAME) from the Go
# module proxy, for the side-by-side scale runs (hack/loadtest --peer
# argocd). Cached per version beside the control plane's binaries in
# ${XDG_CACHE_HOME:-~/.cache}/graphcd/bin, with the Application and
# AppProject CRDs of the same release beside it (<binary>.crds.yaml);
# prints the binary's path.
#
# v3.1.16 is the newest release whose module builds (as found when issue
# 30 was filed): v3.2.12's module does not compile, and from v3.3 on Argo
# CD replaces gitops-engine with a folder its module does not carry.
set -euo pipefail

ARGOCD_VERSION=v3.1.16

cache=${XDG_CACHE_HOME:-$HOME/.cache}/graphcd
bin=$cache/bin
dest=$bin/argocd-$ARGOCD_VERSION
crds=$dest.crds.yaml
mkdir -p "$bin"
if [ -x "$dest" ] && [ -f "$crds" ]; then
	echo "$dest"
	exit 0
fi

# One builder at a time per machine, as hack/cluster-bins.sh.
exec 9>"$cache/build.lock"
flock 9

log() { printf 'argocd-build: %s\n' "$*" >&2; }

# The module replaces some of its dependencies, so it builds as the main
# module, in its own directory of the module cache (read-only: the build
# writes nothing there).
dir=$(cd / && go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || {
	log "go mod download github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION gave no directory"
	exit 1
}
if [ ! -x "$dest" ]; then
	log "building Argo CD $ARGOCD_VERSION into $bin (once per machine)"
	start=$SECONDS
	out=$(mktemp "$bin/.argocd.XXXXXX")
	trap 'rm -f "$out"' EXIT
	(cd "$dir" && GOTOOLCHAIN=local go build -trimpath \
		-ldflags "-s -w -X github.com/argoproj/argo-cd/v3/common.version=${ARGOCD_VERSION#v}" -o "$out" ./cmd)
	chmod +x "$out"
	mv -f "$out" "$dest"
	trap - EXIT
	log "built Argo CD $ARGOCD_VERSION in $((SECONDS - start))s"
fi
{
	cat "$dir/manifests/crds/application-crd.yaml"
	echo ---
	cat "$dir/manifests/crds/appproject-crd.yaml"
} >"$crds.tmp"
mv -f "$crds.tmp" "$crds"
echo "$dest"
