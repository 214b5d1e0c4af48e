// Package secscan is skillgate's content scanner: it reads a skill's files
// (and the tool descriptions its servers publish) and reports what a
// malicious skill hides there — instructions aimed at the model, hidden
// Unicode, credential theft, network exfiltration, download-and-execute,
// encoded payloads, obfuscation, destructive commands and persistence —
// each finding with a stable rule id, a severity, the file, line and
// column, the excerpt, why it matters and how to fix it. Most rules match
// patterns line by line; shell scripts are also read by a parser
// (subpackage shellscan), for the download-and-run rules SG504–SG506
// (shell.go).
//
// It is layer 4 of every install (package install) and the command
// `skillgate scan-security`. It decides nothing by itself: a finding is
// evidence for the admission layer, which blocks on high and critical
// findings until an operator suppresses them with a reason.
package secscan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/admission/secscan/decode"
	"github.com/skillgate/skillgate/internal/admission/secscan/shellscan"
	"github.com/skillgate/skillgate/internal/platform/fileinfo"
	"github.com/skillgate/skillgate/internal/platform/plural"
)

// Severity ranks a finding. High and critical findings block an install
// until an operator suppresses them.
type Severity string

// The severities, lowest first.
const (
	Low      Severity = "low"
	Medium   Severity = "medium"
	High     Severity = "high"
	Critical Severity = "critical"
)

// Rank orders severities: 1 for low up to 4 for critical, 0 for anything
// else.
func (s Severity) Rank() int {
	switch s {
	case Low:
		return 1
	case Medium:
		return 2
	case High:
		return 3
	case Critical:
		return 4
	}
	return 0
}

// ParseSeverity reads a severity name.
func ParseSeverity(s string) (Severity, error) {
	if v := Severity(strings.ToLower(s)); v.Rank() > 0 {
		return v, nil
	}
	return "", fmt.Errorf("%w: severity %q: use low, medium, high or critical", ErrUsage, s)
}

// Blocks reports whether a finding of this severity blocks an install.
func (s Severity) Blocks() bool { return s.Rank() >= High.Rank() }

// ErrUsage is a bad argument (a path that is not there, a bad severity).
var ErrUsage = errors.New("secscan: usage")

// Finding is one match of a rule.
type Finding struct {
	// Rule is the rule's stable id (SG101 …), Name its short name.
	Rule string `json:"rule"`
	Name string `json:"name"`
	// Severity is the rule's, or lower where the rule says so for the kind
	// of file (documentation that shows a command is not a script that
	// runs it).
	Severity Severity `json:"severity"`
	// File is the path relative to the scanned root, with forward slashes;
	// for a tool description it is "tools/SERVER/TOOL".
	File string `json:"file"`
	// Line and Column are 1-based; the column counts Unicode code points.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Excerpt is the matched line, at most 160 characters around the
	// match, with invisible and control characters written as <U+XXXX>.
	Excerpt string `json:"excerpt"`
	// Message says what was found, Why why it matters, Fix what to do.
	Message string `json:"message"`
	Why     string `json:"why"`
	Fix     string `json:"fix"`
	// Normalized, for a finding seen only once the text was normalised
	// (textnorm) or decoded (package decode), is the text the rule matched
	// after that; Excerpt stays the original line.
	Normalized string `json:"normalized,omitempty"`
}

// Location is the finding's place, FILE:LINE:COLUMN.
func (f Finding) Location() string { return fmt.Sprintf("%s:%d:%d", f.File, f.Line, f.Column) }

// Skipped is a file the scanner did not read, and why.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Report is the outcome of a scan.
type Report struct {
	// Files is how many files were read.
	Files int `json:"files"`
	// Findings are sorted by file, line, column and rule.
	Findings []Finding `json:"findings"`
	// Skipped are the files not read (binary, too large, links); a binary
	// or too large file is also a finding (SG903, SG902).
	Skipped []Skipped `json:"skipped"`
}

