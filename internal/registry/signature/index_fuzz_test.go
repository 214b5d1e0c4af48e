package signature_test

import (
	"errors"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/signature"
)

// FuzzVerifyIndex feeds arbitrary statements, signed with a trusted key,
// to the index verifier: the statement's reader must refuse what is not a
// well-formed index with one of the verifier's reasons, never panic, and
// list only what an index may list. The committed corpus
// (testdata/fuzz/FuzzVerifyIndex) holds a valid index and the hostile
// shapes of TestVerifyIndexRefusals.
func FuzzVerifyIndex(f *testing.F) {
	f.Add([]byte(statement(f, subject("a", 1)+","+subject("b/c", 2), "")))
	kr, err := signature.NewKeyring([]signature.TrustedKey{{Name: "k", Public: pub(key(1)), Trust: []string{signature.TrustFirstParty}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ix, err := kr.VerifyIndex(ctx, signedIndex(t, key(1), string(payload)), signature.TrustFirstParty, t0)
		if err != nil {
			if !errors.Is(err, signature.ErrMalformed) && !errors.Is(err, signature.ErrUntrustedKey) {
				t.Fatalf("error without a reason: %v", err)
			}
			return
		}
		if ix.Len() < 1 || ix.Len() > signature.MaxIndexSubjects || ix.KeyName != "k" {
			t.Fatalf("accepted an index of %d subjects by %q", ix.Len(), ix.KeyName)
		}
		for _, bad := range []string{"", "..", "/", "../a", "a/../b", ".git", "a/", "/a"} {
			if ix.Lists(bad) {
				t.Fatalf("accepted an index that lists %q", bad)
			}
		}
	})
}
