package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// profileListener is the --profile-listen flag of a daemon: Go's runtime
// profiles (net/http/pprof) on a listener of their own, off by default.
// They tell where memory and CPU go, and show the goroutines' stacks, so
// the listener should stay on loopback or behind a port-forward.
type profileListener struct{ addr string }

func (p *profileListener) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&p.addr, "profile-listen", "",
		"address to serve Go's runtime profiles on (/debug/pprof/), e.g. 127.0.0.1:6060; empty serves none. Keep it on loopback: profiles show the process's stacks")
}

// serve serves the profiles until ctx ends; it returns once listening.
func (p *profileListener) serve(ctx context.Context, c *cobra.Command, log *slog.Logger) error {
	if p.addr == "" {
		return nil
	}
	if err := checkListen(ctx, p.addr); err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", command.FlagOrigin(c, "profile-listen"), err)}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", p.addr)
	if err != nil {
		return fmt.Errorf("%s: %w", command.FlagOrigin(c, "profile-listen"), err)
	}
	// No write timeout: a CPU profile or trace takes the seconds asked for.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("profile listener stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info("serving runtime profiles", "address", lis.Addr().String())
	return nil
}
