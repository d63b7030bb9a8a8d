package cudasynth

import (
	"regexp"
	"sort"
	"strings"
)

// Dialect is an assembly text's syntax, for [NormalizeAsm].
type Dialect int

const (
	// DialectX86 is GNU/LLVM x86-64 assembly (AT&T): '#' line comments.
	DialectX86 Dialect = iota
	// DialectAMDGPU is LLVM AMDGPU assembly (RDNA3): ';' line comments.
	DialectAMDGPU
	// DialectSASS is cuobjdump -sass output: /* */ comments hold the
	// addresses and encodings; ';' ends an instruction.
	DialectSASS
	// DialectPTX is PTX: '//' and /* */ comments.
	DialectPTX
)

// NormalizeAsm strips comments and blank space the way CASS prepared its
// assembly: block comments (/* */) everywhere, line comments of the
// dialect, leading and trailing blanks, runs of blanks inside a line
// (outside string literals) and empty lines. AMDGPU metadata blocks
// (.amdgpu_metadata ... .end_amdgpu_metadata, YAML) keep their indentation.
// The result ends with a newline unless it is empty.
func NormalizeAsm(d Dialect, text string) string {
	lineComment := map[Dialect]string{DialectX86: "#", DialectAMDGPU: ";", DialectPTX: "//"}[d]
	var out strings.Builder
	inBlock := false // inside /* */
	inYAML := false
	for _, raw := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		var line strings.Builder
		inStr := false
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if inBlock {
				if c == '*' && i+1 < len(raw) && raw[i+1] == '/' {
					inBlock = false
					i++
					line.WriteByte(' ')
				}
				continue
			}
			if inStr {
				line.WriteByte(c)
				if c == '\\' && i+1 < len(raw) {
					line.WriteByte(raw[i+1])
					i++
				} else if c == '"' {
					inStr = false
				}
				continue
			}
			if c == '"' {
				inStr = true
				line.WriteByte(c)
				continue
			}
			if c == '/' && i+1 < len(raw) && raw[i+1] == '*' {
				inBlock = true
				i++
				continue
			}
			if lineComment != "" && strings.HasPrefix(raw[i:], lineComment) {
				break
			}
			line.WriteByte(c)
		}
		s := line.String()
		trimmed := strings.TrimSpace(s)
		if d == DialectAMDGPU && strings.HasPrefix(trimmed, ".end_amdgpu_metadata") {
			inYAML = false
		}
		if trimmed == "" {
			continue
		}
		if inYAML {
			out.WriteString(strings.TrimRight(s, " \t"))
		} else {
			out.WriteString(collapseBlanks(trimmed))
		}
		out.WriteByte('\n')
		if d == DialectAMDGPU && strings.HasPrefix(trimmed, ".amdgpu_metadata") {
			inYAML = true
		}
	}
	return out.String()
}

// collapseBlanks turns runs of spaces and tabs outside string literals
// into one space.
func collapseBlanks(s string) string {
	var b strings.Builder
	inStr, blank := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !inStr && (c == ' ' || c == '\t') {
			blank = true
			continue
		}
		if blank {
			b.WriteByte(' ')
			blank = false
		}
		b.WriteByte(c)
		switch {
		case inStr && c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '"':
			inStr = !inStr
		}
	}
	return b.String()
}

// SplitSASS cuts cuobjdump -sass output into one text per architecture
// ("sm_86" -> the "code for sm_86" sections that hold functions, with
// their Function headers). Sections without functions (the empty modules
// nvcc adds) are dropped.
func SplitSASS(sass string) map[string]string {
	out := map[string]string{}
	var arch string
	var cur []string
	flush := func() {
		if arch != "" && strings.Contains(strings.Join(cur, "\n"), "Function : ") {
			out[arch] += strings.Join(cur, "\n") + "\n"
		}
		arch, cur = "", nil
	}
	for _, line := range strings.Split(sass, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Fatbin ") || strings.HasPrefix(t, "Fatbin elf code") || strings.HasPrefix(t, "Fatbin ptx code"):
			flush()
		case strings.HasPrefix(t, "code for "):
			flush()
			arch = strings.TrimSpace(strings.TrimPrefix(t, "code for "))
			cur = append(cur, line)
		case arch != "":
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

var (
	ptxEntryRe   = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)`)
	sassFuncRe   = regexp.MustCompile(`(?m)^\s*Function\s*:\s*(\S+)`)
	amdKernelRe  = regexp.MustCompile(`(?m)^\s*\.amdhsa_kernel\s+(\S+)`)
	amdTargetRe  = regexp.MustCompile(`\.amdgcn_target\s+"([^"]+)"`)
	hostMainRe   = regexp.MustCompile(`(?m)^main:`)
	fatbinDataRe = regexp.MustCompile(`^\s*\.(?:quad|long|byte|short|value|int|word)\b`)
)

// KernelsPTX lists the kernels (.entry) a PTX text defines, sorted.
func KernelsPTX(ptx string) []string { return uniqueMatches(ptxEntryRe, ptx) }

// KernelsSASS lists the functions cuobjdump printed, sorted.
func KernelsSASS(sass string) []string { return uniqueMatches(sassFuncRe, sass) }

// KernelsRDNA lists the kernels (.amdhsa_kernel) of AMDGPU assembly, sorted.
func KernelsRDNA(asm string) []string { return uniqueMatches(amdKernelRe, asm) }

// AMDGPUTarget returns the .amdgcn_target of AMDGPU assembly
// ("amdgcn-amd-amdhsa--gfx1100"), "" when absent.
func AMDGPUTarget(asm string) string {
	m := amdTargetRe.FindStringSubmatch(asm)
	if m == nil {
		return ""
	}
	return m[1]
}

func uniqueMatches(re *regexp.Regexp, s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

// StripFatbin separates host from device code in the host assembly nvcc
// compiles (gcc -save-temps): it drops the data lines of the .nv_fatbin
// section, the embedded device binary, keeping its label, and reports how
// many data lines went. This is CASS's regex filter that disentangles the
// host and device parts on the NVIDIA side.
func StripFatbin(hostAsm string) (string, int) {
	lines := strings.Split(hostAsm, "\n")
	out := make([]string, 0, len(lines))
	inFatbin, dropped := false, 0
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, ".section") || t == ".text" || t == ".data" || strings.HasPrefix(t, ".previous") {
			inFatbin = strings.HasPrefix(t, ".section") && strings.Contains(t, ".nv_fatbin")
		}
		if inFatbin && fatbinDataRe.MatchString(line) {
			dropped++
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n"), dropped
}

// InlineAsmAMDGPU returns the inline assembly of AMDGPU compiler output:
// the lines between the ;;#ASMSTART and ;;#ASMEND markers clang puts
// around it, "" when there is none.
func InlineAsmAMDGPU(asm string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(asm, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, ";;#ASMSTART"):
			in = true
		case strings.HasPrefix(t, ";;#ASMEND"):
			in = false
		case in && t != "":
			b.WriteString(t + "\n")
		}
	}
	return b.String()
}

// hasMain reports whether host assembly defines main.
func hasMain(asm string) bool { return hostMainRe.MatchString(asm) }
