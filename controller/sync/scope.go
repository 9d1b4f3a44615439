package sync

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// clusterScopedKinds are the built-in cluster-scoped types by group and
// kind: the planner leaves their namespace empty where it fills in the
// destination namespace for others.
var clusterScopedKinds = map[[2]string]bool{
	{"", "Namespace"}:        true,
	{"", "Node"}:             true,
	{"", "PersistentVolume"}: true,
	{"", "ComponentStatus"}:  true,
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}:     true,
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"}:   true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"}:        true,
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"}: true,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicy"}:          true,
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"}:   true,
	{"apiextensions.k8s.io", "CustomResourceDefinition"}:                 true,
	{"apiregistration.k8s.io", "APIService"}:                             true,
	{"certificates.k8s.io", "CertificateSigningRequest"}:                 true,
	{"certificates.k8s.io", "ClusterTrustBundle"}:                        true,
	{"flowcontrol.apiserver.k8s.io", "FlowSchema"}:                       true,
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"}:       true,
	{"networking.k8s.io", "IngressClass"}:                                true,
	{"networking.k8s.io", "IPAddress"}:                                   true,
	{"networking.k8s.io", "ServiceCIDR"}:                                 true,
	{"node.k8s.io", "RuntimeClass"}:                                      true,
	{"policy", "PodSecurityPolicy"}:                                      true,
	{"rbac.authorization.k8s.io", "ClusterRole"}:                         true,
	{"rbac.authorization.k8s.io", "ClusterRoleBinding"}:                  true,
	{"resource.k8s.io", "DeviceClass"}:                                   true,
	{"resource.k8s.io", "ResourceSlice"}:                                 true,
	{"scheduling.k8s.io", "PriorityClass"}:                               true,
	{"storage.k8s.io", "CSIDriver"}:                                      true,
	{"storage.k8s.io", "CSINode"}:                                        true,
	{"storage.k8s.io", "StorageClass"}:                                   true,
	{"storage.k8s.io", "VolumeAttachment"}:                               true,
	{"storage.k8s.io", "VolumeAttributesClass"}:                          true,
}

// BuiltinClusterScoped reports whether group/kind is a built-in
// cluster-scoped type. Custom resources count as namespaced. It is the
// scope the planner assumes when Options.ClusterScoped is nil.
func BuiltinClusterScoped(group, kind string) bool {
	return clusterScopedKinds[[2]string{group, kind}]
}

// DefaultNamespace places an object rendered without a namespace where a
// sync and a comparison look for it: in namespace, unless its type is
// cluster-scoped (clusterScoped; nil means BuiltinClusterScoped). It
// returns obj itself when nothing changes and a copy otherwise, so obj is
// never modified. An empty namespace or an object without a kind leaves
// obj as it is.
func DefaultNamespace(obj *unstructured.Unstructured, namespace string, clusterScoped func(group, kind string) bool) *unstructured.Unstructured {
	if obj == nil || namespace == "" || obj.GetNamespace() != "" {
		return obj
	}
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" {
		return obj
	}
	if clusterScoped == nil {
		clusterScoped = BuiltinClusterScoped
	}
	if clusterScoped(gvk.Group, gvk.Kind) {
		return obj
	}
	out := obj.DeepCopy()
	out.SetNamespace(namespace)
	return out
}

// OfflineScope reports the scope of types as well as objects read from
// files tell it, for planning and comparing without API discovery. In
// order:
//
//   - an object of the type in live (as read from a cluster) is proof: the
//     API server gives every namespaced object a namespace and none to a
//     cluster-scoped one;
//   - a CustomResourceDefinition in manifests or live declares the scope
//     of its kind (spec.scope: Cluster or Namespaced);
//   - BuiltinClusterScoped for the rest, so unknown custom resources
//     count as namespaced.
func OfflineScope(manifests, live []*unstructured.Unstructured) func(group, kind string) bool {
	known := map[[2]string]bool{}
	for _, objs := range [][]*unstructured.Unstructured{manifests, live} {
		for _, obj := range objs {
			if obj == nil {
				continue
			}
			gvk := obj.GroupVersionKind()
			if gvk.Group != "apiextensions.k8s.io" || gvk.Kind != "CustomResourceDefinition" {
				continue
			}
			group, _, _ := unstructured.NestedString(obj.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(obj.Object, "spec", "names", "kind")
			scope, _, _ := unstructured.NestedString(obj.Object, "spec", "scope")
			if kind != "" && (scope == "Cluster" || scope == "Namespaced") {
				known[[2]string{group, kind}] = scope == "Cluster"
			}
		}
	}
	seen := map[[2]string]bool{}
	for _, obj := range live {
		if obj == nil || obj.GetKind() == "" {
			continue
		}
		gk := [2]string{obj.GroupVersionKind().Group, obj.GetKind()}
		cluster := obj.GetNamespace() == ""
		if seen[gk] {
			// one namespaced object settles it
			cluster = cluster && known[gk]
		}
		known[gk], seen[gk] = cluster, true
	}
	return func(group, kind string) bool {
		if cluster, ok := known[[2]string{group, kind}]; ok {
			return cluster
		}
		return BuiltinClusterScoped(group, kind)
	}
}
