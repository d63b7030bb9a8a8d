package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// PromptUserTorch is the prompt of a torch task (prompts/user_torch.tmpl).
const PromptUserTorch = "user_torch"

// TorchJudge judges a torch2cuda candidate on this host: a torch2cuda
// lane, completing a verdict whose judge stage is pending (its
// candidate.py artifact) against the item's reference.py.
type TorchJudge interface {
	Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error)
}

var _ TorchJudge = (*torch2cuda.Lane)(nil)

// ErrNoTorch means this host cannot judge torch tasks or make their PTX.
var ErrNoTorch = errors.New("ptx2cuda: torch tasks need python3 with a CUDA build of torch and an NVIDIA GPU")

// torchMissing says why this host cannot judge torch tasks ("" when it
// can): python3 with a CUDA build of torch, an NVIDIA GPU, and the judge
// (Config.Torch).
func (l *Lane) torchMissing() string {
	t, ok := l.cfg.Toolchains.Get(toolchain.Torch)
	switch {
	case !ok:
		why := "no python3 with torch"
		if err := l.cfg.Toolchains.Require(toolchain.Torch); err != nil {
			why += " (" + buildjob.FirstLines(strings.TrimPrefix(err.Error(), toolchain.ErrUnavailable.Error()+": "), 1) + ")"
		}
		return why
	case strings.Contains(t.Version, "cuda none"):
		return "a torch without CUDA (" + t.Version + ")"
	case !l.cfg.Toolchains.GPU().Present:
		return "no NVIDIA GPU"
	case l.cfg.Torch == nil:
		return "the lane was opened without the torch2cuda judge"
	}
	return ""
}

// torchJudge opens the torch2cuda judge once.
func (l *Lane) torchJudge(ctx context.Context) (TorchJudge, error) {
	l.torchMu.Lock()
	defer l.torchMu.Unlock()
	if l.torchJ != nil {
		return l.torchJ, nil
	}
	if l.cfg.Torch == nil {
		return nil, fmt.Errorf("%w: the lane has no torch2cuda judge", ErrNoTorch)
	}
	j, err := l.cfg.Torch(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the torch2cuda judge: %w", err)
	}
	l.torchJ = j
	return j, nil
}

// closeTorch closes the judge if one was opened.
func (l *Lane) closeTorch() {
	l.torchMu.Lock()
	defer l.torchMu.Unlock()
	if c, ok := l.torchJ.(io.Closer); ok {
		c.Close()
	}
}

// torchBuildQuery prints what torch's cpp_extension gives nvcc for a
// CUDA source: "I <folder>" per include folder (include_paths, then
// Python's, which torch/extension.h includes), "F
// <flag>" per flag (COMMON_NVCC_FLAGS, and the newest -std=c++NN its
// source names).
const torchBuildQuery = `import inspect, re, sysconfig
from torch.utils import cpp_extension as c
for d in c.include_paths(): print("I", d)
print("I", sysconfig.get_paths()["include"])
for f in getattr(c, "COMMON_NVCC_FLAGS", []): print("F", f)
stds = [int(x) for x in re.findall(r"-std=c\+\+(\d+)", inspect.getsource(c))]
if stds: print("F -std=c++%d" % max(stds))
`

// torchBuild is what torchBuildQuery printed: nvcc's flags for a torch
// extension's CUDA source (include folders as -isystem).
type torchBuild struct {
	flags   []string
	version string
}

// defaultTorchFlags stand in for COMMON_NVCC_FLAGS when torch names none.
var defaultTorchFlags = []string{"-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
	"-D__CUDA_NO_HALF2_OPERATORS__", "--expt-relaxed-constexpr"}

