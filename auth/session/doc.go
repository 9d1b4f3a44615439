// Package session issues and verifies graphcd's tokens: JWTs signed with
// HMAC-SHA256 by a server key, revocable before they expire.
//
// Every token carries iss, aud, sub, iat, nbf, exp and jti, plus the
// subject's SSO groups, email and the Kind of token (a login session, an
// SSO session, an account's API token or a project role token whose
// subject is "proj:<project>:<role>"). Verify accepts a token only when
//
//   - its alg is HS256 (none, RS256, HS512 ... are rejected),
//   - its kid names one of the server's keys and the signature matches,
//   - iss and aud are this server's, and sub, jti and exp are set,
//   - it is current: exp, nbf and iat hold within Leeway (30s), and
//   - its jti is not on the revocation list,
//
// and says why otherwise with an error wrapping ErrInvalid, ErrExpired or
// ErrRevoked; the token itself never appears in an error.
//
// Verify runs on every API request. It remembers the tokens it has
// verified (by SHA-256, up to 8192 of them), so a token seen before costs
// a hash, a map lookup, the time checks and the revocation lookup (about
// 1µs; the first time, with the JSON decoding, about 10µs; see
// BenchmarkVerify*). The signing key, the times and the revocation list
// are checked on every call, cached or not.
//
// # Keys
//
// Keys live in the Secret graphcd-secret of graphcd's namespace: the data
// key server.secretkey signs and verifies, server.secretkey.previous only
// verifies. SecretKeys reads them through an informer, so Verify costs no
// API call, and creates the current key on first use. RotateKey (behind
// `graphcd admin rotate-session-key`) moves the current key to previous
// and makes a new one: tokens signed before the rotation keep working until
// they expire or until the next rotation, so nobody is logged out at once.
// Rotating twice in a row logs everyone out. Other data keys of the Secret
// (password hashes) are left alone.
//
// # Revocation
//
// Revoke puts a token's jti on a Revocations list until the token would
// expire anyway. MemoryRevocations serves one replica. RedisRevocations
// shares the list between replicas: each revocation is a Redis key with a
// TTL plus a message on a pub/sub channel, and every replica keeps a local
// copy (filled by SCAN whenever its subscription starts, then kept by the
// channel), so Verify does no Redis round trip while the subscription is
// up; while it is down Verify asks Redis (one EXISTS). Watch ties a
// GraphQL subscription to its token: the context it returns ends when the
// token expires or is revoked, in any replica.
//
// API and project role tokens are also listed by ID on their account or
// AppProject; removing one from there and revoking its ID is the caller's
// job. Such tokens "without expiry" get exp = iat + NoExpiryTTL (ten
// years), since exp is always required.
//
// # Use
//
//	keys := session.NewSecretKeys(watch) // a kubewatch.Source of graphcd's namespace
//	if err := keys.Start(ctx); err != nil { ... }
//	rev := session.NewRedisRevocations(redisClient, "")
//	go rev.Run(ctx)
//	issuer := session.NewIssuer(keys, session.Options{Revocations: rev})
//
//	token, claims, err := issuer.Issue(ctx, session.Template{Subject: "alice", Kind: session.KindSession})
//	claims, err = issuer.Verify(ctx, token)
//	switch {
//	case errors.Is(err, session.ErrExpired), errors.Is(err, session.ErrRevoked), errors.Is(err, session.ErrInvalid):
//		// 401: log in again
//	case err != nil:
//		// 500: keys or revocation list unavailable
//	}
//	err = issuer.Revoke(ctx, claims) // logout
//
//	ctx, cancel := issuer.Watch(ctx, claims) // a subscription's context
//	defer cancel()
package session
