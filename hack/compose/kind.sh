#!/bin/sh
# The kind service of docker-compose.yml: creates the kind cluster
# $KIND_CLUSTER on the host's Docker (its node joins the compose network
# named by KIND_EXPERIMENTAL_DOCKER_NETWORK), writes a kubeconfig that
# reaches it from that network to $KUBECONFIG for the other services, then
# waits. Stopped (`docker compose down`, or Ctrl-C on `up`), it deletes the
# cluster.
set -eu

delete() {
	echo "kind: deleting cluster $KIND_CLUSTER"
	kind delete cluster --name "$KIND_CLUSTER"
	rm -f "$KUBECONFIG"
	exit 0
}
trap delete TERM INT

if kind get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER"; then
	echo "kind: reusing cluster $KIND_CLUSTER"
else
	kind create cluster --name "$KIND_CLUSTER" --config /src/hack/compose/kind.yaml --wait 5m
fi
kind get kubeconfig --internal --name "$KIND_CLUSTER" >"$KUBECONFIG.tmp"
mv "$KUBECONFIG.tmp" "$KUBECONFIG"
echo "kind: cluster $KIND_CLUSTER is ready"

# A shell waiting on a child runs its trap as soon as a signal comes.
while :; do
	sleep 3600 &
	wait $! || true
done
