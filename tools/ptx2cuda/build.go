package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// job is one sandboxed compiler run, cached by its inputs.
type job struct {
	name    string // cache namespace, logs
	tool    string // registry name
	args    []string
	inputs  map[string][]byte
	outputs []string // read back when present
}

// jobResult is a job's cache entry and how this call got it.
type jobResult struct {
	e    *toolchain.Entry
	hit  bool          // from the cache
	wall time.Duration // this call's time (lookup, wait or compile)
}

// Entry Meta keys.
const (
	metaOutcome  = "outcome"
	metaDescribe = "describe"
)

func (r *jobResult) ok() bool {
	return r.e.Meta[metaOutcome] == string(sandboxes.OutcomeExited) && r.e.ExitCode == 0
}

// exited reports whether the compiler ended by itself (not killed).
func (r *jobResult) exited() bool {
	return r.e.Meta[metaOutcome] == string(sandboxes.OutcomeExited)
}

// class is a failed job's failure class: limits and timeouts are their
// own classes.
func (r *jobResult) class(def tools.FailureClass) tools.FailureClass {
	switch sandboxes.Outcome(r.e.Meta[metaOutcome]) {
	case sandboxes.OutcomeTimeout:
		return tools.ClassTimeout
	case sandboxes.OutcomeResourceLimit:
		return tools.ClassResourceLimit
	}
	return def
}

func (r *jobResult) cachedNote() string {
	if r.hit {
		return " (cached)"
	}
	return ""
}

// key is the job's cache key: schema, job, command (tool name, not
// path), environment, tool version, outputs and inputs.
func (l *Lane) key(j job, env []string) string {
	parts := []string{cacheVersion, j.name, j.tool, strings.Join(j.args, "\x00"), strings.Join(env, "\x00"),
		toolchain.VersionsPart(l.cfg.Toolchains.Versions(), j.tool), strings.Join(j.outputs, "\x00")}
	names := make([]string, 0, len(j.inputs))
	for n := range j.inputs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parts = append(parts, n, string(j.inputs[n]))
	}
	return toolchain.Key(parts...)
}

// compile returns j's result from the cache or by running it in a box.
func (l *Lane) compile(ctx context.Context, j job) (*jobResult, error) {
	tool, ok := l.cfg.Toolchains.Get(j.tool)
	if !ok {
		return nil, fmt.Errorf("%s: %w", j.name, l.cfg.Toolchains.Require(j.tool))
	}
	start := time.Now()
	e, hit, err := l.cache.Do(ctx, l.key(j, tool.Env), func(ctx context.Context) (*toolchain.Entry, bool, error) {
		return l.runJob(ctx, j, tool)
	})
	if err != nil {
		return nil, err
	}
	l.log.Debug("ptx2cuda compile", "job", j.name, "cached", hit, "exit", e.ExitCode, "took", time.Since(start))
	return &jobResult{e: e, hit: hit, wall: time.Since(start)}, nil
}

// maxOutputFile bounds a file read back from a compile.
const maxOutputFile = 64 << 20

// runJob runs j in a fresh box, bounded by the compile semaphore.
func (l *Lane) runJob(ctx context.Context, j job, tool toolchain.Tool) (*toolchain.Entry, bool, error) {
	if err := l.compiles.Acquire(ctx, 1); err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.name, context.Cause(ctx))
	}
	defer l.compiles.Release(1)
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.name, err)
	}
	defer box.Close()
	for name, b := range j.inputs {
		if err := box.WriteFile(name, b, 0o644); err != nil {
			return nil, false, fmt.Errorf("%s: %w", j.name, err)
		}
	}
	argv := append([]string{tool.Path}, j.args...)
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: tool.Env, Limits: l.cfg.BuildLimits})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.name, err)
	}
	e := &toolchain.Entry{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, Wall: res.Wall,
		Files: map[string][]byte{}, Meta: map[string]string{metaOutcome: string(res.Outcome()), metaDescribe: res.Describe()}}
	if res.OK() {
		for _, name := range j.outputs {
			b, err := box.ReadFile(name, maxOutputFile)
			if errors.Is(err, os.ErrNotExist) {
				continue // the caller says so
			}
			if err != nil {
				return nil, false, fmt.Errorf("%s: %w", j.name, err)
			}
			e.Files[name] = b
		}
	}
	// A compiler's exit status is a property of its inputs; a timeout, a
	// limit or a crash may not be.
	store := res.Outcome() == sandboxes.OutcomeExited && !res.StdoutTruncated && !res.StderrTruncated
	return e, store, nil
}

// buildJob is the compile of a kernel source (the reference or an
// answer) into the task's harness: both get the same command and the same
// file names, so a right answer that repeats the reference shares its
// cache entry.
func (l *Lane) buildJob(h HarnessSpec, kernel string) job {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM)}
	args = append(args, h.Flags...)
	args = append(args, "-o", exeFile, harnessFile)
	return job{name: "build", tool: toolchain.NVCC, args: args,
		inputs:  map[string][]byte{harnessFile: []byte(GenerateHarness(h, l.cfg.Reps)), kernelInBox: []byte(kernel)},
		outputs: []string{exeFile}}
}

// ptxJob is the PTX compile of a corpus kernel with a variant's flags.
func (l *Lane) ptxJob(kernel string, flags []string) job {
	args := []string{"-ptx", "-arch=" + strings.Replace(l.cfg.SM, "sm_", "compute_", 1)}
	args = append(args, flags...)
	args = append(args, "-o", FilePTX, kernelInBox)
	return job{name: "ptx", tool: toolchain.NVCC, args: args,
		inputs: map[string][]byte{kernelInBox: []byte(kernel)}, outputs: []string{FilePTX}}
}

// exeFile is the executable a build makes.
const exeFile = "prog"

var (
	diagLineRE = regexp.MustCompile(`(?i)\b(error|fatal|undefined reference|multiple definition)\b`)
	boxPathRE  = regexp.MustCompile(`\S*/box-[0-9a-f]+/`)
)

// compilerDiagnostic keeps a compiler's error lines (and the line after
// each, nvcc's excerpt), without sandbox paths; all of stderr's first
// lines when no line says error.
func compilerDiagnostic(stderr string, maxLines int) string {
	stderr = boxPathRE.ReplaceAllString(stderr, "")
	lines := strings.Split(stderr, "\n")
	var out []string
	for i := 0; i < len(lines) && len(out) < 2*maxLines; i++ {
		if !diagLineRE.MatchString(lines[i]) {
			continue
		}
		out = append(out, clip(strings.TrimRight(lines[i], " \r"), 300))
	}
	if len(out) == 0 {
		return firstLines(stderr, maxLines)
	}
	return strings.Join(out, "\n")
}

// failureText is a failed job's diagnostic, prefixed by why the sandbox
// ended it when it did not just exit.
func failureText(r *jobResult, diag string) string {
	if r.exited() {
		if strings.TrimSpace(diag) == "" {
			return r.e.Meta[metaDescribe]
		}
		return diag
	}
	return "the compiler " + r.e.Meta[metaDescribe] + "\n" + diag
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	for i, l := range lines {
		lines[i] = clip(l, 300)
	}
	return strings.Join(lines, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
