package credential_test

import (
	"fmt"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
	"github.com/skillgate/skillgate/internal/upstream/credential"
	"github.com/skillgate/skillgate/internal/upstream/mcpclient"
)

// BenchmarkBearer is the store's share of a call to a remote server: the
// token and the account, with a full store (MaxConnections connections
// over 256 tenants and 4 providers).
func BenchmarkBearer(b *testing.B) {
	ctx := b.Context()
	s, err := credential.Open(ctx, b.TempDir(), credential.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range credential.MaxConnections {
		k := key(fmt.Sprintf("t%03d", i%256), "", fmt.Sprintf("p%d", i/256), "work")
		if err := s.PutConnection(ctx, credential.Connection{ConnectionKey: k, OAuth: grant("x")}); err != nil {
			b.Fatal(err)
		}
	}
	d := mcpclient.ServerDecl{ID: "p3", Transport: capability.TransportHTTP, URL: "https://mcp.example.com/mcp"}
	who := capability.Principal{Tenant: "t200", Agent: "a"}
	b.ReportAllocs()
	for b.Loop() {
		if tok, err := s.Bearer(who, d, ""); err != nil || tok == "" {
			b.Fatal(tok, err)
		}
		if use, err := s.Use(who, d, ""); err != nil || use.Account == "" {
			b.Fatal(use, err)
		}
	}
}