// torchBuildFlags asks this host's torch (in the sandbox, once) for the
// flags its cpp_extension gives nvcc.
func (l *Lane) torchBuildFlags(ctx context.Context) (torchBuild, error) {
	t, ok := l.cfg.Toolchains.Get(toolchain.Torch)
	if !ok {
		return torchBuild{}, fmt.Errorf("%w: %w", ErrNoTorch, l.cfg.Toolchains.Require(toolchain.Torch))
	}
	l.torchMu.Lock()
	defer l.torchMu.Unlock()
	if l.torchInc != nil {
		return torchBuild{flags: l.torchInc, version: t.Version}, nil
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return torchBuild{}, fmt.Errorf("torch build flags: %w", err)
	}
	defer box.Close()
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{t.Path, "-I", "-c", torchBuildQuery}, Env: t.Env, Limits: l.cfg.RunLimits})
	if err != nil {
		return torchBuild{}, fmt.Errorf("torch build flags: %w", err)
	}
	if !res.OK() {
		return torchBuild{}, fmt.Errorf("torch build flags: python3 %s: %s", res.Describe(), buildjob.FirstLines(string(res.Stderr), 5))
	}
	flags := []string{"-DTORCH_EXTENSION_NAME=kiln_ptx", "-DTORCH_API_INCLUDE_EXTENSION_H"}
	var dirs, common []string
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		kind, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case kind == "I" && filepath.IsAbs(v):
			dirs = append(dirs, "-isystem", filepath.Clean(v))
		case kind == "F" && v != "":
			common = append(common, v)
		}
	}
	if len(dirs) == 0 {
		return torchBuild{}, fmt.Errorf("torch build flags: no include folder printed: %q", buildjob.FirstLines(string(res.Stdout), 3))
	}
	if len(common) == 0 {
		common = defaultTorchFlags
	}
	l.torchInc = append(append(flags, common...), dirs...)
	return torchBuild{flags: l.torchInc, version: t.Version}, nil
}

// torchPTXJob is the PTX compile of a torch item's kernel unit as torch
// builds it (torchBuildFlags): torch's version is part of the cache key.
func (l *Lane) torchPTXJob(ctx context.Context, src string, flags []string) (buildjob.Job, error) {
	tb, err := l.torchBuildFlags(ctx)
	if err != nil {
		return buildjob.Job{}, err
	}
	j := l.ptxJob(src, flags)
	args := append([]string{"-ptx", "-arch=" + strings.Replace(l.cfg.SM, "sm_", "compute_", 1)}, tb.flags...)
	args = append(args, flags...)
	j.Name, j.Steps[0].Args = "ptx-torch "+tb.version, append(args, "-o", FilePTX, kernelInBox)
	return j, nil
}

// torchUnitJob builds a standalone unit (standaloneUnits) to an object
// file: the compile a host without torch makes of a torch task.
func (l *Lane) torchUnitJob(src string, flags []string) buildjob.Job {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM),
		"-std=c++17", "--expt-relaxed-constexpr"}
	args = append(args, flags...)
	args = append(args, "-c", "-o", "unit.o", FileProgram)
	return buildjob.Command("torch-unit", toolchain.NVCC, args, map[string][]byte{FileProgram: []byte(src)})
}

// torchJudged is what kiln reads of the judge's JSON (torch2cuda's
// judge.json, kept whole as an artifact).
type torchJudged struct {
	Pass       bool     `json:"pass"`
	Class      string   `json:"class"`
	Correct    bool     `json:"correct"`
	Speedup    *float64 `json:"speedup"`
	TRefMS     *float64 `json:"t_ref_ms"`
	TNewMS     *float64 `json:"t_new_ms"`
	MaxAbsErr  *float64 `json:"max_abs_err"`
	MaxRelErr  *float64 `json:"max_rel_err"`
	CompileMS  *float64 `json:"compile_ms"`
	Cached     bool     `json:"compile_cached"`
	Suspicion  []string `json:"suspicion"`
	Diagnostic string   `json:"diagnostic"`
	Tolerance  struct {
		Mode      string   `json:"mode"`
		ATol      *float64 `json:"atol"`
		ATolScale *float64 `json:"atol_scale"`
	} `json:"tolerance"`
	Env struct {
		Device string `json:"device"`
	} `json:"env"`
	RefError   bool `json:"reference_error"`
	JudgeError bool `json:"judge_error"`
	raw        []byte
	dur        time.Duration
}

