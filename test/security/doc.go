// Package security is graphcd's security test suite: the classes of attack
// Argo CD has had advisories for, each sent as a hostile tenant would send
// it to a running `graphcd server` (the real binary, on a local
// kube-apiserver, with local accounts, RBAC and a git server), each
// asserting the refusal, its error text, and that nothing was written.
// docs/security.md keeps the table of the cases; TestCaseTable keeps the
// two in step.
package security