// Worst is the highest severity among the findings ("" when none).
func (r *Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// Limits bound a scan: the input is a third party's.
type Limits struct {
	// MaxFiles is how many files are read at most (default 2,000).
	MaxFiles int
	// MaxFileBytes is the largest file read (default 2 MiB); larger ones
	// are skipped with the reason.
	MaxFileBytes int64
	// MaxTotalBytes bounds all files together (default 32 MiB).
	MaxTotalBytes int64
	// MaxPerRule bounds the findings of one rule in one file (default 20).
	MaxPerRule int
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 2000
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 2 << 20
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 32 << 20
	}
	if l.MaxPerRule <= 0 {
		l.MaxPerRule = 20
	}
	return l
}

// ErrTooLarge is a tree beyond Limits.MaxFiles or Limits.MaxTotalBytes.
var ErrTooLarge = errors.New("secscan: too large")

// Dir scans every file under root (a skill's directory, or one file). It
// never follows a symbolic link: a link is skipped with the reason. Each
// file is classified by how it runs (classify: #! lines, mcp.json,
// interpreters named in the skill) before it is scanned; a file the scanner
// cannot read (binary, too large, not UTF-8) is a finding whose severity
// follows that role (SG901–SG903), never a silent pass. A tree beyond the
// limits is an error wrapping ErrTooLarge.
func Dir(ctx context.Context, root string, lim Limits) (*Report, error) {
	lim = lim.withDefaults()
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrUsage, root)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	rep := &Report{Findings: []Finding{}, Skipped: []Skipped{}}
	scripts := &shellScripts{analyses: map[string]*shellscan.Script{}, data: map[string][]byte{}}
	var files []skillFile
	var total int64
	switch {
	case fi.Mode().IsRegular():
		f, err := readFile(rep, root, filepath.Base(root), lim, &total)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w: %s is neither a directory nor a regular file", ErrUsage, root)
	default:
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			switch {
			case d.IsDir():
				if d.Name() == ".git" && path != root {
					return filepath.SkipDir
				}
				return nil
			case d.Type()&fs.ModeSymlink != 0:
				rep.Skipped = append(rep.Skipped, Skipped{rel, "a symbolic link (never followed)"})
				return nil
			case !d.Type().IsRegular():
				rep.Skipped = append(rep.Skipped, Skipped{rel, "not a regular file"})
				return nil
			}
			if len(files)+len(rep.Skipped) >= lim.MaxFiles {
				return fmt.Errorf("%w: %s has more than %d files", ErrTooLarge, root, lim.MaxFiles)
			}
			f, err := readFile(rep, path, rel, lim, &total)
			if err != nil {
				return err
			}
			files = append(files, f)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	roles := classify(files)
	for _, f := range files {
		if f.data == nil {
			rep.Findings = append(rep.Findings, tooLarge(f.rel, roles[f.rel], lim.MaxFileBytes))
			continue
		}
		found, read := scanFile(f.rel, f.data, roles[f.rel], lim.MaxPerRule, scripts)
		rep.Findings = append(rep.Findings, found...)
		if read {
			rep.Files++
		} else {
			rep.Skipped = append(rep.Skipped, Skipped{f.rel, "binary (a NUL byte)"})
		}
	}
	rep.Findings = append(rep.Findings, scripts.cross(lim.MaxPerRule)...)
	sortFindings(rep.Findings)
	return rep, nil
}

// readFile reads one regular file of a scan. A file larger than
// lim.MaxFileBytes comes back with nil data and is recorded as skipped (Dir
// reports it as SG902 once its role is known); one that cannot be read is
// skipped with the reason.
func readFile(rep *Report, path, rel string, lim Limits, total *int64) (skillFile, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > lim.MaxFileBytes {
		rep.Skipped = append(rep.Skipped, Skipped{rel, fmt.Sprintf("larger than %d bytes", lim.MaxFileBytes)})
		return skillFile{rel: rel}, nil
	}
	data, err := fileinfo.ReadRegular(path, lim.MaxFileBytes)
	if err != nil {
		rep.Skipped = append(rep.Skipped, Skipped{rel, fmt.Sprintf("not read: larger than %d bytes or not a regular file", lim.MaxFileBytes)})
		return skillFile{rel: rel}, nil
	}
	*total += int64(len(data))
	if *total > lim.MaxTotalBytes {
		return skillFile{}, fmt.Errorf("%w: the files hold more than %d bytes", ErrTooLarge, lim.MaxTotalBytes)
	}
	if data == nil {
		data = []byte{}
	}
	return skillFile{rel: rel, data: utf16Read(data)}, nil
}

