package torch2cuda

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// The validation of synthesised problems (kit.Kit.Validator). Before any
// model is asked to solve a new problem:
//
//  1. static: problem_check.py reads its syntax tree in the sandbox (it
//     parses; class Model(nn.Module) with forward, get_inputs and
//     get_init_inputs at the top level; no ModelNew; imports only torch,
//     math, numbers, typing; no file, process or eval calls);
//  2. the problem check (judge.py check, check.go) builds the reference,
//     draws the judge's inputs, runs it twice on them and times it, and
//     the screen below reads the result. On a host that judges on a GPU
//     the check runs there; elsewhere it runs on the CPU (when torch is
//     here) and the GPU check waits: the validation is pending
//     (refinement.ErrPending), the problem neither accepted nor rejected,
//     as a verdict waits for a GPU host. A lane that judges on the CPU
//     (Config.Device "cpu") takes the CPU check as final.
//
// The screen's reasons, besides the check's own (reference_error reasons
// timeout, oom, crash, nondeterministic, invalid): returns_input (an
// output is one of the inputs), nonfinite_output (NaN or Inf), trivial
// output (every output constant, all zeros included: a kernel writing a
// constant would pass), too_large (inputs and outputs over the budget, or
// a forward over the time budget of the device, or a timeout or out of
// memory on the CPU, where the budget is small).
//
// Duplicates (exact and near, against the corpus, the campaign's tasks and
// the benchmark folders of the spec) are dropped by refinement.Screen
// before the validator runs (Identity.Near, benchmarkTasks).

// problemCheckScript reads a problem's syntax tree (problem_check.py).
//
//go:embed problem_check.py
var problemCheckScript []byte

// Reasons a synthesised problem is rejected for, besides the problem
// check's reference_error reasons.
const (
	ReasonStatic         = "static"
	ReasonReturnsInput   = "returns_input"
	ReasonNonfinite      = "nonfinite_output"
	ReasonTrivial        = "trivial_output"
	ReasonTooLarge       = "too_large"
	ReasonReferenceError = "reference_error"
)

// SynthLimits bound a synthesised problem (zero fields take the defaults).
type SynthLimits struct {
	// MaxIOBytes bounds one input set and its outputs together (default
	// 1 GiB).
	MaxIOBytes int64
	// MaxGPUMillis bounds the reference's median forward on the GPU
	// (default 20 ms); MaxCPUMillis on the CPU (default 2 s).
	MaxGPUMillis, MaxCPUMillis float64
	// CPUTimeout bounds the CPU check of one problem, python and torch
	// start included (default 90 s); CPURSS the check's host memory
	// (default 6 GiB).
	CPUTimeout time.Duration
	CPURSS     int64
}

func (s SynthLimits) withDefaults() SynthLimits {
	if s.MaxIOBytes == 0 {
		s.MaxIOBytes = 1 << 30
	}
	if s.MaxGPUMillis == 0 {
		s.MaxGPUMillis = 20
	}
	if s.MaxCPUMillis == 0 {
		s.MaxCPUMillis = 2000
	}
	if s.CPUTimeout == 0 {
		s.CPUTimeout = 90 * time.Second
	}
	if s.CPURSS == 0 {
		s.CPURSS = 6 << 30
	}
	return s
}

// RejectError is a synthesised problem's rejection: the reason (one of
// the Reason constants, or a check's reason) and what was found.
type RejectError struct {
	Reason string
	Detail string
}

func (e *RejectError) Error() string { return e.Reason + ": " + e.Detail }

