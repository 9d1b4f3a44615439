// Package terminal serves the console's web terminal: a websocket on
// which a user runs a shell in a container of one of an application's
// pods, as `kubectl exec -it` would.
//
// The socket is opened with the container in its query and is
// authenticated as the GraphQL websocket is (the session cookie, or a
// bearer token from scripts), from the server's own origin or an allowed
// one:
//
//	GET /api/terminal?appNamespace=graphcd&app=web&namespace=web&pod=web-0&container=nginx&shell=sh
//
// Each side sends JSON text messages, Argo CD's terminal protocol:
//
//	client -> server  {"operation": "stdin", "data": "ls\r"}
//	client -> server  {"operation": "resize", "rows": 40, "cols": 120}
//	server -> client  {"operation": "stdout", "data": "bin  etc  ..."}
//
// A terminal needs graphcd-cm's exec.enabled set to "true", and the
// caller needs the RBAC permission "exec, create, <project>/<app>" on an
// application whose resource tree holds the pod. The shells are tried in
// the order of exec.shells (default bash, sh, powershell, cmd): the first
// that starts serves the session. The session ends when the shell exits,
// when the caller's token expires or is revoked, when a policy change
// takes the permission away, after IdleTimeout without input, or when
// the server stops; the socket is then closed with a code and a reason
// (see the Close* codes). Every session leaves two Events on its
// application: who opened it on which container, and when and why it
// ended.
package terminal
