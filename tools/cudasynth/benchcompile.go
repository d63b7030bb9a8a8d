package cudasynth

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

// CompileBench is what `kiln bench compile` measured.
type CompileBench struct {
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

// benchCompileCommand is `kiln bench compile`: the corpus compiled by
// plain nvcc | xargs -P and by the lane's farm, cold and cached.
func benchCompileCommand() kit.Command {
	return kit.Command{
		Verb:    "bench compile",
		Summary: "compile throughput: plain nvcc | xargs -P vs kiln's farm, cold and cached",
		Flags: func(fs *flag.FlagSet) func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
			jobs := fs.Int("jobs", 0, "compiles in parallel in every mode (default: the number of CPUs)")
			rounds := fs.Int("rounds", 3, "rounds; each runs plain nvcc, then kiln cold, cached and disk-cached")
			limit := fs.Int("limit", 0, "use only the first N corpus programs (0: all)")
			asJSON := fs.Bool("json", false, "print JSON")
			return func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
				if *rounds < 1 {
					return kit.BadInput("--rounds: want at least 1")
				}
				n := *jobs
				if n <= 0 {
					n = runtime.NumCPU()
				}
				b, err := runCompileBench(ctx, h, n, *rounds, *limit, stderr)
				if err != nil {
					return err
				}
				if *asJSON {
					enc := json.NewEncoder(stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(b)
				}
				b.print(stdout)
				return nil
			}
		},
	}
}

// benchRun is the state of one `kiln bench compile`.
type benchRun struct {
	items   []CorpusItem
	jobs    int
	nvcc    toolchain.Tool
	box     *sandboxes.Runner
	reg     *toolchain.Registry
	h       kit.Host
	tmp     string
	roots   []string // folders of the plain mode: on disk, and on a tmpfs when there is one
	command []string
	stderr  io.Writer
}

func runCompileBench(ctx context.Context, h kit.Host, jobs, rounds, limit int, stderr io.Writer) (*CompileBench, error) {
	items, err := LoadBuiltinCorpus()
	if err != nil {
		return nil, err
	}
	if limit > 0 && limit < len(items) {
		items = items[:limit]
	}
	reg, err := h.Toolchains(ctx, false)
	if err != nil {
		return nil, err
	}
	nvcc, ok := reg.Get(toolchain.NVCC)
	if !ok {
		return nil, reg.Require(toolchain.NVCC)
	}
	box, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kiln-bench-compile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	br := &benchRun{items: items, jobs: jobs, nvcc: nvcc, box: box, reg: reg, h: h, tmp: tmp, stderr: stderr}
	probe, err := br.newLane(filepath.Join(tmp, "probe-cache"))
	if err != nil {
		return nil, err
	}
	br.command = probe.CUDACompileArgs()
	cleanup, err := br.writePlainFolders()
	defer cleanup()
	if err != nil {
		return nil, err
	}
	// Warm the page cache (nvcc, headers) once so that the first mode
	// measured is not charged for it.
	if _, err := probe.CompileCUDA(ctx, items[0].Program); err != nil {
		return nil, err
	}
	b := &CompileBench{Programs: len(items), Jobs: jobs, Rounds: rounds, NVCC: nvcc.Version,
		Command: br.command, CPUs: runtime.NumCPU()}
	for r := 0; r < rounds; r++ {
		if err := br.round(ctx, r, b); err != nil {
			return nil, err
		}
	}
	b.summarise()
	return b, nil
}

func (br *benchRun) newLane(cacheDir string) (*Lane, error) {
	return New(Config{Sandbox: br.box, Toolchains: br.reg, CacheDir: cacheDir, Parallel: br.jobs, Logger: br.h.Log})
}

// writePlainFolders writes one folder per program (nvcc --keep writes
// program.* into the working folder) on disk, and the same again on a
// tmpfs, where kiln's sandbox scratch lives: nvcc writes megabytes of
// intermediates, so the file system matters.
func (br *benchRun) writePlainFolders() (cleanup func(), err error) {
	cleanup = func() {}
	br.roots = []string{filepath.Join(br.tmp, "plain")}
	if shm, err := os.MkdirTemp("/dev/shm", "kiln-bench-compile-"); err == nil {
		cleanup = func() { os.RemoveAll(shm) }
		br.roots = append(br.roots, shm)
	} else {
		fmt.Fprintf(br.stderr, "no /dev/shm (%v): the plain-on-tmpfs mode is left out\n", err)
	}
	for _, it := range br.items {
		for _, root := range br.roots {
			d := filepath.Join(root, it.ID)
			if err := os.MkdirAll(d, 0o755); err != nil {
				return cleanup, err
			}
			if err := os.WriteFile(filepath.Join(d, SourceFile), []byte(it.Program), 0o644); err != nil {
				return cleanup, err
			}
		}
	}
	return cleanup, nil
}

