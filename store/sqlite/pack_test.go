package sqlite

import (
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/store"
)

// FuzzPackListings checks that packed listings decode to what was packed,
// and that decoding arbitrary bytes fails cleanly instead of panicking.
func FuzzPackListings(f *testing.F) {
	f.Add("/r", "a/b", int64(5), "fSKILL.md\x00", "\x02\x00\x00\x00")
	f.Add("/", "x", int64(-1), "", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
	f.Fuzz(func(t *testing.T, root, rel string, mtime int64, entries, garbage string) {
		all := map[string]store.Listing{
			root:             {MTime: mtime, Entries: entries},
			root + "/" + rel: {MTime: mtime / 2, Entries: entries + rel},
		}
		packed, loose := packListings(root, all)
		if len(loose) != 0 {
			t.Fatalf("loose listings %v", loose)
		}
		got, err := unpackListings(root, string(packed), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("unpacked %v, want %v", got, all)
		}
		_, _ = unpackListings(root, garbage, nil)
	})
}
