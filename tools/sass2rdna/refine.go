package sass2rdna

// The sass2rdna lane's refinement rules: the taxonomy of its checks and of
// llvm-mc's and ld.lld's errors, the construct features of the CUDA
// programs (cuda-synth's table), the suspicion check on assembly answers
// (machine code as data, files read at assembly time), and the
// resynthesis format (a CUDA program whose kernels become a task).

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

//go:embed synth
var synthFS embed.FS

// RefinementRules returns the lane's rules for package refinement.
func RefinementRules() (refinement.LaneRules, error) {
	tmpl, cats, err := refinement.SynthTemplates(synthFS, "synth")
	if err != nil {
		return refinement.LaneRules{}, err
	}
	cuda, err := cudasynth.RefinementRules()
	if err != nil {
		return refinement.LaneRules{}, err
	}
	var features []refinement.FeatureRule
	if cuda.Features != nil {
		features = cuda.Features.Rules
	}
	return refinement.LaneRules{
		Lane:    LaneName,
		Rules:   sass2rdnaRules(),
		Suspect: suspectRDNA,
		// The kernels' constructs, read from the CUDA program the SASS
		// came from (cuda-synth's table: atomics, shared memory, warp
		// intrinsics, ...).
		Features: &refinement.FeatureTable{Files: func(n string) bool { return n == FileCUDA }, Rules: features},
		// A task is its CUDA program: the prompt is rendered from it (and
		// its SASS, which the program determines).
		Identity: refinement.Identity{Files: func(n string) bool { return n == FileCUDA }, NoPrompt: true},
		Synth: &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock,
			ExampleFile: func(n string) bool { return n == FileCUDA }, FilesOnly: true},
	}, nil
}

// sass2rdnaRules label the lane's failures (its check and symbols stages'
// texts, llvm-mc's and ld.lld's errors).
func sass2rdnaRules() []refinement.Rule {
	emb := []string{string(ClassEmbeddedCode)}
	desc := []string{string(ClassDescriptor)}
	asm := []string{refinement.ClassAssembleError}
	return []refinement.Rule{
		{Label: "embed.data_in_code", Classes: emb, Pattern: `data directive\(s\) in a code section|holds only data|s_endpgm encoding`,
			Doc: "machine code written as data (.byte/.long/.quad ...) in a code section instead of instructions"},
		{Label: "embed.file_read", Classes: emb, Pattern: `that read files|macro parameters`,
			Doc: "an .incbin/.include that reads a file of the build machine, or a directive spelled through a macro"},
		{Label: "embed.other", Classes: emb, Doc: "another way of sidestepping writing the kernels as instructions"},

		{Label: "desc.target", Classes: desc, Pattern: `amdgcn_target|e_flags machine|OS ABI`,
			Doc: "the .amdgcn_target directive is missing or names another GPU than gfx1100"},
		{Label: "desc.missing_kernel", Classes: desc, Pattern: `has no code label|no code symbol|names no kernel`,
			Doc: "a kernel the task names is not defined under its exact (HIP-mangled) name"},
		{Label: "desc.missing_descriptor", Classes: desc, Pattern: `has no kernel descriptor|no kernel descriptor symbol`,
			Doc: "a kernel without its .amdhsa_kernel descriptor block (so no <kernel>.kd symbol)"},
		{Label: "desc.no_endpgm", Classes: desc, Pattern: `has no s_endpgm|runs off its end`,
			Doc: "a kernel whose code has no s_endpgm, or ends with an instruction that falls through into whatever follows"},
		{Label: "desc.kernarg", Classes: desc, Pattern: `kernarg`,
			Doc: "a kernarg segment size that disagrees between descriptor and metadata, or cannot hold the kernel's arguments"},
		{Label: "desc.metadata", Classes: desc, Pattern: `metadata`,
			Doc: "the .amdgpu_metadata block is missing or does not list every kernel (the HIP runtime needs it to launch them)"},
		{Label: "desc.symbol", Classes: desc, Pattern: `not a global|not in an executable section|not 256-byte aligned|64-byte object|code entry`,
			Doc: "a kernel or descriptor symbol of the wrong kind, binding, size or alignment"},
		{Label: "desc.resources", Classes: desc, Pattern: `LDS|VGPRs`,
			Doc: "a descriptor asks for more LDS or VGPRs than gfx1100 has"},
		{Label: "desc.other", Classes: desc, Doc: "another kernel descriptor or code object problem"},

		{Label: "asm.mad64_overlap", Classes: asm, Pattern: `destination must be different than all sources`,
			Doc: "v_mad_u64_u32/v_mad_i64_i32 whose destination overlaps a source: llvm-mc rejects it for gfx1100 (a GFX11.0 hardware bug), although hipcc 5.2 prints such code"},
		{Label: "asm.kernel_descriptor", Classes: asm, Pattern: `\.amdhsa_\w+|directive is required|amdhsa`,
			Doc: "an .amdhsa_* descriptor directive missing, unknown, repeated or out of range"},
		{Label: "asm.directive", Classes: asm, Pattern: `unknown directive|unexpected directive|\.end_amdgpu_metadata|amdgpu_metadata`,
			Doc: "an assembler directive llvm-mc does not know or that is misused"},
		{Label: "asm.mnemonic", Classes: asm, Pattern: `invalid instruction|instruction not supported on this GPU|unknown instruction|not a valid instruction`,
			Doc: "an instruction gfx1100 does not have (another GPU's, SASS's, or a typo)"},
		{Label: "asm.register", Classes: asm, Pattern: `register index is out of range|invalid register|register not available|expected a register|not a valid register`,
			Doc: "a register name, range or alignment that gfx1100 does not allow"},
		{Label: "asm.operand", Classes: asm, Pattern: `invalid operand|too few operands|too many operands|operands are not valid|literal operands|expected an? (?:\d+-bit|absolute|immediate|counter)|offset|out of range|not a valid operand|invalid modifier`,
			Doc: "operands of the wrong kind, number or range for the instruction"},
		{Label: "asm.symbol", Classes: asm, Pattern: `is already defined|redefinition|undefined|can't resolve|cannot resolve`,
			Doc: "a label defined twice or a symbol that cannot be resolved"},
		{Label: "asm.syntax", Classes: asm, Pattern: `unexpected token|expected|unknown token|unterminated|invalid syntax|parse`,
			Doc: "a line llvm-mc cannot parse"},
		{Label: "asm.other", Classes: asm, Doc: "another llvm-mc error"},

		{Label: "link.undefined", Classes: []string{refinement.ClassLinkError}, Pattern: `undefined symbol|undefined reference`,
			Doc: "the code references a symbol nothing defines"},
		{Label: "link.other", Classes: []string{refinement.ClassLinkError}, Doc: "another ld.lld error"},
		refinement.BuildTimeoutRule(StageAssemble, StageLink),
	}
}

