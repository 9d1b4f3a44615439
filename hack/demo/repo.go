package main

import (
	"embed"
	"io/fs"

	"github.com/graphcd/graphcd/hack/demo/demorepo"
)

// sampleApps is the content of the demo repository. all: keeps files whose
// names start with "_" or "." should a sample gain one (Helm's _helpers.tpl).
//
//go:embed all:apps
var sampleApps embed.FS

// serveRepo commits the sample apps into a repository under dir and serves
// it over smart HTTP on loopback.
func serveRepo(dir string) (*demorepo.Repo, error) {
	samples, err := fs.Sub(sampleApps, "apps")
	if err != nil {
		return nil, err
	}
	return demorepo.Serve(dir, samples, "127.0.0.1:0")
}
