#!/bin/sh
# The install service of docker-compose.yml: loads the image the image
# service built into the kind cluster, applies graphcd's install manifests
# (hack/compose/install, over deploy/install), waits for the server,
# creates the sample Applications and prints how to reach the console.
set -eu

echo "install: loading $IMAGE_ARCHIVE into kind as $GRAPHCD_IMAGE"
loaded=$(docker load -i "$IMAGE_ARCHIVE" | sed -n 's/^Loaded image: //p')
[ -n "$loaded" ] || { echo "install: docker load named no image" >&2; exit 1; }
docker tag "$loaded" "$GRAPHCD_IMAGE"
kind load docker-image "$GRAPHCD_IMAGE" --name "$KIND_CLUSTER"
# The image lives in the kind node now; leave none behind on the host.
docker image rm "$loaded" "$GRAPHCD_IMAGE" >/dev/null

# deploy/install leaves the namespace to the user.
kubectl get namespace "$GRAPHCD_NAMESPACE" >/dev/null 2>&1 || kubectl create namespace "$GRAPHCD_NAMESPACE"

# The manifests may hold custom resources of the CRDs they create, which
# the API serves only once those are established: try again a few times.
echo "install: applying hack/compose/install"
tries=0
until kubectl apply --server-side --field-manager graphcd-compose -k /src/hack/compose/install; do
	tries=$((tries + 1))
	[ "$tries" -lt 5 ] || { echo "install: kubectl apply kept failing" >&2; exit 1; }
	sleep 5
done
kubectl -n "$GRAPHCD_NAMESPACE" rollout status "deployment/$GRAPHCD_DEPLOYMENT" --timeout 5m
# The CRDs come with the manifests or from the server (--install-crds).
tries=0
until kubectl get crd applications.graphcd.io appprojects.graphcd.io >/dev/null 2>&1; do
	tries=$((tries + 1))
	[ "$tries" -lt 60 ] || { echo "install: graphcd's CRDs did not appear within 2 minutes" >&2; exit 1; }
	sleep 2
done
kubectl wait --for condition=established --timeout 2m crd/applications.graphcd.io crd/appprojects.graphcd.io
kubectl apply --server-side --field-manager graphcd-compose -f /src/hack/compose/applications.yaml

# The server writes the admin account's initial password once it runs.
tries=0
until password=$(kubectl -n "$GRAPHCD_NAMESPACE" get secret "$GRAPHCD_ADMIN_SECRET" -o jsonpath='{.data.password}' 2>/dev/null) && [ -n "$password" ]; do
	tries=$((tries + 1))
	[ "$tries" -lt 60 ] || { echo "install: no admin password in $GRAPHCD_ADMIN_SECRET after 2 minutes" >&2; exit 1; }
	sleep 2
done
password=$(printf %s "$password" | base64 -d)

# The NodePort the host's port maps to, reached from the compose network.
tries=0
until curl -fsSk -o /dev/null "https://$KIND_CLUSTER-control-plane:$NODE_PORT/readyz"; do
	tries=$((tries + 1))
	[ "$tries" -lt 60 ] || { echo "install: graphcd's NodePort $NODE_PORT did not answer within 2 minutes" >&2; exit 1; }
	sleep 2
done

cat <<MSG

graphcd is running in the kind cluster $KIND_CLUSTER, with an Application
for each sample of hack/demo/apps. Their images are placeholders, as in
"make demo": graphcd syncs them, but kind cannot pull them, so their pods
stay in ImagePullBackOff, the apps do not turn Healthy, and the hook Jobs
of hello-helm and sync-waves never finish.

  Console:  $CONSOLE_URL/   (a self-signed certificate: accept it)
  Log in:   admin / $password
            (the password is in Secret $GRAPHCD_NAMESPACE/$GRAPHCD_ADMIN_SECRET)
  GraphQL:  $CONSOLE_URL/api/graphql
  Cluster:  docker compose exec kind kubectl get applications -n $GRAPHCD_NAMESPACE
            docker compose exec kind kubectl get deploy,svc,pods -n demo-guestbook
  Sync:     guestbook syncs by itself; the others on request:
            docker compose exec kind kubectl patch application hello-kustomize -n $GRAPHCD_NAMESPACE --type merge -p '{"operation":{"sync":{}}}'
  Change:   git clone $GIT_URL demo && cd demo
            edit guestbook/deployment.yaml, then: git commit -am "scale guestbook" && git push
  Stop:     docker compose down   (deletes the kind cluster too)

MSG
