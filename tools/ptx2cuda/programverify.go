package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// Artifacts of a program task's pending verdict (beside answer_binary,
// reference_binary and gpu_probe_binary).
const (
	// ArtifactBlankBin is the program built with the kernel's body
	// emptied.
	ArtifactBlankBin = "blank_binary"
	// ArtifactProgramSpec is the task's program.json.
	ArtifactProgramSpec = "program_spec"
	// ArtifactOutputAnswer and ArtifactOutputReference are what the two
	// programs printed (stdout), kept with a judged verdict.
	ArtifactOutputAnswer    = "output_answer"
	ArtifactOutputReference = "output_reference"
)

// programJob builds a whole program (the original, the answer's or the
// blank one) for the lane's target with the variant's flags. The three
// share the command and file name, so an answer equal to the original
// shares its cache entry.
func (l *Lane) programJob(ps ProgramSpec, src string) buildjob.Job {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM)}
	args = append(args, ps.Flags...)
	args = append(args, "-o", exeFile, FileProgram)
	return buildjob.Command("program", toolchain.NVCC, args, map[string][]byte{FileProgram: []byte(src)}, exeFile)
}

// cudaErrorRE finds a CUDA runtime error in a program's stderr (what
// error-checking macros print before exit(1)).
var cudaErrorRE = regexp.MustCompile(`(?i)cuda\w*error|illegal memory access|illegal address|misaligned address|launch failure|` +
	`launch timed out|too many resources requested|invalid configuration argument|device-side assert|out of memory|invalid device function|invalid argument`)

// signatureRE is nvcc's error for an answer kernel of other parameter
// types (the kiln_signature_check initialisation).
var signatureRE = regexp.MustCompile(`cannot be used to initialize an entity of type "void \(\*\)`)

// programTaskOf reads a program task's spec and program, and finds the
// kernel in it.
func programTaskOf(item tools.Item) (ProgramSpec, *programSource, programKernel, error) {
	raw, ok := item.Files[FileProgramSpec]
	if !ok {
		return ProgramSpec{}, nil, programKernel{}, fmt.Errorf("ptx2cuda: %w: the task has no %s", tools.ErrBadItem, FileProgramSpec)
	}
	ps, err := ParseProgramSpec([]byte(raw))
	if err != nil {
		return ProgramSpec{}, nil, programKernel{}, fmt.Errorf("ptx2cuda: %w: %w", tools.ErrBadItem, err)
	}
	prog := item.Files[FileProgram]
	if strings.TrimSpace(prog) == "" {
		return ProgramSpec{}, nil, programKernel{}, fmt.Errorf("ptx2cuda: %w: the task has no %s", tools.ErrBadItem, FileProgram)
	}
	p := parseProgram(prog)
	k, err := p.kernel(ps.Kernel)
	if err != nil {
		return ProgramSpec{}, nil, programKernel{}, fmt.Errorf("ptx2cuda: %w: %s: %w", tools.ErrBadItem, FileProgram, err)
	}
	return ps, p, k, nil
}

// isProgramTask reports whether item is a program task.
func isProgramTask(item tools.Item) bool {
	_, ok := item.Files[FileProgramSpec]
	return ok
}

// checkProgramAnswer is the check stage of a program task: CheckAnswer,
// no device variable of the program defined again (the answer's copy
// would shadow the one the host code fills), and no macro of the program
// defined otherwise or undefined (it would change the program's code
// after the kernel).
func checkProgramAnswer(p *programSource, k programKernel, answer string) (tools.FailureClass, string) {
	if class, why := CheckAnswer(answer, k.Name); class != tools.ClassNone {
		return class, why
	}
	if vars := p.redefinedVariables(k, answer); len(vars) > 0 {
		return tools.ClassCompileError, "the answer defines the program's device variables again (" + strings.Join(vars, ", ") +
			"): use the program's, which its host code fills"
	}
	if names := p.changedMacros(answer); len(names) > 0 {
		return tools.ClassCompileError, "the answer defines the program's macros otherwise or undefines them (" + strings.Join(names, ", ") +
			"): the program's code after the kernel would change; use the program's"
	}
	return tools.ClassNone, ""
}

