package session

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// benchIssuer is an issuer whose memory revocation list holds n entries,
// as a busy server's would.
func benchIssuer(b *testing.B, revoked int) (*Issuer, string) {
	b.Helper()
	rev := NewMemoryRevocations()
	for i := range revoked {
		if err := rev.Revoke(b.Context(), fmt.Sprint("revoked-", i), time.Now().Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
	i := NewIssuer(StaticKeys{Current: GenerateKey(), VerifyOnly: []Key{GenerateKey()}}, Options{Revocations: rev})
	tok, _, err := i.Issue(b.Context(), Template{Subject: "alice", Groups: []string{"my-org:team-alpha", "my-org:team-beta"}, Email: "alice@example.com", Kind: KindSSO})
	if err != nil {
		b.Fatal(err)
	}
	return i, tok
}

// BenchmarkVerify is the cost every API request pays for its token.
func BenchmarkVerify(b *testing.B) {
	i, tok := benchIssuer(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := i.Verify(b.Context(), tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyParallel(b *testing.B) {
	i, tok := benchIssuer(b, 10000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := i.Verify(b.Context(), tok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkVerifyRejected is what a flood of forged tokens costs.
func BenchmarkVerifyRejected(b *testing.B) {
	i, _ := benchIssuer(b, 0)
	_, tok := benchIssuer(b, 0) // signed by another key
	b.ReportAllocs()
	for b.Loop() {
		if _, err := i.Verify(b.Context(), tok); err == nil {
			b.Fatal("forged token accepted")
		}
	}
}

func BenchmarkIssue(b *testing.B) {
	i, _ := benchIssuer(b, 0)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := i.Issue(b.Context(), Template{Subject: "alice"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyUncached is the first Verify of a token, before the
// verified cache knows it.
func BenchmarkVerifyUncached(b *testing.B) {
	i, tok := benchIssuer(b, 10000)
	sum := sha256.Sum256([]byte(tok))
	b.ReportAllocs()
	for b.Loop() {
		i.verified.drop(sum)
		if _, err := i.Verify(b.Context(), tok); err != nil {
			b.Fatal(err)
		}
	}
}
