package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/sandboxes"
)

// common holds the flags every store-using verb takes.
type common struct {
	data     string
	logLevel string
	// allowMissing lowers the sandbox policy (--allow-missing-layers).
	allowMissing []sandboxes.Layer
	// cgroupParent is where sandbox cgroups go (--cgroup-parent).
	cgroupParent string
}

// wiring returns the component builder for this verb, with the sandbox
// policy the flags ask for.
func (c *common) wiring(e env, log *slog.Logger, data string) *wiring {
	w := newWiring(e, log, data)
	w.allowMissing = c.allowMissing
	w.cgroupParent = c.cgroupParent
	return w
}

func (c *common) register(fs *flag.FlagSet, e env) {
	def := e.getenv("KILN_DATA")
	if def == "" {
		def = "kiln-data"
	}
	fs.StringVar(&c.data, "data", def, "data folder: the run database and blob store ($KILN_DATA)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.cgroupParent, "cgroup-parent", e.getenv("KILN_CGROUP_PARENT"),
		"cgroup (path as in /proc/self/cgroup) under which sandbox cgroups are made, on a cgroup-v2 host: a subtree delegated to kiln "+
			"(systemd Delegate=yes) whose controllers include memory and pids; default: kiln's own cgroup ($KILN_CGROUP_PARENT)")
	fs.Func("allow-missing-layers", "comma-separated sandbox layers that may be missing on this host ("+
		sandboxes.JoinLayers(sandboxes.Layers(), ", ")+"); lowers the isolation policy, which every verdict then records",
		func(v string) error {
			ls, err := sandboxes.ParseLayers(v)
			c.allowMissing = append(c.allowMissing, ls...)
			return err
		})
}

func (c *common) logger(e env) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, badInput("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: lvl})), nil
}

// openCampaign opens the store and finds the campaign ref names (id, unique
// id prefix or name). The caller closes the store.
func (c *common) openCampaign(ctx context.Context, e env, ref string) (*runs.Store, runs.Campaign, *slog.Logger, error) {
	log, err := c.logger(e)
	if err != nil {
		return nil, runs.Campaign{}, nil, err
	}
	st, err := c.openExisting(ctx, log)
	if err != nil {
		return nil, runs.Campaign{}, nil, err
	}
	camp, err := st.Campaign(ctx, ref)
	if err != nil {
		st.Close()
		return nil, runs.Campaign{}, nil, c.campaignError(ref, err)
	}
	return st, camp, log, nil
}

// storedSpec parses a campaign's stored spec; relative paths resolve against
// the folder the spec was submitted from.
// With inputs false, the files it names (corpus, templates, scripts) need
// not exist: rescoring a campaign reads only the store.
func storedSpec(camp runs.Campaign, inputs bool) (*spec.Spec, error) {
	opt := specOptions(camp.SpecDir)
	opt.CheckPaths = inputs
	sp, err := spec.Parse(camp.Spec, camp.Name+".yaml", opt)
	if err != nil {
		return nil, fmt.Errorf("stored spec of campaign %s: %w", camp.ID, err)
	}
	return sp, nil
}

func (c *common) open(ctx context.Context, log *slog.Logger) (*runs.Store, error) {
	st, err := runs.Open(ctx, c.data, log)
	if err != nil {
		return nil, fmt.Errorf("open data folder %s: %w", c.data, err)
	}
	return st, nil
}

// parseFlags parses args into fs, turning flag errors into bad-input
// errors. A bad flag is one message (the caller prints it), naming -h for
// the list; -h prints the flags.
func parseFlags(fs *flag.FlagSet, args []string, e env) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(interleave(fs, args))
	fs.SetOutput(e.stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return usageError{err}
	case err != nil:
		return badInput("%v (kiln %s -h lists the flags)", err, fs.Name())
	}
	return nil
}

// interleave moves flags that follow positional arguments to the front, so
// that "kiln report RUN --json" works like "kiln report --json RUN".
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				continue
			}
			if i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		}
	}
	return append(flags, pos...)
}