// judgeTorch judges candidate (a whole module) against reference with
// torch2cuda's judge. A reference failure is an error wrapping
// tools.ErrBadItem; a judge failure another error.
func (l *Lane) judgeTorch(ctx context.Context, reference, candidate string) (torchJudged, error) {
	j, err := l.torchJudge(ctx)
	if err != nil {
		return torchJudged{}, err
	}
	start := time.Now()
	prev := tools.Verdict{Pass: true, Stage: torch2cuda.StageJudge,
		Stages:    []tools.Stage{{Name: torch2cuda.StageJudge, Skipped: true, Detail: "judged for a ptx2cuda torch task"}},
		Artifacts: map[string][]byte{torch2cuda.ArtifactCandidate: []byte(candidate)}}
	v, err := j.Complete(ctx, tools.Item{Lane: torch2cuda.LaneName, Files: map[string]string{torch2cuda.ReferenceFile: reference}}, prev)
	if err != nil {
		return torchJudged{}, fmt.Errorf("torch judge: %w", err)
	}
	raw := v.Artifacts[torch2cuda.ArtifactJudge]
	if len(raw) == 0 {
		return torchJudged{}, fmt.Errorf("torch judge: no %s (%s: %s)", torch2cuda.ArtifactJudge, v.Class, buildjob.FirstLines(v.Diagnostic, 3))
	}
	var r torchJudged
	if err := json.Unmarshal(raw, &r); err != nil {
		return torchJudged{}, fmt.Errorf("torch judge: %s: %w", torch2cuda.ArtifactJudge, err)
	}
	r.raw, r.dur = raw, time.Since(start)
	switch {
	case r.JudgeError:
		return r, fmt.Errorf("torch judge: the judge failed: %s", buildjob.FirstLines(r.Diagnostic, 5))
	case r.RefError:
		return r, fmt.Errorf("%w: the reference Model fails: %s", tools.ErrBadItem, buildjob.FirstLines(r.Diagnostic, 5))
	}
	return r, nil
}

// Judge classes, by the stage of a torch task they fail.
var (
	torchCompileClasses = []string{string(tools.ClassCompileError)}
	torchRunClasses     = map[string]tools.FailureClass{"runtime_error": tools.ClassCrash, "illegal_memory": tools.ClassCrash,
		string(tools.ClassTimeout): tools.ClassTimeout}
)

