//go:build !integration

package main

import (
	"context"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	// Commands run in this test binary (admin render) start their render
	// workers from it.
	if isRenderWorker() {
		os.Exit(execute(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
