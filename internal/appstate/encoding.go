package appstate

import (
	"bytes"
	"compress/gzip"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"sync"
)

// formatV1 is the first byte of an encoded state: gzip-compressed gob.
// Gob rather than JSON because the YAML texts it carries are long strings
// full of newlines, which gob copies and JSON must escape and unescape
// (decoding a 40-resource state is several times faster).
// A reader meeting another version treats the value as absent, so a
// rolling upgrade that changes the format costs one reconcile per app.
const formatV1 byte = 1

// DefaultMaxSize caps an encoded state (compressed).
const DefaultMaxSize = 4 << 20

// maxDecoded bounds the decompressed size, against a value crafted to
// expand without end (signatures make that unlikely, not impossible with a
// leaked secret).
const maxDecoded = 256 << 20

// ErrTooLarge is returned by Encode when a state does not fit the cap even
// without the texts of its managed resources.
var ErrTooLarge = errors.New("application state too large")

// errFormat marks a value of an unknown format version.
var errFormat = errors.New("unknown application state format")

// Encode returns the versioned, compressed encoding of s. A state whose
// encoding exceeds maxSize (DefaultMaxSize when <= 0) is encoded again
// without the Live, Desired and Diff texts and marked Truncated; one still
// too large is refused with ErrTooLarge.
func Encode(s State, maxSize int) ([]byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	b, err := encode(s)
	if err != nil {
		return nil, err
	}
	if len(b) <= maxSize {
		return b, nil
	}
	s.Managed = stripTexts(s.Managed)
	s.Truncated = true
	if b, err = encode(s); err != nil {
		return nil, err
	}
	if len(b) > maxSize {
		return nil, fmt.Errorf("%w: %s/%s: %d bytes over a cap of %d", ErrTooLarge, s.App.Namespace, s.App.Name, len(b), maxSize)
	}
	return b, nil
}

func stripTexts(in []ManagedResource) []ManagedResource {
	out := make([]ManagedResource, len(in))
	for i, m := range in {
		m.Live, m.Desired, m.Diff = "", "", ""
		out[i] = m
	}
	return out
}

// gzipWriters reuses compressors, which allocate about a megabyte each.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level: never fails
	return zw
}}

func encode(s State) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(formatV1)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if err := gob.NewEncoder(zw).Encode(s); err != nil {
		return nil, fmt.Errorf("encode state of %s/%s: %w", s.App.Namespace, s.App.Name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reads a state written by Encode.
func Decode(b []byte) (*State, error) {
	if len(b) == 0 || b[0] != formatV1 {
		return nil, errFormat
	}
	zr, err := gzip.NewReader(bytes.NewReader(b[1:]))
	if err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	defer func() { _ = zr.Close() }()
	var s State
	dec := gob.NewDecoder(io.LimitReader(zr, maxDecoded))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	return &s, nil
}
