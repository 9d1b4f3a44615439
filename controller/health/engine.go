package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DefaultTimeout bounds one run of a Lua check when Options.Timeout is zero.
const DefaultTimeout = time.Second

// Options configure an Engine.
type Options struct {
	// LuaChecks are custom checks, in Argo CD's form. They take precedence
	// over the built-in checks.
	LuaChecks []LuaCheck
	// Timeout bounds one run of a Lua check; zero means DefaultTimeout.
	Timeout time.Duration
	// MemoryBudget bounds the bytes of the strings one run of a Lua check
	// builds (and, at heapBackstop times it, how much the process heap may
	// grow while the run lasts); zero means DefaultMemoryBudget.
	MemoryBudget int64
}

// Engine assesses resource health with the built-in checks and the Lua
// checks it was built with. Make one with New; it is safe for concurrent
// use.
type Engine struct {
	timeout      time.Duration
	memoryBudget int64
	lua          *luaChecks
	pool         sync.Pool // of *luaVM
}

// groupKind names a kind of resource, without version.
type groupKind struct {
	group, kind string
}

func (gk groupKind) String() string {
	if gk.group == "" {
		return gk.kind
	}
	return gk.group + "/" + gk.kind
}

// builtinChecks are the checks written in Go, by group and kind.
var builtinChecks = map[groupKind]func(*unstructured.Unstructured) Result{
	{"apps", "Deployment"}:                     deploymentHealth,
	{"extensions", "Deployment"}:               deploymentHealth,
	{"apps", "StatefulSet"}:                    statefulSetHealth,
	{"apps", "DaemonSet"}:                      daemonSetHealth,
	{"extensions", "DaemonSet"}:                daemonSetHealth,
	{"apps", "ReplicaSet"}:                     replicaSetHealth,
	{"extensions", "ReplicaSet"}:               replicaSetHealth,
	{"", "Pod"}:                                podHealth,
	{"", "Service"}:                            serviceHealth,
	{"", "PersistentVolumeClaim"}:              pvcHealth,
	{"networking.k8s.io", "Ingress"}:           ingressHealth,
	{"extensions", "Ingress"}:                  ingressHealth,
	{"batch", "Job"}:                           jobHealth,
	{"batch", "CronJob"}:                       cronJobHealth,
	{"autoscaling", "HorizontalPodAutoscaler"}: hpaHealth,
	{"apiregistration.k8s.io", "APIService"}:   apiServiceHealth,
	{"graphcd.io", "Application"}:              applicationHealth,
	// cert-manager
	{"cert-manager.io", "Certificate"}:        certificateHealth,
	{"cert-manager.io", "CertificateRequest"}: certificateRequestHealth,
	{"cert-manager.io", "Issuer"}:             readyCondition,
	{"cert-manager.io", "ClusterIssuer"}:      readyCondition,
	{"acme.cert-manager.io", "Order"}:         acmeStateHealth,
	{"acme.cert-manager.io", "Challenge"}:     acmeStateHealth,
	// Argo Rollouts and Argo Workflows
	{"argoproj.io", "Rollout"}:      rolloutHealth,
	{"argoproj.io", "AnalysisRun"}:  analysisPhaseHealth,
	{"argoproj.io", "Experiment"}:   analysisPhaseHealth,
	{"argoproj.io", "Workflow"}:     workflowHealth,
	{"argoproj.io", "CronWorkflow"}: cronWorkflowHealth,
	// Flux
	{"source.toolkit.fluxcd.io", "GitRepository"}:        fluxHealth,
	{"source.toolkit.fluxcd.io", "HelmRepository"}:       helmRepositoryHealth,
	{"source.toolkit.fluxcd.io", "HelmChart"}:            fluxHealth,
	{"source.toolkit.fluxcd.io", "OCIRepository"}:        fluxHealth,
	{"source.toolkit.fluxcd.io", "Bucket"}:               fluxHealth,
	{"kustomize.toolkit.fluxcd.io", "Kustomization"}:     fluxHealth,
	{"helm.toolkit.fluxcd.io", "HelmRelease"}:            fluxHealth,
	{"notification.toolkit.fluxcd.io", "Receiver"}:       fluxHealth,
	{"notification.toolkit.fluxcd.io", "Alert"}:          fluxStaticHealth,
	{"notification.toolkit.fluxcd.io", "Provider"}:       fluxStaticHealth,
	{"image.toolkit.fluxcd.io", "ImageRepository"}:       fluxHealth,
	{"image.toolkit.fluxcd.io", "ImagePolicy"}:           fluxHealth,
	{"image.toolkit.fluxcd.io", "ImageUpdateAutomation"}: fluxHealth,
	// External Secrets, Sealed Secrets
	{"external-secrets.io", "ExternalSecret"}:        readyCondition,
	{"external-secrets.io", "ClusterExternalSecret"}: clusterExternalSecretHealth,
	{"external-secrets.io", "SecretStore"}:           readyCondition,
	{"external-secrets.io", "ClusterSecretStore"}:    readyCondition,
	{"external-secrets.io", "PushSecret"}:            readyCondition,
	{"bitnami.com", "SealedSecret"}:                  sealedSecretHealth,
	// KEDA
	{"keda.sh", "ScaledObject"}: kedaHealth,
	{"keda.sh", "ScaledJob"}:    kedaHealth,
	// Crossplane (managed resources: builtinPatternChecks)
	{"pkg.crossplane.io", "Provider"}:                              crossplanePackageHealth,
	{"pkg.crossplane.io", "Configuration"}:                         crossplanePackageHealth,
	{"pkg.crossplane.io", "Function"}:                              crossplanePackageHealth,
	{"apiextensions.crossplane.io", "CompositeResourceDefinition"}: xrdHealth,
	{"apiextensions.crossplane.io", "Composition"}:                 compositionHealth,
	// Cluster API
	{"cluster.x-k8s.io", "Cluster"}:            capiClusterHealth,
	{"cluster.x-k8s.io", "Machine"}:            machineHealth,
	{"cluster.x-k8s.io", "MachineSet"}:         machineReplicasHealth,
	{"cluster.x-k8s.io", "MachineDeployment"}:  machineReplicasHealth,
	{"cluster.x-k8s.io", "MachineHealthCheck"}: machineHealthCheckHealth,
	// Prometheus Operator
	{"monitoring.coreos.com", "Prometheus"}:      prometheusOperatorHealth,
	{"monitoring.coreos.com", "PrometheusAgent"}: prometheusOperatorHealth,
	{"monitoring.coreos.com", "Alertmanager"}:    prometheusOperatorHealth,
	{"monitoring.coreos.com", "ThanosRuler"}:     prometheusOperatorHealth,
	// Strimzi
	{"kafka.strimzi.io", "Kafka"}:             strimziHealth,
	{"kafka.strimzi.io", "KafkaTopic"}:        strimziHealth,
	{"kafka.strimzi.io", "KafkaUser"}:         strimziHealth,
	{"kafka.strimzi.io", "KafkaConnect"}:      strimziHealth,
	{"kafka.strimzi.io", "KafkaConnector"}:    strimziHealth,
	{"kafka.strimzi.io", "KafkaMirrorMaker2"}: strimziHealth,
	{"kafka.strimzi.io", "KafkaBridge"}:       strimziHealth,
	// CloudNativePG
	{"postgresql.cnpg.io", "Cluster"}:         cnpgClusterHealth,
	{"postgresql.cnpg.io", "Backup"}:          cnpgBackupHealth,
	{"postgresql.cnpg.io", "ScheduledBackup"}: cnpgScheduledBackupHealth,
	// Knative
	{"serving.knative.dev", "Service"}:       readyCondition,
	{"serving.knative.dev", "Configuration"}: readyCondition,
	{"serving.knative.dev", "Revision"}:      readyCondition,
	{"serving.knative.dev", "Route"}:         readyCondition,
	{"eventing.knative.dev", "Broker"}:       readyCondition,
	{"eventing.knative.dev", "Trigger"}:      readyCondition,
	// Istio
	{"networking.istio.io", "VirtualService"}:      istioHealth,
	{"networking.istio.io", "DestinationRule"}:     istioHealth,
	{"networking.istio.io", "Gateway"}:             istioHealth,
	{"networking.istio.io", "ServiceEntry"}:        istioHealth,
	{"networking.istio.io", "Sidecar"}:             istioHealth,
	{"security.istio.io", "AuthorizationPolicy"}:   istioHealth,
	{"security.istio.io", "PeerAuthentication"}:    istioHealth,
	{"security.istio.io", "RequestAuthentication"}: istioHealth,
	// Karpenter
	{"karpenter.sh", "NodePool"}:          readyCondition,
	{"karpenter.sh", "NodeClaim"}:         readyCondition,
	{"karpenter.k8s.aws", "EC2NodeClass"}: readyCondition,
	// Kyverno, Gatekeeper (constraints: builtinPatternChecks)
	{"kyverno.io", "ClusterPolicy"}:                   kyvernoPolicyHealth,
	{"kyverno.io", "Policy"}:                          kyvernoPolicyHealth,
	{"templates.gatekeeper.sh", "ConstraintTemplate"}: constraintTemplateHealth,
}