// addTorchJudged records the stages the judge decides: compile (when no
// standalone compile passed, or the judge's build fails anyway), run
// (the module ran: crash, timeout otherwise) and compare (its outputs
// match the reference Model's: wrong_output otherwise; a suspicion of
// the judge fails it too and is recorded). A correct module slower than
// PyTorch passes: speed is not the task.
func (b *verdictBuilder) addTorchJudged(r torchJudged, spec TorchSpec, compiled bool) {
	b.artifacts[torch2cuda.ArtifactJudge] = r.raw
	for k, p := range map[string]*float64{"speedup": r.Speedup, "model_ms_torch": r.TRefMS, "model_ms_answer": r.TNewMS,
		"max_abs_err": r.MaxAbsErr, "max_rel_err": r.MaxRelErr, "torch_compile_ms": r.CompileMS} {
		if p != nil {
			b.meas[k] = *p
		}
	}
	// NAE as the generated harness has it, max |a-r| / max |r|, from the
	// judge's figures: its atol is atol_scale * max |ref| (the largest
	// over trials and outputs).
	if r.MaxAbsErr != nil && r.Tolerance.ATol != nil && r.Tolerance.ATolScale != nil && *r.Tolerance.ATolScale > 0 {
		b.meas["nae_max"] = *r.MaxAbsErr / max(*r.Tolerance.ATol / *r.Tolerance.ATolScale, 1e-6)
	}
	if r.Speedup != nil && *r.Speedup > 0 && spec.ReferenceSpeedup > 0 {
		b.meas["latency_ratio"] = spec.ReferenceSpeedup / *r.Speedup
	}
	b.meas["run_ms"] = ms(r.dur)
	diag := strings.TrimSpace(r.Diagnostic)
	if slices.Contains(torchCompileClasses, r.Class) {
		b.stages = slices.DeleteFunc(b.stages, func(s stageResult) bool { return s.name == StageCompile })
		b.add(stageResult{name: StageCompile, class: tools.ClassCompileError, dur: r.dur,
			detail: "the module with the answer in place of " + spec.Kernel + " does not build: " + diag})
		return
	}
	if !compiled {
		note := ""
		if r.Cached {
			note = " (cached)"
		}
		b.add(stageResult{name: StageCompile, ok: true, detail: "load_inline built the module with the answer in place of " + spec.Kernel + note})
	}
	if class, ok := torchRunClasses[r.Class]; ok {
		b.add(stageResult{name: StageRun, class: class, dur: r.dur, detail: "the module with the answer's kernel: " + r.Class + ": " + diag})
		return
	}
	on := r.Env.Device
	if on == "" {
		on = "the GPU"
	}
	b.add(stageResult{name: StageRun, ok: true, dur: r.dur, detail: "the module ran on " + on})
	if len(r.Suspicion) > 0 {
		b.suspicion = append(b.suspicion, r.Suspicion...)
	}
	if !r.Correct || len(r.Suspicion) > 0 {
		detail := "the module's outputs with the answer's kernel differ from the reference Model's (" + r.Class + "): " + diag
		if r.Correct {
			detail = "the judge suspects the module with the answer's kernel: " + strings.Join(r.Suspicion, "; ")
		}
		b.add(stageResult{name: StageCompare, class: tools.ClassWrongOutput, detail: detail})
		return
	}
	detail := "the module's outputs match the reference Model's"
	if r.MaxAbsErr != nil {
		detail += fmt.Sprintf(" (max abs err %.3g)", *r.MaxAbsErr)
	}
	if r.Speedup != nil {
		detail += fmt.Sprintf("; speedup over PyTorch %.3gx", *r.Speedup)
		if spec.ReferenceSpeedup > 0 {
			detail += fmt.Sprintf(" (with the original kernel %.3gx)", spec.ReferenceSpeedup)
		}
	}
	b.add(stageResult{name: StageCompare, ok: true, detail: detail})
}

// isTorchTask reports whether item is a torch task.
func isTorchTask(item tools.Item) bool {
	_, ok := item.Files[FileTorchSpec]
	return ok
}

// torchTaskOf reads a torch task: its spec, the CUDA source parsed and the
// kernel in it, the module and the problem.
func torchTaskOf(item tools.Item) (TorchSpec, *programSource, programKernel, *torchSource, string, error) {
	bad := func(err error) (TorchSpec, *programSource, programKernel, *torchSource, string, error) {
		return TorchSpec{}, nil, programKernel{}, nil, "", fmt.Errorf("ptx2cuda: %w: %w", tools.ErrBadItem, err)
	}
	spec, err := ParseTorchSpec([]byte(item.Files[FileTorchSpec]))
	if err != nil {
		return bad(err)
	}
	ref := item.Files[FileTorchReference]
	if strings.TrimSpace(ref) == "" {
		return bad(fmt.Errorf("the task has no %s", FileTorchReference))
	}
	ts, err := parseTorchAnswer(item.Files[FileTorchAnswer])
	if err != nil {
		return bad(fmt.Errorf("%s: %w", FileTorchAnswer, err))
	}
	p := parseProgram(ts.cuda)
	k, err := p.kernel(spec.Kernel)
	if err != nil {
		return bad(fmt.Errorf("%s: %w", FileTorchAnswer, err))
	}
	return spec, p, k, ts, ref, nil
}

