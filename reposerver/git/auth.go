package git

import (
	"errors"
	"fmt"
	"os"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// ErrNoKnownHosts is returned for SSH URLs without known_hosts entries
// when host key checking has not been turned off explicitly.
var ErrNoKnownHosts = errors.New("ssh: no known_hosts given; refusing to connect without host key verification (set Insecure to skip it)")

// netOptions are the per-call transport settings handed to go-git, so no
// global transport is ever replaced and concurrent calls cannot race.
type netOptions struct {
	auth       transport.AuthMethod
	insecure   bool
	clientCert []byte
	clientKey  []byte
	caBundle   []byte
}

// netOptionsFor builds the authentication for one call to ep.
func netOptionsFor(ep *endpoint, creds *Credentials) (netOptions, error) {
	var c Credentials
	if creds != nil {
		c = *creds
	}
	switch ep.kind {
	case kindHTTP:
		return httpOptions(ep, c)
	case kindSSH:
		return sshOptions(ep, c)
	default:
		return netOptions{}, nil
	}
}

func httpOptions(ep *endpoint, c Credentials) (netOptions, error) {
	o := netOptions{insecure: c.Insecure, caBundle: c.CACert}
	if (len(c.TLSClientCert) > 0) != (len(c.TLSClientKey) > 0) {
		return o, errors.New("TLS client certificate and key must be given together")
	}
	o.clientCert, o.clientKey = c.TLSClientCert, c.TLSClientKey
	switch {
	case c.BearerToken != "":
		o.auth = &githttp.TokenAuth{Token: c.BearerToken}
	case c.Username != "" || c.Password != "":
		user := c.Username
		if user == "" {
			// Token-as-password hosts accept any non-empty user name.
			user = "git"
		}
		o.auth = &githttp.BasicAuth{Username: user, Password: c.Password}
	case ep.hasUserinfo:
		o.auth = &githttp.BasicAuth{Username: ep.user, Password: ep.password}
	}
	return o, nil
}

func sshOptions(ep *endpoint, c Credentials) (netOptions, error) {
	user := ep.user
	if user == "" {
		user = c.Username
	}
	if user == "" {
		user = "git"
	}
	hostKeys, algorithms, err := hostKeyCheck(ep, c)
	if err != nil {
		return netOptions{}, err
	}
	helper := gitssh.HostKeyCallbackHelper{HostKeyCallback: hostKeys, HostKeyAlgorithms: algorithms}
	switch {
	case len(c.SSHPrivateKey) > 0:
		keys, err := gitssh.NewPublicKeys(user, c.SSHPrivateKey, "")
		if err != nil {
			// The parser's message could quote key material; keep it out.
			return netOptions{}, errors.New("ssh: cannot parse private key")
		}
		keys.HostKeyCallbackHelper = helper
		return netOptions{auth: keys}, nil
	case c.Password != "":
		return netOptions{auth: &gitssh.Password{User: user, Password: c.Password, HostKeyCallbackHelper: helper}}, nil
	default:
		// Never fall back to an ssh-agent or ~/.ssh of the server process.
		return netOptions{}, errors.New("ssh: no private key or password given")
	}
}

// hostKeyCheck turns the given known_hosts lines into a strict host key
// callback plus the key algorithms to offer (so a host known only by its
// RSA key is not asked for ed25519).
func hostKeyCheck(ep *endpoint, c Credentials) (ssh.HostKeyCallback, []string, error) {
	if len(c.SSHKnownHosts) == 0 {
		if c.Insecure {
			return ssh.InsecureIgnoreHostKey(), nil, nil //nolint:gosec // explicitly requested by Credentials.Insecure
		}
		return nil, nil, ErrNoKnownHosts
	}
	f, err := os.CreateTemp("", "graphcd-known-hosts-*")
	if err != nil {
		return nil, nil, fmt.Errorf("ssh: write known_hosts: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.Write(c.SSHKnownHosts); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("ssh: write known_hosts: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, nil, fmt.Errorf("ssh: write known_hosts: %w", err)
	}
	db, err := gitssh.NewKnownHostsDb(f.Name())
	if err != nil {
		return nil, nil, fmt.Errorf("ssh: parse known_hosts: %w", err)
	}
	hostPort := ep.host
	if _, _, ok := cutPort(hostPort); !ok {
		hostPort += ":22"
	}
	return db.HostKeyCallback(), db.HostKeyAlgorithms(hostPort), nil
}

// cutPort splits "host:port" and "[v6]:port".
func cutPort(hp string) (host, port string, ok bool) {
	if len(hp) > 0 && hp[0] == '[' {
		end := 0
		for i := range hp {
			if hp[i] == ']' {
				end = i
				break
			}
		}
		if end > 0 && end+1 < len(hp) && hp[end+1] == ':' {
			return hp[1:end], hp[end+2:], true
		}
		return hp, "", false
	}
	for i := len(hp) - 1; i >= 0; i-- {
		if hp[i] == ':' {
			return hp[:i], hp[i+1:], true
		}
	}
	return hp, "", false
}
