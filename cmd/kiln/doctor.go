package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
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
	lanes := laneReadiness(reg)
	if *asJSON {
		return writeJSON(e.stdout, map[string]any{"toolchains": rep, "sandbox": sandbox, "lanes": laneNames(), "lane_toolchains": lanes})
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
	for _, l := range lanes {
		state := "ready"
		if len(l.Missing) > 0 {
			state = "missing " + strings.Join(l.Missing, ", ")
		}
		fmt.Fprintf(e.stdout, "  %-12s %s (needs %s)\n", l.Lane, state, strings.Join(l.Needs, ", "))
	}
	return nil
}

// laneToolchains is whether a lane's toolchains (kit.Kit.Toolchains) are
// on this host.
type laneToolchains struct {
	Lane    string   `json:"lane"`
	Needs   []string `json:"needs"`
	Missing []string `json:"missing,omitempty"`
}

func laneReadiness(reg *toolchain.Registry) []laneToolchains {
	var out []laneToolchains
	for _, k := range lanes.Kits() {
		l := laneToolchains{Lane: k.Name, Needs: k.Toolchains}
		for _, t := range k.Toolchains {
			if _, ok := reg.Get(t); !ok {
				l.Missing = append(l.Missing, t)
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lane < out[j].Lane })
	return out
}
