package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// Doctor prints kiln doctor: the toolchains found (rep), the GPU, the
// problems, the sandbox's policy (or sandboxErr, when it is unavailable)
// and which lanes are ready.
func Doctor(w io.Writer, rep toolchain.Report, policy string, sandboxErr error, ready []lanes.Toolchains) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tVERSION\tTARGETS\tPATH")
	for _, t := range rep.Tools {
		v := t.Version
		if !t.Found() {
			v = "MISSING"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, v, strings.Join(t.Targets, ","), t.Path)
	}
	tw.Flush()
	gpu := "none"
	if rep.GPU.Present {
		gpu = strings.Join(rep.GPU.Names, ", ")
	}
	fmt.Fprintf(w, "\nGPU: %s\n", gpu)
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if sandboxErr != nil {
		fmt.Fprintf(w, "\nsandbox: UNAVAILABLE: %v\n", sandboxErr)
	} else {
		fmt.Fprintf(w, "\nsandbox: %s\n", policy)
	}
	fmt.Fprintln(w, "\nlanes:")
	for _, l := range ready {
		state := "ready"
		if len(l.Missing) > 0 {
			state = "missing " + strings.Join(l.Missing, ", ")
		}
		fmt.Fprintf(w, "  %-12s %s (needs %s)\n", l.Lane, state, strings.Join(l.Needs, ", "))
	}
}
