package lineage

import (
	"fmt"
	"strings"
)

// maxEdits bounds the Myers search: two files further apart than this many
// inserted and deleted lines are reported as wholly replaced (every line of
// the candidate added), which keeps a diff O((N+M)·maxEdits).
const maxEdits = 1000

// contextLines is how many unchanged lines a hunk of the unified diff
// shows around a change.
const contextLines = 3

// op is one line of an edit script.
type op struct {
	kind byte // ' ' kept, '-' deleted from the reference, '+' added by the candidate
	a, b int  // 0-based line in the reference and in the candidate
}

// splitLines splits s into lines without their terminators.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// editScript is the shortest edit script from a to b (Myers, "An O(ND)
// Difference Algorithm", 1986, the greedy forward search with a trace),
// or nil and false when it needs more than maxEdits edits.
func editScript(a, b []string) ([]op, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxEdits)
	offset := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		// Only diagonals -d-1 … d+1 are read back at step d.
		snap := make([]int, 2*d+3)
		copy(snap, v[offset-d-1:offset+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil, false
	}
	// Walk the trace back from (n, m).
	var rev []op
	x, y := n, m
	for d := found; d > 0; d-- {
		snap := trace[d]
		vd := func(k int) int { return snap[k+d+1] }
		k := x - y
		var prevK int
		if k == -d || (k != d && vd(k-1) < vd(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := vd(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, op{' ', x, y})
		}
		if x == prevX {
			y--
			rev = append(rev, op{'+', x, y})
		} else {
			x--
			rev = append(rev, op{'-', x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{' ', x, y})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out, true
}

// lineDiff compares a reference file with the candidate's: the unified
// diff (labelled with name) and the candidate's added or changed lines,
// 1-based. A pair too far apart for the bounded search is reported as
// wholly replaced.
func lineDiff(name, ref, cand string) (diff string, added []int, whole bool) {
	a, b := splitLines(ref), splitLines(cand)
	ops, ok := editScript(a, b)
	if !ok {
		whole = true
		ops = ops[:0]
		for i := range a {
			ops = append(ops, op{'-', i, 0})
		}
		for j := range b {
			ops = append(ops, op{'+', len(a), j})
		}
	}
	for _, o := range ops {
		if o.kind == '+' {
			added = append(added, o.b+1)
		}
	}
	return unified(name, a, b, ops), added, whole
}

// unified renders ops as a unified diff with contextLines of context.
func unified(name string, a, b []string, ops []op) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-contextLines)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*contextLines {
				end = min(end+contextLines, len(ops))
				break
			}
			end = run
		}
		hunk := ops[start:end]
		aStart, bStart := hunk[0].a, hunk[0].b
		var aLen, bLen int
		for _, o := range hunk {
			if o.kind != '+' {
				aLen++
			}
			if o.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, o := range hunk {
			line := ""
			if o.kind == '+' {
				line = b[o.b]
			} else {
				line = a[o.a]
			}
			sb.WriteByte(o.kind)
			sb.WriteString(line)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

// hunkRange is a unified diff's START,LEN (1-based; START is the line
// before an empty range, as diff -u writes it).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
