// Package localcluster runs a real Kubernetes control plane on 127.0.0.1 for
// tests and the demo: etcd and kube-apiserver (Minimal), plus
// kube-controller-manager, kube-scheduler and KWOK fake nodes (Full), so that
// Deployments get ReplicaSets and Pods that become Running and Ready without a
// container runtime.
//
// The binaries are built once per machine from the Go module proxy by
// hack/cluster-bins.sh and cached under ${XDG_CACHE_HOME:-~/.cache}/graphcd/bin.
// Each cluster gets free ports, its own PKI, service-account keys and an admin
// kubeconfig in a temporary directory. Stop ends every process it started by
// process group and removes the directory; the children also die with the
// test process if it crashes (Pdeathsig).
//
// A test package shares one cluster through TestMain:
//
//	var cluster *localcluster.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
//	}
//
// and isolates its tests by namespace (Cluster.Namespace).
package localcluster