// verifyProgram judges answer against a program task: the answer is
// spliced into the program in the kernel's place (spliceAnswer) and the
// program built; on a GPU host the original and the answer's program run
// and their outputs are compared (programRunStages).
func (l *Lane) verifyProgram(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	ps, p, k, err := programTaskOf(item)
	if err != nil {
		return tools.Verdict{}, err
	}
	b, failed := checkStages(answer, k.Name, func() (tools.FailureClass, string) { return checkProgramAnswer(p, k, answer) })
	if failed {
		return b.verdict("verify_ms"), nil
	}
	if err := l.cfg.Toolchains.Require(toolchain.NVCC); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	spliced := p.spliceAnswer(k, answer)
	var ans, ref, blank *buildjob.Result
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ans, err = l.builds.Run(gctx, l.programJob(ps, spliced)); return err })
	g.Go(func() (err error) { ref, err = l.builds.Run(gctx, l.programJob(ps, p.src)); return err })
	g.Go(func() (err error) { blank, err = l.builds.Run(gctx, l.programJob(ps, p.blank(k))); return err })
	if err := g.Wait(); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	for _, r := range []struct {
		res  *buildjob.Result
		what string
	}{{ref, "the original program"}, {blank, "the program with the kernel emptied"}} {
		if r.res.OK() {
			continue
		}
		diag := r.res.FailureText(compilerDiagnostics.Of(string(r.res.Entry.Stderr), l.cfg.DiagnosticLines))
		if r.res.Exited() {
			return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w: %s does not build: %s", tools.ErrBadItem, r.what, diag)
		}
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: the build of %s did not finish: %s", r.what, diag)
	}
	b.meas["reference_compile_ms"] = ms(ref.Entry.Wall)
	b.meas["compile_ms"] = ms(ans.Entry.Wall)
	if !ans.OK() {
		diag := ans.FailureText(compilerDiagnostics.Of(string(ans.Entry.Stderr), l.cfg.DiagnosticLines))
		if stderr := string(ans.Entry.Stderr); strings.Contains(stderr, "kiln_signature_check") || signatureRE.MatchString(stderr) ||
			strings.Contains(stderr, "undefined reference to `"+answerNamespace+"::"+k.Name+"(") {
			diag += "\nthe kernel's parameter types must be exactly: " + strings.Join(strings.Fields(p.head(k)), " ")
		}
		b.add(stageResult{name: StageCompile, class: ans.Class(tools.ClassCompileError), detail: diag, dur: ans.Wall})
		return b.verdict("verify_ms"), nil
	}
	ansBin, refBin, blankBin := ans.Entry.Files[exeFile], ref.Entry.Files[exeFile], blank.Entry.Files[exeFile]
	if len(ansBin) == 0 || len(refBin) == 0 || len(blankBin) == 0 {
		return tools.Verdict{}, errors.New("ptx2cuda verify: nvcc left no executable")
	}
	b.add(stageResult{name: StageCompile, ok: true, dur: ans.Wall,
		detail: fmt.Sprintf("nvcc %s: the program with the answer in place of %s: executable %d KiB%s",
			strings.Join(append([]string{l.cfg.SM}, ps.Flags...), " "), k.Name, len(ansBin)>>10, ans.CachedNote())})
	b.artifacts[ArtifactHarness] = []byte(spliced)
	if err := l.programRunStages(ctx, b, ps, ansBin, refBin, blankBin, nil); err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda verify: %w", err)
	}
	return b.verdict("verify_ms"), nil
}

