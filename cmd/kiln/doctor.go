package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kiln-dev/kiln/runs/report"
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
	r, sbErr := w.sandbox()
	if sbErr != nil {
		sandbox["error"] = sbErr.Error()
	} else {
		sandbox["capabilities"] = r.Capabilities()
		sandbox["trampoline"] = r.InitBinary()
	}
	ready := lanes.Readiness(reg)
	if *asJSON {
		return writeJSON(e.stdout, map[string]any{"toolchains": rep, "sandbox": sandbox, "lanes": laneNames(), "lane_toolchains": ready})
	}
	report.Doctor(e.stdout, rep, w.policy(), sbErr, ready)
	if sbErr == nil {
		fmt.Fprintf(e.stdout, "sandbox trampoline: %s\n", trampolineNote(r.InitBinary()))
	}
	return nil
}

// trampolineNote says which executable starts the sandboxed runs.
func trampolineNote(path string) string {
	if path == "/proc/self/exe" {
		return "kiln itself (no kiln-sandbox-init beside it: each run re-executes kiln, about 50 ms of CPU more; ./setup.sh builds bin/kiln-sandbox-init)"
	}
	return path
}
