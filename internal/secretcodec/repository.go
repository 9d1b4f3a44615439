package secretcodec

import (
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Repository is a repository Secret, or a credential template
// (repo-creds) for every repository whose URL starts with URL.
type Repository struct {
	URL, Name, Project string
	// Type is "git" (also when the key is absent), "helm" or "oci" (a
	// registry of OCI artifacts holding manifests; its URL may leave out
	// the oci:// scheme, as Argo CD allows).
	Type string
	// Username and Password log in over HTTPS (a token as password works
	// too); BearerToken is sent as "Authorization: Bearer".
	Username, Password, BearerToken string
	// SSHPrivateKey is PEM; TLSClientCertData and TLSClientCertKey are
	// PEM and go together.
	SSHPrivateKey, TLSClientCertData, TLSClientCertKey string
	Insecure, EnableOCI                                bool
	// InsecureOCIForceHTTP reaches an OCI registry over plain HTTP.
	InsecureOCIForceHTTP bool
	// Template is set for a repo-creds or repo-write-creds Secret.
	Template bool
	// Write is set for a repository-write or repo-write-creds Secret:
	// credentials that push (the source hydrator's), never used to read.
	Write bool
}

// Repository types (the "type" key).
const (
	RepoTypeGit  = "git"
	RepoTypeHelm = "helm"
	RepoTypeOCI  = "oci"
)

// DecodeRepository reads a repository or repo-creds Secret, or one of
// their write counterparts (repository-write, repo-write-creds). On error the
// Repository still holds what names it (URL without user information,
// Name, Project, Template), so that a broken Secret can be listed and fail
// only the lookups of its own repository, and only for its own project.
func DecodeRepository(sec *corev1.Secret) (Repository, error) {
	data := Data(sec)
	get := func(k string) string { return strings.TrimSpace(data[k]) }
	typ := Type(sec)
	r := Repository{
		URL: get("url"), Name: get("name"), Project: get("project"),
		Template: typ == TypeRepoCreds || typ == TypeRepoWriteCreds,
		Write:    typ == TypeRepositoryWrite || typ == TypeRepoWriteCreds,
	}
	fail := func(format string, args ...any) (Repository, error) {
		return Repository{URL: withoutUserInfo(r.URL), Name: r.Name, Project: r.Project, Template: r.Template, Write: r.Write}, keyError(sec, "repository", format, args...)
	}
	if r.URL == "" {
		return fail("url is missing")
	}
	if u, err := url.Parse(r.URL); err == nil && u.User != nil {
		return fail("url must not embed credentials; use the username and password keys")
	}
	switch r.Type = get("type"); r.Type {
	case "":
		r.Type = RepoTypeGit
	case RepoTypeGit, RepoTypeHelm, RepoTypeOCI:
	default:
		return fail("type %q: want git, helm or oci", r.Type)
	}
	for key, dst := range map[string]*bool{"insecure": &r.Insecure, "enableOCI": &r.EnableOCI, "insecureOCIForceHttp": &r.InsecureOCIForceHTTP} {
		b, err := parseBool(data, key)
		if err != nil {
			return fail("%s: want true or false", key)
		}
		*dst = b
	}
	r.Username, r.Password, r.BearerToken = get("username"), data["password"], data["bearerToken"]
	r.SSHPrivateKey = data["sshPrivateKey"]
	r.TLSClientCertData, r.TLSClientCertKey = data["tlsClientCertData"], data["tlsClientCertKey"]
	if (r.TLSClientCertData == "") != (r.TLSClientCertKey == "") {
		return fail("tlsClientCertData and tlsClientCertKey must be set together")
	}
	return r, nil
}

// withoutUserInfo is url with any user name and password taken out, and
// its query and fragment too, which no repository needs and a token may
// hide in. An scp-like SSH address (git@host:path), which has no password,
// is kept as it is; anything else that does not parse as a URL with a
// host or path (an opaque "user:password@host" among them) gives "".
func withoutUserInfo(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.Opaque == "" {
		u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
		return u.String()
	}
	if at, colon := strings.Index(raw, "@"), strings.Index(raw, ":"); at > 0 && colon > at && !strings.Contains(raw, "://") {
		return raw
	}
	return ""
}

// HasCredentials reports whether r carries anything that authenticates.
func (r Repository) HasCredentials() bool {
	return r.Username != "" || r.Password != "" || r.BearerToken != "" || r.SSHPrivateKey != "" || r.TLSClientCertData != ""
}

// Data is what a Secret declaring r holds; its label is Label().
func (r Repository) Data() map[string]string {
	data := map[string]string{"url": r.URL}
	setIf(data, "name", r.Name)
	setIf(data, "project", r.Project)
	setIf(data, "type", r.Type)
	setIf(data, "username", r.Username)
	setIf(data, "password", r.Password)
	setIf(data, "bearerToken", r.BearerToken)
	setIf(data, "sshPrivateKey", r.SSHPrivateKey)
	setIf(data, "tlsClientCertData", r.TLSClientCertData)
	setIf(data, "tlsClientCertKey", r.TLSClientCertKey)
	if r.Insecure {
		data["insecure"] = "true"
	}
	if r.EnableOCI {
		data["enableOCI"] = "true"
	}
	if r.InsecureOCIForceHTTP {
		data["insecureOCIForceHttp"] = "true"
	}
	return data
}

// Label is the secret-type label value of r's Secret.
func (r Repository) Label() string {
	switch {
	case r.Write && r.Template:
		return TypeRepoWriteCreds
	case r.Write:
		return TypeRepositoryWrite
	case r.Template:
		return TypeRepoCreds
	}
	return TypeRepository
}
