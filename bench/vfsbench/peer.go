// Package vfsbench compares skillgate's file tools with a minimal MCP server
// doing the same work, like for like: the same transport (stdio), the same
// client (the go-sdk's), the same files. See bench/vfs.sh.
//
// The peer is this package's own small server (Serve), built with the
// go-sdk: read_file with the same `cat -n` formatting, and a literal grep
// walking the same 10,000 files. It is written plainly, as anyone would
// write such a server: no index, one file after another.
package vfsbench

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillgate/skillgate/internal/agent/vfs"
)

// Peer serves the virtual tree /skills/<name>/… from root/<category>/<name>/…
// as skillgate does for loaded skills, reading the host files directly.
type Peer struct {
	root string // root/<category>/<name>/...
}

// NewPeer returns the peer for a tree of skills under root.
func NewPeer(root string) *Peer { return &Peer{root: root} }

type readIn struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

type grepIn struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

// host maps a virtual path under /skills to the host file: the skill's
// directory is found below any category directory of root.
func (p *Peer) host(vpath string) (string, error) {
	rest, ok := strings.CutPrefix(vpath, "/skills/")
	if !ok {
		return "", errors.New("Error: only /skills is served")
	}
	name, rel, _ := strings.Cut(rest, "/")
	cats, err := os.ReadDir(p.root)
	if err != nil {
		return "", err
	}
	for _, c := range cats {
		dir := filepath.Join(p.root, c.Name(), name)
		if _, err := os.Stat(dir); err == nil {
			return filepath.Join(dir, filepath.FromSlash(rel)), nil
		}
	}
	return "", errors.New("Error: File '" + vpath + "' not found")
}

// Read is read_file: the file's lines numbered as `cat -n` does (a number
// right-aligned in six columns, a tab, the line), from offset, at most limit
// lines (default 2,000).
func (p *Peer) Read(vpath string, offset, limit int) (string, error) {
	h, err := p.host(vpath)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(h)
	if err != nil {
		return "", err
	}
	if limit <= 0 {
		limit = 2000
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if offset >= len(lines) {
		return "", errors.New("Error: Line offset " + strconv.Itoa(offset) + " exceeds file length (" + strconv.Itoa(len(lines)) + " lines)")
	}
	lines = lines[offset:min(len(lines), offset+limit)]
	var b strings.Builder
	b.Grow(len(data) + 8*len(lines))
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		n := strconv.Itoa(offset + i + 1)
		if len(n) < 6 {
			b.WriteString(strings.Repeat(" ", 6-len(n)))
		}
		b.WriteString(n)
		b.WriteByte('\t')
		b.WriteString(l)
	}
	return truncate(b.String()), nil
}

// truncate cuts a tool result at vfs.ToolResultCharLimit characters, as
// deepagents (and so skillgate) does: the model gets at most that much.
func truncate(s string) string {
	if len(s) <= vfs.ToolResultCharLimit {
		return s
	}
	n := 0
	for i := range s {
		if n == vfs.ToolResultCharLimit {
			return s[:i] + "\n" + vfs.TruncationGuidance
		}
		n++
	}
	return s
}

// Grep is grep in files_with_matches mode: the virtual paths of the text
// files below vpath holding pattern literally, sorted, one a line.
func (p *Peer) Grep(pattern, vpath string) (string, error) {
	if vpath == "" || vpath == "/" {
		vpath = "/skills"
	}
	var walkRoots []string
	if vpath == "/skills" {
		walkRoots = []string{p.root}
	} else {
		h, err := p.host(vpath)
		if err != nil {
			return "No matches found", nil
		}
		walkRoots = []string{h}
	}
	pat := []byte(pattern)
	var hits []string
	for _, wr := range walkRoots {
		err := filepath.WalkDir(wr, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !bytes.Contains(data, pat) || !utf8.Valid(data) || bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
				return nil
			}
			rel, _ := filepath.Rel(p.root, path)
			_, inSkill, _ := strings.Cut(filepath.ToSlash(rel), "/") // drop the category
			hits = append(hits, "/skills/"+inSkill)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	if len(hits) == 0 {
		return "No matches found", nil
	}
	slices.Sort(hits)
	return strings.Join(hits, "\n"), nil
}

// Serve runs the peer as an MCP server on stdin and stdout.
func (p *Peer) Serve(ctx context.Context) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "vfsbench-peer", Version: "v0"}, nil)
	result := func(text string, err error) (*mcp.CallToolResult, any, error) {
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "read_file", Description: "Read a file, numbered like cat -n."},
		func(_ context.Context, _ *mcp.CallToolRequest, in readIn) (*mcp.CallToolResult, any, error) {
			return result(p.Read(in.FilePath, in.Offset, in.Limit))
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grep", Description: "Search files for a literal text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in grepIn) (*mcp.CallToolResult, any, error) {
			return result(p.Grep(in.Pattern, in.Path))
		})
	return s.Run(ctx, &mcp.StdioTransport{})
}
