package command

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// maxInputFile bounds a file given to a command.
const maxInputFile = 64 << 20

// ReadInput reads a file ("-" for the command's stdin) of at most 64 MiB.
func ReadInput(c *cobra.Command, path string) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = c.InOrStdin()
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, errors.Unwrap(err))
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxInputFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxInputFile {
		return nil, fmt.Errorf("read %s: larger than %d MiB", path, maxInputFile>>20)
	}
	return b, nil
}
