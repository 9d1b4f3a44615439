package diff

import (
	"strconv"
	"strings"
)

// contextLines is the number of unchanged lines shown around a change.
const contextLines = 3

// maxEditDistance bounds the Myers search; beyond it the changed middle
// is shown as one block of removals and additions.
const maxEditDistance = 1000

// unifiedYAML renders the unified diff from live (a) to desired (b).
func unifiedYAML(a, b map[string]any) string {
	var la, lb []string
	if a != nil {
		la = splitLines(encodeYAML(a))
	}
	if b != nil {
		lb = splitLines(encodeYAML(b))
	}
	return unified(la, lb, "live", "desired")
}

func splitLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type edit struct {
	op   byte // ' ', '-', '+'
	line string
}

// lineDiff returns an edit script turning a into b.
func lineDiff(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// myers is the O((N+M)D) shortest edit script of Myers (1986), keeping
// one frontier snapshot per edit step for the backtrack.
func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	limit := min(n+m, maxEditDistance)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace)
			}
		}
	}
	return replaceAll(a, b)
}

func backtrack(a, b []string, trace [][]int) []edit {
	x, y := len(a), len(b)
	rev := make([]edit, 0, x+y)
	for d := len(trace) - 1; d >= 0; d-- {
		snap := trace[d]
		vAt := func(k int) int { return snap[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && vAt(k-1) < vAt(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vAt(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, edit{' ', a[x]})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, edit{'+', b[y]})
			} else {
				x--
				rev = append(rev, edit{'-', a[x]})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

func replaceAll(a, b []string) []edit {
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, edit{'-', l})
	}
	for _, l := range b {
		out = append(out, edit{'+', l})
	}
	return out
}

// unified formats the edit script of a -> b as unified diff hunks.
func unified(a, b []string, nameA, nameB string) string {
	edits := lineDiff(a, b)
	var sb strings.Builder
	sb.WriteString("--- " + nameA + "\n+++ " + nameB + "\n")
	i := 0
	for i < len(edits) {
		for i < len(edits) && edits[i].op == ' ' {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(i-contextLines, 0)
		end := i
		for end < len(edits) {
			if edits[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(edits) && edits[run].op == ' ' {
				run++
			}
			if run == len(edits) || run-end > 2*contextLines {
				end = min(end+contextLines, len(edits))
				break
			}
			end = run
		}
		la, lb := 1, 1
		for _, e := range edits[:start] {
			if e.op != '+' {
				la++
			}
			if e.op != '-' {
				lb++
			}
		}
		ca, cb := 0, 0
		for _, e := range edits[start:end] {
			if e.op != '+' {
				ca++
			}
			if e.op != '-' {
				cb++
			}
		}
		sb.WriteString("@@ -" + hunkRange(la, ca) + " +" + hunkRange(lb, cb) + " @@\n")
		for _, e := range edits[start:end] {
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			sb.WriteByte('\n')
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, count int) string {
	if count == 0 {
		start--
	}
	if count == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(count)
}
