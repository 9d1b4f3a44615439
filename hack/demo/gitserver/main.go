// Command gitserver serves the demo's sample apps as a git repository over
// smart HTTP until it is stopped: the git service of the docker compose
// demo (docker-compose.yml), where pods in the kind cluster clone it.
//
//	go run ./hack/demo/gitserver --apps hack/demo/apps --listen 0.0.0.0:8080
//
// The repository is at /demo.git, branch main; pushes are allowed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/graphcd/graphcd/hack/demo/demorepo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gitserver: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	apps := flag.String("apps", "hack/demo/apps", "directory of the sample apps to commit")
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve the repository on")
	dir := flag.String("dir", "", "directory for the working copy and the bare repository (default: a temporary one)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *dir == "" {
		tmp, err := os.MkdirTemp("", "graphcd-demo-git-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		*dir = tmp
	}
	repo, err := demorepo.Serve(*dir, os.DirFS(*apps), *listen)
	if err != nil {
		return err
	}
	defer repo.Close()
	fmt.Printf("serving %s (branch %s) on %s\n", *apps, demorepo.Branch, *listen)
	<-ctx.Done()
	return nil
}
