// Package repocreds finds the credentials for a repository URL in
// Kubernetes Secrets, as Argo CD does:
//
//	apiVersion: v1
//	kind: Secret
//	metadata:
//	  name: private-repo
//	  labels:
//	    graphcd.io/secret-type: repository   # or argocd.argoproj.io/secret-type
//	stringData:
//	  url: https://github.com/org/private
//	  username: bot
//	  password: ghp_...
//
// A `repository` Secret matches its URL as one repository (internal/repourl:
// case, a trailing .git or slash, scp-style ssh). A `repo-creds`
// Secret is a template matched by URL prefix; the longest prefix wins, and a
// repository Secret without credentials inherits them. A Secret with a
// `project` key serves only the applications of that project, and for
// them wins over one without (see Store.Lookup). SSH known hosts come
// from the graphcd-ssh-known-hosts-cm ConfigMap (key ssh_known_hosts) and
// custom CAs from graphcd-tls-certs-cm (key: the repository host), so a
// repository Secret need not repeat them. A Store reads them at most once
// per DefaultTTL.
//
// The source hydrator pushes with write credentials only: Secrets of type
// `repository-write` and templates of type `repo-write-creds`, matched
// and scoped the same way (see Store.LookupWrite). Read lookups never see
// them, and write lookups never see read Secrets.
package repocreds

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
)

// The ConfigMaps Store reads besides the Secrets.
const (
	KnownHostsConfigMap = "graphcd-ssh-known-hosts-cm"
	TLSCertsConfigMap   = "graphcd-tls-certs-cm"
)

// Store looks repositories up in one namespace.
type Store struct {
	client    kubernetes.Interface
	namespace string

	// The Secrets and ConfigMaps are read at most once per ttl: every
	// reconcile looks its repository up, and listing Secrets each time
	// would cost the API server a LIST per app per refresh.
	ttl    time.Duration
	now    func() time.Time
	mu     sync.Mutex
	read   time.Time
	cached []entry
	cms    map[string]map[string]string // ConfigMap name -> data (nil: absent)
}

// DefaultTTL is how long a Store reuses what it read; a changed Secret is
// seen within this time.
const DefaultTTL = 10 * time.Second

// New returns a Store over the Secrets and ConfigMaps of namespace.
func New(client kubernetes.Interface, namespace string) *Store {
	return &Store{client: client, namespace: namespace, ttl: DefaultTTL, now: time.Now}
}

// snapshot returns the parsed Secrets and the trust ConfigMaps, reading
// them again when they are older than the TTL.
func (s *Store) snapshot(ctx context.Context) ([]entry, map[string]map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cms != nil && s.now().Sub(s.read) < s.ttl {
		return s.cached, s.cms, nil
	}
	entries, err := s.readEntries(ctx)
	if err != nil {
		return nil, nil, err
	}
	cms := map[string]map[string]string{}
	for _, name := range []string{KnownHostsConfigMap, TLSCertsConfigMap} {
		cm, err := s.client.CoreV1().ConfigMaps(s.namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			cms[name] = nil
		case err != nil:
			return nil, nil, fmt.Errorf("read %s: %w", name, err)
		default:
			cms[name] = cm.Data
		}
	}
	s.cached, s.cms, s.read = entries, cms, s.now()
	return entries, cms, nil
}

// Invalidate makes the next lookup read the Secrets again, e.g. after this
// process changed one.
func (s *Store) Invalidate() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cms = nil
}

// Info describes a configured repository without its secrets, for listing.
type Info struct {
	Name, URL, Project string
	Type               reposerver.RepoType
	// HasCredentials reports whether any credential is configured.
	HasCredentials bool
	// Template reports a repo-creds template rather than a repository.
	Template bool
}

// entry is one parsed Secret.
type entry struct {
	secret    string
	info      Info
	creds     git.Credentials
	enableOCI bool
	forceHTTP bool // insecureOCIForceHttp
	// match is the URL lookups compare with, normalised: an OCI
	// repository's URL with the oci:// scheme it may leave out.
	match string
	// err is why the Secret could not be parsed: it serves no lookup, and
	// a lookup it would match fails with err. info holds only its URL
	// (without user information) and name then.
	err error
	// write marks a repository-write or repo-write-creds Secret: it
	// serves LookupWrite only, and Lookup never sees it.
	write bool
}

