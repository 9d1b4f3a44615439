//go:build !integration

package main

import (
	"os"
	"testing"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
)

func TestMain(m *testing.M) {
	// Commands run in this test binary (admin render) start their render
	// workers from it.
	renderworker.ExitIfWorker()
	os.Exit(m.Run())
}
