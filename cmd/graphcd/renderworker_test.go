package main

import "os"

// isRenderWorker reports whether this test binary was started as a render
// worker by a command the tests ran in process (see TestMain).
func isRenderWorker() bool {
	return len(os.Args) > 1 && os.Args[1] == renderWorkerCommand
}