// Lookup returns the Repository for repoURL, as an application of project
// reaches it: with the credentials of the matching Secret, the best
// repo-creds template, and the known-hosts and CA ConfigMaps. An URL
// nothing matches is returned without credentials.
//
// A Secret with a project key serves only that project, as in Argo CD: for
// an application of the project it wins over a Secret without one (a
// template: over one with an equally long prefix), and for every other
// project it does not exist: its credentials are never given, and a
// malformed one fails no other project's lookup. Pass project "" for a
// lookup on behalf of no project; only Secrets without a project serve it.
func (s *Store) Lookup(ctx context.Context, repoURL, project string) (reposerver.Repository, error) {
	entries, cms, err := s.snapshot(ctx)
	if err != nil {
		return reposerver.Repository{}, err
	}
	exact, template, err := matching(entries, repoURL, project, false)
	if err != nil {
		return reposerver.Repository{}, err
	}
	return withCredentials(repoURL, exact, template, cms), nil
}

// ErrNoWriteCredentials is returned by LookupWrite when no
// repository-write Secret or repo-write-creds template serves the
// repository for the project.
var ErrNoWriteCredentials = errors.New("no repository-write Secret or repo-write-creds template with credentials matches the repository")

// LookupWrite returns the Repository for repoURL with the credentials that
// push to it on behalf of an application of project: those of a
// repository-write Secret or repo-write-creds template (under graphcd's
// secret-type label or Argo CD's), matched and scoped as Lookup matches
// read Secrets. Read credentials never serve it: without a write Secret
// that carries credentials it fails with ErrNoWriteCredentials.
func (s *Store) LookupWrite(ctx context.Context, repoURL, project string) (reposerver.Repository, error) {
	entries, cms, err := s.snapshot(ctx)
	if err != nil {
		return reposerver.Repository{}, err
	}
	exact, template, err := matching(entries, repoURL, project, true)
	if err != nil {
		return reposerver.Repository{}, err
	}
	if (exact == nil || !exact.info.HasCredentials) && (template == nil || !template.info.HasCredentials) {
		return reposerver.Repository{}, fmt.Errorf("%w %s (project %s)", ErrNoWriteCredentials, repourl.Redact(repoURL), project)
	}
	return withCredentials(repoURL, exact, template, cms), nil
}

// matching finds the Secret and the template that serve repoURL for
// project among the write or the read ones: see Lookup for the ranking.
// A malformed Secret that would have served the lookup fails it: it was
// meant for this repository.
func matching(entries []entry, repoURL, project string, write bool) (exact, template *entry, err error) {
	want := repourl.Normalize(repoURL)
	for i := range entries {
		e := &entries[i]
		if e.write != write {
			continue
		}
		if e.info.Project != "" && e.info.Project != project {
			continue // another project's: not there for this lookup
		}
		norm := e.match
		switch {
		case e.info.URL == "":
		case !e.info.Template && norm == want && ranksAbove(e, exact, 0, 0):
			exact = e
		case e.info.Template && strings.HasPrefix(want, norm) && ranksAbove(e, template, len(norm), prefixLen(template)):
			template = e
		}
	}
	for _, e := range []*entry{exact, template} {
		if e != nil && e.err != nil {
			return nil, nil, e.err
		}
	}
	return exact, template, nil
}

// withCredentials is the repository of repoURL with the credentials of
// the matching Secret (exact) and template, and the host trust of the
// ConfigMaps.
func withCredentials(repoURL string, exact, template *entry, cms map[string]map[string]string) reposerver.Repository {
	repo := reposerver.Repository{URL: repoURL}
	var creds git.Credentials
	if template != nil {
		creds, repo.Type, repo.EnableOCI, repo.InsecureOCIForceHTTP = template.creds, template.info.Type, template.enableOCI, template.forceHTTP
	}
	if exact != nil {
		if exact.info.HasCredentials {
			creds = exact.creds
		} else {
			creds.Insecure = creds.Insecure || exact.creds.Insecure
		}
		if exact.info.Type != "" {
			repo.Type = exact.info.Type
		}
		repo.EnableOCI = repo.EnableOCI || exact.enableOCI
		repo.InsecureOCIForceHTTP = repo.InsecureOCIForceHTTP || exact.forceHTTP
	}
	addHostTrust(cms, repoURL, &creds)
	if hasSecrets(creds) || creds.Insecure || len(creds.CACert) > 0 || len(creds.SSHKnownHosts) > 0 {
		repo.Credentials = &creds
	}
	return repo
}

// ranksAbove reports whether candidate e (whose match is n long) serves a
// lookup better than best (whose match is bestN long, nil: none yet): a
// longer match first, then a project-scoped Secret over a global one, then
// the first by Secret name (entries come sorted by it).
func ranksAbove(e, best *entry, n, bestN int) bool {
	switch {
	case best == nil:
		return true
	case n != bestN:
		return n > bestN
	}
	return e.info.Project != "" && best.info.Project == ""
}

