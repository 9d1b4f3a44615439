package oci

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	orasregistry "oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/graphcd/graphcd/reposerver/archive"
)

// MaxTags bounds the tags read to resolve a version constraint.
const MaxTags = 10000

// maxManifestSize bounds one image manifest, as oras does by default.
const maxManifestSize = 4 << 20

// Auth says how to reach a registry. It never appears in errors.
type Auth struct {
	// Username and Password are sent to the repository's own registry
	// host only (basic auth, or to get a bearer token).
	Username, Password string
	// CACert (PEM) is trusted in addition to the system roots.
	CACert []byte
	// TLSClientCert and TLSClientKey (PEM) enable mutual TLS.
	TLSClientCert, TLSClientKey []byte
	// Insecure skips TLS certificate verification.
	Insecure bool
	// PlainHTTP talks to the registry over http instead of https
	// (Argo CD's insecureOCIForceHttp).
	PlainHTTP bool
}

// fingerprint identifies a for caches keyed by credentials, without
// holding them.
func (a Auth) fingerprint() string {
	h := sha256.New()
	for _, f := range [][]byte{[]byte(a.Username), []byte(a.Password), a.CACert, a.TLSClientCert, a.TLSClientKey} {
		_, _ = fmt.Fprintf(h, "%d:", len(f))
		h.Write(f)
	}
	_, _ = fmt.Fprintf(h, "%t%t", a.Insecure, a.PlainHTTP)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// HTTPClient returns a client for a repository server (an OCI registry or
// a Helm repository) trusting the system roots plus caCert, presenting a
// client certificate when one is given, and following at most 10
// redirects. A redirect to another host and port (a blob store, a CDN)
// never carries the Authorization header: Go's client would keep it for
// another port of the same host name.
func HTTPClient(caCert []byte, insecure bool, clientCert, clientKey []byte) (*http.Client, error) {
	tr, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("unexpected default HTTP transport")
	}
	tr = tr.Clone()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caCert) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(caCert) {
			return nil, errors.New("CA certificate bundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	if len(clientCert) > 0 || len(clientKey) > 0 {
		pair, err := tls.X509KeyPair(clientCert, clientKey)
		if err != nil {
			return nil, errors.New("TLS client certificate and key do not load") // the error would show no key, but say less
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	cfg.InsecureSkipVerify = insecure // #nosec G402 -- the repository's own setting, off by default
	tr.TLSClientConfig = cfg
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if !strings.EqualFold(req.URL.Host, via[0].URL.Host) || req.URL.Scheme != via[0].URL.Scheme {
				req.Header.Del("Authorization")
			}
			return nil
		},
	}, nil
}

// NewRepository opens the repository name ("host[:port]/path", without
// tag or digest) of a registry. The credentials of a are given to name's
// registry host alone: a token service or redirect elsewhere never sees
// them.
func NewRepository(name string, a Auth) (*remote.Repository, error) {
	ref, err := orasregistry.ParseReference(name)
	if err != nil {
		return nil, fmt.Errorf("invalid OCI repository %q: %w", name, err)
	}
	if ref.Reference != "" {
		return nil, fmt.Errorf("OCI repository %q names a tag or digest; give it as the revision instead", name)
	}
	hc, err := HTTPClient(a.CACert, a.Insecure, a.TLSClientCert, a.TLSClientKey)
	if err != nil {
		return nil, err
	}
	rep, err := remote.NewRepository(ref.String())
	if err != nil {
		return nil, err
	}
	rep.PlainHTTP = a.PlainHTTP
	client := &auth.Client{Client: hc, Cache: auth.NewCache()}
	if a.Username != "" || a.Password != "" {
		client.Credential = auth.StaticCredential(ref.Registry, auth.Credential{Username: a.Username, Password: a.Password})
	}
	rep.Client = client
	rep.MaxMetadataBytes = maxManifestSize
	return rep, nil
}

// HighestTag returns the tag of rep whose version is the highest that
// constraint allows ("" means any). Tags are read as semantic versions
// with "_" standing for "+", as Helm pushes them; others are ignored.
func HighestTag(ctx context.Context, rep *remote.Repository, constraint string) (string, error) {
	if constraint == "" {
		constraint = "*"
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return "", fmt.Errorf("version constraint %q: %w", constraint, err)
	}
	type candidate struct {
		tag string
		v   *semver.Version
	}
	var matches []candidate
	seen := 0
	errStop := errors.New("too many tags")
	err = rep.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			seen++
			if seen > MaxTags {
				return errStop
			}
			v, err := semver.NewVersion(strings.ReplaceAll(t, "_", "+"))
			if err != nil || !c.Check(v) {
				continue
			}
			matches = append(matches, candidate{tag: t, v: v})
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return "", fmt.Errorf("list tags: more than %d tags", MaxTags)
	}
	if err != nil {
		return "", fmt.Errorf("list tags: %w", err)
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("no tag matches version %q", constraint)
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].v.GreaterThan(matches[j].v) })
	return matches[0].tag, nil
}

// FetchManifest fetches the OCI image manifest that reference (a tag or
// a digest) names, verified against its digest, and refuses any other
// kind of manifest. For a digest reference the manifest must have that
// digest.
func FetchManifest(ctx context.Context, rep *remote.Repository, reference string) (ocispec.Descriptor, ocispec.Manifest, error) {
	desc, rc, err := rep.FetchReference(ctx, reference)
	if err != nil {
		return desc, ocispec.Manifest{}, fmt.Errorf("fetch manifest: %w", err)
	}
	raw, err := content.ReadAll(rc, desc)
	_ = rc.Close()
	if err != nil {
		return desc, ocispec.Manifest{}, fmt.Errorf("read manifest: %w", err)
	}
	if strings.Contains(reference, ":") && desc.Digest.String() != reference {
		return desc, ocispec.Manifest{}, fmt.Errorf("manifest has digest %s, not %s", desc.Digest, reference)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return desc, ocispec.Manifest{}, fmt.Errorf("manifest media type %q is not an OCI image manifest", desc.MediaType)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return desc, ocispec.Manifest{}, fmt.Errorf("parse manifest: %w", err)
	}
	return desc, m, nil
}

// FetchBlob downloads the blob desc names, refusing one over limit bytes
// (archive.ErrTooLarge) and one whose size or digest differ from desc.
func FetchBlob(ctx context.Context, rep *remote.Repository, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Size > limit {
		return nil, fmt.Errorf("layer of %d bytes is more than %d: %w", desc.Size, limit, archive.ErrTooLarge)
	}
	if desc.Size < 0 {
		return nil, fmt.Errorf("layer has a negative size %d", desc.Size)
	}
	rc, err := rep.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetch layer %s: %w", desc.Digest, err)
	}
	defer func() { _ = rc.Close() }()
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("read layer %s: %w", desc.Digest, err)
	}
	return data, nil
}
