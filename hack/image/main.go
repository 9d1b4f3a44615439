// Command image assembles graphcd's container image without a container
// engine or a base image: a static graphcd for each platform, the CA
// certificates, an /etc/passwd naming the non-root user, and nothing else.
// It writes an OCI image layout (one index, one image per platform) and a
// `docker load`-able tarball per platform, and prints the index digest.
//
//	go run ./hack/image --out bin/image --version v0.3.0 --revision $(git rev-parse HEAD)
//
// The same inputs give the same bytes: binaries are built with -trimpath
// and without VCS stamping, and every file time and the image's creation
// time is --epoch (the commit's time by default, as SOURCE_DATE_EPOCH).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	opts := options{}
	var platforms, epoch, rootfs string
	flag.StringVar(&opts.out, "out", "bin/image", "directory for the OCI layout (oci/) and the per-platform docker tarballs")
	flag.StringVar(&rootfs, "rootfs", "", "write the image's files for the one --platforms entry to this directory instead (for the Dockerfile)")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	flag.StringVar(&opts.version, "version", "dev", "version stamped into graphcd and the image labels")
	flag.StringVar(&opts.revision, "revision", "", "VCS revision for graphcd and the labels (default: git rev-parse HEAD)")
	flag.StringVar(&opts.source, "source", defaultSource, "source repository URL for the labels")
	flag.StringVar(&epoch, "epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix time of every file and of the image (default: the commit's time)")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, p := range strings.Split(platforms, ",") {
		plat, err := parsePlatform(strings.TrimSpace(p))
		if err != nil {
			return err
		}
		opts.platforms = append(opts.platforms, plat)
	}
	if opts.revision == "" {
		opts.revision = gitOutput(ctx, "rev-parse", "HEAD")
	}
	if epoch == "" {
		epoch = gitOutput(ctx, "log", "-1", "--format=%ct")
	}
	if epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return fmt.Errorf("epoch %q: %w", epoch, err)
		}
		opts.created = time.Unix(sec, 0).UTC()
	}
	if rootfs != "" {
		if len(opts.platforms) != 1 {
			return fmt.Errorf("--rootfs takes one platform, got %d", len(opts.platforms))
		}
		return writeRootFS(ctx, rootfs, opts.platforms[0], opts)
	}
	res, err := build(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s (OCI layout) and %s\n", res.layout, strings.Join(res.tarballs, ", "))
	fmt.Println(res.digest)
	return nil
}

// gitOutput returns a git command's trimmed output, or "" outside a
// checkout.
func gitOutput(ctx context.Context, args ...string) string {
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