// round measures every mode once and checks that they agree on which
// programs build.
func (br *benchRun) round(ctx context.Context, r int, b *CompileBench) error {
	ps, pf, err := br.plain(ctx, br.roots[0])
	if err != nil {
		return err
	}
	if len(br.roots) > 1 {
		ts, tf, err := br.plain(ctx, br.roots[1])
		if err != nil {
			return err
		}
		if !slices.Equal(tf, pf) {
			return fmt.Errorf("bench: plain nvcc failed %v on disk, %v on tmpfs", pf, tf)
		}
		b.PlainTmpfsSeconds = append(b.PlainTmpfsSeconds, ts)
		fmt.Fprintf(br.stderr, "round %d: plain on tmpfs %.2fs\n", r+1, ts)
	}
	cacheDir := filepath.Join(br.tmp, fmt.Sprintf("cache-%d", r))
	l, err := br.newLane(cacheDir)
	if err != nil {
		return err
	}
	cs, cf, err := br.farm(ctx, l, false)
	if err != nil {
		return fmt.Errorf("kiln cold: %w", err)
	}
	hs, hf, err := br.farm(ctx, l, true)
	if err != nil {
		return fmt.Errorf("kiln cached: %w", err)
	}
	l2, err := br.newLane(cacheDir)
	if err != nil {
		return err
	}
	ds, df, err := br.farm(ctx, l2, true)
	if err != nil {
		return fmt.Errorf("kiln disk-cached: %w", err)
	}
	for _, m := range []struct {
		name   string
		failed []string
	}{{"kiln cold", cf}, {"kiln cached", hf}, {"kiln disk-cached", df}} {
		if !slices.Equal(m.failed, pf) {
			return fmt.Errorf("bench: %s failed %v, plain nvcc failed %v: the modes disagree", m.name, m.failed, pf)
		}
	}
	b.Failed = pf
	b.PlainSeconds = append(b.PlainSeconds, ps)
	b.ColdSeconds = append(b.ColdSeconds, cs)
	b.CachedSeconds = append(b.CachedSeconds, hs)
	b.DiskCachedSeconds = append(b.DiskCachedSeconds, ds)
	fmt.Fprintf(br.stderr, "round %d: plain %.2fs, kiln cold %.2fs, cached %.4fs, disk-cached %.4fs\n", r+1, ps, cs, hs, ds)
	return nil
}

// plain runs the lane's nvcc command on every program folder under dir
// with xargs -P, no sandbox, no cache; it returns the seconds and the
// programs nvcc rejected.
func (br *benchRun) plain(ctx context.Context, dir string) (float64, []string, error) {
	script := fmt.Sprintf(`cd "$1" && %s %s >/dev/null 2>&1 || echo "FAILED $1"`, shellQuote(br.nvcc.Path), shellJoin(br.command))
	ids := make([]string, len(br.items))
	for i, it := range br.items {
		ids[i] = it.ID
	}
	cmd := exec.CommandContext(ctx, "xargs", "-P", fmt.Sprint(br.jobs), "-n", "1", "sh", "-c", script, "sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), br.nvcc.Env...)
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
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

// farm compiles every program with the lane (sandbox and cache), and
// fails when a compile is or is not cached against wantCached.
func (br *benchRun) farm(ctx context.Context, l *Lane, wantCached bool) (float64, []string, error) {
	failed := make([]string, len(br.items))
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for i, it := range br.items {
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

// summarise computes the medians and ratios.
func (b *CompileBench) summarise() {
	b.PlainMedian, b.ColdMedian = median(b.PlainSeconds), median(b.ColdSeconds)
	b.CachedMedian, b.DiskCachedMedian = median(b.CachedSeconds), median(b.DiskCachedSeconds)
	b.ColdOverPlain = b.ColdMedian / b.PlainMedian
	if len(b.PlainTmpfsSeconds) > 0 {
		b.PlainTmpfsMedian = median(b.PlainTmpfsSeconds)
		b.ColdOverTmpfs = b.ColdMedian / b.PlainTmpfsMedian
	}
	b.ColdOverCached = b.ColdMedian / b.CachedMedian
	b.ColdOverDisk = b.ColdMedian / b.DiskCachedMedian
}

func (b *CompileBench) print(w io.Writer) {
	fmt.Fprintf(w, "%d programs, %d jobs, %d rounds (medians), nvcc %s\n", b.Programs, b.Jobs, b.Rounds, b.NVCC)
	fmt.Fprintf(w, "  plain nvcc | xargs -P %d  %8.2f s  %6.2f programs/s\n", b.Jobs, b.PlainMedian, float64(b.Programs)/b.PlainMedian)
	if b.PlainTmpfsMedian > 0 {
		fmt.Fprintf(w, "  the same on a tmpfs       %8.2f s  %6.2f programs/s\n", b.PlainTmpfsMedian, float64(b.Programs)/b.PlainTmpfsMedian)
	}
	fmt.Fprintf(w, "  kiln cold                %8.2f s  %6.2f programs/s  (%.2fx plain's time)\n", b.ColdMedian, float64(b.Programs)/b.ColdMedian, b.ColdOverPlain)
	fmt.Fprintf(w, "  kiln cached (memory)     %8.4f s  %6.0f programs/s  (%.0fx faster than cold)\n", b.CachedMedian, float64(b.Programs)/b.CachedMedian, b.ColdOverCached)
	fmt.Fprintf(w, "  kiln cached (disk)       %8.4f s  %6.0f programs/s  (%.0fx faster than cold)\n", b.DiskCachedMedian, float64(b.Programs)/b.DiskCachedMedian, b.ColdOverDisk)
	if len(b.Failed) > 0 {
		fmt.Fprintf(w, "  rejected by nvcc in every mode: %s\n", strings.Join(b.Failed, ", "))
	}
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
