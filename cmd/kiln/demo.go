package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-dev/kiln/runs/demo"
	"github.com/kiln-dev/kiln/sandboxes"
)

// cmdDemo runs a real campaign without a model server: kiln run on the demo
// spec and its replay, then kiln report (with the SVG chart) and kiln export
// (a trainer-ready dataset folder), and prints how to open the dashboard.
func cmdDemo(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: kiln demo [--data DIR] [--serve [--addr HOST:PORT]]\n\n"+
			"Runs a c2x86 campaign over six built-in corpus functions with a replay of recorded model answers\n"+
			"(right ones, wrong ones, a repair turn, a tool call): no model server needed. Every answer is verified\n"+
			"in the sandbox. Writes the spec, the replay, the run database, report.svg and dataset/ to DIR.\n\n")
		fs.PrintDefaults()
	}
	var c common
	c.register(fs, e)
	dataFlag := fs.Lookup("data")
	dataFlag.Usage = "folder for the demo: spec, replay, run database, chart and dataset (created; a rerun adds a fresh campaign)"
	dataFlag.DefValue = "kiln-demo"
	c.data = dataFlag.DefValue
	fs.Lookup("log-level").DefValue = "warn"
	c.logLevel = "warn"
	serve := fs.Bool("serve", false, "after the demo, serve the dashboard on it (kiln serve) until interrupted")
	addr := fs.String("addr", demoAddr, "with --serve: the dashboard's listen address (loopback)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return badInput("unexpected arguments %q (the folder is --data DIR)", fs.Args())
	}
	id, err := runDemo(ctx, &c, *addr, e)
	if err != nil || !*serve {
		return err
	}
	fmt.Fprintf(e.stdout, "serving the dashboard at http://%s/campaigns/%s (Ctrl-C stops)\n", *addr, id)
	return cmdServe(ctx, append(c.passFlags(), "--addr", *addr), e)
}

// runDemo writes the spec and the replay into the demo folder, runs the
// campaign, the report and the export, prints where everything is, and
// returns the campaign's id.
func runDemo(ctx context.Context, c *common, addr string, e env) (string, error) {
	dir := c.data
	rerun, err := demo.Folder(dir)
	if errors.Is(err, demo.ErrFolder) {
		return "", badInput("%v", err)
	}
	if err != nil {
		return "", err
	}
	script, err := demo.Script()
	if err != nil {
		return "", err
	}
	specPath := filepath.Join(dir, "demo.yaml")
	for name, body := range map[string][]byte{"demo.yaml": []byte(demo.Spec), "answers.jsonl": script} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	if rerun {
		fmt.Fprintf(e.stdout, "kiln demo: %s holds an earlier demo; this run adds a fresh campaign beside it\n", dir)
	}
	fmt.Fprintf(e.stdout, "kiln demo: 6 C functions of the built-in c2x86 corpus, answered by a replay of recorded model answers\n"+
		"(no model server); every answer is assembled, linked and run in the sandbox and compared with gcc -O0.\n\n")
	pass := c.passFlags()
	fmt.Fprintf(e.stdout, "$ kiln run --data %s %s\n", dir, specPath)
	if err := cmdRun(ctx, append(pass, specPath), e); err != nil {
		var pe *sandboxes.PolicyError
		if errors.As(err, &pe) {
			return "", demoPolicyError(pe)
		}
		return "", fmt.Errorf("demo campaign: %w", err)
	}
	id, err := demo.Campaign(ctx, dir, e.stdout)
	if err != nil {
		return "", err
	}
	// The campaign is the newest named demo: the printed commands use
	// the name, the steps the id.
	svg := filepath.Join(dir, "report.svg")
	fmt.Fprintf(e.stdout, "\n$ kiln report --data %s --svg %s demo\n", dir, svg)
	if err := cmdReport(ctx, append(pass, "--svg", svg, id), e); err != nil {
		return "", fmt.Errorf("demo report: %w", err)
	}
	ds := filepath.Join(dir, "dataset") + string(filepath.Separator)
	fmt.Fprintf(e.stdout, "\n$ kiln export --data %s --format messages --trajectories -o %s demo\n", dir, ds)
	if err := cmdExport(ctx, append(pass, "--format", "messages", "--trajectories", "-o", ds, id), e); err != nil {
		return "", fmt.Errorf("demo export: %w", err)
	}
	url := "http://" + addr + "/campaigns/" + id
	serveCmd := "kiln serve --data " + dir
	if addr != demoAddr {
		serveCmd += " --addr " + addr
	}
	fmt.Fprintf(e.stdout, "\nspec and replay: %s, %s\nchart:           %s\ndataset:         %s (%s)\n"+
		"dashboard:       %s, then open %s\n",
		specPath, filepath.Join(dir, "answers.jsonl"), svg, ds, strings.Join(demo.FileNames(ds), ", "), serveCmd, url)
	return id, nil
}

// demoPolicyError says which sandbox layers this host lacks (not root,
// usually) and how to run the demo anyway.
func demoPolicyError(pe *sandboxes.PolicyError) error {
	var missing []sandboxes.Layer
	for _, m := range pe.Missing {
		missing = append(missing, m.Layer)
	}
	list := sandboxes.JoinLayers(missing, ",")
	return badInput("this host's sandbox lacks the layers %s (kiln doctor says why; as root they are usually there). "+
		"Run kiln demo as root, or with --allow-missing-layers %s: the demo runs only the answers shipped in kiln, "+
		"and its verdicts record the lowered policy", list, list)
}

// demoAddr is kiln serve's default listen address.
const demoAddr = "127.0.0.1:7878"

// passFlags are the flags a demo step passes on to the verbs it runs.
func (c *common) passFlags() []string {
	args := []string{"--data", c.data, "--log-level", c.logLevel}
	if c.cgroupParent != "" {
		args = append(args, "--cgroup-parent", c.cgroupParent)
	}
	if len(c.allowMissing) > 0 {
		args = append(args, "--allow-missing-layers", sandboxes.JoinLayers(c.allowMissing, ","))
	}
	return args
}
