package blob_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/storage/blob"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		key, want string // want "" means valid
	}{
		{"a", ""},
		{"a/b/c.md", ""},
		{"a..b/.c/...", ""},
		{"cláusulas/日本.md", ""},
		{strings.Repeat("k", blob.MaxSegmentLen), ""},
		{"", "blob: invalid key: empty key"},
		{"/a", `blob: invalid key: "/a" starts with a slash (keys are relative)`},
		{"a/", `blob: invalid key: "a/" ends with a slash`},
		{"a//b", `blob: invalid key: "a//b" has an empty segment`},
		{"a/../b", `blob: invalid key: "a/../b" has a ".." segment`},
		{"./a", `blob: invalid key: "./a" has a "." segment`},
		{`a\b`, `blob: invalid key: "a\\b" contains a backslash`},
		{"a\x00", `blob: invalid key: "a\x00" contains a control character`},
		{"a\x7f", `blob: invalid key: "a\x7f" contains a control character`},
		{"\xc0\xae", `blob: invalid key: "\xc0\xae" is not valid UTF-8`},
		{strings.Repeat("k", blob.MaxSegmentLen+1), `blob: invalid key: "` + strings.Repeat("k", blob.MaxSegmentLen+1) + `" has a segment of 256 bytes, limit 255`},
		{strings.Repeat("a/", 512) + "a", "blob: invalid key: key is 1025 bytes, limit 1024"},
	}
	for _, tc := range tests {
		err := blob.ValidateKey(tc.key)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("ValidateKey(%.40q) = %v, not ErrInvalidKey", tc.key, err)
			}
		}
		if got != tc.want {
			t.Errorf("ValidateKey(%.40q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// listOnly is a Store without DirLister, to exercise the ListDir fallback.
type listOnly struct{ keys []string }

func (s listOnly) Stat(context.Context, string) (blob.Info, error) {
	return blob.Info{}, blob.ErrNotFound
}
func (s listOnly) Get(context.Context, string) (io.ReadCloser, blob.Info, error) {
	return nil, blob.Info{}, blob.ErrNotFound
}
func (s listOnly) List(_ context.Context, prefix string, _ int) ([]blob.Info, error) {
	var out []blob.Info
	for _, k := range s.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, blob.Info{Key: k})
		}
	}
	return out, nil
}
func (s listOnly) Put(context.Context, string, io.Reader, int64) error { return nil }
func (s listOnly) Delete(context.Context, string) error                { return nil }

func TestListDirFallback(t *testing.T) {
	st := listOnly{keys: []string{"r/a", "r/b-c", "r/b/x", "r/b/y", "r/c/d/e", "r/z"}}
	d, err := blob.ListDir(context.Background(), st, "r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range d.Files {
		files = append(files, f.Key)
	}
	if !slices.Equal(files, []string{"r/a", "r/b-c", "r/z"}) || !slices.Equal(d.Dirs, []string{"b", "c"}) {
		t.Errorf("ListDir = %q, %q", files, d.Dirs)
	}
	d, err = blob.ListDir(context.Background(), st, "r/", 3)
	if err != nil || len(d.Files)+len(d.Dirs) != 3 {
		t.Errorf("ListDir(limit 3) = %+v, %v", d, err)
	}
	if _, err := blob.ListDir(context.Background(), st, "r", 0); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("ListDir(bad prefix) = %v", err)
	}
}
