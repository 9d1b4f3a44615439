package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// table prints aligned columns, kubectl style.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, headers ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)}
	t.row(headers...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "\n", " ")
	}
	_, _ = fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }
