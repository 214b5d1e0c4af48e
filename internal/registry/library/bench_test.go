package library_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/skillgate/skillgate/internal/registry/library"
)

// BenchmarkSync measures a first sync (every skill copied) and a rescan
// of an unchanged library (one listing, nothing copied) of 1,000 skills of
// three files each, against the S3 server of scripts/setup-s3.sh:
//
//	go test ./internal/registry/library -run '^$' -bench Sync -benchtime 3x
func BenchmarkSync(b *testing.B) {
	for _, phase := range []string{"first", "unchanged"} {
		b.Run(phase, func(b *testing.B) {
			st := newS3(b)
			ctx := context.Background()
			for i := range 1000 {
				p := fmt.Sprintf("acme/skills/c%d/s%d/", i%10, i)
				put(b, st, p+"SKILL.md", fmt.Sprintf("---\nname: s%d\ndescription: Skill %d.\n---\nBody.\n", i, i))
				put(b, st, p+"references/a.md", "A reference.\n")
				put(b, st, p+"scripts/run.sh", "echo run\n")
			}
			dir := b.TempDir()
			lib, err := library.New(library.Options{Store: st, Dir: dir})
			if err != nil {
				b.Fatal(err)
			}
			if phase == "unchanged" {
				if _, _, err := lib.Sync(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if phase == "first" {
					b.StopTimer()
					lib, _ = library.New(library.Options{Store: st, Dir: b.TempDir()})
					b.StartTimer()
				}
				rep, _, err := lib.Sync(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if got := rep.Tenants[0].Skills; got != 1000 {
					b.Fatalf("%d skills", got)
				}
			}
		})
	}
}