// standaloneCompile is the compile stage a torch task gets without torch:
// the standalone units (standaloneUnits). It returns whether the stage
// was decided (added to b): false when the source needs PyTorch's headers
// before the kernel (its reason in why), or nvcc is missing.
func (l *Lane) standaloneCompile(ctx context.Context, b *verdictBuilder, spec TorchSpec, p *programSource, k programKernel, answer string) (decided bool, why string, err error) {
	if err := l.cfg.Toolchains.Require(toolchain.NVCC); err != nil {
		return false, err.Error(), nil
	}
	refSrc, ansSrc := standaloneUnits(p, k, answer)
	var ref, ans *buildjob.Result
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ref, err = l.builds.Run(gctx, l.torchUnitJob(refSrc, spec.Flags)); return err })
	g.Go(func() (err error) { ans, err = l.builds.Run(gctx, l.torchUnitJob(ansSrc, spec.Flags)); return err })
	if err := g.Wait(); err != nil {
		return false, "", fmt.Errorf("ptx2cuda verify: %w", err)
	}
	if !ref.OK() {
		return false, "the CUDA source before the kernel needs PyTorch's headers (" +
			buildjob.FirstLines(compilerDiagnostics.Of(string(ref.Entry.Stderr), 1), 1) + ")", nil
	}
	b.meas["compile_ms"] = ms(ans.Entry.Wall)
	if !ans.OK() {
		diag := ans.FailureText(compilerDiagnostics.Of(string(ans.Entry.Stderr), l.cfg.DiagnosticLines))
		if stderr := string(ans.Entry.Stderr); strings.Contains(stderr, "kiln_signature_check") || signatureRE.MatchString(stderr) {
			diag += "\nthe kernel's parameter types must be exactly: " + strings.Join(strings.Fields(p.head(k)), " ")
		}
		b.add(stageResult{name: StageCompile, class: ans.Class(tools.ClassCompileError), detail: diag, dur: ans.Wall})
		return true, "", nil
	}
	b.add(stageResult{name: StageCompile, ok: true, dur: ans.Wall,
		detail: fmt.Sprintf("nvcc %s: the kernel with the CUDA source before it, PyTorch's headers left out%s", l.cfg.SM, ans.CachedNote())})
	return true, "", nil
}

// verifyTorch judges answer against a torch task: check as a program
// task's; compile standalone where the CUDA source allows it; then, where
// torch and a GPU are, the module with the answer spliced into its CUDA
// source is judged against the problem (addTorchJudged); elsewhere the
// stages left are pending, and the spliced module is kept
// (harness_source) for Complete.
func (l *Lane) verifyTorch(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	spec, p, k, ts, ref, err := torchTaskOf(item)
	if err != nil {
		return tools.Verdict{}, err
	}
	b, failed := checkStages(answer, k.Name, func() (tools.FailureClass, string) { return checkProgramAnswer(p, k, answer) })
	if failed {
		return b.verdict("verify_ms"), nil
	}
	b.artifacts[ArtifactHarness] = []byte(ts.with(p.spliceAnswer(k, answer)))
	compiled, why, err := l.standaloneCompile(ctx, b, spec, p, k, answer)
	if err != nil {
		return tools.Verdict{}, err
	}
	if compiled && !b.stages[len(b.stages)-1].ok {
		return b.verdict("verify_ms"), nil
	}
	if missing := l.torchMissing(); missing != "" {
		pend := "skipped: " + missing + " on this host; `kiln rescore --pending` on a GPU host with torch judges the kept module"
		if !compiled {
			b.add(stageResult{name: StageCompile, skipped: true, detail: "skipped: " + why + "; the judge's build on a host with torch decides"})
		}
		b.add(stageResult{name: StageRun, skipped: true, detail: pend})
		b.add(stageResult{name: StageCompare, skipped: true, detail: pend})
		return b.verdict("verify_ms"), nil
	}
	r, err := l.judgeTorch(ctx, ref, string(b.artifacts[ArtifactHarness]))
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	b.addTorchJudged(r, spec, compiled)
	return b.verdict("verify_ms"), nil
}

