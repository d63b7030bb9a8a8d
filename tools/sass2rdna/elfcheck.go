package sass2rdna

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"strings"
)

// AMDGPU ELF facts (LLVM's AMDGPUUsage, "ELF Code Object").
const (
	emAMDGPU           = 224  // EM_AMDGPU
	efAMDGPUMachMask   = 0xff // EF_AMDGPU_MACH
	efAMDGPUMachGFX110 = 0x41 // EF_AMDGPU_MACH_AMDGCN_GFX1100
	ntAMDGPUMetadata   = 32   // NT_AMDGPU_METADATA, note name "AMDGPU"
	kdSize             = 64   // a kernel descriptor's size
	maxLDS             = 64 << 10
)

// kernelDescriptor is the part of an AMDHSA kernel descriptor the symbols
// stage checks (offsets from AMDGPUUsage, "Kernel Descriptor").
type kernelDescriptor struct {
	GroupSegment   uint32 // bytes of LDS
	PrivateSegment uint32 // bytes of scratch per work-item
	KernargSize    uint32
	EntryOffset    int64 // kernel code entry, relative to the descriptor
	PgmRsrc1       uint32
	PgmRsrc2       uint32
	PgmRsrc3       uint32
	CodeProperties uint16
}

func parseDescriptor(b []byte) kernelDescriptor {
	le := binary.LittleEndian
	return kernelDescriptor{GroupSegment: le.Uint32(b[0:]), PrivateSegment: le.Uint32(b[4:]), KernargSize: le.Uint32(b[8:]),
		EntryOffset: int64(le.Uint64(b[16:])), PgmRsrc3: le.Uint32(b[44:]), PgmRsrc1: le.Uint32(b[48:]),
		PgmRsrc2: le.Uint32(b[52:]), CodeProperties: le.Uint16(b[56:])}
}

// vgprs is the VGPR count the descriptor grants (GRANULATED_WORKITEM_VGPR
// _COUNT, bits 0-5 of rsrc1: wave32 granules of 8 on GFX10+, wave64 of 4).
func (d kernelDescriptor) vgprs() int {
	g := int(d.PgmRsrc1 & 0x3f)
	if d.CodeProperties&(1<<10) != 0 { // ENABLE_WAVEFRONT_SIZE32
		return (g + 1) * 8
	}
	return (g + 1) * 4
}

// codeObjectKernel is what the symbols stage found for one kernel.
type codeObjectKernel struct {
	name string
	desc kernelDescriptor
	size uint64 // the code symbol's size
}

