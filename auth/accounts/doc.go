// Package accounts serves graphcd's local accounts, stored as Argo CD stores
// them, so an Argo CD installation's accounts carry over by renaming
// argocd-cm and argocd-secret.
//
// Accounts are declared in the graphcd-cm ConfigMap of graphcd's namespace:
//
//	data:
//	  accounts.alice: apiKey, login   # capabilities; empty means login
//	  accounts.ci: apiKey             # API tokens only, no sign-in
//	  accounts.bob.enabled: "false"   # declared and disabled
//	  admin.enabled: "false"          # disables the built-in admin
//
// The built-in admin always exists with the login capability
// (accounts.admin may add apiKey). Passwords (bcrypt), their change times
// and the records of API tokens live in the graphcd-secret Secret, next to
// keys of other packages that writes here never drop:
//
//	data:
//	  admin.password: $2a$10$...            # bcrypt
//	  admin.passwordMtime: 2026-11-30T04:40:21Z
//	  admin.tokens: '[{"id":"...","iat":1764477621}]'
//	  accounts.alice.password: $2a$10$...
//	  accounts.alice.passwordMtime: 2026-11-30T04:40:21Z
//	  accounts.alice.tokens: '[{"id":"ci-1","iat":1764477621,"exp":1767069621}]'
//
// Use a Store, started once, for reads that cost no API call:
//
//	store := accounts.NewStore(watch) // a kubewatch.Source of graphcd's namespace
//	if err := store.Start(ctx); err != nil { ... }
//	if err := store.CheckPassword(ctx, user, pw); err != nil {
//		// ErrInvalidCredentials, whatever the reason
//	}
//	a, _ := store.Get(user)
//	if !a.TokenValid(issuedAt) { /* the password changed since: revoked */ }
//
// A password change writes the new hash and passwordMtime; every token of
// the account issued before then stops being valid (Account.TokenValid),
// which is how a change signs the user out everywhere. API tokens are
// recorded by id with AddToken and revoked with RemoveToken; HasToken
// answers from the cache.
//
// On first start, EnsureAdminPassword generates the admin's password, writes
// it to graphcd-initial-admin-secret (key "password") and its hash to
// graphcd-secret. It never regenerates it once admin.password exists.
//
// Malformed data (an unparsable tokens list or time, a non-boolean enabled
// flag, an unknown capability) affects only its account: it is reported in
// Account.Problems, without the stored value, and read as no tokens, a zero
// time, disabled, or the capability ignored.
package accounts
