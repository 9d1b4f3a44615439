// Package secretops writes the Secrets that declare repositories,
// repository credential templates and destination clusters, in the format
// Argo CD uses (and graphcd reads: reposerver/repocreds,
// internal/clusters). Credentials go in and never come back out: no
// function here returns Secret data.
package secretops

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// The labels that give a Secret its meaning (graphcd's and Argo CD's).
//
//nolint:gosec // G101: label keys and values, not credentials
const (
	typeLabel     = wellknown.SecretTypeLabel
	argoTypeLabel = wellknown.ArgoSecretTypeLabel
	typeRepo      = "repository"
	typeRepoCreds = "repo-creds"
	typeCluster   = "cluster"
)

// Errors callers show as they are.
var (
	// ErrExists: a Secret already declares this repository or cluster.
	ErrExists = errors.New("already exists (set upsert to replace it)")
	// ErrNotFound: no Secret declares it.
	ErrNotFound = errors.New("not found")
	// ErrInvalid wraps input errors.
	ErrInvalid = errors.New("invalid input")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Service writes Secrets in one namespace (graphcd's).
type Service struct {
	Client    kubernetes.Interface
	Namespace string
}

// Repository declares a repository or, with Template, a credential
// template for every repository under URL.
type Repository struct {
	URL, Name, Project string
	// Type is git (default) or helm.
	Type                                string
	Username, Password                  string
	SSHPrivateKey                       string
	TLSClientCertData, TLSClientCertKey string
	Insecure, EnableOCI                 bool
	Template                            bool
}

// Validate checks r before anything is written.
func (r Repository) Validate() error {
	if r.URL == "" {
		return invalid("url is required")
	}
	if r.Type != "" && r.Type != "git" && r.Type != "helm" {
		return invalid("type must be git or helm, got %q", r.Type)
	}
	if (r.Username == "") != (r.Password == "") {
		return invalid("username and password go together")
	}
	scpStyle := strings.HasPrefix(r.URL, "git@") && !strings.Contains(r.URL, "://")
	if scpStyle || (r.EnableOCI && !strings.Contains(r.URL, "://")) {
		return nil // user@host:path, or an OCI registry without a scheme
	}
	u, err := url.Parse(r.URL)
	switch {
	case err != nil || u.Host == "":
		return invalid("url must be an https, http, ssh or scp-style git URL")
	case u.User != nil && u.Scheme != "ssh":
		return invalid("url must not embed credentials; give username and password")
	case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh" && u.Scheme != "oci":
		return invalid("url scheme %q is not supported", u.Scheme)
	}
	return nil
}

// PutRepository writes the Secret of r; without upsert an existing one
// for the same URL is ErrExists.
func (s Service) PutRepository(ctx context.Context, r Repository, upsert bool) error {
	if err := r.Validate(); err != nil {
		return err
	}
	typ, prefix := typeRepo, "repo-"
	if r.Template {
		typ, prefix = typeRepoCreds, "creds-"
	}
	data := map[string]string{"url": r.URL}
	set := func(k, v string) {
		if v != "" {
			data[k] = v
		}
	}
	set("name", r.Name)
	set("project", r.Project)
	set("type", r.Type)
	set("username", r.Username)
	set("password", r.Password)
	set("sshPrivateKey", r.SSHPrivateKey)
	set("tlsClientCertData", r.TLSClientCertData)
	set("tlsClientCertKey", r.TLSClientCertKey)
	if r.Insecure {
		data["insecure"] = "true"
	}
	if r.EnableOCI {
		data["enableOCI"] = "true"
	}
	existing, err := s.find(ctx, typ, func(sec *corev1.Secret) bool { return string(sec.Data["url"]) == r.URL })
	if err != nil {
		return err
	}
	return s.put(ctx, existing, prefix+hashName(r.URL), typ, data, nil, upsert)
}

// DeleteRepository deletes the Secret declaring the repository (or
// template) url.
func (s Service) DeleteRepository(ctx context.Context, repoURL string, template bool) error {
	typ := typeRepo
	if template {
		typ = typeRepoCreds
	}
	sec, err := s.find(ctx, typ, func(sec *corev1.Secret) bool { return string(sec.Data["url"]) == repoURL })
	if err != nil {
		return err
	}
	if sec == nil {
		return ErrNotFound
	}
	return s.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, sec.Name, metav1.DeleteOptions{})
}

// Cluster declares a destination cluster.
type Cluster struct {
	Name, Server string
	BearerToken  string
	// CAData, CertData and KeyData are PEM.
	CAData, CertData, KeyData string
	Insecure                  bool
	ServerName                string
	Namespaces                []string
	ClusterResources          bool
	Project                   string
	Labels                    map[string]string
}

// inClusterServer is the cluster graphcd runs in, which needs no Secret.
const inClusterServer = "https://kubernetes.default.svc"

// Validate checks c before anything is written.
func (c Cluster) Validate() error {
	u, err := url.Parse(c.Server)
	switch {
	case c.Name == "":
		return invalid("name is required")
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return invalid("server must be an https URL of a Kubernetes API server")
	case u.User != nil:
		return invalid("server must not embed credentials")
	}
	for k := range c.Labels {
		if k == typeLabel || k == argoTypeLabel {
			return invalid("label %s is reserved", k)
		}
	}
	return nil
}

// clusterConfig is the "config" key of a cluster Secret (Argo CD's format).
type clusterConfig struct {
	BearerToken     string          `json:"bearerToken,omitempty"`
	TLSClientConfig tlsClientConfig `json:"tlsClientConfig"`
}

type tlsClientConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	CAData     string `json:"caData,omitempty"`
	CertData   string `json:"certData,omitempty"`
	KeyData    string `json:"keyData,omitempty"`
}