// Hook annotations: a hook's deletion is part of the sync, so a hook being
// deleted is judged by its state, not reported as pending deletion.
const (
	hookAnnotation     = "argocd.argoproj.io/hook"
	helmHookAnnotation = "helm.sh/hook"
)

// New builds an Engine and compiles every Lua check. It fails on a syntax
// error (naming the check's group/kind and the line), on an empty kind, and
// on two checks for the same group/kind pattern.
func New(opts Options) (*Engine, error) {
	e := &Engine{timeout: opts.Timeout}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.memoryBudget = opts.MemoryBudget; e.memoryBudget <= 0 {
		e.memoryBudget = DefaultMemoryBudget
	}
	checks, err := compileLuaChecks(opts.LuaChecks)
	if err != nil {
		return nil, err
	}
	e.lua = checks
	return e, nil
}

// Check returns the health of obj, or nil when no check applies to its kind.
//
// An object being deleted (metadata.deletionTimestamp set) is Progressing,
// unless it is a sync hook. Otherwise a Lua check for the object's group and
// kind wins over the built-in one, and an exact group/kind match wins over a
// wildcard one. A Lua script that fails at run time, or returns something
// that is not a valid health, yields Unknown with the reason in the message
// and no error: the resource's health is then genuinely unknown. Check
// returns an error only when the script ran out of time (the error wraps
// ErrScriptTimeout) or memory (ErrScriptMemory), or ctx ended.
func (e *Engine) Check(ctx context.Context, obj *unstructured.Unstructured) (*Result, error) {
	if obj == nil || obj.Object == nil {
		return nil, errors.New("health check: nil object")
	}
	if stringField(obj.Object, "metadata", "deletionTimestamp") != "" && !isHook(obj) {
		return &Result{Status: StatusProgressing, Message: "Pending deletion"}, nil
	}
	gk := objectGroupKind(obj)
	if check := e.lua.find(gk); check != nil {
		res, err := e.runLua(ctx, check, obj)
		if err != nil {
			return nil, fmt.Errorf("health check %s: %w", gk, err)
		}
		return res, nil
	}
	if res, ok := builtinCheck(gk, obj); ok {
		return &res, nil
	}
	return nil, nil
}

// objectGroupKind reads the API group from apiVersion ("apps/v1" -> "apps",
// "v1" -> "").
func objectGroupKind(obj *unstructured.Unstructured) groupKind {
	apiVersion, _ := obj.Object["apiVersion"].(string)
	kind, _ := obj.Object["kind"].(string)
	group := ""
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		group = apiVersion[:i]
	}
	return groupKind{group: group, kind: kind}
}

func isHook(obj *unstructured.Unstructured) bool {
	ann := mapField(obj.Object, "metadata", "annotations")
	if ann == nil {
		return false
	}
	h1, _ := ann[hookAnnotation].(string)
	h2, _ := ann[helmHookAnnotation].(string)
	return h1 != "" || h2 != ""
}
