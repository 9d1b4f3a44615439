package localcluster

import (
	"net"
	"strconv"
	"testing"
)

// FreePort hands out bindable ports below the ephemeral range, never the
// same one twice, so that neither an outgoing connection nor a second
// pick of the same process takes a port before its caller binds it.
func TestFreePort(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < freePortLow || port >= freePortHigh {
			t.Fatalf("port %d, want one in [%d, %d)", port, freePortLow, freePortHigh)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("FreePort's port %d does not bind: %v", port, err)
	}
	_ = ln.Close()
}
