package helm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/graphcd/graphcd/reposerver/archive"
)

// extractChart unpacks a gzipped chart archive (a single top directory
// holding Chart.yaml and the rest) into dest, dropping the top directory
// as Helm does. Only regular files are written; links, devices and paths
// that would leave dest are refused or skipped. Sizes are bounded by lim.
func extractChart(r io.Reader, dest string, lim DownloadLimits) error {
	err := archive.ExtractTarGz(r, dest, archive.Options{
		Limits:   archive.Limits{MaxSize: lim.MaxDecompressedSize, MaxFileSize: maxChartFileSize},
		StripTop: true,
	})
	if err != nil {
		return fmt.Errorf("chart archive: %w", err)
	}
	if fi, err := os.Lstat(filepath.Join(dest, "Chart.yaml")); err != nil || !fi.Mode().IsRegular() {
		return errors.New("read chart archive: no Chart.yaml in the chart's top directory")
	}
	return nil
}
