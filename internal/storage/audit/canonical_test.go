package audit

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/model/capability"
)

// The direct canonical writer must give exactly the general
// canonicaliser's bytes, or report that it cannot.
func checkCanonical(t *testing.T, r Record) {
	t.Helper()
	want, err := r.canonicalGeneric()
	if err != nil {
		t.Fatalf("canonicalGeneric: %v", err)
	}
	got, ok := r.appendCanonical(nil)
	if !ok {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("canonical forms differ for %+v\n got %s\nwant %s", r, got, want)
	}
}

func TestCanonicalMatchesJCS(t *testing.T) {
	base := Record{Seq: 7, Time: time.Unix(1700000000, 123456789), Actor: "agent:acme/a1", Session: "s1",
		Action: "capability.invoke", Subject: "tools/x#fs/read_file", Decision: capability.Allow,
		Reasons: []string{"policy p1"}, ArgsHash: "sha256:00", LatencyNS: 1234, Prev: "sha256:ff"}
	cases := map[string]func(*Record){
		"plain":            func(*Record) {},
		"no reasons":       func(r *Record) { r.Reasons = nil },
		"empty reasons":    func(r *Record) { r.Reasons = []string{} },
		"controls":         func(r *Record) { r.Actor = "a\x00b\x01\x08\t\n\x0b\x0c\r\x1f\x7f" },
		"quotes":           func(r *Record) { r.Subject = `he said "hi" \ back/slash` },
		"html":             func(r *Record) { r.Reasons = []string{"<script>&amp;</script>"} },
		"line separators":  func(r *Record) { r.Session = "a\u2028b\u2029c" },
		"non-ascii":        func(r *Record) { r.Reasons = []string{"é", "日本語", "😀", "\ufeff", "\U0010FFFF"} },
		"invalid utf-8":    func(r *Record) { r.Actor = "a\xffb" },
		"negative latency": func(r *Record) { r.LatencyNS = -5 },
		"big seq":          func(r *Record) { r.Seq = 1<<53 + 1 },
		"max exact":        func(r *Record) { r.Seq, r.LatencyNS = 1<<53, -(1 << 53) },
		"data":             func(r *Record) { r.Data = json.RawMessage(`{"b":1,"a":[2,1]}`) },
		"zero time":        func(r *Record) { r.Time = time.Time{} },
		"empty strings":    func(r *Record) { r.Session, r.Decision, r.ArgsHash, r.Prev = "", "", "", "" },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			r := base
			mod(&r)
			checkCanonical(t, r)
		})
	}
}

func TestCanonicalRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune{'a', 'Z', '0', ' ', '"', '\\', '/', '<', '>', '&', 0, 1, 0x1f, 0x7f, 0x80, 0xe9, 0x2028, 0x2029, 0xfeff, 0xfffd, 0x1f600, 0x10ffff}
	str := func() string {
		n := rng.IntN(8)
		var b []byte
		for range n {
			if rng.IntN(20) == 0 {
				b = append(b, byte(0x80+rng.IntN(0x80))) // a stray byte: invalid UTF-8
				continue
			}
			b = append(b, string(alphabet[rng.IntN(len(alphabet))])...)
		}
		return string(b)
	}
	for range 20000 {
		r := Record{Seq: rng.Int64N(1<<53 + 2), Time: time.Unix(0, rng.Int64()), Actor: str(), Session: str(), Action: str(),
			Subject: str(), Decision: capability.Effect(str()), ArgsHash: str(), LatencyNS: rng.Int64N(1<<54+2) - 1<<53 - 1, Prev: str()}
		for range rng.IntN(3) {
			r.Reasons = append(r.Reasons, str())
		}
		checkCanonical(t, r)
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add(int64(1), int64(0), "agent:a/b", "s", "capability.invoke", "x#y", "allow", "r", "sha256:0", int64(5), "sha256:1")
	f.Add(int64(1<<53), int64(-1), "\x00\u2028", "\"\\", "<>&", "é😀", "", "\xff", "", int64(-(1 << 53)), "")
	f.Fuzz(func(t *testing.T, seq, ns int64, actor, sess, action, subject, decision, reason, argsHash string, latency int64, prev string) {
		checkCanonical(t, Record{Seq: seq, Time: time.Unix(0, ns), Actor: actor, Session: sess, Action: action, Subject: subject,
			Decision: capability.Effect(decision), Reasons: []string{reason}, ArgsHash: argsHash, LatencyNS: latency, Prev: prev})
	})
}

func BenchmarkComputeHash(b *testing.B) {
	r := Record{Seq: 7, Time: time.Unix(1700000000, 123456789), Actor: "agent:acme/a1", Session: "s1",
		Action: "capability.invoke", Subject: "tools/x#fs/read_file", Decision: capability.Allow,
		Reasons: []string{"policy p1"}, ArgsHash: "sha256:00", LatencyNS: 1234, Prev: "sha256:ff"}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.ComputeHash(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.canonicalGeneric(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
