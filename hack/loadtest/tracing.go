package main

import (
	"context"
	"strconv"

	"github.com/graphcd/graphcd/internal/testenv/otlpsink"
)

// traceSink runs the OpenTelemetry Collector's OTLP receiver in the
// harness (outside graphcd's process, whose CPU is measured) for
// --trace-ratio: graphcd sends its spans there at that sampling ratio.
type traceSink struct {
	sink *otlpsink.Sink
}

// startTraceSink starts the receiver when ratio is 0 to 1, and returns
// nil (tracing off) when it is negative.
func startTraceSink(ctx context.Context, ratio float64) (*traceSink, error) {
	if ratio < 0 {
		return nil, nil
	}
	s, err := otlpsink.Start(ctx, otlpsink.Options{CountOnly: true})
	if err != nil {
		return nil, err
	}
	return &traceSink{sink: s}, nil
}

// serverArgs are the flags that point graphcd server at the receiver.
func (t *traceSink) serverArgs(ratio float64) []string {
	if t == nil {
		return nil
	}
	return []string{"--otlp-address", t.sink.Addr, "--otlp-insecure", "--otlp-sampling-ratio", strconv.FormatFloat(ratio, 'f', -1, 64)}
}

// spans returns how many spans arrived; -1 without tracing.
func (t *traceSink) spans() int {
	if t == nil {
		return -1
	}
	return t.sink.Count()
}

func (t *traceSink) stop() {
	if t != nil {
		_ = t.sink.Close(context.Background())
	}
}
