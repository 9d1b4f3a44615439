package auth

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

// The login limits name a client by its address: X-Forwarded-For only
// from a trusted proxy, and an IPv6 client by its /64.
func TestClientOf(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("fd00::1/128")}
	tests := []struct {
		name, remote, xff string
		trusted           []netip.Prefix
		want              string
	}{
		{name: "direct", remote: "192.0.2.7:5000", want: "192.0.2.7"},
		{name: "forged header ignored", remote: "192.0.2.7:5000", xff: "198.51.100.1", want: "192.0.2.7"},
		{name: "header from an untrusted peer", remote: "192.0.2.7:5000", xff: "198.51.100.1", trusted: proxies, want: "192.0.2.7"},
		{name: "trusted proxy", remote: "10.0.0.5:5000", xff: "198.51.100.1", trusted: proxies, want: "198.51.100.1"},
		{name: "client spoofs the left of the chain", remote: "10.0.0.5:5000", xff: "203.0.113.9, 198.51.100.1, 10.0.0.6", trusted: proxies, want: "198.51.100.1"},
		{name: "trusted proxy, no header", remote: "10.0.0.5:5000", trusted: proxies, want: "10.0.0.5"},
		{name: "trusted proxy, bad header", remote: "10.0.0.5:5000", xff: "nonsense", trusted: proxies, want: "10.0.0.5"},
		{name: "ipv6 by /64", remote: "[2001:db8:1:2:aaaa::1]:5000", want: "2001:db8:1:2::/64"},
		{name: "ipv4-mapped", remote: "[::ffff:192.0.2.7]:5000", want: "192.0.2.7"},
		{name: "ipv6 proxy", remote: "[fd00::1]:443", xff: "2001:db8:9::5", trusted: proxies, want: "2001:db8:9::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/auth/login", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			h := &Handlers{TrustedProxies: tt.trusted}
			if got := h.clientOf(r); got != tt.want {
				t.Errorf("clientOf = %q, want %q", got, tt.want)
			}
		})
	}
}