// checkCodeObject checks a linked gfx1100 code object: the ELF header,
// every kernel's code symbol (a global function in an executable section)
// and descriptor symbol (<kernel>.kd, a 64-byte global object), each
// descriptor's entry offset pointing at its kernel's code, sane resource
// fields, and a metadata note naming every kernel (the HIP runtime reads
// it to launch them). It returns one line per problem.
func checkCodeObject(obj []byte, kernels []string) ([]codeObjectKernel, []string) {
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		return nil, []string{"the code object is not an ELF file: " + err.Error()}
	}
	defer f.Close()
	var problems []string
	if f.Machine != emAMDGPU || f.Class != elf.ELFCLASS64 {
		problems = append(problems, fmt.Sprintf("the code object is %v %v, not a 64-bit AMDGPU object", f.Class, f.Machine))
	}
	if f.OSABI != 64 { // ELFOSABI_AMDGPU_HSA
		problems = append(problems, fmt.Sprintf("the code object's OS ABI is %d, not AMDGPU_HSA (64)", f.OSABI))
	}
	flags, err := elfFlags(obj)
	if err == nil && flags&efAMDGPUMachMask != efAMDGPUMachGFX110 {
		problems = append(problems, fmt.Sprintf("the code object's e_flags machine is 0x%x, not gfx1100 (0x41)", flags&efAMDGPUMachMask))
	}
	syms, err := f.DynamicSymbols()
	if err != nil || len(syms) == 0 {
		syms, err = f.Symbols()
	}
	if err != nil {
		return nil, append(problems, "the code object has no symbol table: "+err.Error())
	}
	byName := map[string]elf.Symbol{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF {
			byName[s.Name] = s
		}
	}
	var found []codeObjectKernel
	for _, k := range kernels {
		code, okC := byName[k]
		kd, okD := byName[k+".kd"]
		switch {
		case !okC:
			problems = append(problems, fmt.Sprintf("kernel %s: no code symbol %s", k, k))
			continue
		case !okD:
			problems = append(problems, fmt.Sprintf("kernel %s: no kernel descriptor symbol %s.kd (an .amdhsa_kernel %s block makes it)", k, k, k))
			continue
		}
		if elf.ST_TYPE(code.Info) != elf.STT_FUNC || elf.ST_BIND(code.Info) == elf.STB_LOCAL {
			problems = append(problems, fmt.Sprintf("kernel %s: the code symbol is %v %v, not a global function (.globl %s, .type %s,@function)",
				k, elf.ST_BIND(code.Info), elf.ST_TYPE(code.Info), k, k))
		}
		if elf.ST_TYPE(kd.Info) != elf.STT_OBJECT || elf.ST_BIND(kd.Info) == elf.STB_LOCAL || kd.Size != kdSize {
			problems = append(problems, fmt.Sprintf("kernel %s: %s.kd is %v %v of %d bytes, not a global 64-byte object",
				k, k, elf.ST_BIND(kd.Info), elf.ST_TYPE(kd.Info), kd.Size))
			continue
		}
		if sec := sectionOf(f, code); sec == nil || sec.Flags&elf.SHF_EXECINSTR == 0 {
			problems = append(problems, fmt.Sprintf("kernel %s: the code symbol is not in an executable section", k))
		}
		raw, err := readAt(f, kd.Value, kdSize)
		if err != nil {
			problems = append(problems, fmt.Sprintf("kernel %s: the descriptor cannot be read: %v", k, err))
			continue
		}
		d := parseDescriptor(raw)
		if entry := int64(kd.Value) + d.EntryOffset; entry != int64(code.Value) {
			problems = append(problems, fmt.Sprintf("kernel %s: the descriptor's code entry is 0x%x, the kernel's code is at 0x%x", k, entry, code.Value))
		}
		if code.Value%256 != 0 {
			problems = append(problems, fmt.Sprintf("kernel %s: the code is at 0x%x, not 256-byte aligned (.p2align 8)", k, code.Value))
		}
		if d.GroupSegment > maxLDS {
			problems = append(problems, fmt.Sprintf("kernel %s: %d bytes of LDS, gfx1100 has %d per workgroup", k, d.GroupSegment, maxLDS))
		}
		if d.vgprs() > maxVGPRs {
			problems = append(problems, fmt.Sprintf("kernel %s: the descriptor grants %d VGPRs, more than %d", k, d.vgprs(), maxVGPRs))
		}
		found = append(found, codeObjectKernel{name: k, desc: d, size: code.Size})
	}
	if meta := metadataNote(f); meta == nil {
		problems = append(problems, "the code object has no AMDGPU metadata note (write an .amdgpu_metadata block listing every kernel: the HIP runtime reads it to launch them)")
	} else {
		for _, k := range kernels {
			if !bytes.Contains(meta, []byte(k+".kd")) {
				problems = append(problems, fmt.Sprintf("kernel %s: the .amdgpu_metadata block does not list it (.name: %s, .symbol: %s.kd)", k, k, k))
			}
		}
	}
	return found, problems
}

// elfFlags reads e_flags of a 64-bit little-endian ELF header.
func elfFlags(obj []byte) (uint32, error) {
	if len(obj) < 52 {
		return 0, fmt.Errorf("short ELF header")
	}
	return binary.LittleEndian.Uint32(obj[48:]), nil
}

func sectionOf(f *elf.File, s elf.Symbol) *elf.Section {
	if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
		return nil
	}
	return f.Sections[s.Section]
}

// readAt reads n bytes at virtual address addr of a linked object.
func readAt(f *elf.File, addr uint64, n int) ([]byte, error) {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr || addr+uint64(n) > s.Addr+s.Size {
			continue
		}
		b := make([]byte, n)
		if _, err := s.ReadAt(b, int64(addr-s.Addr)); err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, fmt.Errorf("address 0x%x is in no loaded section", addr)
}

// metadataNote returns the NT_AMDGPU_METADATA note's description
// (msgpack), nil when there is none.
func metadataNote(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			le := binary.LittleEndian
			nameSz, descSz, typ := uint64(le.Uint32(b[0:])), uint64(le.Uint32(b[4:])), le.Uint32(b[8:])
			nameEnd := 12 + align4(nameSz)
			descEnd := nameEnd + align4(descSz)
			if descEnd > uint64(len(b)) {
				break
			}
			name := strings.TrimRight(string(b[12:12+nameSz]), "\x00")
			if name == "AMDGPU" && typ == ntAMDGPUMetadata {
				return b[nameEnd : nameEnd+descSz]
			}
			b = b[descEnd:]
		}
	}
	return nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }
