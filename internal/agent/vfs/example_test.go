package vfs_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// One session's filesystem: a workspace, then a skill loaded and read.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "vfs-example")
	defer os.RemoveAll(dir)
	st, _ := local.Open(dir, nil)
	defer st.Close()

	prefix, _ := bucket.SkillPrefix("acme", "escrituras", "compraventa")
	body := "# Compraventa\nLee las cláusulas.\n"
	_ = st.Put(ctx, prefix+"SKILL.md", strings.NewReader(body), int64(len(body)))

	ws, _ := vfs.WorkspaceMount(st, "acme", "session-1")
	fsys, _ := vfs.New(vfs.Options{Mounts: []vfs.Mount{ws}})

	l, _ := fsys.LsInfo(ctx, "/")
	fmt.Println(vfs.FormatLs(l))

	_ = fsys.SetSkills([]vfs.SkillMount{{Name: "compraventa", Store: st, Prefix: prefix}})
	l, _ = fsys.LsInfo(ctx, "/")
	fmt.Println(vfs.FormatLs(l))

	text, _ := fsys.Read(ctx, "/skills/compraventa/SKILL.md", 0, 0)
	fmt.Println(text)

	_, err := fsys.Read(ctx, "/skills/hipoteca/SKILL.md", 0, 0)
	fmt.Println(err)
	// Output:
	// ['/workspace/']
	// ['/skills/', '/workspace/']
	//      1	# Compraventa
	//      2	Lee las cláusulas.
	// Error: File '/skills/hipoteca/SKILL.md' not found
}
