package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinChecks(t *testing.T) {
	tests := []struct {
		fixture string
		want    *Result
	}{
		// Deployment
		{"deployment/healthy.yaml", &Result{Status: StatusHealthy}},
		{"deployment/paused.yaml", &Result{Status: StatusSuspended, Message: "Deployment is paused"}},
		{"deployment/generation-not-observed.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}},
		{"deployment/updating.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: 1 out of 3 new replicas have been updated..."}},
		{"deployment/old-replicas-terminating.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: 1 old replicas are pending termination..."}},
		{"deployment/not-available.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: 2 of 3 updated replicas are available..."}},
		{"deployment/deadline-exceeded.yaml", &Result{Status: StatusDegraded, Message: `Deployment "web" exceeded its progress deadline`}},
		{"deployment/scaled-to-zero.yaml", &Result{Status: StatusHealthy}},
		// StatefulSet
		{"statefulset/healthy.yaml", &Result{Status: StatusHealthy, Message: "statefulset rolling update complete 3 pods at revision db-5c8f..."}},
		{"statefulset/not-observed.yaml", &Result{Status: StatusProgressing, Message: "Waiting for statefulset spec update to be observed..."}},
		{"statefulset/never-observed.yaml", &Result{Status: StatusProgressing, Message: "Waiting for statefulset spec update to be observed..."}},
		{"statefulset/pods-not-ready.yaml", &Result{Status: StatusProgressing, Message: "Waiting for 2 pods to be ready..."}},
		{"statefulset/rolling.yaml", &Result{Status: StatusProgressing, Message: "waiting for statefulset rolling update to complete 1 pods at revision db-6d9a..."}},
		{"statefulset/partition-rolling.yaml", &Result{Status: StatusProgressing, Message: "Waiting for partitioned roll out to finish: 1 out of 3 new pods have been updated..."}},
		{"statefulset/partition-done.yaml", &Result{Status: StatusHealthy, Message: "partitioned roll out complete: 3 new pods have been updated..."}},
		{"statefulset/ondelete.yaml", &Result{Status: StatusHealthy, Message: "statefulset has 3 ready pods"}},
		// DaemonSet
		{"daemonset/healthy.yaml", &Result{Status: StatusHealthy}},
		{"daemonset/not-observed.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed daemon set generation less than desired generation"}},
		{"daemonset/updating.yaml", &Result{Status: StatusProgressing, Message: `Waiting for daemon set "agent" rollout to finish: 2 out of 4 new pods have been updated...`}},
		{"daemonset/not-available.yaml", &Result{Status: StatusProgressing, Message: `Waiting for daemon set "agent" rollout to finish: 3 of 4 updated pods are available...`}},
		{"daemonset/ondelete.yaml", &Result{Status: StatusHealthy, Message: "daemon set 1 out of 4 new pods have been updated"}},
		// ReplicaSet
		{"replicaset/healthy.yaml", &Result{Status: StatusHealthy}},
		{"replicaset/not-observed.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed replica set generation less than desired generation"}},
		{"replicaset/progressing.yaml", &Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: 1 out of 2 new replicas are available..."}},
		{"replicaset/failure.yaml", &Result{Status: StatusDegraded, Message: `pods "web-7d9f-x" is forbidden: exceeded quota: compute`}},
		// Pod
		{"pod/running-ready.yaml", &Result{Status: StatusHealthy}},
		{"pod/running-not-ready.yaml", &Result{Status: StatusProgressing}},
		{"pod/running-restarted.yaml", &Result{Status: StatusDegraded, Message: "readiness probe failing"}},
		{"pod/crashloop.yaml", &Result{Status: StatusDegraded, Message: "back-off 5m0s restarting failed container=web"}},
		{"pod/imagepullbackoff.yaml", &Result{Status: StatusDegraded, Message: `container "web" is waiting: ImagePullBackOff, rpc error: not found`}},
		{"pod/hook-imagepullbackoff.yaml", &Result{Status: StatusProgressing}},
		{"pod/pending.yaml", &Result{Status: StatusProgressing, Message: "0/3 nodes are available"}},
		{"pod/succeeded.yaml", &Result{Status: StatusHealthy}},
		{"pod/failed-message.yaml", &Result{Status: StatusDegraded, Message: "Pod was evicted"}},
		{"pod/failed-exit-code.yaml", &Result{Status: StatusDegraded, Message: `container "main" failed with exit code 2`}},
		{"pod/failed-oom.yaml", &Result{Status: StatusDegraded, Message: "OOMKilled"}},
		{"pod/failed-terminated-message.yaml", &Result{Status: StatusDegraded, Message: "panic: config missing"}},
		{"pod/failed-bare.yaml", &Result{Status: StatusDegraded}},
		{"pod/hook-running.yaml", &Result{Status: StatusProgressing}},
		{"pod/unknown-phase.yaml", &Result{Status: StatusUnknown, Message: "node lost"}},
		{"pod/onfailure-running.yaml", &Result{Status: StatusProgressing}},
		{"pod/onfailure-crashloop.yaml", &Result{Status: StatusProgressing}},
		{"pod/init-crashloop.yaml", &Result{Status: StatusProgressing}},
		{"pod/failed-init.yaml", &Result{Status: StatusDegraded, Message: `container "fetch" failed with exit code 3`}},
		// Pod with argocd.argoproj.io/ignore-restart-policy
		{"pod/ignore-restart-never-ready.yaml", &Result{Status: StatusHealthy}},
		{"pod/ignore-restart-never-backoff.yaml", &Result{Status: StatusDegraded, Message: `Back-off pulling image "registry.example.com/virt-launcher:9.9"`}},
		{"pod/ignore-restart-onfailure-crashloop.yaml", &Result{Status: StatusDegraded, Message: `container "taskmanager" is waiting: CrashLoopBackOff`}},
		{"pod/ignore-restart-never-restarted.yaml", &Result{Status: StatusDegraded, Message: "the server went away"}},
		{"pod/ignore-restart-never-starting.yaml", &Result{Status: StatusProgressing}},
		{"pod/ignore-restart-pending-errimagepull.yaml", &Result{Status: StatusDegraded, Message: "manifest unknown"}},
		{"pod/ignore-restart-false.yaml", &Result{Status: StatusProgressing}},
		{"pod/ignore-restart-hook.yaml", &Result{Status: StatusProgressing}},
		// Service
		{"service/clusterip.yaml", &Result{Status: StatusHealthy}},
		{"service/lb-pending.yaml", &Result{Status: StatusProgressing, Message: "Waiting for the load balancer to get an address"}},
		{"service/lb-ready.yaml", &Result{Status: StatusHealthy}},
		{"service/lb-hostname.yaml", &Result{Status: StatusHealthy}},
		{"service/lb-empty-entry.yaml", &Result{Status: StatusHealthy}},
		{"service/lb-ports-only.yaml", &Result{Status: StatusHealthy}},
		{"service/lb-empty-list.yaml", &Result{Status: StatusProgressing, Message: "Waiting for the load balancer to get an address"}},
		// Ingress
		{"ingress/ready.yaml", &Result{Status: StatusHealthy}},
		{"ingress/pending.yaml", &Result{Status: StatusProgressing, Message: "Waiting for the ingress controller to publish an address"}},
		{"ingress/empty-entry.yaml", &Result{Status: StatusHealthy}},
		{"ingress/extensions-empty-entry.yaml", &Result{Status: StatusHealthy}},
		{"ingress/hostname-empty.yaml", &Result{Status: StatusHealthy}},
		{"ingress/empty-list.yaml", &Result{Status: StatusProgressing, Message: "Waiting for the ingress controller to publish an address"}},
		// PersistentVolumeClaim
		{"pvc/bound.yaml", &Result{Status: StatusHealthy}},
		{"pvc/pending.yaml", &Result{Status: StatusProgressing, Message: "Waiting for the claim to be bound"}},
		{"pvc/lost.yaml", &Result{Status: StatusDegraded, Message: "The claim has lost its volume"}},
		{"pvc/no-status.yaml", &Result{Status: StatusUnknown, Message: `Unknown claim phase ""`}},
		// Job
		{"job/running.yaml", &Result{Status: StatusProgressing, Message: "Job is running"}},
		{"job/complete.yaml", &Result{Status: StatusHealthy, Message: "Reached expected number of succeeded pods"}},
		{"job/failed.yaml", &Result{Status: StatusDegraded, Message: "Job has reached the specified backoff limit"}},
		{"job/suspended.yaml", &Result{Status: StatusSuspended, Message: "Job suspended"}},
		{"job/suspend-requested.yaml", &Result{Status: StatusSuspended, Message: "Job is suspended"}},
		{"job/resumed.yaml", &Result{Status: StatusProgressing, Message: "Job is running"}},
		// CronJob
		{"cronjob/suspended.yaml", &Result{Status: StatusSuspended, Message: "CronJob is suspended"}},
		{"cronjob/never-scheduled.yaml", &Result{Status: StatusHealthy, Message: "The CronJob has not been scheduled yet"}},
		{"cronjob/last-succeeded.yaml", &Result{Status: StatusHealthy, Message: "The last run of the CronJob succeeded"}},
		{"cronjob/first-run-active.yaml", &Result{Status: StatusProgressing, Message: "The first run of the CronJob is in progress"}},
		{"cronjob/run-active.yaml", &Result{Status: StatusProgressing, Message: "A run of the CronJob is in progress"}},
		{"cronjob/last-failed.yaml", &Result{Status: StatusDegraded, Message: "The last run of the CronJob did not succeed"}},
		{"cronjob/never-succeeded.yaml", &Result{Status: StatusDegraded, Message: "The last run of the CronJob did not succeed"}},
		// HorizontalPodAutoscaler: Argo CD's mapping, by version
		{"hpa/v2-healthy.yaml", &Result{Status: StatusHealthy, Message: "ReadyForNewScale: recommended size matches current size"}},
		{"hpa/v2-limited.yaml", &Result{Status: StatusHealthy, Message: "ReadyForNewScale"}},
		{"hpa/v2-scale-down-limit.yaml", &Result{Status: StatusHealthy, Message: "ScaleDownLimit: the desired replica count is decreasing faster than the maximum scale rate"}},
		{"hpa/v2-no-metrics.yaml", &Result{Status: StatusDegraded, Message: "FailedGetResourceMetric: failed to get cpu utilization: unable to get metrics"}},
		{"hpa/v2-external-metric.yaml", &Result{Status: StatusDegraded, Message: "FailedGetExternalMetric: unable to get external metric shop/sqs_depth"}},
		{"hpa/v2-compute-replicas.yaml", &Result{Status: StatusDegraded, Message: "FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1)"}},
		{"hpa/v2-cannot-scale.yaml", &Result{Status: StatusDegraded, Message: `FailedGetScale: deployments/scale.apps "web" not found`}},
		{"hpa/v2-update-scale.yaml", &Result{Status: StatusDegraded, Message: "FailedUpdateScale: the HPA controller was unable to update the target scale: forbidden"}},
		{"hpa/v2-disabled.yaml", &Result{Status: StatusHealthy, Message: "SucceededGetScale"}},
		{"hpa/v2-invalid-source.yaml", &Result{Status: StatusHealthy, Message: "SucceededGetScale: the HPA controller was able to get the target's current scale"}},
		{"hpa/v2-within-range.yaml", &Result{Status: StatusProgressing, Message: "Waiting to autoscale"}},
		{"hpa/v2-no-conditions.yaml", &Result{Status: StatusProgressing, Message: "Waiting to autoscale"}},
		{"hpa/v2beta2-pods-metric.yaml", &Result{Status: StatusDegraded, Message: "FailedGetPodsMetric: unable to get metric http_requests"}},
		{"hpa/v2beta1-disabled.yaml", &Result{Status: StatusHealthy, Message: "SucceededGetScale: the HPA controller was able to get the target's current scale"}},
		{"hpa/v2beta1-selector.yaml", &Result{Status: StatusDegraded, Message: "InvalidSelector: couldn't convert selector into a corresponding internal selector object"}},
		{"hpa/v1-healthy.yaml", &Result{Status: StatusHealthy, Message: "ReadyForNewScale: recommended size matches current size"}},
		{"hpa/v1-too-few.yaml", &Result{Status: StatusHealthy, Message: "TooFewReplicas: the desired replica count is less than the minimum replica count"}},
		{"hpa/v1-degraded.yaml", &Result{Status: StatusDegraded, Message: "InvalidSelector: selector is required"}},
		{"hpa/v1-object-metric.yaml", &Result{Status: StatusDegraded, Message: "FailedGetObjectMetric: unable to get metric queue_depth"}},
		{"hpa/v1-able-false-succeeded.yaml", &Result{Status: StatusProgressing, Message: "Waiting to autoscale"}},
		{"hpa/v1-empty-annotation.yaml", &Result{Status: StatusProgressing, Message: "Waiting to autoscale"}},
		{"hpa/v1-no-annotation.yaml", &Result{Status: StatusProgressing, Message: "Waiting to autoscale"}},
		{"hpa/v1-bad-annotation.yaml", &Result{Status: StatusUnknown, Message: "cannot read the autoscaling.alpha.kubernetes.io/conditions annotation: invalid character 'o' in literal null (expecting 'u')"}},
		{"hpa/v1-status-not-string.yaml", &Result{Status: StatusUnknown, Message: "cannot read the autoscaling.alpha.kubernetes.io/conditions annotation: a condition's status is bool, want a string"}},
		{"hpa/v3-unsupported.yaml", &Result{Status: StatusUnknown, Message: `unsupported HorizontalPodAutoscaler version "autoscaling/v3"`}},
		// APIService
		{"apiservice/available.yaml", &Result{Status: StatusHealthy, Message: "Passed: all checks passed"}},
		{"apiservice/unavailable.yaml", &Result{Status: StatusProgressing, Message: `MissingEndpoints: endpoints for service/metrics-server in "kube-system" have no addresses`}},
		{"apiservice/no-conditions.yaml", &Result{Status: StatusProgressing, Message: "Waiting to be processed"}},
		// Application (app of apps)
		{"application/healthy.yaml", &Result{Status: StatusHealthy, Message: "child is Healthy"}},
		{"application/degraded.yaml", &Result{Status: StatusDegraded, Message: "child is Degraded"}},
		{"application/suspended.yaml", &Result{Status: StatusSuspended, Message: "child is Suspended"}},
		{"application/missing.yaml", &Result{Status: StatusMissing, Message: "child is Missing"}},
		{"application/no-status.yaml", &Result{Status: StatusProgressing}},
		{"application/invalid.yaml", &Result{Status: StatusUnknown, Message: `Application reports an invalid health status "Fine"`}},
		// Deletion and kinds without a check
		{"misc/deleting-deployment.yaml", &Result{Status: StatusProgressing, Message: "Pending deletion"}},
		{"misc/deleting-configmap.yaml", &Result{Status: StatusProgressing, Message: "Pending deletion"}},
		{"misc/deleting-hook.yaml", &Result{Status: StatusHealthy}},
		{"misc/configmap.yaml", nil},
		{"crd/ready.yaml", &Result{Status: StatusHealthy, Message: "Certificate is up to date and has not expired"}},
	}
	e := newEngine(t, Options{})
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := e.Check(t.Context(), loadFixture(t, tt.fixture))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

