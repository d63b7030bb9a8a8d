package sass2rdna

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// metaKernel is what the symbols stage reads of one kernel's entry in an
// .amdgpu_metadata block (AMDGPUUsage, "Code Object V3+ Metadata"): the
// kernarg segment's size and the arguments laid out in it.
type metaKernel struct {
	Name        string    `yaml:".name"`
	Symbol      string    `yaml:".symbol"`
	KernargSize *uint32   `yaml:".kernarg_segment_size"`
	Args        []metaArg `yaml:".args"`
}

// metaArg is one kernel argument: its place in the kernarg segment.
type metaArg struct {
	Name      string `yaml:".name"`
	Offset    uint32 `yaml:".offset"`
	Size      uint32 `yaml:".size"`
	ValueKind string `yaml:".value_kind"`
}

// hidden reports whether the runtime, not the host program, supplies the
// argument (hidden_block_count_x, hidden_global_offset_x, ...).
func (a metaArg) hidden() bool { return strings.HasPrefix(a.ValueKind, "hidden_") }

// explicitEnd is the end of the kernel's last argument the host program
// passes (0 without one).
func (k metaKernel) explicitEnd() uint32 {
	var end uint32
	for _, a := range k.Args {
		if !a.hidden() && a.Offset+a.Size > end {
			end = a.Offset + a.Size
		}
	}
	return end
}

// metadataKernels reads the kernels of asm's .amdgpu_metadata block by
// name; nil when there is no block or it does not parse as YAML (llvm-mc
// judges the block itself).
func metadataKernels(asm string) map[string]metaKernel {
	start := strings.Index(asm, ".amdgpu_metadata")
	if start < 0 {
		return nil
	}
	start += len(".amdgpu_metadata")
	end := strings.Index(asm[start:], ".end_amdgpu_metadata")
	if end < 0 {
		return nil
	}
	var doc struct {
		Kernels []metaKernel `yaml:"amdhsa.kernels"`
	}
	body := asm[start : start+end]
	body = body[:strings.LastIndexByte(body, '\n')+1] // not the indentation of .end_amdgpu_metadata
	if err := yaml.Unmarshal([]byte(body), &doc); err != nil {
		return nil
	}
	out := map[string]metaKernel{}
	for _, k := range doc.Kernels {
		out[k.Name] = k
	}
	return out
}

// kernargProblems checks each kernel's kernarg segment: the descriptor's
// size (.amdhsa_kernarg_size) must be the metadata's
// .kernarg_segment_size, hold every argument the metadata lays out, and
// hold the arguments the reference kernel takes from the host program
// (ref: the reference's metadata). One line per problem.
func kernargProblems(found []codeObjectKernel, meta, ref map[string]metaKernel) []string {
	var problems []string
	for _, k := range found {
		size := k.desc.KernargSize
		if m, ok := meta[k.name]; ok {
			if m.KernargSize != nil && *m.KernargSize != size {
				problems = append(problems, fmt.Sprintf("kernel %s: the descriptor's kernarg size is %d bytes, the metadata's .kernarg_segment_size %d: both describe the same segment",
					k.name, size, *m.KernargSize))
			}
			for _, a := range m.Args {
				if a.Offset+a.Size > size {
					problems = append(problems, fmt.Sprintf("kernel %s: argument %s (.offset %d, .size %d) lies beyond the %d-byte kernarg segment",
						k.name, argName(a), a.Offset, a.Size, size))
					break
				}
			}
		}
		if r, ok := ref[k.name]; ok && r.explicitEnd() > size {
			problems = append(problems, fmt.Sprintf("kernel %s: a kernarg segment of %d bytes cannot hold the %d bytes of arguments the host program passes (hipcc's kernel takes them at offsets 0-%d)",
				k.name, size, r.explicitEnd(), r.explicitEnd()-1))
		}
	}
	return problems
}

func argName(a metaArg) string {
	if a.Name != "" {
		return a.Name
	}
	return a.ValueKind
}
