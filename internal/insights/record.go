package insights

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Bounds of one app's log.
const (
	// Retention is how long a record is kept.
	Retention = 90 * 24 * time.Hour
	// MaxRecords is the most records one app keeps; the oldest go first.
	// At about 100 bytes a record, an app's log stays far below a
	// ConfigMap's 1 MiB.
	MaxRecords = 2000
)

// Kind says what a Record records.
type Kind string

// Record kinds.
const (
	// KindSync is a sync operation that ended.
	KindSync Kind = "sync"
	// KindState is a change of the app's health or sync status.
	KindState Kind = "state"
)

// Sync operation phases a KindSync record carries, as in
// status.operationState.phase.
const (
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
	PhaseError     = "Error"
)

// Status values the computation looks for.
const (
	HealthHealthy  = "Healthy"
	HealthDegraded = "Degraded"
	SyncSynced     = "Synced"
	SyncOutOfSync  = "OutOfSync"
)

// Record is one entry of an app's log. Times are Unix seconds.
type Record struct {
	Kind Kind `json:"k"`
	// At is when the sync finished, or when the status changed.
	At int64 `json:"t"`
	// Started is when the sync started (KindSync).
	Started int64 `json:"st,omitempty"`
	// Phase is the sync's final phase (KindSync).
	Phase string `json:"p,omitempty"`
	// Revision is the revision the sync applied (KindSync).
	Revision string `json:"r,omitempty"`
	// CommitAt is the commit time of Revision, 0 when unknown (not a Git
	// source, or the repository server could not say).
	CommitAt int64 `json:"c,omitempty"`
	// Health and Sync are the app's status after the change (KindState).
	Health string `json:"h,omitempty"`
	Sync   string `json:"s,omitempty"`
}

// Validate reports what is wrong with r, if anything.
func (r Record) Validate() error {
	switch r.Kind {
	case KindSync:
		if r.Started > r.At {
			return fmt.Errorf("sync record at %d starts later, at %d", r.At, r.Started)
		}
	case KindState:
	default:
		return fmt.Errorf("record kind %q: want %q or %q", r.Kind, KindSync, KindState)
	}
	if r.At <= 0 {
		return fmt.Errorf("%s record without a time", r.Kind)
	}
	return nil
}

// Encode writes records as JSON lines, the form a ConfigMap holds.
func Encode(records []Record) string {
	var b strings.Builder
	for _, r := range records {
		line, _ := json.Marshal(r) // a struct of strings and numbers
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// Decode reads what Encode wrote. A line that is not a valid record is
// an error naming its line number.
func Decode(s string) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Trim sorts records by time and drops those older than Retention
// before now and the oldest past MaxRecords.
func Trim(records []Record, now time.Time) []Record {
	slices.SortStableFunc(records, func(a, b Record) int { return compareInt(a.At, b.At) })
	cut := now.Add(-Retention).Unix()
	i, _ := slices.BinarySearchFunc(records, cut, func(r Record, t int64) int { return compareInt(r.At, t) })
	records = records[i:]
	if len(records) > MaxRecords {
		records = records[len(records)-MaxRecords:]
	}
	return records
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
