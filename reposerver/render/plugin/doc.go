// Package plugin runs Argo CD config management plugins (CMPs) the sidecar
// way: a plugin server (Serve, behind `graphcd cmp-server`) runs next to
// the repository server, reads an Argo CD plugin.yaml and listens on a
// Unix socket; the repository server renders through it with Render.
//
// A plugin.yaml is Argo CD's ConfigManagementPlugin (apiVersion
// argoproj.io/v1alpha1, or graphcd.io/v1alpha1):
//
//	apiVersion: argoproj.io/v1alpha1
//	kind: ConfigManagementPlugin
//	metadata:
//	  name: cue
//	spec:
//	  version: v1.0           # the plugin is then called "cue-v1.0"
//	  init:
//	    command: [sh, -c, "cue mod tidy"]
//	  generate:
//	    command: [sh, -c, "cue export --out yaml ./..."]
//	  discover:
//	    find:
//	      glob: "**/*.cue"
//	  parameters:
//	    static:
//	      - name: env
//	        string: dev
//
// Each call gets the whole repository (without .git) as a tar stream,
// unpacked into a fresh private directory that is removed afterwards.
// Init, then generate, run in the app directory; generate's stdout is the
// manifests (YAML or JSON), decoded with render.Decode and its Limits.
// Discovery uses the first rule set: discover.fileName (a filepath.Glob
// pattern relative to the app directory), discover.find.glob (the same
// with "**"), or discover.find.command (run in the repository root; exit 0
// with output claims the app). An application names a plugin with
// spec.source.plugin.name; without a name, the first plugin (by socket
// name) whose discovery claims the app renders it. A named plugin with
// discovery rules must also be claimed by them, as in Argo CD.
//
// Commands see an environment built from scratch, never the server's:
//
//   - PATH (the server's), HOME and TMPDIR (a directory of the call);
//   - Argo CD's build environment: ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE,
//     ARGOCD_APP_PROJECT_NAME, ARGOCD_APP_REVISION (and _SHORT,
//     _SHORT_8), ARGOCD_APP_SOURCE_PATH, ARGOCD_APP_SOURCE_REPO_URL,
//     ARGOCD_APP_SOURCE_TARGET_REVISION, KUBE_VERSION, KUBE_API_VERSIONS;
//   - every spec.source.plugin.env entry, only as ARGOCD_ENV_<name> and
//     GRAPHCD_ENV_<name>, with $VAR references to the build environment
//     expanded, so an Application can never set PATH or LD_PRELOAD;
//   - spec.source.plugin.parameters as JSON in ARGOCD_APP_PARAMETERS and
//     as PARAM_<NAME> (strings), PARAM_<NAME>_<i> (arrays) and
//     PARAM_<NAME>_<KEY> (maps), names upper-cased with every other
//     character than A-Z, 0-9 and _ turned into _;
//   - server variables the operator lists in ServerOptions.PassEnv.
//
// Hostile input is bounded:
//
//   - The received archive may hold only regular files, directories and
//     relative symlinks that stay inside it; absolute or ".." names,
//     entries below a symlink, duplicates, hard links and device files
//     fail the call. File sizes are bounded by MaxRepoSize (200 MiB),
//     entries by MaxRepoFiles.
//   - Each command runs in its own process group. The group is killed
//     when the call's Timeout (90 s) passes or the caller goes away, when
//     generate's stdout passes MaxOutputSize (100 MiB, or the client's
//     Limits.MaxCombinedSize if lower), and after the command exits, so
//     nothing it started in the background survives the call.
//   - A failing command's error carries the last 4 KiB of its stderr, with
//     the server's directories replaced by "." and "$WORKDIR".
//   - The socket is created with mode 0600.
//
// The protocol is HTTP/1.1 over the Unix socket (see wire.go); the
// client makes one connection per call.
//
// Example, the sidecar:
//
//	err := plugin.Serve(ctx, plugin.ServerOptions{
//		Config:    "/home/argocd/cmp-server/config/plugin.yaml",
//		SocketDir: "/home/argocd/cmp-server/plugins",
//	})
//
// and the repository server:
//
//	objs, err := plugin.Render(ctx, req, plugin.ClientOptions{SocketDir: "/home/argocd/cmp-server/plugins"})
//	if errors.Is(err, plugin.ErrNoPlugin) {
//		// no plugin of that name, or none claims the app
//	}
package plugin
