package mcpserver_test

import (
	"context"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// TestReservedNamesAreTheGatewayTools holds capability.ReservedNames, the
// names a capability is never offered under, to the tools a connection
// registers before any capability: a new gateway tool that is not added
// there could be shadowed by an upstream server's tool of the same name.
func TestReservedNamesAreTheGatewayTools(t *testing.T) {
	e := newEnv(t, storages[0])
	e.scan(t)
	c := e.connect(t, principal("a1", "T0"), "")
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(capability.ReservedNames))
	if !slices.Equal(names, want) {
		t.Errorf("the gateway's tools are %q; capability.ReservedNames is %q", names, want)
	}
}
