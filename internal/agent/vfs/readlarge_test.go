package vfs_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/agent/vfs"
)

// TestReadLargeFile: a file over the read bound is streamed, and the bound
// applies to the lines returned: read_file with a small limit anywhere in
// it answers exactly what Read of a small file would (FormatContent of the
// whole content); lines that together exceed the bound are refused with a
// message that names the bound and suggests grep.
func TestReadLargeFile(t *testing.T) {
	ctx := context.Background()
	st := newLocal(t)
	var lf, crlf, cr strings.Builder
	for i := range 500 {
		fmt.Fprintf(&lf, "line %03d\n", i)
		fmt.Fprintf(&crlf, "line %03d\r\n", i)
		fmt.Fprintf(&cr, "line %03d\r", i)
	}
	files := map[string]string{"lf.txt": lf.String(), "crlf.txt": crlf.String(), "cr.txt": cr.String(),
		"nul.txt": "a\x00" + lf.String(), "latin1.txt": lf.String() + "caf\xe9\n",
		"long.txt": strings.Repeat("x", 3000) + "\nlast\n"}
	for name, content := range files {
		put(t, st, tenant+"/sessions/s1/workspace/"+name, content)
	}
	fsys := newSession(t, st, "s1", vfs.Options{MaxFileSize: 1000})
	tests := []struct {
		file          string
		offset, limit int
		err           string // "" means: the answer FormatContent gives for the whole file
	}{
		{"lf.txt", 0, 3, ""},
		{"lf.txt", 250, 5, ""},
		{"lf.txt", 497, 10, ""},
		{"lf.txt", -4, 1, ""},
		{"crlf.txt", 120, 40, ""},
		{"cr.txt", 499, 1, ""},
		{"long.txt", 1, 1, ""},
		{"lf.txt", 500, 1, "Error: Line offset 500 exceeds file length (500 lines)"},
		{"lf.txt", 0, 0, "Error: the lines of '/workspace/lf.txt' asked for (offset 0, limit 2000) are more than 1000 bytes, the limit of one read (the file is 4500 bytes); read fewer lines with offset and limit, or search it with grep"},
		{"long.txt", 0, 1, "Error: the lines of '/workspace/long.txt' asked for (offset 0, limit 1) are more than 1000 bytes, the limit of one read (the file is 3006 bytes); read fewer lines with offset and limit, or search it with grep"},
		{"nul.txt", 3, 1, "Error: '/workspace/nul.txt' is a binary file (application/octet-stream, 4502 bytes) and cannot be read as text. Refer to it by path."},
		{"latin1.txt", 500, 1, "Error: '/workspace/latin1.txt' is a binary file (application/octet-stream, 4505 bytes) and cannot be read as text. Refer to it by path."},
	}
	for _, tt := range tests {
		got, err := fsys.Read(ctx, "/workspace/"+tt.file, tt.offset, tt.limit)
		if tt.err != "" {
			if errText(err) != tt.err {
				t.Errorf("Read(%s, %d, %d) = %q, %v\nwant error %s", tt.file, tt.offset, tt.limit, got, err, tt.err)
			}
			continue
		}
		want, werr := vfs.FormatContent([]byte(files[tt.file]), tt.offset, tt.limit)
		if err != nil || werr != nil || got != want {
			t.Errorf("Read(%s, %d, %d) = %q, %v\nwant %q, %v", tt.file, tt.offset, tt.limit, got, err, want, werr)
		}
	}
}

// TestReadHugeFileFewLines is the reported case: read_file with limit 3 of
// a 60 MB file, under the default 10 MiB bound.
func TestReadHugeFileFewLines(t *testing.T) {
	ctx := context.Background()
	st := newLocal(t)
	line := strings.Repeat("y", 99) + "\n"
	content := bytes.Repeat([]byte(line), 600_000) // 60 MB
	if err := st.Put(ctx, tenant+"/sessions/s1/workspace/huge.log", bytes.NewReader(content), int64(len(content))); err != nil {
		t.Fatal(err)
	}
	fsys := newSession(t, st, "s1", vfs.Options{})
	for _, offset := range []int{0, 599_997} {
		got, err := fsys.Read(ctx, "/workspace/huge.log", offset, 3)
		want, _ := vfs.FormatContent([]byte(strings.Repeat(line, 3)), 0, 3)
		want = strings.NewReplacer("     1\t", fmt.Sprintf("%6d\t", offset+1), "     2\t", fmt.Sprintf("%6d\t", offset+2), "     3\t", fmt.Sprintf("%6d\t", offset+3)).Replace(want)
		if err != nil || got != want {
			t.Errorf("Read(huge.log, %d, 3) = %.200q, %v\nwant %.200q", offset, got, err, want)
		}
	}
}
