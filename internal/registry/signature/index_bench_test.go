package signature

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// BenchmarkVerifyIndex verifies a signed index of 10,000 skills (one in
// ten with a manifest.json): what a scan of a first_party root pays once,
// against one signature per skill.
func BenchmarkVerifyIndex(b *testing.B) {
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	id, _ := KeyID(priv.Public().(ed25519.PublicKey))
	subs := make([]Subject, 10_000)
	p := IndexPredicate{Signer: "bench", KeyID: id, Trust: TrustFirstParty, Manifests: map[string]string{}}
	for i := range subs {
		subs[i] = Subject{Name: fmt.Sprintf("category-%02d/skill-%05d", i%50, i), Digest: fmt.Sprintf("sha256:%064x", i)}
		if i%10 == 0 {
			p.Manifests[subs[i].Name] = fmt.Sprintf("sha256:%064x", i+1)
		}
	}
	payload, err := indexStatement(subs, p)
	if err != nil {
		b.Fatal(err)
	}
	es, _ := dsse.NewEnvelopeSigner(signer{priv: priv, id: id})
	env, err := es.SignPayload(context.Background(), PayloadType, payload)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := json.Marshal(env)
	kr, err := NewKeyring([]TrustedKey{{Name: "bench", Public: priv.Public().(ed25519.PublicKey), Trust: []string{TrustFirstParty}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ix, err := kr.VerifyIndex(context.Background(), data, TrustFirstParty, p.SignedAt)
		if err != nil || ix.Len() != len(subs) {
			b.Fatal(ix, err)
		}
	}
}
