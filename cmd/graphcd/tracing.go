package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/tracing"
	"github.com/graphcd/graphcd/internal/version"
)

// tracingFlushTimeout bounds the export of the last spans at exit.
const tracingFlushTimeout = 5 * time.Second

// tracingOptions are the OpenTelemetry flags of the long-running roles
// (server, controller, repo-server). See docs/tracing.md.
type tracingOptions struct {
	address  string
	insecure bool
	ratio    float64
	headers  string
	attrs    string
}

func (o *tracingOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.address, "otlp-address", "", "OTLP/gRPC collector host:port to send traces to (default: tracing off)")
	f.BoolVar(&o.insecure, "otlp-insecure", false, "send traces to --otlp-address without TLS")
	f.Float64Var(&o.ratio, "otlp-sampling-ratio", tracing.DefaultSamplingRatio,
		"share (0 to 1) of the traces started here that are sampled; a trace sampled by its caller always is")
	f.StringVar(&o.headers, "otlp-headers", "", "key=value,... headers sent with every export (say, a collector's authorization)")
	f.StringVar(&o.attrs, "otlp-attrs", "", "key:value,... (or key=value) attributes added to every span's resource")
}

// start sets up tracing for the role service and returns the function that
// flushes the last spans; with no --otlp-address it does nothing.
func (o *tracingOptions) start(ctx context.Context, c *cobra.Command, service string, log *slog.Logger) (func(), error) {
	if o.address == "" {
		return func() {}, nil
	}
	headers, err := tracing.ParsePairs(o.headers, "=")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "otlp-headers"), err)
	}
	attrs, err := tracing.ParsePairs(o.attrs, ":=")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "otlp-attrs"), err)
	}
	if o.ratio < 0 || o.ratio > 1 {
		return nil, fmt.Errorf("%s: must be between 0 and 1, got %g", command.FlagOrigin(c, "otlp-sampling-ratio"), o.ratio)
	}
	shutdown, err := tracing.Start(ctx, tracing.Options{
		Address: o.address, Insecure: o.insecure, SamplingRatio: o.ratio, Headers: headers, Attributes: attrs,
		Service: service, Version: version.Get().Version,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "otlp-address"), err)
	}
	log.Info("sending traces", "otlp-address", o.address, "sampling-ratio", o.ratio)
	return func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(flushCtx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}, nil
}

// traceKubernetes makes the requests of the clients made from cfg from
// now on carry the trace they are made in (see tracing.WrapKubernetes).
func traceKubernetes(cfg *rest.Config) {
	if tracing.Enabled() {
		cfg.Wrap(tracing.WrapKubernetes)
	}
}
