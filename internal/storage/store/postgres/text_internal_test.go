package postgres

import (
	"testing"
	"unicode/utf8"
)

func TestTextRoundTrip(t *testing.T) {
	tests := []struct {
		in, stored string
	}{
		{"/srv/skills/pdf", "/srv/skills/pdf"},
		{"", ""},
		{"100%", "100%"},
		{"/r/bad\xff", "\x01/r/bad%FF"},
		{"/r/50%\xfe", "\x01/r/50%25%FE"},
		{"nul\x00byte", "\x01nul%00byte"},
		{"\x01lead", "\x01\x01lead"},
		{"ñ/\xc3", "\x01ñ/%C3"},
	}
	for _, tt := range tests {
		got := txt(tt.in)
		if got != tt.stored || !utf8.ValidString(got) {
			t.Errorf("txt(%q) = %q, want %q", tt.in, got, tt.stored)
		}
		if back := untxt(got); back != tt.in {
			t.Errorf("untxt(%q) = %q, want %q", got, back, tt.in)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"/a", "\xff", "\x01%", "%zz", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := txt(s)
		if !utf8.ValidString(enc) {
			t.Fatalf("txt(%q) = %q is not UTF-8", s, enc)
		}
		for i := 0; i < len(enc); i++ {
			if enc[i] == 0 {
				t.Fatalf("txt(%q) = %q holds a NUL", s, enc)
			}
		}
		if back := untxt(enc); back != s {
			t.Fatalf("untxt(txt(%q)) = %q", s, back)
		}
	})
}