// prefixLen is the length of a template's normalised URL; 0 for none.
func prefixLen(e *entry) int {
	if e == nil {
		return 0
	}
	return len(e.match)
}

// List returns the configured repositories and templates (not the write
// ones), sorted by URL, without secrets; a malformed Secret is listed by its URL and name only.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	entries, _, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(entries))
	for _, e := range entries {
		if !e.write {
			out = append(out, e.info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out, nil
}

// readEntries lists and parses the repository Secrets. Secrets with either
// label are read; a Secret that cannot be parsed is kept with its error
// (naming it, never its values), so that it fails only the lookups of its
// own repository.
func (s *Store) readEntries(ctx context.Context) ([]entry, error) {
	var out []entry
	for _, label := range []string{wellknown.SecretTypeLabel, wellknown.ArgoSecretTypeLabel} {
		list, err := s.client.CoreV1().Secrets(s.namespace).List(ctx, metav1.ListOptions{
			LabelSelector: label + " in (" + strings.Join([]string{
				secretcodec.TypeRepository, secretcodec.TypeRepoCreds, secretcodec.TypeRepositoryWrite, secretcodec.TypeRepoWriteCreds,
			}, ",") + ")",
		})
		if err != nil {
			return nil, fmt.Errorf("list repository secrets: %w", err)
		}
		for i := range list.Items {
			sec := &list.Items[i]
			if label == wellknown.ArgoSecretTypeLabel && sec.Labels[wellknown.SecretTypeLabel] != "" {
				continue // already read under our own label
			}
			out = append(out, newEntry(sec))
		}
	}
	// Deterministic: the first exact match is the oldest-named Secret.
	sort.Slice(out, func(i, j int) bool { return out[i].secret < out[j].secret })
	return out, nil
}

// newEntry decodes a repository Secret into its entry; a broken one keeps
// the URL (without user information) and name it claims.
func newEntry(sec *corev1.Secret) entry {
	r, err := secretcodec.DecodeRepository(sec)
	e := entry{secret: sec.Name, info: Info{Name: r.Name, URL: r.URL, Project: r.Project, Template: r.Template}, err: err, write: r.Write}
	e.match = repourl.Normalize(r.URL)
	if err != nil {
		return e
	}
	if r.Type == secretcodec.RepoTypeOCI && r.URL != "" && !strings.Contains(r.URL, "://") {
		e.match = repourl.Normalize("oci://" + r.URL)
	}
	e.info.Type, e.info.HasCredentials, e.enableOCI, e.forceHTTP = reposerver.RepoType(r.Type), r.HasCredentials(), r.EnableOCI, r.InsecureOCIForceHTTP
	e.creds = git.Credentials{
		Username: r.Username, Password: r.Password, BearerToken: r.BearerToken,
		SSHPrivateKey: bytesOf(r.SSHPrivateKey), TLSClientCert: bytesOf(r.TLSClientCertData), TLSClientKey: bytesOf(r.TLSClientCertKey),
		Insecure: r.Insecure,
	}
	return e
}

// bytesOf is s as bytes; nil when s is empty, as an absent key reads.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// hasSecrets reports whether c carries anything that authenticates.
func hasSecrets(c git.Credentials) bool {
	return c.Username != "" || c.Password != "" || c.BearerToken != "" || len(c.SSHPrivateKey) > 0 || len(c.TLSClientCert) > 0
}

// addHostTrust adds the known hosts (SSH) or the custom CA (HTTPS) that
// the ConfigMaps hold for the repository's host.
func addHostTrust(cms map[string]map[string]string, repoURL string, creds *git.Credentials) {
	if isSSH(repoURL) {
		if len(creds.SSHKnownHosts) == 0 {
			if hosts := cms[KnownHostsConfigMap]["ssh_known_hosts"]; hosts != "" {
				creds.SSHKnownHosts = []byte(hosts)
			}
		}
		return
	}
	u, err := url.Parse(repoURL)
	if err != nil || u.Hostname() == "" || len(creds.CACert) > 0 {
		return // not an HTTPS URL: nothing to add; the git client reports bad URLs
	}
	if pem := cms[TLSCertsConfigMap][strings.ToLower(u.Hostname())]; pem != "" {
		creds.CACert = []byte(pem)
	}
}

func isSSH(repoURL string) bool {
	if strings.HasPrefix(repoURL, "ssh://") {
		return true
	}
	// scp-style user@host:path
	at, colon := strings.Index(repoURL, "@"), strings.Index(repoURL, ":")
	return !strings.Contains(repoURL, "://") && at > 0 && colon > at
}
