package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// compileBench is what `kiln bench compile` measured.
type compileBench struct {
	Programs int      `json:"programs"`
	Jobs     int      `json:"jobs"`
	Rounds   int      `json:"rounds"`
	NVCC     string   `json:"nvcc"`
	Command  []string `json:"command"` // nvcc's arguments, the same in every mode
	CPUs     int      `json:"cpus"`
	// Seconds per round for the whole corpus, in each mode.
	PlainSeconds      []float64 `json:"plain_seconds"`       // nvcc | xargs -P jobs, no sandbox, no cache
	PlainTmpfsSeconds []float64 `json:"plain_tmpfs_seconds"` // the same in folders on /dev/shm (kiln's scratch is a tmpfs)
	ColdSeconds       []float64 `json:"cold_seconds"`        // kiln's farm, empty cache
	CachedSeconds     []float64 `json:"cached_seconds"`      // the same lane again (memory cache)
	DiskCachedSeconds []float64 `json:"disk_cached_seconds"` // a new lane on the same cache dir
	// Medians and ratios.
	PlainMedian      float64  `json:"plain_median_s"`
	PlainTmpfsMedian float64  `json:"plain_tmpfs_median_s"`
	ColdMedian       float64  `json:"cold_median_s"`
	CachedMedian     float64  `json:"cached_median_s"`
	DiskCachedMedian float64  `json:"disk_cached_median_s"`
	ColdOverPlain    float64  `json:"cold_over_plain"`       // < 1: kiln cold is faster than plain nvcc
	ColdOverTmpfs    float64  `json:"cold_over_plain_tmpfs"` // the same against plain nvcc on a tmpfs
	ColdOverCached   float64  `json:"cold_over_cached"`      // speed-up of the memory cache
	ColdOverDisk     float64  `json:"cold_over_disk_cache"`  // speed-up of the disk cache
	Failed           []string `json:"failed,omitempty"`      // programs nvcc rejected (same in every mode)
}

