package audit_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/storage/audit"
)

func testKey(b byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return ed25519.NewKeyFromSeed(seed)
}

func head(seq int64, c byte) audit.Head {
	return audit.Head{Seq: seq, Hash: "sha256:" + strings.Repeat(string(c), 64)}
}

func line(t *testing.T, c audit.Checkpoint) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestReadCheckpoints(t *testing.T) {
	at := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	k1, k2 := testKey(1), testKey(2)
	c1 := audit.SignCheckpoint(head(3, 'a'), at, k1)
	c2 := audit.SignCheckpoint(head(7, 'b'), at.Add(time.Hour), k1)
	forged := c2
	forged.Hash = head(7, 'c').Hash
	other := audit.SignCheckpoint(head(9, 'd'), at.Add(2*time.Hour), k2)
	back := audit.SignCheckpoint(head(2, 'e'), at.Add(3*time.Hour), k1)
	fork := audit.SignCheckpoint(head(7, 'f'), at.Add(3*time.Hour), k1)
	k1pub := k1.Public().(ed25519.PublicKey)
	tests := []struct {
		name    string
		content string
		trusted ed25519.PublicKey
		want    string // the newest head, or the error
	}{
		{"two lines", line(t, c1) + "\n" + line(t, c2), nil, c2.Head.String()},
		{"trusted key", line(t, c1) + line(t, c2), k1pub, c2.Head.String()},
		{"untrusted key", line(t, other), k1pub, "F:1: invalid audit checkpoint: checkpoint 9 is signed by " + other.Key + ", not by the key you trust (" + audit.PublicKeyString(k1pub) + ")"},
		{"forged hash", line(t, c1) + line(t, forged), nil, "F:2: invalid audit checkpoint: checkpoint 7 (2026-11-24T07:00:00Z) has a bad signature: it was altered or forged"},
		{"key changes", line(t, c2) + line(t, other), nil, "invalid audit checkpoint: F:2: signed by " + other.Key + ", earlier lines by " + c2.Key},
		{"goes back", line(t, c2) + line(t, back), nil, "invalid audit checkpoint: F:2: head 2 at 2026-11-24T09:00:00Z goes back from head 7 at 2026-11-24T07:00:00Z"},
		{"fork", line(t, c2) + line(t, fork), nil, "invalid audit checkpoint: F:2: record 7 has two different hashes in this file"},
		{"not json", "seq 3\n", nil, "invalid audit checkpoint: F:1: not a checkpoint: not valid JSON at byte 1: invalid character 's' looking for beginning of value"},
		{"unknown field", `{"seq":3,"extra":1}` + "\n", nil, `invalid audit checkpoint: F:1: not a checkpoint: unknown field "extra"`},
		{"field in another case", `{"Seq":3}` + "\n", nil, `invalid audit checkpoint: F:1: not a checkpoint: unknown field "Seq"`},
		{"field twice", `{"seq":3,"seq":4}` + "\n", nil, `invalid audit checkpoint: F:1: not a checkpoint: duplicate key "seq"`},
		{"empty", "\n\n", nil, "invalid audit checkpoint: F holds no checkpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "checkpoints.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := audit.ReadCheckpoints(path, tt.trusted)
			got := c.Head.String()
			if err != nil {
				got = strings.ReplaceAll(err.Error(), path, "F")
				if !errors.Is(err, audit.ErrInvalidCheckpoint) {
					t.Errorf("error does not wrap ErrInvalidCheckpoint: %v", err)
				}
			}
			if got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestSigningKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.key")
	k, err := audit.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	again, err := audit.LoadOrCreateKey(path)
	if err != nil || !k.Equal(again) {
		t.Fatalf("reloaded key differs: %v", err)
	}
	c := audit.SignCheckpoint(head(1, 'a'), time.Now(), k)
	cp := filepath.Join(dir, "cp.jsonl")
	if err := audit.AppendCheckpoint(cp, c); err != nil {
		t.Fatal(err)
	}
	got, err := audit.ReadCheckpoints(cp, k.Public().(ed25519.PublicKey))
	if err != nil || got.Head != c.Head || !got.At.Equal(c.At) {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	os.Chmod(path, 0o644)
	if _, err := audit.LoadOrCreateKey(path); err == nil || err.Error() != "audit signing key "+path+" is readable by others (mode -rw-r--r--): chmod 600 it" {
		t.Fatalf("open key: %v", err)
	}
	if _, err := audit.ParsePublicKey("ed25519:abc"); err == nil || err.Error() != `invalid audit checkpoint: key "ed25519:abc" is not ed25519:BASE64 as printed by `+"`skillgate audit checkpoint`" {
		t.Fatalf("bad key: %v", err)
	}
}

// FuzzParseCheckpoints: any content is read without panicking, and an
// accepted file's newest checkpoint verifies.
func FuzzParseCheckpoints(f *testing.F) {
	k := testKey(1)
	at := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	c1, _ := json.Marshal(audit.SignCheckpoint(head(3, 'a'), at, k))
	c2, _ := json.Marshal(audit.SignCheckpoint(head(4, 'b'), at.Add(time.Minute), k))
	f.Add([]byte(string(c1) + "\n" + string(c2) + "\n"))
	f.Add([]byte(`{"seq":1,"hash":"sha256:","at":"2026-01-01T00:00:00Z","key":"ed25519:","sig":""}`))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := audit.ParseCheckpoints("f", data, nil)
		if err == nil {
			if err := c.Check(nil); err != nil {
				t.Fatalf("accepted a checkpoint that does not verify: %v", err)
			}
		}
	})
}
