package controller

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDescribeRequest(t *testing.T) {
	for _, tc := range []struct {
		method, url                   string
		resource, namespace, wantVerb string
	}{
		{"GET", "/api/v1/namespaces/web/configmaps/settings", "configmaps", "web", "get"},
		{"GET", "/api/v1/namespaces/web/configmaps", "configmaps", "web", "list"},
		{"GET", "/apis/apps/v1/deployments?watch=true&resourceVersion=5", "deployments", "", "watch"},
		{"GET", "/api/v1/namespaces/web", "namespaces", "", "get"},
		{"GET", "/api/v1/namespaces", "namespaces", "", "list"},
		{"PATCH", "/apis/apps/v1/namespaces/web/deployments/api?dryRun=All&fieldManager=graphcd", "deployments", "web", "patch"},
		{"POST", "/api/v1/namespaces/web/services", "services", "web", "create"},
		{"PUT", "/apis/graphcd.io/v1alpha1/namespaces/a/applications/b/status", "applications", "a", "update"},
		{"DELETE", "/api/v1/namespaces/web/pods/p", "pods", "web", "delete"},
		{"DELETE", "/api/v1/namespaces/web/pods", "pods", "web", "deletecollection"},
		{"GET", "/apis", "", "", "list"},
		{"GET", "/version", "", "", "list"},
	} {
		req, err := http.NewRequest(tc.method, "https://cluster.example"+tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resource, namespace, verb := describeRequest(req)
		if resource != tc.resource || namespace != tc.namespace || verb != tc.wantVerb {
			t.Errorf("%s %s = %q, %q, %q; want %q, %q, %q", tc.method, tc.url, resource, namespace, verb, tc.resource, tc.namespace, tc.wantVerb)
		}
	}
}

// The compact family reads as a CounterVec would: one series per label
// set, counted, and an app's series gone once it is forgotten.
func TestRequestCounts(t *testing.T) {
	c := newRequestCounts("graphcd_app_k8s_request_total", "help", appK8sRequestFamily.labels)
	web := requestLabels{"graphcd", "web", "default", InClusterServer, "200", "get", "configmaps", "web", "false"}
	for range 3 {
		c.inc(web)
	}
	c.inc(requestLabels{"graphcd", "web", "default", InClusterServer, "404", "get", "configmaps", "web", "false"})
	c.inc(requestLabels{"graphcd", "shop", "default", InClusterServer, "201", "create", "configmaps", "shop", "false"})
	const want = `
# HELP graphcd_app_k8s_request_total help
# TYPE graphcd_app_k8s_request_total counter
graphcd_app_k8s_request_total{dry_run="false",name="shop",namespace="graphcd",project="default",resource_kind="configmaps",resource_namespace="shop",response_code="201",server="https://kubernetes.default.svc",verb="create"} 1
graphcd_app_k8s_request_total{dry_run="false",name="web",namespace="graphcd",project="default",resource_kind="configmaps",resource_namespace="web",response_code="200",server="https://kubernetes.default.svc",verb="get"} 3
graphcd_app_k8s_request_total{dry_run="false",name="web",namespace="graphcd",project="default",resource_kind="configmaps",resource_namespace="web",response_code="404",server="https://kubernetes.default.svc",verb="get"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	c.forget("graphcd", "web")
	if err := testutil.CollectAndCompare(c, strings.NewReader(strings.Join(strings.Split(want, "\n")[:4], "\n")+"\n")); err != nil {
		t.Errorf("after forgetting web: %v", err)
	}
}
