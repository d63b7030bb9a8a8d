package cudasynth

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

// jobResult is a job's entry and how this call got it.
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

// class is the failure class of a failed job: limits and timeouts are
// their own classes, anything else the job's.
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

// keyArgs are the arguments as keyed: host-specific folders replaced, so
// that hosts with different data dirs share cache entries.
func keyArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.HasPrefix(a, "--rocm-device-lib-path=") {
			a = "--rocm-device-lib-path=<derived>"
		}
		out[i] = a
	}
	return out
}

// key is the job's cache key: schema, job, command (tool name, not path),
// environment, tool versions and inputs.
func (l *Lane) key(j job, env []string) string {
	versions := l.cfg.Toolchains.Versions()
	parts := []string{cacheVersion, j.name, j.tool, strings.Join(keyArgs(j.args), "\x00"), strings.Join(env, "\x00"),
		toolchain.VersionsPart(versions, j.tool), strings.Join(j.outputs, "\x00")}
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

// CUDACompileArgs are nvcc's arguments in the cuda-compile stage, run in a
// folder holding the program as program.cu (benchmarks run plain nvcc
// with them to compare).
func (l *Lane) CUDACompileArgs() []string {
	j, _ := l.cudaJob("")
	return j.args
}

// cudaJob is the cuda-compile stage's compile of src and the name of the
// PTX file it keeps.
func (l *Lane) cudaJob(src string) (job, string) {
	cfg := l.cfg
	args := []string{"--keep", "-Xcompiler", "-save-temps=cwd"}
	args = append(args, cfg.NVCCFlags...)
	args = append(args, gencodes(cfg.SMs)...)
	args = append(args, "-o", cudaExe, SourceFile)
	ptxFile := "program." + strings.Replace(cfg.SMs[0], "sm_", "compute_", 1) + ".ptx"
	return job{name: "cuda", tool: toolchain.NVCC, args: args,
		inputs:  map[string][]byte{SourceFile: []byte(src)},
		outputs: []string{cudaExe, ptxFile, "program.fatbin", "program.s"}}, ptxFile
}

// CompileResult is one compile through the lane's compile farm.
type CompileResult struct {
	OK     bool          // the compiler exited 0
	Cached bool          // the cache answered (no compiler ran in this call)
	Wall   time.Duration // this call's time
	Detail string        // the compiler's first lines of diagnostics when !OK
}

// CompileCUDA runs the cuda-compile stage's compile of src alone through the
// compile farm Verify uses: the sandbox, the content-hash cache and the
// Parallel bound. It is safe for concurrent use (compile benchmarks).
func (l *Lane) CompileCUDA(ctx context.Context, src string) (CompileResult, error) {
	j, _ := l.cudaJob(src)
	res, err := l.compile(ctx, j)
	if err != nil {
		return CompileResult{}, err
	}
	out := CompileResult{OK: res.ok(), Cached: res.hit, Wall: res.wall}
	if !out.OK {
		out.Detail = failureText(res, compilerDiagnostic(string(res.e.Stderr), l.cfg.DiagnosticLines))
	}
	return out, nil
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
	l.log.Debug("cuda-synth compile", "job", j.name, "cached", hit, "exit", e.ExitCode, "took", time.Since(start))
	return &jobResult{e: e, hit: hit, wall: time.Since(start)}, nil
}

// maxOutputFile bounds a file read back from a compile.
const maxOutputFile = 256 << 20

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
				continue // the stage that wants it says so
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

var (
	diagLineRE = regexp.MustCompile(`(?i)\b(error|fatal|undefined reference|multiple definition)\b`)
	boxPathRE  = regexp.MustCompile(`\S*/box-[0-9a-f]+/`)
	excerptRE  = regexp.MustCompile(`^\s*(\d+\s*)?\|`)
)

// compilerDiagnostic keeps a compiler's error lines (with gcc/clang's
// source excerpts), without sandbox paths; all of stderr's first lines
// when no line says error.
func compilerDiagnostic(stderr string, maxLines int) string {
	stderr = boxPathRE.ReplaceAllString(stderr, "")
	lines := strings.Split(stderr, "\n")
	var out []string
	errs := 0
	for i := 0; i < len(lines) && errs < maxLines; i++ {
		if !diagLineRE.MatchString(lines[i]) || strings.Contains(lines[i], "-Wunused-command-line-argument") {
			continue
		}
		errs++
		out = append(out, clip(strings.TrimRight(lines[i], " \r"), 300))
		for k := i + 1; k < len(lines) && k <= i+2 && excerptRE.MatchString(lines[k]); k++ {
			out = append(out, clip(strings.TrimRight(lines[k], " \r"), 300))
			i = k
		}
	}
	if len(out) == 0 {
		return firstLines(stderr, maxLines)
	}
	return strings.Join(out, "\n")
}

// failureText is a failed job's diagnostic, prefixed by why the sandbox
// ended it when it did not just exit.
func failureText(r *jobResult, diag string) string {
	if sandboxes.Outcome(r.e.Meta[metaOutcome]) == sandboxes.OutcomeExited {
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
