package selftest

import (
	"fmt"
	"io"
)

// Print writes kiln selftest's text: the sandbox policy, each case's line,
// the counts and, when measured, the overhead.
func Print(w io.Writer, policy string, results []CaseResult, ov *Overhead) {
	passed, failed, skipped := Summary(results)
	fmt.Fprintf(w, "sandbox: %s\n\n", policy)
	for _, res := range results {
		fmt.Fprintln(w, res.String())
	}
	fmt.Fprintf(w, "\n%d contained, %d escaped, %d skipped (a layer this host lacks)\n", passed, failed, skipped)
	if ov != nil {
		fmt.Fprintf(w, "overhead: median %s sandboxed vs %s bare over %d runs (+%s per run)\n",
			ov.Sandbox.Median, ov.Bare.Median, ov.Runs, ov.Added)
	}
}