// completeTorch finishes a torch task's pending verdict (run and compare,
// and compile when no standalone compile was possible) by judging the
// kept module on this host.
func (l *Lane) completeTorch(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	pending := tools.PendingStages(prev)
	if len(pending) == 0 {
		return prev, nil
	}
	if !slices.Equal(pending, []string{StageRun, StageCompare}) && !slices.Equal(pending, []string{StageCompile, StageRun, StageCompare}) {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: cannot complete pending stages %s of a torch task", strings.Join(pending, ", "))
	}
	if missing := l.torchMissing(); missing != "" {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w; here: %s", ErrNoTorch, missing)
	}
	spec, err := ParseTorchSpec([]byte(item.Files[FileTorchSpec]))
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w", err)
	}
	ref, cand := item.Files[FileTorchReference], string(prev.Artifacts[ArtifactHarness])
	if strings.TrimSpace(ref) == "" || strings.TrimSpace(cand) == "" {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: the task keeps no %s or the record no %s", FileTorchReference, ArtifactHarness)
	}
	b := &verdictBuilder{start: time.Now(), meas: maps.Clone(prev.Measurements), artifacts: maps.Clone(prev.Artifacts),
		suspicion: slices.Clone(prev.Suspicion)}
	if b.meas == nil {
		b.meas = map[string]float64{}
	}
	compiled := false
	for _, s := range prev.Stages {
		if s.Skipped {
			continue
		}
		if !s.OK {
			return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: stage %s failed and %s is still pending: the record is inconsistent", s.Name, StageRun)
		}
		compiled = compiled || s.Name == StageCompile
		b.add(stageResult{name: s.Name, ok: true, detail: s.Detail, dur: s.Duration})
	}
	delete(b.meas, "pending_stages")
	r, err := l.judgeTorch(ctx, ref, cand)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w", err)
	}
	b.addTorchJudged(r, spec, compiled)
	v := b.verdict("complete_ms")
	if x, ok := prev.Measurements["verify_ms"]; ok {
		v.Measurements["verify_ms"] = x
	}
	return v, nil
}