func cmdRun(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one spec file, got %d arguments", fs.NArg())
	}
	path := fs.Arg(0)
	data, err := os.ReadFile(path)
	if err != nil {
		return badInput("read spec: %v", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return badInput("spec folder: %v", err)
	}
	sp, err := spec.Parse(data, path, specOptions(dir))
	if err != nil {
		return usageError{err}
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	st, err := c.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// Check that the plan can be built before the campaign is recorded.
	w := c.wiring(e, log, c.data)
	defer w.close()
	if _, err := w.plan(ctx, sp); err != nil {
		return usageError{err}
	}
	camp, err := st.CreateCampaign(ctx, runs.Campaign{Name: sp.Name, Lane: sp.Lane, Spec: data, SpecDir: dir})
	if err != nil {
		return fmt.Errorf("create campaign: %w", err)
	}
	fmt.Fprintf(e.stderr, "kiln: campaign %s (%s), data in %s; resume with: kiln resume --data %s %s\n",
		camp.ID, camp.Name, c.data, c.data, camp.ID)
	return runCampaign(ctx, st, w, camp, sp, e)
}

func cmdResume(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("resume", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	st, camp, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	switch camp.State {
	case runs.CampaignDone, runs.CampaignCancelled:
		fmt.Fprintf(e.stdout, "campaign %s is %s; nothing to resume\n", camp.ID, camp.State)
		return nil
	}
	sp, err := storedSpec(camp, true)
	if err != nil {
		return err
	}
	if camp.State == runs.CampaignFailed {
		if err := st.SetCampaignState(ctx, camp.ID, runs.CampaignQueued, "resumed"); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	}
	return runCampaign(ctx, st, c.wiring(e, log, c.data), camp, sp, e)
}

// runCampaign runs camp in the foreground with a progress display. It
// closes w's sandbox runner when done, so that a campaign that ends leaves no
// scratch dirs, cgroups or uid slot behind.
func runCampaign(ctx context.Context, st *runs.Store, w *wiring, camp runs.Campaign, sp *spec.Spec, e env) error {
	defer w.close()
	plan, err := w.plan(ctx, sp)
	if err != nil {
		return err
	}
	pr := report.NewProgress(e.stderr, isTerminal(e.stderr))
	var faults report.Faults
	eng := &engine.Engine{Store: st, Log: w.log, Progress: pr.Update, OnFault: faults.Add}
	n, err := eng.Run(ctx, camp.ID, plan, e.soft)
	pr.Finish()
	fmt.Fprintf(e.stdout, "campaign %s: %d tasks, %d done, %d pass, %d fail, %d pending, %d task faults, %d queued\n",
		camp.ID, n.Tasks, n.Done, n.Pass, n.Fail, n.Pending, n.TaskFaults, n.Queued)
	faults.Print(e.stdout)
	if errors.Is(err, engine.ErrStopped) {
		fmt.Fprintf(e.stdout, "stopped before the end; continue with: kiln resume %s\n", camp.ID)
		return nil
	}
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdStatus(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return badInput("want at most one campaign id or name, got %q", fs.Args())
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	st, err := c.openExisting(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	var camps []runs.Campaign
	if fs.NArg() > 0 {
		camp, err := st.Campaign(ctx, fs.Arg(0))
		if err != nil {
			return c.campaignError(fs.Arg(0), err)
		}
		camps = []runs.Campaign{camp}
	} else if camps, err = st.ListCampaigns(ctx); err != nil {
		return err
	}
	rows, err := report.StatusRows(ctx, st, camps)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, rows)
	}
	return report.Status(e.stdout, rows)
}

func cmdReport(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	asJSON := fs.Bool("json", false, "print JSON")
	round := fs.Int("round", -1, "only this round in the category table (-1: all rounds)")
	svg := fs.String("svg", "", "also write an SVG chart of the pass rate per category across rounds to this file")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	st, camp, _, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	return writeReport(ctx, st, camp, *round, *asJSON, *svg, e)
}

func cmdRescore(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("rescore", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	conc := fs.Int("concurrency", 2, "verifications in parallel")
	pending := fs.Bool("pending", false, "only complete the verdicts with pending stages (a GPU run skipped on a CPU host), from the executables stored with them; needs a GPU, not the compilers")
	asJSON := fs.Bool("json", false, "print JSON")
	gpus := fs.Int("gpus", 0, "judge on the first N GPUs of this host (default: the campaign's gpu.devices)")
	slots := fs.Int("slots-per-device", 0, "evaluations at once on each GPU (default: the campaign's gpu.slots_per_device)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	if *gpus < 0 {
		return badInput("--gpus %d: want 1 or more (or leave it out)", *gpus)
	}
	if *slots != 0 && (*slots < 1 || *slots > spec.MaxSlotsPerDevice) {
		return badInput("--slots-per-device %d: want 1-%d", *slots, spec.MaxSlotsPerDevice)
	}
	st, camp, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	sp, err := storedSpec(camp, false)
	if err != nil {
		return err
	}
	// this host's GPUs, not necessarily those of the host that ran the campaign
	if *gpus > 0 {
		sp.GPU.Devices = *gpus
	}
	if *slots > 0 {
		sp.GPU.SlotsPerDevice = *slots
	}
	w := c.wiring(e, log, c.data)
	defer w.close()
	lane, err := w.lane(ctx, sp)
	if err != nil {
		return err
	}
	reg, err := w.lanes()
	if err != nil {
		return err
	}
	sum, err := engine.Rescore(ctx, st, camp.ID, lane, engine.RescoreOptions{Concurrency: *conc, PendingOnly: *pending,
		Labels: engine.Labels{Labeler: reg.Rules().Labeler()}},
		w.toolchain(), w.policy(), log)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, sum)
	}
	report.Rescore(e.stdout, camp.ID, sum)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
