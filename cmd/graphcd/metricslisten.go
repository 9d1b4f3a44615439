package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/argocdmetrics"
)

// Where the roles without an HTTP listener of their own serve /metrics
// and /healthz by default (--metrics-listen); "0" serves neither.
const (
	defaultRepoServerMetricsListen = "127.0.0.1:8084"
	defaultCMPServerMetricsListen  = "127.0.0.1:8085"
	defaultChatopsMetricsListen    = "127.0.0.1:8086"
)

// metricsListener is the --metrics-listen flag of a role.
type metricsListener struct {
	addr        string
	argoCDNames bool
}

func (m *metricsListener) addFlags(c *cobra.Command, def string, argoCDNames bool) {
	c.Flags().StringVar(&m.addr, "metrics-listen", def, "address to serve /metrics and /healthz on; 0 serves neither")
	if argoCDNames {
		c.Flags().BoolVar(&m.argoCDNames, "metrics-argocd-names", false, "serve the metrics Argo CD also has under its argocd_ names too, for dashboards and alerts written for Argo CD")
	}
}

func (m *metricsListener) validate(ctx context.Context, c *cobra.Command) error {
	if m.addr == "0" {
		return nil
	}
	if err := checkListen(ctx, m.addr); err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", command.FlagOrigin(c, "metrics-listen"), err)}
	}
	return nil
}

// serve serves the Go and process metrics and cs on /metrics until ctx
// ends; it returns once listening.
func (m *metricsListener) serve(ctx context.Context, c *cobra.Command, log *slog.Logger, cs ...prometheus.Collector) error {
	if m.addr == "0" {
		return nil
	}
	reg := apiserver.NewRegistry()
	for _, col := range cs {
		if err := reg.Register(col); err != nil {
			return fmt.Errorf("register metrics: %w", err)
		}
	}
	on := &atomic.Bool{}
	on.Store(m.argoCDNames)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(argocdmetrics.Gatherer{Gatherer: reg, On: on}, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError), ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("%s: %w", command.FlagOrigin(c, "metrics-listen"), err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	log.Info("serving metrics", "addr", lis.Addr().String())
	return nil
}
