package controller

import (
	"net/http"
	"testing"
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
