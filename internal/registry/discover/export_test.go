package discover

import (
	"sort"
	"strings"
)

// VerifyRelForTest reports whether a record may name rel as a directory.
func VerifyRelForTest(rel string) bool { return validRel(rel) }

// recordListingsForTest returns the listings of a record in its order,
// and its state.
func recordListingsForTest(rec, root string) ([]dirListing, string) {
	r, err := readRecord(strings.NewReader(rec), root)
	if err != nil {
		panic(err)
	}
	sec, err := readSection(r.r, "listings")
	if err != nil {
		panic(err)
	}
	sr := stateReader{s: sec}
	var out []dirListing
	for n := sr.count(3); n > 0; n-- {
		rel := sr.str()
		out = append(out, dirListing{rel: rel, listing: listing{mtime: sr.varint(), entries: sr.str()}})
	}
	return out, r.state
}

// ListingsForTest returns the directories a record keeps listings of, in
// its order, joined by commas.
func ListingsForTest(rec string) string {
	root := stateReader{s: rec[len(recordMagic):]}
	ls, _ := recordListingsForTest(rec, root.str())
	var rels []string
	for _, l := range ls {
		rels = append(rels, l.rel)
	}
	return strings.Join(rels, ",")
}

// AddGhostForTest returns rec with a regular file name added to the
// listing of rel.
func AddGhostForTest(rec, root, rel, name string) string {
	ls, state := recordListingsForTest(rec, root)
	for i := range ls {
		if ls[i].rel == rel {
			es := append(decodeEntries(ls[i].entries), entry{name: name, typ: 0})
			sort.Slice(es, func(a, b int) bool { return es[a].name < es[b].name })
			ls[i].entries = encodeEntries(es)
		}
	}
	return string(encodeRecord(root, ls, []byte(state)))
}

// HasStateForTest reports whether a record holds a walk's state.
func HasStateForTest(rec, root string) bool {
	if rec == "" {
		return false
	}
	_, state := recordListingsForTest(rec, root)
	return state != ""
}