// programRunStages records run and compare of a program task: skipped
// without a GPU (keeping the three executables, the spec and a GPU probe
// for Complete); else, in one sandbox box, the original program runs
// (it must exit 0 and print something, or the task is bad), then the
// answer's (a crash, a CUDA error exit, a timeout or a limit fails run);
// their outputs are compared with cuda-synth's tolerance
// (cudasynth.CompareOutputs: numbers within 1e-4 relative, timing lines'
// numbers ignored; wrong_output otherwise). A non-zero exit of the
// answer's program fails run when its stderr reports a CUDA error (crash),
// and compare otherwise (wrong_output: a program checking its own results
// exits 1 when they are wrong). When they agree, the program
// with the kernel emptied runs too: if its output agrees with the
// original's, the kernel's work does not show in what the program prints,
// and the task is bad (an error wrapping tools.ErrBadItem), never a pass.
func (l *Lane) programRunStages(ctx context.Context, b *verdictBuilder, ps ProgramSpec, ansBin, refBin, blankBin, probe []byte) error {
	gpu := l.cfg.Toolchains.GPU()
	if !gpu.Present {
		spec, err := json.Marshal(ps)
		if err != nil {
			return err
		}
		l.skipRunStages(ctx, b, "programs", map[string][]byte{ArtifactAnswerBin: ansBin, ArtifactRefBin: refBin,
			ArtifactBlankBin: blankBin, ArtifactProgramSpec: spec})
		return nil
	}
	const blankExe = "blank"
	box, done, err := l.gpuBox(ctx, probe, map[string][]byte{refExe: refBin, ansExe: ansBin, blankExe: blankBin})
	if err != nil {
		return err
	}
	defer done()
	run := func(exe string) (sandboxes.Result, error) {
		r, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./" + exe}, Limits: l.cfg.RunLimits, KillOnOutputCap: true, GPU: true})
		if err != nil {
			return r, fmt.Errorf("run %s: %w", exe, err)
		}
		return r, nil
	}
	start := time.Now()
	refRun, err := run(refExe)
	if err != nil {
		return err
	}
	if !refRun.OK() {
		return fmt.Errorf("%w: the original program %s: %s", tools.ErrBadItem, refRun.Describe(), buildjob.FirstLines(string(refRun.Stderr), 5))
	}
	if strings.TrimSpace(string(refRun.Stdout)) == "" {
		return fmt.Errorf("%w: the original program prints nothing: there is no output to compare", tools.ErrBadItem)
	}
	ansRun, err := run(ansExe)
	if err != nil {
		return err
	}
	dur := time.Since(start)
	b.meas["run_ms"] = ms(dur)
	b.meas["program_ms_reference"] = ms(refRun.Wall)
	b.meas["program_ms_answer"] = ms(ansRun.Wall)
	b.artifacts[ArtifactOutputReference] = refRun.Stdout
	b.artifacts[ArtifactOutputAnswer] = ansRun.Stdout
	// A program that ends by itself with another exit status than the
	// original's did run: unless it reports a CUDA error, the status is
	// one more output, compared below (programs that check their own
	// results exit 1 when they differ).
	if class, bad := runClass(ansRun); bad && !(ansRun.Outcome() == sandboxes.OutcomeExited && ansRun.Signal == 0 &&
		!cudaErrorRE.Match(ansRun.Stderr)) {
		diag := "the program with the answer's kernel " + ansRun.Describe()
		if s := buildjob.FirstLines(string(ansRun.Stderr), 5); s != "" {
			diag += "\nstderr: " + s
		}
		b.add(stageResult{name: StageRun, class: class, detail: diag, dur: dur})
		return nil
	}
	b.add(stageResult{name: StageRun, ok: true, dur: dur,
		detail: fmt.Sprintf("both programs ran (%s): %.1f ms with the answer, %.1f ms the original", strings.Join(gpu.Names, ", "),
			ms(ansRun.Wall), ms(refRun.Wall))})
	cstart := time.Now()
	tol := cudasynth.DefaultTolerance()
	if diff := cudasynth.CompareOutputsNamed(refRun.Stdout, ansRun.Stdout, tol, l.cfg.DiagnosticLines, "original", "answer"); diff != "" || ansRun.ExitCode != 0 {
		detail := "the program prints other results with the answer's kernel than with the original's:\n" + diff
		if diff == "" {
			detail = "the program prints the same with the answer's kernel, but "
		}
		if ansRun.ExitCode != 0 {
			detail += fmt.Sprintf("\nit exits with status %d (the original with 0)", ansRun.ExitCode)
			if s := buildjob.FirstLines(string(ansRun.Stderr), 3); s != "" {
				detail += "; stderr: " + s
			}
		}
		b.add(stageResult{name: StageCompare, class: tools.ClassWrongOutput, dur: time.Since(cstart), detail: strings.TrimSpace(detail)})
		return nil
	}
	blankRun, err := run(blankExe)
	if err != nil {
		return err
	}
	if blankRun.OK() && cudasynth.CompareOutputs(refRun.Stdout, blankRun.Stdout, tol, 1) == "" {
		return fmt.Errorf("%w: the program prints the same output with kernel %s emptied: its output does not show the kernel's work",
			tools.ErrBadItem, ps.Kernel)
	}
	b.add(stageResult{name: StageCompare, ok: true, dur: time.Since(cstart),
		detail: fmt.Sprintf("the program's output agrees with the original's (%d bytes); with the kernel emptied it does not", len(refRun.Stdout))})
	return nil
}

// completeProgram finishes a program task's pending verdict from its kept
// executables (Complete has checked what is pending and rebuilt b).
func (l *Lane) completeProgram(ctx context.Context, item tools.Item, prev tools.Verdict, b *verdictBuilder) error {
	spec := prev.Artifacts[ArtifactProgramSpec]
	if len(spec) == 0 {
		spec = []byte(item.Files[FileProgramSpec])
	}
	ps, err := ParseProgramSpec(spec)
	if err != nil {
		return err
	}
	blank := prev.Artifacts[ArtifactBlankBin]
	if len(blank) == 0 {
		return fmt.Errorf("the record keeps no %s; rescore it where nvcc is (plain `kiln rescore`)", ArtifactBlankBin)
	}
	return l.programRunStages(ctx, b, ps, prev.Artifacts[ArtifactAnswerBin], prev.Artifacts[ArtifactRefBin], blank, prev.Artifacts[ArtifactGPUProbe])
}

// compileProgramOnly is compile_kernel for a program task.
func (l *Lane) compileProgramOnly(ctx context.Context, item tools.Item, src string) (string, error) {
	ps, p, k, err := programTaskOf(item)
	if err != nil {
		return "", err
	}
	if class, why := checkProgramAnswer(p, k, src); class != tools.ClassNone {
		return fmt.Sprintf("FAIL (%s): %s", class, why), nil
	}
	res, err := l.builds.Run(ctx, l.programJob(ps, p.spliceAnswer(k, src)))
	if err != nil {
		return "", fmt.Errorf("ptx2cuda compile: %w", err)
	}
	if !res.OK() {
		return "FAIL (" + string(res.Class(tools.ClassCompileError)) + "):\n" +
			res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines)), nil
	}
	return "ok: the program builds with the kernel in place of the original", nil
}
