package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// specForLane returns a spec of lane with every default applied, for verbs
// that run a lane outside a campaign (kiln verify).
func specForLane(lane string) *spec.Spec {
	sp := &spec.Spec{Lane: lane}
	sp.Defaults()
	return sp
}

func cmdDoctor(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	reg, err := w.registry(ctx, true)
	if err != nil {
		return err
	}
	rep := reg.Report()
	sandbox := map[string]any{}
	if r, err := w.sandbox(); err != nil {
		sandbox["error"] = err.Error()
	} else {
		sandbox["capabilities"] = r.Capabilities()
	}
	ready := lanes.Readiness(reg)
	if *asJSON {
		return writeJSON(e.stdout, map[string]any{"toolchains": rep, "sandbox": sandbox, "lanes": laneNames(), "lane_toolchains": ready})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
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
	fmt.Fprintf(e.stdout, "\nGPU: %s\n", gpu)
	for _, p := range rep.Problems {
		fmt.Fprintf(e.stdout, "problem: %s\n", p)
	}
	if err, ok := sandbox["error"]; ok {
		fmt.Fprintf(e.stdout, "\nsandbox: UNAVAILABLE: %v\n", err)
	} else {
		fmt.Fprintf(e.stdout, "\nsandbox: %s\n", w.policy())
	}
	fmt.Fprintln(e.stdout, "\nlanes:")
	for _, l := range ready {
		state := "ready"
		if len(l.Missing) > 0 {
			state = "missing " + strings.Join(l.Missing, ", ")
		}
		fmt.Fprintf(e.stdout, "  %-12s %s (needs %s)\n", l.Lane, state, strings.Join(l.Needs, ", "))
	}
	return nil
}
