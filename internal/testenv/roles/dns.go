package roles

import (
	"context"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// ServeDNS answers A queries for name with addrs over UDP on loopback, as
// a cluster's DNS answers for a headless Service: the controllers and API
// replicas dial dns://<this server>/<name>:<port> and balance over every
// repository server. Other names get NXDOMAIN, other types of name an
// empty answer. It returns the server's host:port and how to stop it.
func ServeDNS(name string, addrs ...netip.Addr) (string, func(), error) {
	var lc net.ListenConfig
	conn, err := lc.ListenPacket(context.Background(), "udp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	fqdn, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		_ = conn.Close()
		return "", nil, err
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, ok := dnsAnswer(buf[:n], fqdn, addrs); ok {
				_, _ = conn.WriteTo(out, from)
			}
		}
	}()
	return conn.LocalAddr().String(), func() { _ = conn.Close() }, nil
}

// dnsAnswer builds the response to the query msg.
func dnsAnswer(msg []byte, name dnsmessage.Name, addrs []netip.Addr) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	ours := strings.EqualFold(q.Name.String(), name.String())
	if !ours {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(q) != nil || b.StartAnswers() != nil {
		return nil, false
	}
	if ours && q.Type == dnsmessage.TypeA {
		for _, a := range addrs {
			rr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}
			if b.AResource(rr, dnsmessage.AResource{A: a.As4()}) != nil {
				return nil, false
			}
		}
	}
	out, err := b.Finish()
	return out, err == nil
}
