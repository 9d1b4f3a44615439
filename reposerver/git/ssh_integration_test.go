//go:build integration

package git

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"net"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshServer serves the fixture's repositories to one authorized key by
// running git-upload-pack for each "exec" request.
type sshServer struct {
	addr       string
	hostSigner ssh.Signer
}

func newKeyPair(t *testing.T) (ssh.Signer, []byte) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return signer, pem.EncodeToMemory(block)
}

func newSSHServer(t *testing.T, f *fixture, authorized ssh.PublicKey) *sshServer {
	t.Helper()
	hostSigner, _ := newKeyPair(t)
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if string(key.Marshal()) == string(authorized.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(hostSigner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serveSSH(conn, cfg, f.root) })
		}
	})
	return &sshServer{addr: ln.Addr().String(), hostSigner: hostSigner}
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, root string) {
	defer func() { _ = conn.Close() }()
	_, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = ch.Close() }()
			for req := range chReqs {
				if req.Type != "exec" {
					_ = req.Reply(false, nil)
					continue
				}
				// Payload: uint32 length + "git-upload-pack '/app.git'".
				if len(req.Payload) < 4 {
					_ = req.Reply(false, nil)
					return
				}
				command := string(req.Payload[4:])
				repo, ok := strings.CutPrefix(command, "git-upload-pack ")
				if !ok {
					_ = req.Reply(false, nil)
					return
				}
				repo = path.Clean("/" + strings.Trim(repo, "'"))
				_ = req.Reply(true, nil)
				cmd := exec.Command("git-upload-pack", "--strict", filepath.Join(root, repo))
				cmd.Env = gitEnv(root)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				status := uint32(0)
				if err := cmd.Run(); err != nil {
					status = 1
				}
				_ = ch.CloseWrite()
				_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
				return
			}
		}()
	}
}

func TestSSH(t *testing.T) {
	if _, err := exec.LookPath("git-upload-pack"); err != nil {
		t.Skip("git-upload-pack not on PATH")
	}
	f := newFixture(t)
	clientSigner, clientPEM := newKeyPair(t)
	_, strangerPEM := newKeyPair(t)
	srv := newSSHServer(t, f, clientSigner.PublicKey())
	otherHost, _ := newKeyPair(t)
	knownHosts := []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, srv.hostSigner.PublicKey()) + "\n")
	wrongHosts := []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, otherHost.PublicKey()) + "\n")
	repoURL := "ssh://git@" + srv.addr + "/app.git"
	c := newTestClient(t)
	ctx := t.Context()

	good := &Credentials{SSHPrivateKey: clientPEM, SSHKnownHosts: knownHosts}
	got, err := c.ResolveRevision(ctx, repoURL, good, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if got != f.commits["c2"] {
		t.Errorf("ResolveRevision = %s, want %s", got, f.commits["c2"])
	}
	dir, release, err := c.Checkout(ctx, repoURL, good, f.commits["c3"], CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, "app.yaml")); got != "version: 2.0.0\n" {
		t.Errorf("app.yaml = %q", got)
	}
	release()

	if err := c.TestRepository(ctx, repoURL, &Credentials{SSHPrivateKey: clientPEM, Insecure: true}); err != nil {
		t.Errorf("insecure without known_hosts: %v", err)
	}
	if err := c.TestRepository(ctx, repoURL, &Credentials{SSHPrivateKey: clientPEM}); !errors.Is(err, ErrNoKnownHosts) {
		t.Errorf("no known_hosts: err = %v, want ErrNoKnownHosts", err)
	}
	err = c.TestRepository(ctx, repoURL, &Credentials{SSHPrivateKey: clientPEM, SSHKnownHosts: wrongHosts})
	if err == nil || !strings.Contains(err.Error(), "key mismatch") {
		t.Errorf("changed host key: err = %v, want a key mismatch", err)
	}
	err = c.TestRepository(ctx, repoURL, &Credentials{SSHPrivateKey: strangerPEM, SSHKnownHosts: knownHosts})
	if !errors.Is(err, ErrAuthentication) {
		t.Errorf("unknown client key: err = %v, want ErrAuthentication", err)
	}
	if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("error mentions key material: %v", err)
	}
}
