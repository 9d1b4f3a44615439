package migration

import (
	"fmt"
	"io"
	"strings"
)

// Report says what an import carries over.
type Report struct {
	// Source and Target are Argo CD's and graphcd's namespaces.
	Source string `json:"source"`
	Target string `json:"target"`
	// Warnings are what to do before --apply (stop Argo CD's controller).
	Warnings []string `json:"warnings,omitempty"`
	// Objects has one entry per Argo CD object read.
	Objects []Object `json:"objects"`
}

// Object is one Argo CD object's part of a Report.
type Object struct {
	// From names the Argo CD object, "Kind namespace/name".
	From string `json:"from"`
	// To names the graphcd object written; empty when nothing is.
	To string `json:"to,omitempty"`
	// Unchanged are what carries over as it is.
	Unchanged []string `json:"unchanged,omitempty"`
	// Changed are what changes, and how.
	Changed []string `json:"changed,omitempty"`
	// Unsupported are what cannot move: features graphcd lacks, fields
	// it does not know, keys with no equivalent.
	Unsupported []string `json:"unsupported,omitempty"`
}

func (o *Object) same(format string, args ...any) {
	o.Unchanged = append(o.Unchanged, fmt.Sprintf(format, args...))
}

func (o *Object) change(format string, args ...any) {
	o.Changed = append(o.Changed, fmt.Sprintf(format, args...))
}

func (o *Object) unsupported(format string, args ...any) {
	o.Unsupported = append(o.Unsupported, fmt.Sprintf(format, args...))
}

// WriteText writes r for a terminal: one block per object, a line per
// finding, each line starting with what it is (unchanged, changed,
// cannot move).
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Argo CD in namespace %s -> graphcd in namespace %s\n", r.Source, r.Target)
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", warn)
	}
	for _, o := range r.Objects {
		to := o.To
		if to == "" {
			to = "(nothing)"
		}
		fmt.Fprintf(&b, "\n%s -> %s\n", o.From, to)
		for _, l := range o.Unchanged {
			fmt.Fprintf(&b, "  unchanged:   %s\n", l)
		}
		for _, l := range o.Changed {
			fmt.Fprintf(&b, "  changed:     %s\n", l)
		}
		for _, l := range o.Unsupported {
			fmt.Fprintf(&b, "  cannot move: %s\n", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