func TestWorseAndAggregate(t *testing.T) {
	order := []Status{StatusHealthy, StatusSuspended, StatusProgressing, StatusMissing, StatusDegraded, StatusUnknown}
	for i, a := range order {
		for j, b := range order {
			if got, want := Worse(a, b), i > j; got != want {
				t.Errorf("Worse(%s, %s) = %v, want %v", a, b, got, want)
			}
		}
	}
	tests := []struct {
		name    string
		results []Result
		want    Status
	}{
		{"none", nil, StatusHealthy},
		{"all healthy", []Result{{Status: StatusHealthy}, {Status: StatusHealthy}}, StatusHealthy},
		{"suspended beats healthy", []Result{{Status: StatusHealthy}, {Status: StatusSuspended}}, StatusSuspended},
		{"missing and degraded", []Result{{Status: StatusMissing}, {Status: StatusDegraded}, {Status: StatusProgressing}}, StatusDegraded},
		{"unknown is worst", []Result{{Status: StatusDegraded}, {Status: StatusUnknown}}, StatusUnknown},
		{"garbage counts as unknown", []Result{{Status: StatusHealthy}, {Status: "Fine"}}, StatusUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(Aggregate(tt.results), tt.want); diff != "" {
				t.Errorf("Aggregate (-got +want):\n%s", diff)
			}
		})
	}
}
