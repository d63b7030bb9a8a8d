package main

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
)

// specForLane returns a spec of lane with every default applied, for verbs
// that run a lane outside a campaign (kiln verify).
func specForLane(lane string) *spec.Spec {
	sp := &spec.Spec{Lane: lane}
	sp.Defaults()
	return sp
}

// toolInfo is one toolchain program found (or not) on this host.
type toolInfo struct {
	Name    string `json:"name"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// probes name the programs kiln's lanes use and how to read their versions.
var probes = []struct {
	name string
	args []string
}{
	{"gcc", []string{"-dumpfullversion"}},
	{"as", []string{"--version"}},
	{"ld", []string{"--version"}},
}

// detectToolchains runs every probe in parallel, each bounded by a timeout.
func detectToolchains(ctx context.Context) []toolInfo {
	out := make([]toolInfo, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ti := toolInfo{Name: p.name}
			path, err := exec.LookPath(p.name)
			if err != nil {
				ti.Error = "not found"
				out[i] = ti
				return
			}
			ti.Path = path
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			b, err := exec.CommandContext(cctx, path, p.args...).Output()
			if err != nil {
				ti.Error = err.Error()
			} else {
				ti.Version = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
			}
			out[i] = ti
		}()
	}
	wg.Wait()
	return out
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
	tcs := detectToolchains(ctx)
	w := newWiring(e, log, verifyDataDir(c.data))
	sandbox := map[string]any{}
	if r, err := w.sandbox(); err != nil {
		sandbox["error"] = err.Error()
	} else {
		sandbox["capabilities"] = r.Capabilities()
	}
	if *asJSON {
		return writeJSON(e.stdout, map[string]any{"toolchains": tcs, "sandbox": sandbox, "lanes": lanes})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tVERSION\tPATH")
	for _, t := range tcs {
		v := t.Version
		if t.Error != "" {
			v = "MISSING: " + t.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, v, t.Path)
	}
	tw.Flush()
	if err, ok := sandbox["error"]; ok {
		fmt.Fprintf(e.stdout, "\nsandbox: UNAVAILABLE: %v\n", err)
	} else {
		fmt.Fprintf(e.stdout, "\nsandbox: %s\n", w.policy())
	}
	fmt.Fprintf(e.stdout, "lanes: %s\n", strings.Join(lanes, ", "))
	return nil
}
