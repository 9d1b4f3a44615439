package sync

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

// builtinClusterScoped reports whether group/kind is a built-in
// cluster-scoped type. Custom resources count as namespaced.
func builtinClusterScoped(group, kind string) bool {
	return clusterScopedKinds[[2]string{group, kind}]
}
