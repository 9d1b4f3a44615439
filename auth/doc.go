// Package auth will hold sessions (JWT), local accounts, Casbin RBAC in Argo
// CD's policy format, and the embedded Dex SSO. The package is empty until
// the Auth issue lands; resolvers already take the principal from the
// request context so authorization drops in without reshaping the API.
package auth
