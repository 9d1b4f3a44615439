package command

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table prints aligned columns, kubectl style.
type Table struct{ w *tabwriter.Writer }

// NewTable starts a table on out with a row of headers.
func NewTable(out io.Writer, headers ...string) *Table {
	t := &Table{w: tabwriter.NewWriter(out, 0, 4, 3, ' ', 0)}
	t.Row(headers...)
	return t
}

// Row adds a row; line breaks in cells become spaces.
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "\n", " ")
	}
	_, _ = fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

// Flush prints the rows, aligned.
func (t *Table) Flush() error { return t.w.Flush() }
