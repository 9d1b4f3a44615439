package secretcodec

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// fuzzToken reports whether token is a credential the fuzz targets can
// look for in what the decoders return: long enough not to occur by
// chance, and free of the characters that would end it inside a URL or a
// JSON string.
func fuzzToken(token string) bool {
	return len(token) >= 10 && !strings.ContainsAny(token, "\"\\@/:?#%[] \t\r\n") && strings.ToValidUTF8(token, "") == token
}

// FuzzDecodeCluster decodes cluster Secrets whose config carries a token
// and whose other keys are arbitrary: nothing panics, and neither the
// error nor what a failed decode still returns quotes the token, even
// when the config is cut off or the token is put in the server URL.
//
//	go test -run '^$' -fuzz FuzzDecodeCluster ./internal/secretcodec/
func FuzzDecodeCluster(f *testing.F) {
	f.Add("https://k8s.example.com:6443/", "tok3n-0123456789", `}`, "a, b", "true", "1")
	f.Add("https://user:%s@host", "tok3n-0123456789", `,"tlsClientConfig":{"insecure":"yes"}}`, "", "maybe", "-1")
	f.Add("ftp://u:%s@h", "0123456789abcdef", `,"execProviderConfig":{"command":1}}`, ",,", "", "x")
	f.Add("https://host", "0123456789abcdef", `"`, "", "", "")
	// Found by fuzzing: a server that is no URL with user information
	// was quoted in the error, or kept as the broken Secret's name.
	f.Add("A:%s@", "0000000000", `}`, "", "", "")
	f.Add("0#:%s@", "0000000000", `}`, "", "", "")
	f.Fuzz(func(t *testing.T, server, token, tail, namespaces, clusterResources, shard string) {
		if !fuzzToken(token) || strings.Contains(server, token) {
			return
		}
		// The token goes where a password would be: after "user:".
		server = strings.Replace(server, ":%s@", ":"+token+"@", 1)
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}, StringData: map[string]string{
			"server": server, "config": `{"bearerToken":"` + token + `"` + tail,
			"namespaces": namespaces, "clusterResources": clusterResources, "shard": shard,
		}}
		c, err := DecodeCluster(sec)
		if err == nil {
			return
		}
		for what, s := range map[string]string{"error": err.Error(), "name": c.Name, "server": c.Server, "project": c.Project} {
			if strings.Contains(s, token) && !strings.Contains(tail+namespaces+clusterResources+shard, token) {
				t.Fatalf("the %s of a broken cluster Secret quotes its token: %q", what, s)
			}
		}
	})
}

// FuzzDecodeRepository decodes repository Secrets with a password in
// the URL or the password key and arbitrary other keys: nothing panics,
// and no error or returned URL quotes the password.
//
//	go test -run '^$' -fuzz FuzzDecodeRepository ./internal/secretcodec/
func FuzzDecodeRepository(f *testing.F) {
	f.Add("https://git:%s@example.com/r.git", "pa55word-0123", "git", "true", "repository")
	f.Add("git:%s@host:org/r", "pa55word-0123", "svn", "nope", "repo-creds")
	f.Add("https://x:%s@[::1", "ghp_0123456789", "", "", "repository-write")
	f.Add("oci://registry/chart", "ghp_0123456789", "oci", "1", "repo-write-creds")
	// Found by fuzzing: an opaque URL and a fragment kept the password.
	f.Add("https://h/r#a:%s@", "ghp_0123456789", "x", "", "repository")
	f.Fuzz(func(t *testing.T, url, password, typ, insecure, secretType string) {
		if !fuzzToken(password) || strings.Contains(url, password) {
			return
		}
		decode := func(password string) (string, string, error) {
			sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r", Labels: map[string]string{wellknown.ArgoSecretTypeLabel: secretType}},
				StringData: map[string]string{"url": strings.Replace(url, ":%s@", ":"+password+"@", 1), "password": password, "type": typ, "insecure": insecure, "tlsClientCertData": typ}}
			r, err := DecodeRepository(sec)
			if err == nil {
				return "", "", nil
			}
			return err.Error(), r.URL, err
		}
		msg, shown, err := decode(password)
		if err == nil || !strings.Contains(msg+shown, password) {
			return
		}
		// The same Secret with another password of the same length: a
		// password found there too came from the other keys, or from how
		// the error quotes them or the URL is escaped ("\x80" and
		// "000000000" in the URL become "%80000000000"), not from it.
		other := strings.Repeat("q", len(password))
		if other == password {
			other = strings.Repeat("z", len(password))
		}
		if otherMsg, otherShown, _ := decode(other); strings.Contains(otherMsg+otherShown, password) {
			return
		}
		t.Fatalf("a broken repository Secret's error %q or URL %q quotes its password", msg, shown)
	})
}
