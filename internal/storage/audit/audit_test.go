package audit_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

func TestHashArgs(t *testing.T) {
	a, err := audit.HashArgs(json.RawMessage(`{"path": "/tmp/x", "n": 1.0, "z": [true, null]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := audit.HashArgs(json.RawMessage(`{"z":[true,null],"n":1,"path":"/tmp/x"}`))
	if a != b {
		t.Fatalf("key order or spacing changed the hash: %s %s", a, b)
	}
	empty, _ := audit.HashArgs(nil)
	obj, _ := audit.HashArgs(json.RawMessage(`{}`))
	if empty != obj || !strings.HasPrefix(empty, "sha256:") || len(empty) != len(audit.Genesis) {
		t.Fatalf("empty %s obj %s", empty, obj)
	}
	if _, err := audit.HashArgs(json.RawMessage(`{"a":`)); err == nil {
		t.Fatal("broken JSON hashed")
	}
}

func TestSealChains(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 1, time.FixedZone("X", 3600))
	r1, err := audit.Seal(audit.Head{}, audit.Record{Time: at, Actor: "system", Action: "install.add", Subject: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Seq != 1 || r1.Prev != audit.Genesis || r1.Time.Location() != time.UTC {
		t.Fatalf("%+v", r1)
	}
	// The hash format is stable: a change here breaks every existing log.
	if want := "sha256:"; !strings.HasPrefix(r1.Hash, want) {
		t.Fatalf("hash %s", r1.Hash)
	}
	r2, _ := audit.Seal(audit.Head{Seq: r1.Seq, Hash: r1.Hash}, audit.Record{Time: at, Actor: "system", Action: "install.add", Subject: "a"})
	if r2.Seq != 2 || r2.Prev != r1.Hash || r2.Hash == r1.Hash {
		t.Fatalf("%+v", r2)
	}
	// Every field is covered by the hash.
	edits := map[string]func(*audit.Record){
		"time":     func(r *audit.Record) { r.Time = r.Time.Add(time.Nanosecond) },
		"actor":    func(r *audit.Record) { r.Actor = "x" },
		"session":  func(r *audit.Record) { r.Session = "x" },
		"action":   func(r *audit.Record) { r.Action = "x" },
		"subject":  func(r *audit.Record) { r.Subject = "x" },
		"decision": func(r *audit.Record) { r.Decision = "deny" },
		"reasons":  func(r *audit.Record) { r.Reasons = []string{"x"} },
		"args":     func(r *audit.Record) { r.ArgsHash = "x" },
		"latency":  func(r *audit.Record) { r.LatencyNS = 7 },
		"data":     func(r *audit.Record) { r.Data = json.RawMessage(`{"a":1}`) },
		"prev":     func(r *audit.Record) { r.Prev = "x" },
		"seq":      func(r *audit.Record) { r.Seq = 9 },
	}
	for name, edit := range edits {
		r := r2
		edit(&r)
		if h, _ := r.ComputeHash(); h == r2.Hash {
			t.Errorf("editing %s kept the hash", name)
		}
	}
}

func TestParseHead(t *testing.T) {
	h := audit.Head{Seq: 42, Hash: "sha256:" + strings.Repeat("ab", 32)}
	got, err := audit.ParseHead(" " + h.String() + "\n")
	if err != nil || got != h {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"", "42", "0:" + h.Hash, "x:" + h.Hash, "42:sha256:ab", "42:md5:" + strings.Repeat("ab", 32)} {
		if _, err := audit.ParseHead(bad); err == nil || !strings.Contains(err.Error(), "is not SEQ:sha256:HEX as printed by `skillgate audit head`") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func FuzzParseHead(f *testing.F) {
	f.Add("1:" + audit.Genesis)
	f.Add("9223372036854775807:sha256:")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := audit.ParseHead(s)
		if err != nil {
			return
		}
		if again, err := audit.ParseHead(h.String()); err != nil || again != h {
			t.Fatalf("round trip %q: %+v %v", s, again, err)
		}
	})
}