func reject(reason, format string, args ...any) error {
	return &RejectError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// validator is the kit's Validator: the lane's ValidateProblem.
func validator(l tools.Lane) (refinement.Validator, error) {
	lane, ok := l.(*Lane)
	if !ok {
		return nil, fmt.Errorf("torch2cuda validator: lane is %T, not *torch2cuda.Lane", l)
	}
	return refinement.ValidatorFunc(lane.ValidateProblem), nil
}

// ValidateProblem checks a synthesised problem (see the comment above):
// nil accepts it, a *RejectError (wrapped by nothing) rejects it, an error
// wrapping refinement.ErrPending says it waits for a GPU host, one
// wrapping refinement.ErrValidatorBroken that the check could not run.
func (l *Lane) ValidateProblem(ctx context.Context, c refinement.Candidate) error {
	src := c.Files[ReferenceFile]
	if strings.TrimSpace(src) == "" {
		return reject(ReasonStatic, "no %s", ReferenceFile)
	}
	if _, ok := l.cfg.Toolchains.Get(toolchain.Torch); !ok {
		return fmt.Errorf("%w: no python3 with torch on this host: the static check and the problem check wait for one", refinement.ErrPending)
	}
	if err := l.problemStatic(ctx, src); err != nil {
		return err
	}
	lim := l.cfg.Synth.withDefaults()
	gpu := l.cfg.Device != "cpu" && l.cannotJudge() == ""
	if gpu {
		cs, err := l.CheckProblems(ctx, []string{src})
		if err != nil {
			return fmt.Errorf("%w: torch2cuda problem check: %w", refinement.ErrValidatorBroken, err)
		}
		return screenCheck(cs[0], lim, false)
	}
	c0, err := l.cpuCheck(ctx, src, lim)
	if err != nil {
		return fmt.Errorf("%w: torch2cuda CPU problem check: %w", refinement.ErrValidatorBroken, err)
	}
	if err := screenCheck(c0, lim, true); err != nil || l.cfg.Device == "cpu" {
		return err
	}
	return fmt.Errorf("%w: the GPU problem check waits for a GPU host (%s); passed here: static, CPU check (forward %s ms, %s)",
		refinement.ErrPending, l.cannotJudge(), fig(c0.RefMS, "%.3g"), determinism(c0))
}

func determinism(c ProblemCheck) string {
	if c.BitwiseDeterministic != nil && *c.BitwiseDeterministic {
		return "bitwise deterministic"
	}
	return "deterministic within the tolerance"
}

// problemFacts are what problem_check.py reads of a problem.
type problemFacts struct {
	SyntaxError   string   `json:"syntax_error"`
	Model         bool     `json:"model"`
	Forward       bool     `json:"forward"`
	Init          bool     `json:"init"`
	GetInputs     bool     `json:"get_inputs"`
	GetInitInputs bool     `json:"get_init_inputs"`
	ModelNew      bool     `json:"model_new"`
	Imports       []string `json:"imports"`
	Banned        []string `json:"banned"`
}

// problemStatic runs problem_check.py on src in the sandbox and rejects
// what it finds wrong.
func (l *Lane) problemStatic(ctx context.Context, src string) error {
	py, err := l.python()
	if err != nil {
		return fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return fmt.Errorf("%w: torch2cuda problem static: %w", refinement.ErrValidatorBroken, err)
	}
	defer box.Close()
	if err := box.WriteTree(".", map[string][]byte{"problem.py": []byte(src), "problem_check.py": problemCheckScript}); err != nil {
		return fmt.Errorf("%w: torch2cuda problem static: %w", refinement.ErrValidatorBroken, err)
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{py, "-I", "-S", "problem_check.py", "problem.py"}, Limits: l.cfg.StaticLimits})
	if err != nil {
		return fmt.Errorf("%w: torch2cuda problem static: %w", refinement.ErrValidatorBroken, err)
	}
	var f problemFacts
	if res.ExitCode != 0 || res.Killed != "" || json.Unmarshal(res.Stdout, &f) != nil {
		return fmt.Errorf("%w: torch2cuda problem static: python3 failed (exit %d, killed %q): %s", refinement.ErrValidatorBroken,
			res.ExitCode, res.Killed, clip(string(res.Stderr)+string(res.Stdout), 500))
	}
	switch {
	case f.SyntaxError != "":
		return reject(ReasonStatic, "does not parse: %s", f.SyntaxError)
	case !f.Model || !f.Forward:
		return reject(ReasonStatic, "no top-level class Model(nn.Module) with a forward method")
	case !f.GetInputs || !f.GetInitInputs:
		return reject(ReasonStatic, "no top-level get_inputs() and get_init_inputs()")
	case f.ModelNew:
		return reject(ReasonStatic, "defines ModelNew: an answer, not a problem")
	case len(f.Banned) > 0:
		return reject(ReasonStatic, "uses %s (a problem imports only torch and math, and reads no files, processes or code)",
			strings.Join(f.Banned, ", "))
	}
	return nil
}

