// Package secretops writes the Secrets that declare repositories,
// repository credential templates and destination clusters, encoded by
// internal/secretcodec, which their readers (reposerver/repocreds,
// internal/clusters) decode with. Credentials go in and never come back
// out: no function here returns Secret data, and the audit trail gets
// each write with the values redacted (see audit.Change).
package secretops

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Errors callers show as they are.
var (
	// ErrExists: a Secret already declares this repository or cluster.
	ErrExists = errors.New("already exists (set upsert to replace it)")
	// ErrNotFound: no Secret declares it.
	ErrNotFound = errors.New("not found")
	// ErrInvalid wraps input errors.
	ErrInvalid = errors.New("invalid input")
	// ErrNameTaken: another cluster (a Secret, or the built-in in-cluster
	// one) has the name.
	ErrNameTaken = errors.New("the name is used by another cluster")
)

// errReplaced is the error of a write to the Secret name that was
// deleted and created again since it was read: a conflict, which the
// write does not retry since the new Secret was never authorized.
func errReplaced(name string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Message: "secret " + name + " was replaced while being written",
	}}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Service writes Secrets in one namespace (graphcd's).
type Service struct {
	Client    kubernetes.Interface
	Namespace string
}

// Repository declares a repository or, with Template, a credential
// template for every repository under URL. A repository is identified by
// its URL, its Project and Template: a project's repository (one with a
// Project) is a Secret apart from a global one of the same URL, as in
// Argo CD, so that a team may declare its own credentials.
type Repository struct {
	URL, Name string
	// Project scopes the repository to one AppProject; empty: global.
	Project string
	// Type is git (default), helm or oci.
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
	if r.Type != "" && r.Type != "git" && r.Type != "helm" && r.Type != "oci" {
		return invalid("type must be git, helm or oci, got %q", r.Type)
	}
	if (r.Username == "") != (r.Password == "") {
		return invalid("username and password go together")
	}
	if err := validProject(r.Project); err != nil {
		return err
	}
	scpStyle := strings.HasPrefix(r.URL, "git@") && !strings.Contains(r.URL, "://")
	if scpStyle || ((r.EnableOCI || r.Type == "oci") && !strings.Contains(r.URL, "://")) {
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
// for the same URL and project is ErrExists.
func (s Service) PutRepository(ctx context.Context, r Repository, upsert bool) error {
	if err := r.Validate(); err != nil {
		return err
	}
	prefix := "repo-"
	if r.Template {
		prefix = "creds-"
	}
	name := prefix + hashName(r.URL)
	if r.Project != "" {
		name = prefix + hashName(r.Project+"/"+r.URL)
	}
	sr := secretcodec.Repository{
		URL: r.URL, Name: r.Name, Project: r.Project, Type: r.Type, Username: r.Username, Password: r.Password,
		SSHPrivateKey: r.SSHPrivateKey, TLSClientCertData: r.TLSClientCertData, TLSClientCertKey: r.TLSClientCertKey,
		Insecure: r.Insecure, EnableOCI: r.EnableOCI, Template: r.Template,
	}
	existing, err := s.find(ctx, sr.Label(), sameURL(r.URL, r.Project))
	if err != nil {
		return err
	}
	return s.put(ctx, existing, name, sr.Label(), sr.Data(), nil, upsert)
}

// DeleteRepository deletes the Secret declaring the repository (or
// template) url of project ("": the global one).
func (s Service) DeleteRepository(ctx context.Context, repoURL, project string, template bool) error {
	sec, err := s.find(ctx, secretcodec.Repository{Template: template}.Label(), sameURL(repoURL, project))
	if err != nil {
		return err
	}
	if sec == nil {
		return ErrNotFound
	}
	return s.delete(ctx, sec)
}

// delete deletes sec, as found, and reports it to the audit trail.
func (s Service) delete(ctx context.Context, sec *corev1.Secret) error {
	err := s.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, sec.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &sec.UID}})
	if err == nil {
		audit.Change(ctx, sec, nil)
	}
	return err
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
	// Project scopes the cluster to one AppProject; empty: global. A
	// server has one Secret whatever its project.
	Project string
	Labels  map[string]string
}

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
		if k == wellknown.SecretTypeLabel || k == wellknown.ArgoSecretTypeLabel {
			return invalid("label %s is reserved", k)
		}
	}
	return validProject(c.Project)
}

