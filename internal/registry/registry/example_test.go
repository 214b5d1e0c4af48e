package registry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillgate/skillgate/internal/registry/discover"
	"github.com/skillgate/skillgate/internal/registry/registry"
	"github.com/skillgate/skillgate/internal/storage/store/sqlite"
)

// A scan finds the skills under a root, indexes the valid ones and says
// exactly why a bad one was rejected; a second scan of an unchanged tree
// parses nothing.
func ExampleRegistry_Scan() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "skillgate-example")
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "skills")
	for path, text := range map[string]string{
		"pdf/SKILL.md":         "---\nname: pdf\ndescription: Fill and merge PDF forms.\n---\nUse scripts/fill.py.\n",
		"legal/nda/SKILL.md":   "---\nname: nda\ndescription: Review an NDA clause by clause.\n---\nRead the clause.\n",
		"broken/SKILL.md":      "---\nname: broken\n---\nNo description.\n",
		"pdf/scripts/fill.py":  "print('filled')\n",
		"legal/nda/clauses.md": "# Clauses\n",
	} {
		_ = os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o755)
		_ = os.WriteFile(filepath.Join(root, path), []byte(text), 0o644)
	}

	db, err := sqlite.Open(ctx, filepath.Join(dir, "skillgate.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	reg := registry.New(db, registry.Options{})

	roots := []discover.Root{{Path: root, Scope: discover.ScopeProject}}
	rep, err := reg.Scan(ctx, roots, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("found %d, valid %d, rejected %d\n", rep.Skills, rep.Valid, rep.Rejected)
	for _, r := range rep.Rejections {
		fmt.Printf("rejected %s: %s\n", r.Name, r.Errors[0])
	}
	entries, _ := reg.List(ctx, registry.Query{})
	for _, e := range entries {
		fmt.Printf("%s: %s (%s)\n", e.Key, e.Description, e.State())
	}
	rep, _ = reg.Scan(ctx, roots, nil)
	fmt.Printf("again: parsed %d, unchanged %d\n", rep.Parsed, rep.Unchanged)
	// Output:
	// found 3, valid 2, rejected 1
	// rejected broken: Missing required field in frontmatter: description
	// legal/nda: Review an NDA clause by clause. (enabled)
	// pdf: Fill and merge PDF forms. (enabled)
	// again: parsed 0, unchanged 3
}
