package auth

import (
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddr returns the address of the client of r: its peer's address,
// or when the peer is one of the trusted proxies, the nearest address in
// X-Forwarded-For that is not a trusted proxy (the hops left of it may
// be made up by the client). Without trusted proxies the header is
// ignored, since any client can send it. Both the login limits and the
// audit trail name clients by this one rule. ok is false when r's peer
// address cannot be parsed (a request not from a TCP listener).
func ClientAddr(r *http.Request, trusted []netip.Prefix) (addr netip.Addr, ok bool) {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	client := peer.Addr().Unmap()
	if !isTrusted(trusted, client) {
		return client, true
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = hop.Unmap()
		if !isTrusted(trusted, client) {
			break
		}
	}
	return client, true
}

func isTrusted(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
