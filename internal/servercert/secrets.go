package servercert

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/graphcdsecret"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/selfsigned"
)

// renewBefore is how long before it expires a generated certificate is
// replaced at start.
const renewBefore = 30 * 24 * time.Hour

// Hosts are the names the generated certificate is valid for in
// namespace: the Service of the install manifests, in every form a
// client in the cluster may use. The listen host is added by the caller.
func Hosts(namespace string) []string {
	return []string{
		CommonName,
		CommonName + "." + namespace,
		CommonName + "." + namespace + ".svc",
		CommonName + "." + namespace + ".svc.cluster.local",
	}
}

// Secrets serves the certificate of the Secret graphcd-server-tls in the
// namespace of watch when it holds a valid one, else the one in
// graphcd-secret, which it generates (self-signed, for hosts) when missing
// or about to expire. It watches both Secrets until ctx ends, so a certificate
// rotated in either is served from the next handshake. When it may not
// write graphcd-secret it serves the generated certificate from memory
// and says so.
func Secrets(ctx context.Context, watch *kubewatch.Source, hosts []string, log *slog.Logger) (*Source, error) {
	client, namespace := watch.Client(), watch.Namespace()
	w := &secretWatch{source: &Source{}, log: log, namespace: namespace}
	for _, name := range []string{TLSSecretName, graphcdsecret.Name} {
		if err := watch.Secret(ctx, name, func(sec *corev1.Secret) { w.observe(name, sec) }); err != nil {
			return nil, err
		}
	}
	if w.needsGenerated() {
		if err := w.generate(ctx, client, hosts); err != nil {
			return nil, err
		}
	}
	return w.source, nil
}

// secretWatch picks the certificate from the last seen Secrets.
type secretWatch struct {
	source    *Source
	log       *slog.Logger
	namespace string

	mu      sync.Mutex
	secrets map[string]*corev1.Secret // by name; absent when missing
	// memory is a generated certificate that could not be stored.
	memory *tls.Certificate
	// from names where the served certificate came from.
	from string
	// reported is the last invalid Secret version logged, by name, so
	// that a resync does not repeat the message.
	reported map[string]string
}

// observe records a Secret (nil: deleted) and serves what it implies.
func (w *secretWatch) observe(name string, sec *corev1.Secret) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.secrets == nil {
		w.secrets, w.reported = map[string]*corev1.Secret{}, map[string]string{}
	}
	if sec == nil {
		delete(w.secrets, name)
	} else {
		w.secrets[name] = sec
	}
	w.pick()
}

// pick serves the first valid certificate of graphcd-server-tls,
// graphcd-secret and the one in memory; with none it keeps serving what
// it served. Called with w.mu held.
func (w *secretWatch) pick() {
	for _, name := range []string{TLSSecretName, graphcdsecret.Name} {
		sec := w.secrets[name]
		if sec == nil || (len(sec.Data[KeyCert]) == 0 && len(sec.Data[KeyKey]) == 0) {
			continue
		}
		cert, err := parse(sec.Data[KeyCert], sec.Data[KeyKey])
		if err != nil {
			if w.reported[name] != sec.ResourceVersion {
				w.reported[name] = sec.ResourceVersion
				w.log.Error("ignoring an invalid server certificate", "secret", w.namespace+"/"+name, "err", err)
			}
			continue
		}
		w.serve(cert, name)
		return
	}
	if w.memory != nil {
		w.serve(w.memory, "memory")
	}
}

// serve switches to cert unless it is the one served already.
func (w *secretWatch) serve(cert *tls.Certificate, from string) {
	w.from = from
	if cur := w.source.cert.Load(); cur != nil && bytes.Equal(cur.Certificate[0], cert.Certificate[0]) {
		return
	}
	w.source.cert.Store(cert)
	w.log.Info("serving TLS certificate", "from", from, "subject", cert.Leaf.Subject.CommonName,
		"sha256", Fingerprint(cert), "notAfter", cert.Leaf.NotAfter)
}

// needsGenerated reports whether nothing is served yet, or only a
// generated certificate that is about to expire.
func (w *secretWatch) needsGenerated() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.from {
	case "":
		return true
	case graphcdsecret.Name:
		return replaceable(w.secrets[graphcdsecret.Name].Data)
	}
	return false
}

// generate writes a self-signed certificate into graphcd-secret unless
// another replica did so first (or it holds one that is not about to
// expire); failing to write, it serves the certificate from memory.
func (w *secretWatch) generate(ctx context.Context, client kubernetes.Interface, hosts []string) error {
	certPEM, keyPEM, err := selfsigned.Certificate(CommonName, hosts)
	if err != nil {
		return fmt.Errorf("self-signed server certificate: %w", err)
	}
	sec, err := graphcdsecret.Update(ctx, client, w.namespace, func(data map[string][]byte) bool {
		if !replaceable(data) {
			return false
		}
		data[KeyCert], data[KeyKey] = certPEM, keyPEM
		return true
	})
	if err == nil {
		w.observe(graphcdsecret.Name, sec)
	} else {
		w.log.Warn("cannot store the generated server certificate; serving it from memory, so it changes at every restart", "err", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.source.Current() == nil {
		cert, err := parse(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("self-signed server certificate: %w", err)
		}
		w.memory = cert
		w.pick()
	}
	return nil
}

// replaceable reports whether graphcd-secret's data lacks a certificate,
// or holds one graphcd generated that expires within renewBefore. A
// certificate an operator put there is never replaced, even invalid.
func replaceable(data map[string][]byte) bool {
	if len(data[KeyCert]) == 0 && len(data[KeyKey]) == 0 {
		return true
	}
	cert, err := parse(data[KeyCert], data[KeyKey])
	if err != nil {
		return false
	}
	leaf := cert.Leaf
	generated := leaf.Subject.CommonName == CommonName && bytes.Equal(leaf.RawIssuer, leaf.RawSubject)
	return generated && time.Until(leaf.NotAfter) < renewBefore
}