// PutCluster writes the Secret of c; without upsert an existing one for
// the same server is ErrExists.
func (s Service) PutCluster(ctx context.Context, c Cluster, upsert bool) error {
	if err := c.Validate(); err != nil {
		return err
	}
	b64 := func(s string) string {
		if s == "" {
			return ""
		}
		return base64.StdEncoding.EncodeToString([]byte(s))
	}
	// The token goes into the Secret, which is where it belongs.
	cfg, err := json.Marshal(clusterConfig{ //nolint:gosec // G117: see above
		BearerToken: c.BearerToken, TLSClientConfig: tlsClientConfig{
			Insecure: c.Insecure, ServerName: c.ServerName, CAData: b64(c.CAData), CertData: b64(c.CertData), KeyData: b64(c.KeyData),
		}})
	if err != nil {
		return err
	}
	data := map[string]string{"name": c.Name, "server": c.Server, "config": string(cfg)}
	if len(c.Namespaces) > 0 {
		data["namespaces"] = strings.Join(c.Namespaces, ",")
		data["clusterResources"] = strconv.FormatBool(c.ClusterResources)
	}
	if c.Project != "" {
		data["project"] = c.Project
	}
	existing, err := s.find(ctx, typeCluster, sameServer(c.Server))
	if err != nil {
		return err
	}
	return s.put(ctx, existing, "cluster-"+hashName(c.Server), typeCluster, data, c.Labels, upsert)
}

// DeleteCluster deletes the Secret declaring the cluster at server.
func (s Service) DeleteCluster(ctx context.Context, server string) error {
	sec, err := s.find(ctx, typeCluster, sameServer(server))
	if err != nil {
		return err
	}
	if sec == nil {
		if strings.TrimRight(server, "/") == inClusterServer {
			return invalid("the cluster graphcd runs in has no Secret to remove")
		}
		return ErrNotFound
	}
	return s.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, sec.Name, metav1.DeleteOptions{})
}

func sameServer(server string) func(*corev1.Secret) bool {
	want := strings.TrimRight(server, "/")
	return func(sec *corev1.Secret) bool { return strings.TrimRight(string(sec.Data["server"]), "/") == want }
}

// find returns the Secret of type typ (under either label) that match
// selects, or nil.
func (s Service) find(ctx context.Context, typ string, match func(*corev1.Secret) bool) (*corev1.Secret, error) {
	for _, label := range []string{typeLabel, argoTypeLabel} {
		list, err := s.Client.CoreV1().Secrets(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: label + "=" + typ})
		if err != nil {
			return nil, fmt.Errorf("list %s secrets: %w", typ, err)
		}
		if i := slices.IndexFunc(list.Items, func(sec corev1.Secret) bool { return match(&sec) }); i >= 0 {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// put creates the Secret name with data, or with upsert replaces the data
// of existing (keeping its name and labels).
func (s Service) put(ctx context.Context, existing *corev1.Secret, name, typ string, data, labels map[string]string, upsert bool) error {
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	if existing != nil {
		if !upsert {
			return ErrExists
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := secrets.Get(ctx, existing.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Data, cur.StringData = nil, data
			for k, v := range labels {
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				cur.Labels[k] = v
			}
			_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
	}
	all := map[string]string{typeLabel: typ}
	for k, v := range labels {
		all[k] = v
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: all}, StringData: data}
	_, err := secrets.Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ErrExists
	}
	return err
}

// hashName returns a short stable suffix for a Secret name from s.
func hashName(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}