// checkTorch is a torch item's check at prepare time, on a host with
// torch and a GPU: the module with the kernel's own definition spliced
// back in must pass the judge (its speedup becomes the item's reference
// speedup), and the module with the kernel's body emptied must not (else
// a *SkipError, SkipUnobserved). Both are judged at once.
func (l *Lane) checkTorch(ctx context.Context, it *Item) error {
	ts, err := parseTorchAnswer(it.TorchAnswer)
	if err != nil {
		return err
	}
	p := parseProgram(it.Program)
	k, err := p.kernel(it.Meta.Kernel)
	if err != nil {
		return err
	}
	var orig, blank torchJudged
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		orig, err = l.judgeTorch(gctx, it.TorchReference, ts.with(p.spliceAnswer(k, it.Kernel)))
		return err
	})
	g.Go(func() (err error) {
		blank, err = l.judgeTorch(gctx, it.TorchReference, ts.with(p.blank(k)))
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if !orig.Correct || len(orig.Suspicion) > 0 || orig.Class != "" && orig.Class != "slower" {
		return &SkipError{SkipJudge, fmt.Sprintf("the module with %s's own definition spliced back in fails the judge: %s: %s", k.Name, orig.Class,
			buildjob.FirstLines(orig.Diagnostic+" "+strings.Join(orig.Suspicion, "; "), 3))}
	}
	if blank.Class == string(tools.ClassCompileError) {
		return &SkipError{SkipJudge, fmt.Sprintf("the module with %s's body emptied does not build: %s", k.Name, buildjob.FirstLines(blank.Diagnostic, 3))}
	}
	if blank.Correct {
		return &SkipError{SkipUnobserved, fmt.Sprintf("the module still matches the reference with %s's body emptied: its outputs do not show the kernel's work", k.Name)}
	}
	if it.Meta.Torch == nil {
		it.Meta.Torch = &TorchMeta{}
	}
	if orig.Speedup != nil {
		it.Meta.Torch.ReferenceSpeedup = *orig.Speedup
	}
	return nil
}

// prepareTorchRecords makes the torch items of a torch2cuda campaign's
// records (TorchItems), their PTX and the judge's checks, adding skips.
// On a host without torch and a GPU every kernel is skipped with one
// message saying what is missing.
func prepareTorchRecords(ctx context.Context, h kit.Host, set kit.RecordSet, variants []string, skips *[]Skip, stderr io.Writer) ([]RecordItem, error) {
	items, sk, err := TorchItems(set, variants)
	if err != nil {
		return nil, kit.BadInput("--variants: %v", err)
	}
	*skips = append(*skips, sk...)
	tl, err := open(ctx, h, sandboxes.Limits{})
	if err != nil {
		return nil, err
	}
	l := tl.(*Lane)
	defer l.Close()
	if missing := l.torchMissing(); missing != "" {
		if len(items) > 0 {
			*skips = append(*skips, Skip{Record: fmt.Sprintf("%s of %s", plural(len(items), "kernel"), plural(len(set.Records), "torch2cuda record")), Reason: SkipNoTorch,
				Detail: "torch tasks are prepared on a host with python3 with a CUDA build of torch, nvcc and an NVIDIA GPU " +
					"(their PTX is compiled with PyTorch's headers, and the judge checks each kernel); this host has " + missing})
		}
		return nil, nil
	}
	items, more, err := l.preparePrograms(ctx, items, true, stderr)
	if err != nil {
		return nil, err
	}
	*skips = append(*skips, more...)
	return items, nil
}

// torchTask renders c, a variant of a torch item, as a task: files
// kernel.cu (the kernel's definition), kernel.ptx, answer.py (the
// module), reference.py (the problem) and torch.json; the prompt shows
// the Rolled-PTX, the signature and the CUDA source before the kernel.
func (c corpusTask) torchTask(lib *prompts.Library, round int, key string, meta map[string]string) (runs.Task, error) {
	spec, err := c.item.TorchSpec(c.variant)
	if err != nil {
		return runs.Task{}, err
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return runs.Task{}, err
	}
	return c.kernelTask(lib, round, key, meta, HarnessTorch, PromptUserTorch, spec.Kernel, spec.Flags,
		map[string]string{FileTorchAnswer: c.item.TorchAnswer, FileTorchReference: c.item.TorchReference, FileTorchSpec: string(b) + "\n"})
}

// compileTorchOnly is compile_kernel for a torch task: the check stage and
// the standalone compile.
func (l *Lane) compileTorchOnly(ctx context.Context, item tools.Item, src string) (string, error) {
	spec, p, k, _, _, err := torchTaskOf(item)
	if err != nil {
		return "", err
	}
	if class, why := checkProgramAnswer(p, k, src); class != tools.ClassNone {
		return fmt.Sprintf("FAIL (%s): %s", class, why), nil
	}
	b := newVerdict()
	decided, why, err := l.standaloneCompile(ctx, b, spec, p, k, src)
	if err != nil {
		return "", err
	}
	if !decided {
		return "not compiled here: " + why + "; check_kernel judges the whole module where torch is", nil
	}
	if s := b.stages[len(b.stages)-1]; !s.ok {
		return "FAIL (" + string(s.class) + "):\n" + s.detail, nil
	}
	return "ok: the kernel builds with the CUDA source before it (PyTorch's headers left out)", nil
}

// plural is "1 kernel", "2 kernels".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
