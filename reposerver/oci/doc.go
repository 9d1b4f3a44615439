// Package oci reads OCI registries for the repository server: the
// registry client that Helm OCI chart pulls share (NewRepository,
// HighestTag, FetchManifest, FetchBlob), and a Puller for OCI artifacts
// used as a manifest source, as Argo CD 3.1's OCI source:
//
//	source:
//	  repoURL: oci://registry.example.com/team/guestbook
//	  targetRevision: 1.2.0         # a tag, a semver constraint, or sha256:...
//	  path: overlays/prod           # a directory inside the artifact; "." its root
//
// Resolve turns the revision into the manifest's digest, the revision a
// render reports and caches by; Pull downloads the artifact's one content
// layer (a tar+gzip, MediaTypeLayer or MediaTypeHelmChart), verifies its
// size and digest, and unpacks it once per repository and digest into the
// cache directory, refusing entries and links that leave it and staying
// within Limits (archive.ErrTooLarge).
//
//	p, _ := oci.NewPuller(oci.Options{CacheDir: dir})
//	d, err := p.Resolve(ctx, "oci://registry.example.com/team/guestbook", auth, "^1.2")
//	root, err := p.Pull(ctx, "oci://registry.example.com/team/guestbook", auth, d)
//
// Credentials (Auth) go to the repository's registry host only.
package oci
