package sass2rdna

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// step is one command of a job. tool names a registry tool (its path and
// environment are used); path, when set, is an absolute program path used
// instead (ld.lld and clang-offload-bundler, which the registry does not
// list: they sit next to llvm-mc), keyed by keyTool's version.
type step struct {
	tool string
	path string
	args []string
}

// job is a sandboxed run of one or more steps in one box, cached by its
// inputs, steps and the versions of the tools they use. The steps run in
// order; the first that fails ends the job.
type job struct {
	name    string // cache namespace and logs
	steps   []step
	inputs  map[string][]byte
	outputs []string // read back when every step succeeded
}

// jobResult is a job's entry and how this call got it.
type jobResult struct {
	e    *toolchain.Entry
	hit  bool
	wall time.Duration
}

// Entry Meta keys.
const (
	metaOutcome  = "outcome"
	metaDescribe = "describe"
	metaStep     = "step" // the index of the step that failed
)

func (r *jobResult) ok() bool {
	return r.e.Meta[metaOutcome] == string(sandboxes.OutcomeExited) && r.e.ExitCode == 0
}

// class is a failed job's class: limits and timeouts are their own
// classes, anything else def.
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

// diagnostic is a failed job's diagnostic: why the sandbox ended it when
// it did not just exit, then the tool's error lines without box paths.
func (r *jobResult) diagnostic(maxLines int) string {
	diag := toolDiagnostic(string(r.e.Stderr)+string(r.e.Stdout), maxLines)
	if sandboxes.Outcome(r.e.Meta[metaOutcome]) == sandboxes.OutcomeExited {
		if strings.TrimSpace(diag) == "" {
			return r.e.Meta[metaDescribe]
		}
		return diag
	}
	return "the tool " + r.e.Meta[metaDescribe] + "\n" + diag
}

// llvmTool returns the absolute path of an LLVM program (ld.lld,
// clang-offload-bundler) installed next to the registry's llvm-mc (Debian:
// /usr/bin/llvm-mc-15 -> /usr/lib/llvm-15/bin/llvm-mc, beside ld.lld).
func llvmTool(reg *toolchain.Registry, name string) (string, error) {
	mc, ok := reg.Get(toolchain.LLVMMC)
	if !ok {
		return "", reg.Require(toolchain.LLVMMC)
	}
	real, err := filepath.EvalSymlinks(mc.Path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", toolchain.ErrUnavailable, name, err)
	}
	p := filepath.Join(filepath.Dir(real), name)
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s: not found next to %s (install lld-15 / llvm-15)", toolchain.ErrUnavailable, name, real)
	}
	return p, nil
}

// key is a job's cache key: schema, job, steps (tool names and relative
// arguments, not host paths), tool versions, outputs and inputs.
func (l *Lane) key(j job) string {
	versions := l.cfg.Toolchains.Versions()
	parts := []string{cacheVersion, j.name}
	for _, s := range j.steps {
		name := s.tool
		if s.path != "" {
			name = s.tool + ":" + filepath.Base(s.path)
		}
		parts = append(parts, name, strings.Join(keyArgs(s.args), "\x00"), toolchain.VersionsPart(versions, s.tool))
	}
	parts = append(parts, strings.Join(j.outputs, "\x00"))
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

// keyArgs replaces host-specific folders in arguments, so that hosts with
// different data folders share cache entries.
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

// run returns j's result from the cache or by running it in a box.
func (l *Lane) run(ctx context.Context, j job) (*jobResult, error) {
	for _, s := range j.steps {
		if _, ok := l.cfg.Toolchains.Get(s.tool); !ok {
			return nil, fmt.Errorf("%s: %w", j.name, l.cfg.Toolchains.Require(s.tool))
		}
	}
	start := time.Now()
	e, hit, err := l.cache.Do(ctx, l.key(j), func(ctx context.Context) (*toolchain.Entry, bool, error) {
		return l.runJob(ctx, j)
	})
	if err != nil {
		return nil, err
	}
	l.log.Debug("sass2rdna job", "job", j.name, "cached", hit, "exit", e.ExitCode, "took", time.Since(start))
	return &jobResult{e: e, hit: hit, wall: time.Since(start)}, nil
}

// maxOutputFile bounds a file read back from a job.
const maxOutputFile = 256 << 20

// runJob runs j's steps in a fresh box, bounded by the job semaphore.
func (l *Lane) runJob(ctx context.Context, j job) (*toolchain.Entry, bool, error) {
	if err := l.jobs.Acquire(ctx, 1); err != nil {
		return nil, false, fmt.Errorf("%s: %w", j.name, context.Cause(ctx))
	}
	defer l.jobs.Release(1)
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
	e := &toolchain.Entry{Files: map[string][]byte{}, Meta: map[string]string{}}
	store := true
	for i, s := range j.steps {
		tool, _ := l.cfg.Toolchains.Get(s.tool)
		prog := tool.Path
		if s.path != "" {
			prog = s.path
		}
		res, err := box.Run(ctx, sandboxes.Spec{Argv: append([]string{prog}, s.args...), Env: tool.Env, Limits: l.cfg.BuildLimits})
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", j.name, err)
		}
		e.Stdout, e.Stderr, e.ExitCode = append(e.Stdout, res.Stdout...), append(e.Stderr, res.Stderr...), res.ExitCode
		e.Wall += res.Wall
		e.Meta[metaOutcome], e.Meta[metaDescribe] = string(res.Outcome()), res.Describe()
		// An exit status is a property of the inputs; a timeout, a limit
		// or a crash may not be.
		store = store && res.Outcome() == sandboxes.OutcomeExited && !res.StdoutTruncated && !res.StderrTruncated
		if !res.OK() {
			e.Meta[metaStep] = fmt.Sprint(i)
			return e, store, nil
		}
	}
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
	return e, store, nil
}

var (
	diagLineRE = regexp.MustCompile(`(?i)\b(error|fatal|undefined|unknown|invalid)\b`)
	boxPathRE  = regexp.MustCompile(`\S*/box-[0-9a-f]+/`)
)

// toolDiagnostic keeps a tool's error lines with the source line and caret
// that llvm-mc and clang print after each, without sandbox paths; the
// first lines of the text when no line says error.
func toolDiagnostic(text string, maxLines int) string {
	text = boxPathRE.ReplaceAllString(text, "")
	lines := strings.Split(text, "\n")
	var out []string
	errs := 0
	for i := 0; i < len(lines) && errs < maxLines; i++ {
		if !diagLineRE.MatchString(lines[i]) || strings.Contains(lines[i], "-Wunused-command-line-argument") {
			continue
		}
		errs++
		out = append(out, clip(strings.TrimRight(lines[i], " \r"), 300))
		// llvm-mc: "answer.s:12:5: error: ..." then the line and a caret.
		for k := i + 1; k < len(lines) && k <= i+2 && !diagLineRE.MatchString(lines[k]) && strings.TrimSpace(lines[k]) != ""; k++ {
			out = append(out, clip(strings.TrimRight(lines[k], " \r"), 300))
			i = k
		}
	}
	if len(out) == 0 {
		return firstLines(text, maxLines)
	}
	if n := strings.Count(text, "error:"); n > errs {
		out = append(out, fmt.Sprintf("... (%d errors in all)", n))
	}
	return strings.Join(out, "\n")
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
