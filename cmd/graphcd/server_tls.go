package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/servercert"
)

// serverTLSOptions are the flags that choose how `graphcd server` serves
// TLS.
type serverTLSOptions struct {
	insecure          bool
	certFile, keyFile string
}

func (o *serverTLSOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.insecure, "insecure", false, "serve plain HTTP (behind a proxy or ingress that terminates TLS, or on loopback)")
	f.StringVar(&o.certFile, "tls-cert", "", "PEM certificate (chain) file to serve; read again when it changes (default: the Secret graphcd-server-tls, else a self-signed certificate kept in graphcd-secret)")
	f.StringVar(&o.keyFile, "tls-key", "", "PEM private key file of --tls-cert")
}

func (o *serverTLSOptions) validate(c *cobra.Command) error {
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("%s and %s must be given together", command.FlagOrigin(c, "tls-cert"), command.FlagOrigin(c, "tls-key"))
	}
	if o.insecure && o.certFile != "" {
		return fmt.Errorf("%s conflicts with %s: plain HTTP serves no certificate", command.FlagOrigin(c, "insecure"), command.FlagOrigin(c, "tls-cert"))
	}
	return nil
}

// config returns the TLS configuration to serve with, nil for --insecure.
func (o *serverTLSOptions) config(ctx context.Context, watch *kubewatch.Source, listen string, log *slog.Logger) (*tls.Config, error) {
	if o.insecure {
		return nil, nil
	}
	if o.certFile != "" {
		src, err := servercert.Files(o.certFile, o.keyFile, log)
		if err != nil {
			return nil, err
		}
		log.Info("serving TLS certificate", "from", o.certFile, "sha256", servercert.Fingerprint(src.Current()), "notAfter", src.Current().Leaf.NotAfter)
		return src.TLSConfig(), nil
	}
	hosts := servercert.Hosts(watch.Namespace())
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		hosts = append(hosts, host)
	}
	src, err := servercert.Secrets(ctx, watch, hosts, log)
	if err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	return src.TLSConfig(), nil
}