// cpuCheck is judge.py check of src on the CPU, cached like the lane's
// checks (by problem, judge, device and timeout).
func (l *Lane) cpuCheck(ctx context.Context, src string, lim SynthLimits) (ProblemCheck, error) {
	t, _ := l.cfg.Toolchains.Get(toolchain.Torch)
	key := l.checkKeyOn(src, fmt.Sprintf("cpu|torch %s|rss %d", t.Version, lim.CPURSS), lim.CPUTimeout)
	if c, ok := l.loadCheck(key); ok {
		return c, nil
	}
	cs, err := l.runChecksOn(ctx, []string{src}, true, lim.CPUTimeout, lim.CPURSS)
	if err != nil {
		return ProblemCheck{}, err
	}
	if cs[0].JudgeError {
		return ProblemCheck{}, errors.New("the judge failed: " + clip(cs[0].Diagnostic, 1500))
	}
	l.storeCheck(key, cs[0])
	return cs[0], nil
}

// outputFigures are the figures of one output in a check's signature.
type outputFigures struct {
	Path   string   `json:"path"`
	Dtype  string   `json:"dtype"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
	Finite *bool    `json:"finite"`
	Value  string   `json:"value"`
}

// screenCheck rejects a problem by its check: the check's own failure,
// then the screen's reasons (see the comment at the top). onCPU selects
// the CPU's time budget, and makes a timeout or out of memory too_large.
func screenCheck(c ProblemCheck, lim SynthLimits, onCPU bool) error {
	dev := "GPU"
	if onCPU {
		dev = "CPU"
	}
	if !c.OK {
		diag := firstLine(strings.TrimPrefix(c.Diagnostic, "the problem's reference failed ("+c.Reason+"): "))
		if onCPU && (c.Reason == "timeout" || c.Reason == "oom") {
			return reject(ReasonTooLarge, "the CPU check ran out of %s: %s", map[bool]string{true: "time", false: "memory"}[c.Reason == "timeout"], clip(diag, 300))
		}
		return reject(ReasonReferenceError, "%s: %s", cmpOr(c.Reason, "crash"), clip(diag, 300))
	}
	if len(c.ReturnsInput) > 0 {
		return reject(ReasonReturnsInput, "the forward returns its input (%s)", strings.Join(c.ReturnsInput, ", "))
	}
	if io := val64(c.InputBytes) + val64(c.OutputBytes); io > lim.MaxIOBytes {
		return reject(ReasonTooLarge, "inputs and outputs of %.2f GB (at most %.2f GB)", float64(io)/1e9, float64(lim.MaxIOBytes)/1e9)
	}
	budget := lim.MaxGPUMillis
	if onCPU {
		budget = lim.MaxCPUMillis
	}
	if ms := val(c.RefMS); ms > budget {
		return reject(ReasonTooLarge, "a forward takes %.4g ms on the %s (at most %g ms)", ms, dev, budget)
	}
	constant, floats := 0, 0
	for _, raw := range c.Outputs {
		var o outputFigures
		if json.Unmarshal(raw, &o) != nil {
			continue
		}
		if o.Finite != nil && !*o.Finite {
			return reject(ReasonNonfinite, "output %s holds NaN or Inf", o.Path)
		}
		if o.Min == nil || o.Max == nil {
			continue
		}
		floats++
		if *o.Min == *o.Max || math.Max(math.Abs(*o.Min), math.Abs(*o.Max)) < 1e-30 {
			constant++
		}
	}
	if floats == 0 {
		return reject(ReasonTrivial, "no tensor output with values")
	}
	if constant == floats {
		return reject(ReasonTrivial, "every output is constant (a kernel writing that constant would pass)")
	}
	return nil
}

func val64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