// cmdBench runs a benchmark; the only one is "compile".
func cmdBench(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || args[0] != "compile" {
		return badInput("bench: want `kiln bench compile`")
	}
	fs := flag.NewFlagSet("bench compile", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	jobs := fs.Int("jobs", 0, "compiles in parallel in every mode (default: the number of CPUs)")
	rounds := fs.Int("rounds", 3, "rounds; each runs plain nvcc, then kiln cold, cached and disk-cached")
	limit := fs.Int("limit", 0, "use only the first N corpus programs (0: all)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args[1:], e); err != nil {
		return err
	}
	if *rounds < 1 {
		return badInput("--rounds: want at least 1")
	}
	n := *jobs
	if n <= 0 {
		n = runtime.NumCPU()
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	items, err := prompts.LoadBuiltinCUDACorpus()
	if err != nil {
		return err
	}
	if *limit > 0 && *limit < len(items) {
		items = items[:*limit]
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	reg, err := w.registry(ctx, false)
	if err != nil {
		return err
	}
	nvcc, ok := reg.Get(toolchain.NVCC)
	if !ok {
		return reg.Require(toolchain.NVCC)
	}
	box, err := w.sandbox()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kiln-bench-compile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	newLane := func(cacheDir string) (*cudasynth.Lane, error) {
		return cudasynth.New(cudasynth.Config{Sandbox: box, Toolchains: reg, CacheDir: cacheDir, Parallel: n, Logger: log})
	}
	probe, err := newLane(filepath.Join(tmp, "probe-cache"))
	if err != nil {
		return err
	}
	b := compileBench{Programs: len(items), Jobs: n, Rounds: *rounds, NVCC: nvcc.Version,
		Command: probe.CUDACompileArgs(), CPUs: runtime.NumCPU()}

	// Plain nvcc: one folder per program (nvcc --keep writes program.* into
	// the working folder), xargs -P runs them.
	// The same again on a tmpfs, where kiln's sandbox scratch lives: nvcc
	// writes megabytes of intermediates, so the file system matters.
	plainDir := filepath.Join(tmp, "plain")
	roots := []string{plainDir}
	shm, err := os.MkdirTemp("/dev/shm", "kiln-bench-compile-")
	if err == nil {
		defer os.RemoveAll(shm)
		roots = append(roots, shm)
	} else {
		fmt.Fprintf(e.stderr, "no /dev/shm (%v): the plain-on-tmpfs mode is left out\n", err)
	}
	var dirs []string
	for _, it := range items {
		for _, root := range roots {
			d := filepath.Join(root, it.ID)
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, cudasynth.SourceFile), []byte(it.Program), 0o644); err != nil {
				return err
			}
		}
		dirs = append(dirs, it.ID)
	}
	script := fmt.Sprintf(`cd "$1" && %s %s >/dev/null 2>&1 || echo "FAILED $1"`, shellQuote(nvcc.Path), shellJoin(b.Command))
	plain := func(dir string) (float64, []string, error) {
		cmd := exec.CommandContext(ctx, "xargs", "-P", fmt.Sprint(n), "-n", "1", "sh", "-c", script, "sh")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), nvcc.Env...)
		cmd.Stdin = strings.NewReader(strings.Join(dirs, "\n") + "\n")
		start := time.Now()
		out, err := cmd.Output()
		secs := time.Since(start).Seconds()
		if err != nil {
			return 0, nil, fmt.Errorf("plain nvcc: %w", err)
		}
		var failed []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if id, ok := strings.CutPrefix(l, "FAILED "); ok {
				failed = append(failed, id)
			}
		}
		slices.Sort(failed)
		return secs, failed, nil
	}
	farm := func(l *cudasynth.Lane, wantCached bool) (float64, []string, error) {
		failed := make([]string, len(items))
		g, gctx := errgroup.WithContext(ctx)
		start := time.Now()
		for i, it := range items {
			g.Go(func() error {
				r, err := l.CompileCUDA(gctx, it.Program)
				if err != nil {
					return fmt.Errorf("%s: %w", it.ID, err)
				}
				if r.Cached != wantCached {
					return fmt.Errorf("%s: cached=%v, want %v", it.ID, r.Cached, wantCached)
				}
				if !r.OK {
					failed[i] = it.ID
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return 0, nil, err
		}
		secs := time.Since(start).Seconds()
		failed = slices.DeleteFunc(failed, func(s string) bool { return s == "" })
		slices.Sort(failed)
		return secs, failed, nil
	}
	// Warm the page cache (nvcc, headers) once so that the first mode
	// measured is not charged for it.
	if _, err := probe.CompileCUDA(ctx, items[0].Program); err != nil {
		return err
	}
	for r := 0; r < *rounds; r++ {
		ps, pf, err := plain(plainDir)
		if err != nil {
			return err
		}
		if len(roots) > 1 {
			ts, tf, err := plain(roots[1])
			if err != nil {
				return err
			}
			if !slices.Equal(tf, pf) {
				return fmt.Errorf("bench: plain nvcc failed %v on disk, %v on tmpfs", pf, tf)
			}
			b.PlainTmpfsSeconds = append(b.PlainTmpfsSeconds, ts)
			fmt.Fprintf(e.stderr, "round %d: plain on tmpfs %.2fs\n", r+1, ts)
		}
		cacheDir := filepath.Join(tmp, fmt.Sprintf("cache-%d", r))
		l, err := newLane(cacheDir)
		if err != nil {
			return err
		}
		cs, cf, err := farm(l, false)
		if err != nil {
			return fmt.Errorf("kiln cold: %w", err)
		}
		hs, hf, err := farm(l, true)
		if err != nil {
			return fmt.Errorf("kiln cached: %w", err)
		}
		l2, err := newLane(cacheDir)
		if err != nil {
			return err
		}
		ds, df, err := farm(l2, true)
		if err != nil {
			return fmt.Errorf("kiln disk-cached: %w", err)
		}
		for name, f := range map[string][]string{"kiln cold": cf, "kiln cached": hf, "kiln disk-cached": df} {
			if !slices.Equal(f, pf) {
				return fmt.Errorf("bench: %s failed %v, plain nvcc failed %v: the modes disagree", name, f, pf)
			}
		}
		b.Failed = pf
		b.PlainSeconds = append(b.PlainSeconds, ps)
		b.ColdSeconds = append(b.ColdSeconds, cs)
		b.CachedSeconds = append(b.CachedSeconds, hs)
		b.DiskCachedSeconds = append(b.DiskCachedSeconds, ds)
		fmt.Fprintf(e.stderr, "round %d: plain %.2fs, kiln cold %.2fs, cached %.4fs, disk-cached %.4fs\n", r+1, ps, cs, hs, ds)
	}
	b.PlainMedian, b.ColdMedian = median(b.PlainSeconds), median(b.ColdSeconds)
	b.CachedMedian, b.DiskCachedMedian = median(b.CachedSeconds), median(b.DiskCachedSeconds)
	b.ColdOverPlain = b.ColdMedian / b.PlainMedian
	if len(b.PlainTmpfsSeconds) > 0 {
		b.PlainTmpfsMedian = median(b.PlainTmpfsSeconds)
		b.ColdOverTmpfs = b.ColdMedian / b.PlainTmpfsMedian
	}
	b.ColdOverCached = b.ColdMedian / b.CachedMedian
	b.ColdOverDisk = b.ColdMedian / b.DiskCachedMedian
	if *asJSON {
		return writeJSON(e.stdout, b)
	}
	fmt.Fprintf(e.stdout, "%d programs, %d jobs, %d rounds (medians), nvcc %s\n", b.Programs, b.Jobs, b.Rounds, b.NVCC)
	fmt.Fprintf(e.stdout, "  plain nvcc | xargs -P %d  %8.2f s  %6.2f programs/s\n", n, b.PlainMedian, float64(b.Programs)/b.PlainMedian)
	if b.PlainTmpfsMedian > 0 {
		fmt.Fprintf(e.stdout, "  the same on a tmpfs       %8.2f s  %6.2f programs/s\n", b.PlainTmpfsMedian, float64(b.Programs)/b.PlainTmpfsMedian)
	}
	fmt.Fprintf(e.stdout, "  kiln cold                %8.2f s  %6.2f programs/s  (%.2fx plain's time)\n", b.ColdMedian, float64(b.Programs)/b.ColdMedian, b.ColdOverPlain)
	fmt.Fprintf(e.stdout, "  kiln cached (memory)     %8.4f s  %6.0f programs/s  (%.0fx faster than cold)\n", b.CachedMedian, float64(b.Programs)/b.CachedMedian, b.ColdOverCached)
	fmt.Fprintf(e.stdout, "  kiln cached (disk)       %8.4f s  %6.0f programs/s  (%.0fx faster than cold)\n", b.DiskCachedMedian, float64(b.Programs)/b.DiskCachedMedian, b.ColdOverDisk)
	if len(b.Failed) > 0 {
		fmt.Fprintf(e.stdout, "  rejected by nvcc in every mode: %s\n", strings.Join(b.Failed, ", "))
	}
	return nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
