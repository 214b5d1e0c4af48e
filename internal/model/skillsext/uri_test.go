package skillsext_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/model/skillsext"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "skill://pdf-forms/SKILL.md", want: "skill://pdf-forms/SKILL.md"},
		{in: "skill://escrituras/compraventa/resources/ejemplo.md", want: "skill://escrituras/compraventa/resources/ejemplo.md"},
		{in: "skill://a/b:c@d/é.md", want: "skill://a/b:c@d/é.md"},
		{in: "https://a/SKILL.md", err: `invalid skill URI "https://a/SKILL.md": not a skill:// URI (skill files are served as skill://<skill-path>/<file-path>)`},
		{in: "SKILL://a/SKILL.md", err: `invalid skill URI "SKILL://a/SKILL.md": not a skill:// URI (skill files are served as skill://<skill-path>/<file-path>)`},
		{in: "skill://", err: `invalid skill URI "skill://": no skill path after skill://`},
		{in: "skill://a/../b/SKILL.md", err: `invalid skill URI "skill://a/../b/SKILL.md": path segment 2 is ".."; skill URIs name files directly, without relative segments`},
		{in: "skill://a/./SKILL.md", err: `invalid skill URI "skill://a/./SKILL.md": path segment 2 is "."; skill URIs name files directly, without relative segments`},
		{in: "skill://a/b%2Fc/SKILL.md", err: `invalid skill URI "skill://a/b%2Fc/SKILL.md": percent-encoding; skillgate's skill URIs never need it, write the path as skills/list lists it`},
		{in: "skill://a/b/", err: `invalid skill URI "skill://a/b/": a trailing slash; directories are written without one (skill://<skill-path>)`},
		{in: "skill://a//SKILL.md", err: `invalid skill URI "skill://a//SKILL.md": path segment 2 is empty (two slashes in a row, or a slash at the start)`},
		{in: "skill:///SKILL.md", err: `invalid skill URI "skill:///SKILL.md": path segment 1 is empty (two slashes in a row, or a slash at the start)`},
		{in: "skill://a/SKILL.md?x=1", err: `invalid skill URI "skill://a/SKILL.md?x=1": a query or fragment; skill URIs have neither`},
		{in: "skill://a/SKILL.md#top", err: `invalid skill URI "skill://a/SKILL.md#top": a query or fragment; skill URIs have neither`},
		{in: "skill://a b/SKILL.md", err: `invalid skill URI "skill://a b/SKILL.md": path segment 1 holds ' ', which a skill URI cannot hold unencoded`},
		{in: "skill://a:1/SKILL.md", err: `invalid skill URI "skill://a:1/SKILL.md": path segment 1 holds ':', which a skill URI cannot hold unencoded`},
		{in: "skill://a\\b/SKILL.md", err: `invalid skill URI "skill://a\\b/SKILL.md": path segment 1 holds '\\', which a skill URI cannot hold unencoded`},
		{in: "skill://a/\x00", err: `invalid skill URI "skill://a/\x00": path segment 2 holds '\x00', which a skill URI cannot hold unencoded`},
		{in: "skill://a/\xff", err: `invalid skill URI "skill://a/\xff": not valid UTF-8`},
		{in: "skill://" + strings.Repeat("a", 5000), err: `invalid skill URI "skill://` + strings.Repeat("a", 248) + `…": longer than 4096 bytes`},
	} {
		u, err := skillsext.ParseURI(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || !errors.Is(err, skillsext.ErrBadURI) {
				t.Errorf("ParseURI(%q) error = %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || u.String() != tc.want {
			t.Errorf("ParseURI(%q) = %v, %v; want %s", tc.in, u, err, tc.want)
		}
	}
}

func TestSkillPath(t *testing.T) {
	for in, want := range map[string]string{"skill://a/b/SKILL.md": "a/b", "skill://a/SKILL.md": "a", "skill://SKILL.md": "", "skill://a/b.md": ""} {
		u, err := skillsext.ParseURI(in)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := u.SkillPath()
		if got != want || ok != (want != "") {
			t.Errorf("SkillPath(%s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestCursor(t *testing.T) {
	c := skillsext.EncodeCursor("escrituras/compraventa")
	if k, err := skillsext.DecodeCursor(c); err != nil || k != "escrituras/compraventa" {
		t.Fatalf("DecodeCursor(EncodeCursor) = %q, %v", k, err)
	}
	for _, bad := range []string{"x", "!!!", "azE6ZXNjcml0dXJhcw", strings.Repeat("A", 3000), "c2tpbGxzL2xpc3Q6MTo"} {
		if _, err := skillsext.DecodeCursor(bad); err != skillsext.ErrBadCursor {
			t.Errorf("DecodeCursor(%q) = %v, want ErrBadCursor", bad, err)
		}
	}
	if got := skillsext.ErrBadCursor.Error(); got != "invalid cursor: it is not one that skills/list returned; omit it to start from the first page" {
		t.Errorf("message %q", got)
	}
}

// FuzzParseURI checks that a URI ParseURI accepts writes back unchanged
// and holds no segment a client would resolve or decode.
func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"skill://pdf-forms/SKILL.md", "skill://a/../b", "skill://a/%2e%2e/x", "skill://a/b/", "skill://é/ü.md", "file:///etc/passwd", "skill://a?b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := skillsext.ParseURI(s)
		if err != nil {
			if !errors.Is(err, skillsext.ErrBadURI) {
				t.Fatalf("error %v does not wrap ErrBadURI", err)
			}
			return
		}
		if u.String() != s {
			t.Fatalf("String() = %q, parsed from %q", u.String(), s)
		}
		for _, seg := range u.Segments {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "/%?#\\ \x00") {
				t.Fatalf("segment %q accepted in %q", seg, s)
			}
		}
	})
}

// FuzzDecodeCursor checks that DecodeCursor never panics, refuses with
// ErrBadCursor, and that what it accepts encodes back to the same cursor.
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{skillsext.EncodeCursor("a/b"), "", "x", "====", skillsext.EncodeCursor("é")} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, c string) {
		k, err := skillsext.DecodeCursor(c)
		if err != nil {
			if err != skillsext.ErrBadCursor {
				t.Fatalf("error %v", err)
			}
			return
		}
		if skillsext.EncodeCursor(k) != c {
			t.Fatalf("EncodeCursor(%q) = %q, decoded from %q", k, skillsext.EncodeCursor(k), c)
		}
	})
}
