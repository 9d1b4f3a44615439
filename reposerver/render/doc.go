// Package render holds what every manifest renderer of the repository server
// shares: the Request a renderer gets, the Limits that bound its output, a
// symlink-safe path resolver that keeps reads inside the checked-out
// repository, and Decode, which turns rendered YAML or JSON into
// Kubernetes objects.
//
// The renderers themselves live in sub-packages (directory, helm,
// kustomize, plugin), each with a function of the form
//
//	func Render(ctx context.Context, req render.Request) ([]*unstructured.Unstructured, error)
//
// Everything a repository holds is treated as hostile:
//
//   - Paths from a repository go through ResolveInRoot, which follows
//     symlinks one component at a time and fails with ErrOutsideRoot as soon
//     as one leaves the root, instead of silently clamping the path.
//   - Decode enforces Limits (one document, and all documents of a call)
//     and fails with ErrTooLarge; what YAML aliases expand to is bounded by
//     the document limit too, so a kilobyte "billion laughs" document fails
//     instead of eating the memory of the process.
//   - Errors name files relative to the repository root, never by their
//     absolute path on the server.
//
// Example:
//
//	objs, err := render.Decode("apps/web/deploy.yaml", data, render.Limits{})
//	if errors.Is(err, render.ErrTooLarge) {
//		// tell the user which limit to raise
//	}
package render
