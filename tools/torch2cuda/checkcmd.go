package torch2cuda

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kiln-dev/kiln/tools/kit"
)

// checkChunk is how many problems one judge process checks in the verb
// (it reports progress between them).
const checkChunk = 64

// checkProblemsCommand is `kiln torch2cuda check-problems --dir DIR`: the
// problem check (check.go) over a folder of problems, one line each: ok,
// the reference's time and peak memory, or why it cannot run. Exit status
// 0 when every problem was checked (sound or a task fault, reported), 2 on
// bad input, 1 when the checks could not run. (Lane commands take flags
// only: kiln refuses positional arguments to them.)
func checkProblemsCommand() kit.Command {
	return kit.Command{
		Verb: "torch2cuda check-problems",
		Summary: "check a folder of KernelBench-format problems on this host's GPU: each reference loads, runs and agrees " +
			"with itself; its time and peak memory, or why it cannot run (--dir DIR [--json])",
		Flags: func(fs *flag.FlagSet) func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
			dir := fs.String("dir", "", "the problems: a KernelBench checkout (its KernelBench/ folder), level*/ folders of .py files, or .py files (required)")
			levels := fs.String("levels", "", "comma-separated level folders to check (level1,level3 or 1,3); default all")
			asJSON := fs.Bool("json", false, "print the checks as JSON")
			device := fs.String("device", "", `"cpu" checks on the CPU; default: the GPU`)
			timeout := fs.Duration("timeout", 3*time.Minute, "bound on one problem's check")
			return func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
				probs, err := problemsToCheck(*dir, *levels)
				if err != nil {
					return err
				}
				if *device != "" && *device != "cpu" {
					return kit.BadInput("--device %q: want cpu (or nothing: the GPU)", *device)
				}
				if *timeout < time.Second {
					return kit.BadInput("--timeout %s: want at least 1s", *timeout)
				}
				l, err := openLane(ctx, h, func(c *Config) { c.Device, c.CheckTimeout = *device, *timeout })
				if err != nil {
					return err
				}
				defer l.Close()
				if why := l.checkPending(); why != "" {
					return fmt.Errorf("cannot check problems here: %s (--device cpu checks on the CPU)", why)
				}
				start := time.Now()
				cs, err := checkInChunks(ctx, l, probs, stderr)
				if err != nil {
					return err
				}
				if *asJSON {
					return printChecksJSON(stdout, probs, cs, time.Since(start))
				}
				return printChecks(stdout, probs, cs, time.Since(start))
			}
		},
	}
}

// problemsToCheck loads the problems of dir (of its KernelBench/ folder
// when it is a KernelBench checkout), keeping the levels named.
func problemsToCheck(dir, levels string) ([]Problem, error) {
	if dir == "" {
		return nil, kit.BadInput("--dir is required: a folder of problems (level*/NNN_name.py, or a KernelBench checkout)")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "level*")); len(m) == 0 {
		if st, err := os.Stat(filepath.Join(dir, "KernelBench")); err == nil && st.IsDir() {
			dir = filepath.Join(dir, "KernelBench")
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, kit.BadInput("--dir %s: not a folder of problems", dir)
	}
	probs, err := LoadProblems(os.DirFS(dir), ".")
	if err != nil {
		return nil, kit.BadInput("--dir %s: %v", dir, err)
	}
	if levels == "" {
		return probs, nil
	}
	var want []string
	for _, lv := range strings.Split(levels, ",") {
		lv = strings.TrimSpace(lv)
		if lv != "" && !strings.HasPrefix(lv, "level") && lv != "custom" {
			lv = "level" + lv
		}
		if lv != "" {
			want = append(want, lv)
		}
	}
	probs = slices.DeleteFunc(probs, func(p Problem) bool { return !slices.Contains(want, p.Level) })
	if len(probs) == 0 {
		return nil, kit.BadInput("--levels %s: no problem of those levels in %s", levels, dir)
	}
	return probs, nil
}

// checkInChunks checks the problems checkChunk at a time, reporting
// progress to w.
func checkInChunks(ctx context.Context, l *Lane, probs []Problem, w io.Writer) ([]ProblemCheck, error) {
	fmt.Fprintf(w, "checking %d problems on %s\n", len(probs), strings.Replace(l.deviceKind(), "|", " with ", 1))
	out := make([]ProblemCheck, 0, len(probs))
	start := time.Now()
	for i := 0; i < len(probs); i += checkChunk {
		chunk := probs[i:min(i+checkChunk, len(probs))]
		refs := make([]string, len(chunk))
		for k, p := range chunk {
			refs[k] = p.Source
		}
		cs, err := l.CheckProblems(ctx, refs)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
		fmt.Fprintf(w, "  %d/%d checked (%s)\n", len(out), len(probs), time.Since(start).Round(time.Second))
	}
	return out, nil
}

// checkRow is one problem's line in the verb's JSON.
type checkRow struct {
	ID    string `json:"id"`
	Level string `json:"level"`
	ProblemCheck
}

func printChecksJSON(w io.Writer, probs []Problem, cs []ProblemCheck, took time.Duration) error {
	rows := make([]checkRow, len(cs))
	for i, c := range cs {
		c.ID = ""
		rows[i] = checkRow{ID: probs[i].ID, Level: probs[i].Level, ProblemCheck: c}
	}
	ok, faults, cached := checkCounts(cs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{"problems": rows, "summary": map[string]any{"problems": len(cs), "ok": ok,
		"task_faults": faults, "cached": cached, "seconds": took.Seconds()}})
}

func checkCounts(cs []ProblemCheck) (ok int, faults map[string]int, cached int) {
	faults = map[string]int{}
	for _, c := range cs {
		if c.OK {
			ok++
		} else {
			faults[c.Reason]++
		}
		if c.Cached {
			cached++
		}
	}
	return ok, faults, cached
}

func printChecks(w io.Writer, probs []Problem, cs []ProblemCheck, took time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROBLEM\tSTATUS\tREF MS\tDRAW\tPEAK GB\tINPUTS GB\tNOTE")
	for i, c := range cs {
		status, note := "ok", c.DrawNote
		if !c.OK {
			status, note = c.Reason, firstLine(strings.TrimPrefix(c.Diagnostic, "the problem's reference failed ("+c.Reason+"): "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", probs[i].ID, status, fig(c.RefMS, "%.4g"), c.InputDraw,
			gb(c.PeakBytes), gb(c.InputBytes), clip(note, 120))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ok, faults, cached := checkCounts(cs)
	var parts []string
	for r, n := range faults {
		parts = append(parts, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(parts)
	line := fmt.Sprintf("%d problems: %d ok", len(cs), ok)
	if len(parts) > 0 {
		line += fmt.Sprintf(", %d task faults (%s)", len(cs)-ok, strings.Join(parts, ", "))
	}
	_, err := fmt.Fprintf(w, "%s; %d from the cache; %s\n", line, cached, took.Round(time.Second))
	return err
}

func fig(p *float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p)
}

func gb(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(*p)/1e9)
}
