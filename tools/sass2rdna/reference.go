package sass2rdna

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// Reference is hipcc's gfx1100 build of an item's HIP program: the answer
// key the lane compares instruction mixes against.
type Reference struct {
	// HIP is the HIP program (the item's program.hip or the translation of
	// its program.cu).
	HIP string
	// RDNA3 is hipcc's device assembly, as printed.
	RDNA3 string
	// Kernels are the kernels it defines (.amdhsa_kernel), sorted.
	Kernels []string

	descriptors map[string]kernelDescriptor
	// meta is its metadata's kernels (kernarg layout) by name.
	meta map[string]metaKernel
}

// HIPSource returns the item's HIP program: Files["program.hip"], else the
// translation of Files["program.cu"]. Errors wrap tools.ErrBadItem.
func (l *Lane) HIPSource(item tools.Item) (string, error) {
	if h := item.Files[FileHIP]; strings.TrimSpace(h) != "" {
		return h, nil
	}
	cu := item.Files[FileCUDA]
	if strings.TrimSpace(cu) == "" {
		return "", fmt.Errorf("%w: the item has neither %s nor %s", tools.ErrBadItem, FileHIP, FileCUDA)
	}
	tr, err := l.cfg.Translate(cu)
	if err != nil {
		return "", fmt.Errorf("%w: %s: hipify: %v", tools.ErrBadItem, FileCUDA, err)
	}
	if !tr.OK() {
		is := tr.Unsupported[0]
		return "", fmt.Errorf("%w: %s: hipify cannot translate line %d (%s: %s); give the item a %s",
			tools.ErrBadItem, FileCUDA, is.Line, is.Construct, is.Reason, FileHIP)
	}
	return tr.HIP, nil
}

// hipArgs are hipcc's flags for gfx1100 builds.
func (l *Lane) hipArgs() []string {
	return append(append([]string{}, l.cfg.HIPCCFlags...), l.cfg.Toolchains.HIPArgs(toolchain.TargetGFX1100)...)
}

// Reference returns hipcc's gfx1100 assembly of the item's HIP program
// (hipcc -Os --offload-arch=gfx1100 --cuda-device-only -S, in the sandbox,
// cached). An item hipcc cannot build is a tools.ErrBadItem.
func (l *Lane) Reference(ctx context.Context, item tools.Item) (*Reference, error) {
	hip, err := l.HIPSource(item)
	if err != nil {
		return nil, err
	}
	args := append(l.hipArgs(), "--cuda-device-only", "-S", "-o", "reference.s", FileHIP)
	res, err := l.jobs.Run(ctx, buildjob.Job{Name: "reference", Steps: []buildjob.Step{{Tool: toolchain.HIPCC, Args: args}},
		Inputs: map[string][]byte{FileHIP: []byte(hip)}, Outputs: []string{"reference.s"}})
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	if !res.OK() {
		return nil, fmt.Errorf("%w: hipcc cannot build the item's HIP program for gfx1100: %s", tools.ErrBadItem, diagnostic(res, l.cfg.DiagnosticLines))
	}
	asm := string(res.Entry.Files["reference.s"])
	ref := &Reference{HIP: hip, RDNA3: asm, Kernels: cudasynth.KernelsRDNA(asm), descriptors: referenceDescriptors(asm),
		meta: metadataKernels(asm)}
	if len(ref.Kernels) == 0 {
		return nil, fmt.Errorf("%w: the item's HIP program defines no kernel", tools.ErrBadItem)
	}
	return ref, nil
}

var kernargRE = regexp.MustCompile(`^\.amdhsa_kernarg_size\s+(\d+)`)

// referenceDescriptors reads the kernarg sizes of compiler output's
// .amdhsa_kernel blocks.
func referenceDescriptors(asm string) map[string]kernelDescriptor {
	out := map[string]kernelDescriptor{}
	cur := ""
	for _, line := range strings.Split(asm, "\n") {
		t := strings.TrimSpace(stripComment(line))
		if m := amdKernelRE.FindStringSubmatch(t); m != nil {
			cur = m[1]
			out[cur] = kernelDescriptor{}
		}
		if m := kernargRE.FindStringSubmatch(t); m != nil && cur != "" {
			n, _ := strconv.ParseUint(m[1], 10, 32)
			out[cur] = kernelDescriptor{KernargSize: uint32(n)}
		}
		if strings.HasPrefix(t, ".end_amdhsa_kernel") {
			cur = ""
		}
	}
	return out
}