// File scans one file's contents, named name (its path in the skill). Its
// role comes from its #! line alone, and a shell script is read alone: a
// file mcp.json runs, and a download saved by another script of the skill
// and run by this one, are found by Dir only. A binary file, or one larger
// than the scanner's default limit, is a finding (SG903, SG902).
func File(name string, data []byte) []Finding {
	lim := Limits{}.withDefaults()
	if data == nil {
		data = []byte{}
	}
	data = utf16Read(data)
	roles := classify([]skillFile{{rel: name, data: data}})
	var out []Finding
	if int64(len(data)) > lim.MaxFileBytes {
		out = []Finding{tooLarge(name, roles[name], lim.MaxFileBytes)}
	} else {
		out, _ = scanFile(name, data, roles[name], lim.MaxPerRule, nil)
	}
	if out == nil {
		out = []Finding{}
	}
	sortFindings(out)
	return out
}

// Tool is a tool a skill's server publishes, as its tools/list gives it.
type Tool struct {
	Server      string
	Name        string
	Description string
}

// Tools scans tool descriptions, which reach the model verbatim: the rules
// for instructions aimed at the model, hidden Unicode, and the rule for
// descriptions that steer the model to other tools or to secrets. A
// finding's File is "tools/SERVER/TOOL".
func Tools(tools []Tool) []Finding {
	out := []Finding{}
	for _, t := range tools {
		name := "tools/" + t.Server + "/" + t.Name
		out = append(out, scanText(name, []byte(t.Description), kindTool, Limits{}.withDefaults().MaxPerRule)...)
	}
	sortFindings(out)
	return out
}

// isBinary reports whether data is not text: a NUL byte in its first 8 KiB.
// utf16Read is a file's contents as the rules read them: UTF-16 text (a
// byte-order mark, or ASCII interleaved with NUL bytes) as UTF-8, with the
// same lines; anything else as it is. A UTF-16 file is text to an editor
// and to PowerShell or Python reading it, so it is read, not skipped as
// binary for its NUL bytes.
func utf16Read(data []byte) []byte {
	if len(data) < 2 || (data[0] != 0xFF && data[0] != 0xFE && data[0] != 0 && data[1] != 0) {
		return data // the common case: neither a byte-order mark nor a NUL in the first two bytes
	}
	if t, ok := decode.UTF16Text(data); ok {
		return t
	}
	return data
}

func isBinary(data []byte) bool {
	head := data
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	return slices.Contains(head, 0)
}

func sortFindings(fs []Finding) {
	slices.SortFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Rule, b.Rule))
	})
}

// WriteText writes the report for a human, as 'skillgate scan-security'
// prints it: each finding with its location, rule, excerpt, the text the
// rule read when it differs (normalised or decoded), why and fix,
// the files skipped, then the counts by severity.
func (rep *Report) WriteText(w io.Writer) {
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s: %s %s (%s): %s\n    %s\n", f.Location(), f.Severity, f.Rule, f.Name, f.Message, f.Excerpt)
		if f.Normalized != "" {
			fmt.Fprintf(w, "    read as: %s\n", f.Normalized)
		}
		fmt.Fprintf(w, "    why: %s\n    fix: %s\n", f.Why, f.Fix)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(w, "%s: skipped: %s\n", s.File, s.Reason)
	}
	counts := map[Severity]int{}
	for _, f := range rep.Findings {
		counts[f.Severity]++
	}
	fmt.Fprintf(w, "%d %s read, %d %s (critical %d, high %d, medium %d, low %d), %d skipped\n",
		rep.Files, plural.Noun(rep.Files, "file", "files"), len(rep.Findings), plural.Noun(len(rep.Findings), "finding", "findings"),
		counts[Critical], counts[High], counts[Medium], counts[Low], len(rep.Skipped))
}
