package report

import (
	"fmt"
	"io"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// GC prints what kiln gc removed (or, dry, would remove) and kept, blobs
// younger than minAge among the kept.
func GC(w io.Writer, rep runs.GCReport, minAge time.Duration) {
	verb := "removed"
	if rep.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(w, "blobs: %d (%s): %d live (%s), %d unreferenced but younger than %s kept (%s)\n",
		rep.Blobs, ByteSize(rep.Bytes), rep.Live, ByteSize(rep.LiveBytes), rep.Young, minAge, ByteSize(rep.YoungBytes))
	fmt.Fprintf(w, "%s %d blobs, %s freed", verb, rep.Removed, ByteSize(rep.RemovedBytes))
	if rep.Completed > 0 {
		fmt.Fprintf(w, " (%d of them, %s, kept for pending runs since completed)", rep.Completed, ByteSize(rep.CompletedBytes))
	}
	fmt.Fprintf(w, "; %d empty folders\n", rep.Dirs)
	if rep.Missing > 0 {
		fmt.Fprintf(w, "warning: %d blobs that records refer to are missing from the store\n", rep.Missing)
	}
}

// ByteSize formats n bytes with a binary unit.
func ByteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