// validProject checks the name of the project a repository or cluster is
// scoped to: empty, or an AppProject name.
func validProject(project string) error {
	if project == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(project); len(errs) > 0 {
		return invalid("project %q is not a project name: %s", truncate(project, 64), strings.Join(errs, "; "))
	}
	return nil
}

// truncate shortens s for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// PutCluster writes the Secret of c. A cluster that exists already, by
// Secrets for its server or as the built-in in-cluster one (which is
// global), is first shown to authorize with each project it has now (""
// for a global one), and authorize's error is returned as it is; without
// upsert it is then ErrExists. The Secret replaced is the one the
// registry uses, as found: one deleted and created again meanwhile is a
// conflict. A name another cluster has, the built-in "in-cluster"
// included, is ErrNameTaken, so that no Secret shadows another cluster by
// name.
func (s Service) PutCluster(ctx context.Context, c Cluster, upsert bool, authorize func(currentProject string) error) error {
	if err := c.Validate(); err != nil {
		return err
	}
	b64 := func(s string) string {
		if s == "" {
			return ""
		}
		return base64.StdEncoding.EncodeToString([]byte(s))
	}
	data, err := secretcodec.Cluster{
		Name: c.Name, Server: c.Server, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources, Project: c.Project,
		Config: secretcodec.ClusterConfig{BearerToken: c.BearerToken, TLSClientConfig: secretcodec.TLSClientConfig{
			Insecure: c.Insecure, ServerName: c.ServerName, CAData: b64(c.CAData), CertData: b64(c.CertData), KeyData: b64(c.KeyData),
		}},
	}.Data()
	if err != nil {
		return err
	}
	all, err := s.list(ctx, secretcodec.TypeCluster)
	if err != nil {
		return err
	}
	server := secretcodec.NormaliseServer(c.Server)
	claimants, nameTaken := claims(all, server, c.Name)
	if len(claimants) > 0 || server == secretcodec.InClusterServer {
		projects := map[string]bool{}
		for _, sec := range claimants {
			current, _ := secretcodec.DecodeCluster(sec) // a broken Secret still names its project
			projects[current.Project] = true
		}
		if len(claimants) == 0 {
			projects[""] = true // the built-in in-cluster cluster is global
		}
		for _, project := range slices.Sorted(maps.Keys(projects)) {
			if err := authorize(project); err != nil {
				return err
			}
		}
		if !upsert {
			return ErrExists
		}
	}
	if nameTaken {
		return ErrNameTaken
	}
	var existing *corev1.Secret
	if len(claimants) > 0 {
		existing = claimants[len(claimants)-1]
	}
	return s.put(ctx, existing, "cluster-"+hashName(c.Server), secretcodec.TypeCluster, data, c.Labels, true)
}

