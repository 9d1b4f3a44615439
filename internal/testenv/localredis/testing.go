package localredis

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// RunMain starts one Redis for a test package, runs its tests and stops
// it. Use it from TestMain; it returns the exit code for os.Exit. *into is
// set before the tests run.
func RunMain(m *testing.M, into **Server) int {
	srv, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "start redis: %v\n", err)
		return 1
	}
	*into = srv
	code := m.Run()
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop redis: %v\n", err)
		code = 1
	}
	return code
}
