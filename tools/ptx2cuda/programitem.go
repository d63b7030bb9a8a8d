package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

// PromptUserProgram is the prompt of a program task (prompts/user_program.tmpl).
const PromptUserProgram = "user_program"

// programKernelSource returns the definition of kernel in program, or why
// no task can be made of it.
func programKernelSource(program, kernel string) (string, error) {
	p := parseProgram(program)
	k, err := p.kernel(kernel)
	if err != nil {
		return "", err
	}
	return p.src[k.Start:k.End] + "\n", nil
}

// checkProgram validates a program item's meta: no params, sizes or
// launch (the program launches the kernel), and variants with knob flags
// only.
func (it Item) checkProgram() error {
	m := it.Meta
	switch {
	case len(m.Params) > 0:
		return errors.New("params: a program item takes none (its program launches the kernel)")
	case len(m.Sizes) > 0:
		return errors.New("sizes: a program item takes none")
	case len(m.Launch.Grid) > 0 || len(m.Launch.Block) > 0 || m.Launch.Shared != "":
		return errors.New("launch: a program item takes none (its program launches the kernel)")
	case len(m.Variants) == 0:
		return errors.New("variants: at least one is required")
	case strings.TrimSpace(it.Program) == "":
		return fmt.Errorf("%s: empty program", FileProgram)
	}
	seen := map[string]bool{}
	for i, v := range m.Variants {
		switch {
		case !nameRE.MatchString(v.Name):
			return fmt.Errorf("variants[%d].name: %q: want [a-z0-9_]+", i, v.Name)
		case seen[v.Name]:
			return fmt.Errorf("variants[%d].name: %q twice", i, v.Name)
		case len(v.Sizes) > 0 || v.Launch != nil:
			return fmt.Errorf("variants[%d]: a program item's variant takes no sizes or launch", i)
		}
		seen[v.Name] = true
		if err := FlagsOK(v.Flags); err != nil {
			return fmt.Errorf("variants[%d].flags: %w", i, err)
		}
	}
	return nil
}

// ProgramSpec is the variant's program harness.
func (it Item) ProgramSpec(variant string) (ProgramSpec, error) {
	v, ok := it.variant(variant)
	if !ok {
		return ProgramSpec{}, fmt.Errorf("variant %q: no such variant", variant)
	}
	return ProgramSpec{Kernel: it.Meta.Kernel, Flags: append([]string{}, v.Flags...)}, nil
}

// isProgram reports whether it is a program item.
func (it Item) isProgram() bool { return it.Meta.Harness == HarnessProgram }

// ptxSource is what PreparePTX compiles: kernel.cu, or for a program (or
// torch) item the program (CUDA source) with every other kernel's
// definition made a declaration.
func (it Item) ptxSource() (string, error) {
	if !it.isProgram() && !it.isTorch() {
		return it.Kernel, nil
	}
	p := parseProgram(it.Program)
	k, err := p.kernel(it.Meta.Kernel)
	if err != nil {
		return "", err
	}
	return p.kernelUnit(k), nil
}

// checkProgramPTX checks that a program item's PTX is its kernel's alone:
// one .entry, named for the kernel.
func (it Item) checkProgramPTX(ptx string) error {
	entries := cudasynth.KernelsPTX(ptx)
	if len(entries) != 1 || cudasynth.KernelBase(entries[0]) != it.Meta.Kernel {
		return &SkipError{SkipPTX, fmt.Sprintf("the PTX of %s alone has entries %v, want the one kernel", it.Meta.Kernel, entries)}
	}
	return nil
}

// programUserData is the data of a program task's prompt.
type programUserData struct {
	ID, Kernel, Signature, PTX, Context string
	Flags                               []string
}

// programTask renders c, a variant of a program item, as a task: files
// kernel.cu (the kernel's definition), kernel.ptx, program.cu and
// program.json; the prompt shows the Rolled-PTX, the signature and the
// program before the kernel (comments removed, other kernels declared
// only).
func (c corpusTask) programTask(lib *prompts.Library, round int, key string, meta map[string]string) (runs.Task, error) {
	ps, err := c.item.ProgramSpec(c.variant)
	if err != nil {
		return runs.Task{}, err
	}
	spec, err := json.MarshalIndent(ps, "", "  ")
	if err != nil {
		return runs.Task{}, err
	}
	return c.kernelTask(lib, round, key, meta, HarnessProgram, PromptUserProgram, ps.Kernel, ps.Flags,
		map[string]string{FileProgram: c.item.Program, FileProgramSpec: string(spec) + "\n"})
}

// kernelTask renders c's task for kernel, built with flags, from the
// source around it (a program or torch item): the prompt (promptName)
// shows the Rolled-PTX, the kernel's signature and the source before it;
// the files are the kernel's definition (kernel.cu), kernel.ptx and files.
func (c corpusTask) kernelTask(lib *prompts.Library, round int, key string, meta map[string]string, harness, promptName,
	kernel string, flags []string, files map[string]string) (runs.Task, error) {
	p := parseProgram(c.item.Program)
	k, err := p.kernel(kernel)
	if err != nil {
		return runs.Task{}, err
	}
	ptx := c.item.PTX[c.variant]
	d := programUserData{ID: c.id(), Kernel: kernel, Signature: strings.Join(strings.Fields(p.head(k)), " "),
		PTX: rollptx.Roll(ptx), Context: p.context(k), Flags: flags}
	prompt, err := lib.Render(LaneName, promptName, d)
	if err != nil {
		return runs.Task{}, err
	}
	m := map[string]string{"item": c.item.ID, "variant": c.variant, "kernel": kernel, "corpus": c.item.Set, "harness": harness}
	if s := c.item.Meta.Source; s != nil {
		for k, v := range map[string]string{"source_campaign": s.Campaign, "source_campaign_id": s.CampaignID, "source_lane": s.Lane,
			"source_task": s.Task, "source_task_key": s.TaskKey, "source_attempt": s.Attempt, "source_verdict": s.Verdict} {
			m[k] = v
		}
	}
	for k, v := range meta {
		m[k] = v
	}
	files[FileKernel], files[FilePTX] = c.item.Kernel, ptx
	return runs.Task{Round: round, Key: key, Lane: LaneName, Categories: []string{c.item.Meta.Category}, Prompt: prompt, Meta: m,
		Files: files}, nil
}

// checkProgramReference builds every variant's original program and the
// program with the kernel emptied (the builds a task's Verify makes).
func (l *Lane) checkProgramReference(ctx context.Context, it Item) error {
	for _, v := range it.Meta.Variants {
		ps, err := it.ProgramSpec(v.Name)
		if err != nil {
			return fmt.Errorf("ptx2cuda check %s: %w: %w", it.ID, tools.ErrBadItem, err)
		}
		p := parseProgram(it.Program)
		k, err := p.kernel(ps.Kernel)
		if err != nil {
			return fmt.Errorf("ptx2cuda check %s: %w: %w", it.ID, tools.ErrBadItem, err)
		}
		for _, b := range []struct{ what, src string }{{"the original program", it.Program}, {"the program with the kernel emptied", p.blank(k)}} {
			res, err := l.builds.Run(ctx, l.programJob(ps, b.src))
			if err != nil {
				return fmt.Errorf("ptx2cuda check %s: %w", TaskID(it.ID, v.Name), err)
			}
			if !res.OK() {
				return fmt.Errorf("ptx2cuda check %s: %w: %s does not build: %s", TaskID(it.ID, v.Name), tools.ErrBadItem, b.what,
					res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines)))
			}
		}
	}
	return nil
}
