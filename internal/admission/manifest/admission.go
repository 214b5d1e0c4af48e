package manifest

import (
	"time"

	"github.com/skillgate/skillgate/internal/admission/lineage"
	"github.com/skillgate/skillgate/internal/admission/secscan"
)

// ScanReport is admission layer 4, the content scan: the scanner's findings
// over the skill's files and its servers' tool descriptions.
type ScanReport struct {
	// Files is how many files were read.
	Files int `json:"files"`
	// Findings are sorted by file, line, column and rule.
	Findings []ScanFinding `json:"findings"`
	// Skipped are the files not read (binary, too large, links), with why.
	Skipped []secscan.Skipped `json:"skipped"`
	// Lineage, when the skill is derived from a reference skill, says
	// from which, which files are identical, changed (each with its
	// unified diff and the skill's added or changed lines), added and
	// removed: the console and SARIF read it from here.
	Lineage *lineage.Derivation `json:"lineage,omitempty"`
}

// ScanFinding is one finding of the content scan.
type ScanFinding struct {
	secscan.Finding
	// Suppressed is the operator's suppression that covers the finding,
	// when one does: it then no longer blocks, and says who decided why.
	Suppressed *Suppression `json:"suppressed,omitempty"`
}

// Suppression is an operator's decision that findings of a rule are not a
// threat in this skill, with the reason. It covers every finding of the
// rule, or only those in File (and at Line, when not zero).
type Suppression struct {
	Rule string    `json:"rule"`
	File string    `json:"file,omitempty"`
	Line int       `json:"line,omitempty"`
	Why  string    `json:"why"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
}

// Covers reports whether s suppresses f.
func (s Suppression) Covers(f secscan.Finding) bool {
	return (s.Rule == f.Rule || s.Rule == f.Name) && (s.File == "" || s.File == f.File) && (s.Line == 0 || s.Line == f.Line)
}

// Target is what s covers, as the suppress command takes it:
// RULE[@FILE[:LINE]].
func (s Suppression) Target() string {
	t := s.Rule
	if s.File != "" {
		t += "@" + s.File
		if s.Line > 0 {
			t += ":" + itoa(s.Line)
		}
	}
	return t
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

// Layer verdicts.
const (
	LayerPass    = "pass"
	LayerWarn    = "warn"
	LayerBlock   = "block"
	LayerPending = "pending"
)

// Layer is one admission layer's verdict on an install, with its evidence:
// every install and update passes the same seven layers
// (docs/admission.md). A blocking layer names what to do in Fix.
type Layer struct {
	Layer    int      `json:"layer"`
	Name     string   `json:"name"`
	Verdict  string   `json:"verdict"`
	Evidence []string `json:"evidence"`
	Fix      string   `json:"fix,omitempty"`
}

// LayerNames are the seven admission layers, in order.
var LayerNames = [7]string{"source", "integrity", "format", "content scan", "capability analysis", "human approval", "confinement"}
