package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

var web = []string{"http", "https"}

func TestCheckIP(t *testing.T) {
	t.Parallel()
	for addr, forbidden := range map[string]bool{
		"169.254.169.254":        true,
		"::ffff:169.254.169.254": true,
		"fe80::1":                true,
		"fd00:ec2::254":          true,
		"0.0.0.0":                true,
		"::":                     true,
		"224.0.0.1":              true,
		"ff02::1":                true,
		"255.255.255.255":        true,
		"127.0.0.1":              false,
		"10.1.2.3":               false,
		"192.168.0.10":           false,
		"2001:db8::1":            false,
		"fd00:ec2::253":          false,
	} {
		err := CheckIP(netip.MustParseAddr(addr))
		if got := errors.Is(err, ErrForbiddenAddress); got != forbidden {
			t.Errorf("CheckIP(%s) = %v, want forbidden %v", addr, err, forbidden)
		}
	}
	for host, forbidden := range map[string]bool{
		"[fe80::1%25eth0]": true,
		"169.254.169.254":  true,
		"example.com":      false,
		"[::1]":            false,
	} {
		if got := errors.Is(CheckHost(host), ErrForbiddenAddress); got != forbidden {
			t.Errorf("CheckHost(%s) forbidden = %v, want %v", host, got, forbidden)
		}
	}
}

func TestDialRefusesForbiddenAddress(t *testing.T) {
	t.Parallel()
	// A name that resolves to a metadata address is refused where it is
	// dialled; the dial control sees the address DNS gave.
	if err := dialControl("tcp", "169.254.169.254:80", nil); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("dialControl = %v, want ErrForbiddenAddress", err)
	}
	if err := dialControl("tcp", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("dialControl(loopback) = %v", err)
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/values.yaml", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			http.Error(w, "credentials sent", http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("replicas: 3\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/to-values", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/values.yaml", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(mux)
	defer tlsSrv.Close()

	c := New(Options{RootCAs: poolOf(tlsSrv)})
	ctx := context.Background()
	for _, u := range []string{srv.URL + "/values.yaml", srv.URL + "/to-values", tlsSrv.URL + "/values.yaml"} {
		got, err := c.Get(ctx, u, web, 1024)
		if err != nil || string(got) != "replicas: 3\n" {
			t.Errorf("Get(%s) = %q, %v", u, got, err)
		}
	}

	for _, tc := range []struct {
		url     string
		schemes []string
		want    error
		text    string
	}{
		{url: srv.URL + "/values.yaml", schemes: []string{"https"}, want: ErrSchemeNotAllowed, text: `"http" (allowed: https)`},
		{url: "s3://bucket/values.yaml", schemes: []string{"s3", "https"}, want: ErrSchemeNotAllowed, text: "http and https URLs only"},
		{url: "file:///etc/passwd", schemes: web, want: ErrSchemeNotAllowed},
		{url: "http://169.254.169.254/latest/meta-data/", schemes: web, want: ErrForbiddenAddress},
		{url: "http://[fe80::1]/", schemes: web, want: ErrForbiddenAddress},
		{url: srv.URL + "/to-metadata", schemes: web, want: ErrForbiddenAddress},
		{url: srv.URL + "/to-file", schemes: web, want: ErrSchemeNotAllowed},
		{url: srv.URL + "/big", schemes: web, want: ErrTooLarge},
		{url: srv.URL + "/loop", schemes: web, text: "redirects"},
		{url: srv.URL + "/missing", schemes: web, text: "404 Not Found"},
	} {
		_, err := c.Get(ctx, tc.url, tc.schemes, 1024)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("Get(%s) = %v, want %v containing %q", tc.url, err, tc.want, tc.text)
		}
	}

	// The URL's password never reaches an error.
	withPassword := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1) + "/missing"
	_, err := c.Get(ctx, withPassword, web, 1024)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Get(url with password) = %v, want an error without the password", err)
	}
	// An untrusted certificate fails.
	if _, err := New(Options{}).Get(ctx, tlsSrv.URL+"/values.yaml", web, 1024); err == nil {
		t.Error("Get from a server with an untrusted certificate succeeded")
	}
}

func poolOf(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}
