package vfs

import (
	"fmt"
	"strconv"
	"strings"
)

// Tool-layer formatting, as deepagents' FilesystemMiddleware (≤0.4) renders
// backend results for the model. The MCP layer calls these on the results of
// the FS methods and returns [Error.Error] for failures.

// ToolResultCharLimit is the size past which tool output is truncated
// (deepagents: 20,000 tokens × 4 characters).
const ToolResultCharLimit = 20000 * 4

// TruncationGuidance ends truncated tool output.
const TruncationGuidance = "... [results truncated, try being more specific with your parameters]"

// GrepOutputMode selects how [FormatGrep] renders matches.
type GrepOutputMode string

// The grep output modes of deepagents' grep tool.
const (
	// GrepFilesWithMatches lists the matching files, sorted (the default).
	GrepFilesWithMatches GrepOutputMode = "files_with_matches"
	// GrepContent lists "<path>:" then "  <line>: <text>" per match.
	GrepContent GrepOutputMode = "content"
	// GrepCount lists "<path>: <k>" per file.
	GrepCount GrepOutputMode = "count"
)

// ParseGrepOutputMode validates a mode from a tool call; "" means
// GrepFilesWithMatches. Unknown modes give an [*Error] with Kind
// [ErrInvalidArgument].
func ParseGrepOutputMode(s string) (GrepOutputMode, error) {
	switch m := GrepOutputMode(s); m {
	case "":
		return GrepFilesWithMatches, nil
	case GrepFilesWithMatches, GrepContent, GrepCount:
		return m, nil
	}
	return "", newErr(ErrInvalidArgument, "Error: Invalid output_mode '%s'. Use 'files_with_matches', 'content' or 'count'.", s)
}

// FormatGrep renders a grep result: "No matches found" when empty, else per
// mode (files sorted by path). Truncated output ends with TruncationGuidance.
func FormatGrep(res GrepResult, mode GrepOutputMode) string {
	if len(res.Matches) == 0 {
		return "No matches found"
	}
	var b strings.Builder
	// Matches are sorted by path then line, so files group contiguously.
	for i := 0; i < len(res.Matches); {
		j := i
		for j < len(res.Matches) && res.Matches[j].Path == res.Matches[i].Path {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		p := res.Matches[i].Path
		switch mode {
		case GrepCount:
			b.WriteString(p)
			b.WriteString(": ")
			b.WriteString(strconv.Itoa(j - i))
		case GrepContent:
			b.WriteString(p)
			b.WriteByte(':')
			for _, m := range res.Matches[i:j] {
				fmt.Fprintf(&b, "\n  %d: %s", m.Line, m.Text)
			}
		default:
			b.WriteString(p)
		}
		i = j
	}
	return finish(b.String(), res.Truncated)
}

// FormatLs renders a listing as deepagents' ls tool does: Python's str() of
// the list of paths, e.g. ['/skills/', '/workspace/']. When the paths are
// over ToolResultCharLimit, or the listing was truncated, the list is cut
// and TruncationGuidance is its last element.
func FormatLs(l Listing) string {
	paths := make([]string, len(l.Entries))
	total := 0
	for i, e := range l.Entries {
		paths[i] = e.Path
		total += len(e.Path)
	}
	cut := l.Truncated
	if total > ToolResultCharLimit {
		paths = paths[:len(paths)*ToolResultCharLimit/total]
		cut = true
	}
	if cut {
		paths = append(paths, TruncationGuidance)
	}
	return pyList(paths)
}

// FormatGlob renders glob results one path per line, or "No files found".
func FormatGlob(l Listing) string {
	if len(l.Entries) == 0 {
		return "No files found"
	}
	var b strings.Builder
	for i, e := range l.Entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Path)
	}
	return finish(b.String(), l.Truncated)
}

// FormatWrite is the write tool's success text: "Updated file <path>".
func FormatWrite(path string) string { return "Updated file " + path }

// FormatEdit is the edit tool's success text: "Successfully replaced <k>
// instance(s) of the string in '<path>'".
func FormatEdit(path string, k int) string {
	return fmt.Sprintf("Successfully replaced %d instance(s) of the string in '%s'", k, path)
}

// TruncateOutput cuts s at ToolResultCharLimit characters, appending a
// newline and TruncationGuidance, as deepagents' truncate_if_too_long does
// for string results.
func TruncateOutput(s string) string {
	if len(s) <= ToolResultCharLimit {
		return s
	}
	n := 0
	for i := range s {
		if n == ToolResultCharLimit {
			return s[:i] + "\n" + TruncationGuidance
		}
		n++
	}
	return s
}

func finish(s string, truncated bool) string {
	t := TruncateOutput(s)
	if truncated && len(t) == len(s) {
		t += "\n" + TruncationGuidance
	}
	return t
}