// claims returns the cluster Secrets among all that claim server, oldest
// first as the registry orders them (so that the last is the one it
// uses), and whether another one, or the built-in in-cluster cluster,
// claims name. A broken Secret still claims its server and name.
func claims(all []corev1.Secret, server, name string) (claimants []*corev1.Secret, nameTaken bool) {
	nameTaken = name == secretcodec.InClusterName && server != secretcodec.InClusterServer
	for i := range all {
		claimed, _ := secretcodec.DecodeCluster(&all[i])
		switch {
		case secretcodec.NormaliseServer(claimed.Server) == server:
			claimants = append(claimants, &all[i])
		case claimed.Name == name:
			nameTaken = true
		}
	}
	slices.SortFunc(claimants, func(a, b *corev1.Secret) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	return claimants, nameTaken
}

// DeleteCluster deletes the Secret declaring the cluster at server once
// authorize has accepted the project it scopes the cluster to ("" for a
// global one); authorize's error is returned as it is. The Secret
// authorize saw is the one deleted (by UID). The built-in in-cluster
// cluster, authorized as a global one, has no Secret to delete.
func (s Service) DeleteCluster(ctx context.Context, server string, authorize func(currentProject string) error) error {
	sec, err := s.find(ctx, secretcodec.TypeCluster, sameServer(server))
	if err != nil {
		return err
	}
	if sec == nil {
		if secretcodec.NormaliseServer(server) != secretcodec.InClusterServer {
			return ErrNotFound
		}
		if err := authorize(""); err != nil {
			return err
		}
		return invalid("the cluster graphcd runs in has no Secret to remove")
	}
	current, _ := secretcodec.DecodeCluster(sec) // a broken Secret still names its project
	if err := authorize(current.Project); err != nil {
		return err
	}
	return s.delete(ctx, sec)
}

// sameServer selects the cluster Secret of server.
func sameServer(server string) func(*corev1.Secret) bool {
	want := secretcodec.NormaliseServer(server)
	return func(sec *corev1.Secret) bool {
		c, _ := secretcodec.DecodeCluster(sec) // a broken Secret still claims its server
		return secretcodec.NormaliseServer(c.Server) == want
	}
}

// sameURL selects the repository Secret of repoURL (under any spelling
// of the URL) scoped to project ("": the global one).
func sameURL(repoURL, project string) func(*corev1.Secret) bool {
	return func(sec *corev1.Secret) bool {
		r, _ := secretcodec.DecodeRepository(sec) // a broken Secret still claims its URL and project
		return repourl.Same(r.URL, repoURL) && r.Project == project
	}
}

// find returns the Secret of type typ (under either label) that match
// selects, or nil.
func (s Service) find(ctx context.Context, typ string, match func(*corev1.Secret) bool) (*corev1.Secret, error) {
	all, err := s.list(ctx, typ)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(all, func(sec corev1.Secret) bool { return match(&sec) }); i >= 0 {
		return &all[i], nil
	}
	return nil, nil
}

// list returns the Secrets of type typ, those under graphcd's label
// first, then those under Argo CD's; a Secret with both is listed once.
func (s Service) list(ctx context.Context, typ string) ([]corev1.Secret, error) {
	var out []corev1.Secret
	seen := map[types.UID]bool{}
	for _, label := range []string{wellknown.SecretTypeLabel, wellknown.ArgoSecretTypeLabel} {
		list, err := s.Client.CoreV1().Secrets(s.Namespace).List(ctx, metav1.ListOptions{LabelSelector: label + "=" + typ})
		if err != nil {
			return nil, fmt.Errorf("list %s secrets: %w", typ, err)
		}
		for _, sec := range list.Items {
			if !seen[sec.UID] {
				seen[sec.UID] = true
				out = append(out, sec)
			}
		}
	}
	return out, nil
}

// put creates the Secret name with data, or with upsert replaces the data
// of existing (keeping its name and labels): existing as found, not
// another Secret created under its name since, which is a conflict.
func (s Service) put(ctx context.Context, existing *corev1.Secret, name, typ string, data, labels map[string]string, upsert bool) error {
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	if existing != nil {
		if !upsert {
			return ErrExists
		}
		var replaced error
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := secrets.Get(ctx, existing.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if cur.UID != existing.UID {
				replaced = errReplaced(existing.Name)
				return nil
			}
			before := cur.DeepCopy()
			cur.Data, cur.StringData = nil, data
			for k, v := range labels {
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				cur.Labels[k] = v
			}
			after, err := secrets.Update(ctx, cur, metav1.UpdateOptions{})
			if err == nil {
				audit.Change(ctx, before, after)
			}
			return err
		})
		return cmp.Or(replaced, err)
	}
	all := map[string]string{wellknown.SecretTypeLabel: typ}
	for k, v := range labels {
		all[k] = v
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: all}, StringData: data}
	created, err := secrets.Create(ctx, sec, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return ErrExists
	}
	if err == nil {
		audit.Change(ctx, nil, created)
	}
	return err
}

// hashName returns a short stable suffix for a Secret name from s.
func hashName(s string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 36)
}
