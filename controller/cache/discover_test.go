package cache

import (
	"log/slog"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// scriptedDiscovery answers ServerPreferredResources with the lists of its
// script in call order, each call waiting for its release channel.
type scriptedDiscovery struct {
	*fakediscovery.FakeDiscovery
	mu      sync.Mutex
	calls   int
	script  [][]*metav1.APIResourceList
	release []chan struct{}
	started chan int
}

func (d *scriptedDiscovery) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	d.mu.Lock()
	i := d.calls
	d.calls++
	d.mu.Unlock()
	d.started <- i
	<-d.release[i]
	return d.script[i], nil
}

// A discovery that started before a CRD was served and ends after one
// that saw it must not take the new kind away again.
func TestDiscoverKeepsTheNewestRun(t *testing.T) {
	configMaps := &metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: metav1.Verbs{"list", "watch"}},
	}}
	widgets := &metav1.APIResourceList{GroupVersion: "test.graphcd.io/v1", APIResources: []metav1.APIResource{
		{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: metav1.Verbs{"list", "watch"}},
	}}
	d := &scriptedDiscovery{
		FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}},
		script:        [][]*metav1.APIResourceList{{configMaps}, {configMaps, widgets}},
		release:       []chan struct{}{make(chan struct{}), make(chan struct{})},
		started:       make(chan int, 2),
	}
	var _ discovery.DiscoveryInterface = d
	c := &Cluster{disco: d, log: slog.New(slog.DiscardHandler)}

	done := make(chan struct{})
	go func() { // the early run
		defer close(done)
		if _, err := c.discover(); err != nil {
			t.Error(err)
		}
	}()
	<-d.started
	late := make(chan map[schema.GroupKind]apiResource, 1)
	go func() {
		res, err := c.discover()
		if err != nil {
			t.Error(err)
		}
		late <- res
	}()
	<-d.started
	close(d.release[1]) // the later run, which sees Widget, ends first
	if _, ok := (<-late)[schema.GroupKind{Group: "test.graphcd.io", Kind: "Widget"}]; !ok {
		t.Fatal("the later discovery did not return Widget")
	}
	close(d.release[0])
	<-done
	if _, ok := c.resources[schema.GroupKind{Group: "test.graphcd.io", Kind: "Widget"}]; !ok {
		t.Error("the early discovery, ending last, replaced the resources that had Widget")
	}
}