// suspectRDNA flags assembly that does not write the kernels as
// instructions: data directives in code sections (machine code smuggled
// in as data), directives that read files or are spelled through macro
// parameters, a kernel label with only data, or no instruction at all.
func suspectRDNA(answer string, _ runs.Task) string {
	info := scanAsm(answer)
	why := info.embedded()
	if why == "" && len(info.funcs) > 0 && info.instructions() == 0 {
		why = "no instruction in any code section"
	}
	return why
}

// Synthesised tasks: a CUDA program (program.cu) whose kernels, compiled
// for sm_90, become the task. Static checks only; the validator compiles.
var (
	globalFnRE     = regexp.MustCompile(`\b__global__\b`)
	kernelLaunchRE = regexp.MustCompile(`<<<|hipLaunchKernelGGL|cudaLaunchKernel`)
	localIncRE     = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)
)

// programDeny are calls a synthesised program must not make: its output
// must not depend on input, the environment or the machine.
var programDeny = map[string]bool{
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "fread": true, "read": true, "fopen": true,
	"open": true, "getenv": true, "system": true, "popen": true, "rand": true, "srand": true, "time": true, "clock": true,
}

// cudaInfo reports whether a block's info string names CUDA source.
func cudaInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		switch w {
		case "cuda", "cu", "c++", "cpp", FileCUDA:
			return true
		}
	}
	return false
}

// parseSynthBlock reads a synthesised task: one ```cuda program.cu block
// with __global__ kernels, a main that launches them and prints results.
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	var prog *refinement.Fenced
	for i := range b.Code {
		if cudaInfo(b.Code[i].Info) || b.Code[i].Info == "" {
			prog = &b.Code[i]
			break
		}
	}
	if prog == nil {
		return "no ```cuda program.cu block"
	}
	src := strings.TrimSpace(prog.Body)
	if len(src) > refinement.MaxSynthFileBytes {
		return fmt.Sprintf("program.cu has %d bytes (at most %d)", len(src), refinement.MaxSynthFileBytes)
	}
	parsed := refinement.ParseSource(src)
	defined := map[string]bool{}
	for _, f := range parsed.Defs() {
		defined[f.Name] = true
	}
	switch {
	case !globalFnRE.MatchString(parsed.Code()):
		return "program.cu defines no __global__ kernel"
	case !kernelLaunchRE.MatchString(parsed.Code()):
		return "program.cu launches no kernel"
	case !defined["main"]:
		return "program.cu does not define main"
	case localIncRE.MatchString(src):
		return `program.cu includes a local header ("..."): it must be one file`
	}
	var bad []string
	for name := range parsed.Calls() {
		if programDeny[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Sprintf("program.cu calls %s (its output must not depend on input, time or the environment)", strings.Join(bad, ", "))
	}
	if _, err := translate(src); err != nil {
		return "program.cu has no HIP translation: " + err.Error()
	}
	c.Files = map[string]string{FileCUDA: src + "\n"}
	return ""
}

// validator accepts a synthesised task when its CUDA program compiles to
// sm_90 SASS (nvcc, cuobjdump) and its HIP translation builds for gfx1100
// with at least one kernel (hipcc): the task can be shown and judged.
// Tool failures (missing nvcc, the sandbox) wrap
// refinement.ErrValidatorBroken.
func validator(lane tools.Lane) (refinement.Validator, error) {
	l, ok := lane.(*Lane)
	if !ok {
		return nil, fmt.Errorf("sass2rdna validator: lane is %T", lane)
	}
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		cu := c.Files[FileCUDA]
		if strings.TrimSpace(cu) == "" {
			return errors.New("no program.cu")
		}
		hip, err := translate(cu)
		if err != nil {
			return fmt.Errorf("program.cu has no HIP translation: %w", err)
		}
		it := Item{ID: "candidate", CUDA: cu, HIP: hip}
		err = l.Prepare(ctx, &it)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return err
		case errors.Is(err, tools.ErrBadItem):
			return err // the program's fault: nvcc or hipcc reject it
		}
		return fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
	}), nil
}
