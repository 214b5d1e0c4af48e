package vfs_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
	"github.com/skillgate/skillgate/internal/storage/blob"
	"github.com/skillgate/skillgate/internal/storage/blob/blobtest"
	"github.com/skillgate/skillgate/internal/storage/blob/local"
	"github.com/skillgate/skillgate/internal/storage/bucket"
)

// storeKind is one blob implementation the vfs suite runs over.
type storeKind struct {
	name string
	new  func(t testing.TB) blob.Store
}

func newLocal(t testing.TB) blob.Store {
	t.Helper()
	st, err := local.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newS3 returns a store over a fresh prefix of the bucket started by
// scripts/setup-s3.sh; the prefix is emptied when the test ends.
func newS3(t testing.TB) blob.Store {
	t.Helper()
	return blobtest.S3(t, "vfs")
}

// storeKinds lists the stores the suite runs over: local always, S3 when
// SKILLGATE_TEST_S3_ENDPOINT is set (see scripts/setup-s3.sh).
var storeKinds = []storeKind{{"local", newLocal}, {"s3", newS3}}

// forEachStore runs fn as a parallel subtest per store kind; the S3 subtest
// skips, saying why, when no S3 server is configured.
func forEachStore(t *testing.T, fn func(t *testing.T, st blob.Store)) {
	t.Helper()
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			if k.name == "s3" && os.Getenv("SKILLGATE_TEST_S3_ENDPOINT") == "" {
				t.Skip("SKILLGATE_TEST_S3_ENDPOINT is unset; run `eval \"$(scripts/setup-s3.sh)\"` to test against a real S3 server")
			}
			t.Parallel()
			fn(t, k.new(t))
		})
	}
}

func put(t testing.TB, st blob.Store, key, content string) {
	t.Helper()
	if err := st.Put(context.Background(), key, strings.NewReader(content), int64(len(content))); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

// The seed 003 fixture.
const (
	tenant       = "acme"
	skillMD      = "---\nname: compraventa\ndescription: Escrituras de compraventa de inmuebles\ncategory: escrituras\n---\n# Compraventa\n\nLee disclosure_clausulas.md antes de redactar.\n"
	disclosureMD = "# Cláusulas\n\n1. Precio y forma de pago.\n2. Cargas y gravámenes.\n"
	ejemploMD    = "# Ejemplo\n\nEscritura de compraventa otorgada en Madrid.\n"
	hipotecaMD   = "---\nname: hipoteca\ndescription: Escrituras de hipoteca\n---\n# Hipoteca secreta\n"
	otherCVMD    = "---\nname: compraventa\ndescription: Contratos privados de compraventa\n---\n# Contrato privado\n"
	ticketMD     = "Ticket T-1: compraventa de un piso en Madrid.\n"
)

// pdfBytes is a small binary PDF-like file (NUL bytes after the header).
var pdfBytes = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\x00\x00\x01\x02endobj\n"

func skillPrefix(t testing.TB, category, name string) string {
	t.Helper()
	p, err := bucket.SkillPrefix(tenant, category, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seed writes the skill library of seed 003 and a ticket into st.
func seed(t testing.TB, st blob.Store) {
	t.Helper()
	cv := skillPrefix(t, "escrituras", "compraventa")
	put(t, st, cv+"SKILL.md", skillMD)
	put(t, st, cv+"disclosure_clausulas.md", disclosureMD)
	put(t, st, cv+"resources/plantilla.pdf", pdfBytes)
	put(t, st, cv+"resources/ejemplo.md", ejemploMD)
	put(t, st, skillPrefix(t, "escrituras", "hipoteca")+"SKILL.md", hipotecaMD)
	put(t, st, skillPrefix(t, "contratos", "arrendamiento")+"SKILL.md", "# Arrendamiento\n")
	put(t, st, skillPrefix(t, "contratos", "compraventa")+"SKILL.md", otherCVMD)
	put(t, st, tenant+"/tickets/T-1/ticket.md", ticketMD)
}

// newSession returns the filesystem of one session over st: /workspace
// (read-write) and /ticket (read-only), no skills loaded.
func newSession(t testing.TB, st blob.Store, sessionID string, opts vfs.Options) *vfs.FS {
	t.Helper()
	ws, err := vfs.WorkspaceMount(st, tenant, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	opts.Mounts = append([]vfs.Mount{ws, {Path: "/ticket", Store: st, Prefix: tenant + "/tickets/T-1/", ReadOnly: true}}, opts.Mounts...)
	fsys, err := vfs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

func skill(t testing.TB, st blob.Store, name, category, skillName string) vfs.SkillMount {
	return vfs.SkillMount{Name: name, Store: st, Prefix: skillPrefix(t, category, skillName)}
}

func lsPaths(t testing.TB, fsys *vfs.FS, p string) []string {
	t.Helper()
	l, err := fsys.LsInfo(context.Background(), p)
	if err != nil {
		t.Fatalf("LsInfo(%q): %v", p, err)
	}
	out := make([]string, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = e.Path
	}
	return out
}

// errText returns the agent-facing text of err ("" for nil).
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
