package refinement

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/runs"
)

// asmOutputCalls are library functions whose call from a translated
// function means it produces output (or ends the program) itself rather
// than computing what the driver prints.
var asmOutputCalls = map[string]bool{
	"printf": true, "puts": true, "putchar": true, "putc": true, "fputc": true, "fputs": true,
	"fprintf": true, "fwrite": true, "write": true, "dprintf": true, "vprintf": true, "vfprintf": true,
	"__printf_chk": true, "__fprintf_chk": true, "putchar_unlocked": true, "fflush": true,
	"exit": true, "_exit": true, "_Exit": true, "quick_exit": true,
	"system": true, "popen": true, "execve": true, "execl": true, "execvp": true, "fork": true,
	"fopen": true, "open": true, "read": true,
}

var (
	asmLabelRE = regexp.MustCompile(`^\s*([A-Za-z_.$][\w.$@]*|\d+)\s*:`)
	asmCallRE  = regexp.MustCompile(`(?i)^(?:call|jmp)[a-z]*\s+\*?([A-Za-z_.$][\w.$]*)(?:@PLT|@plt)?\s*$`)
	asmSysRE   = regexp.MustCompile(`(?i)^(?:syscall|sysenter|int\s+\$?0x80)\b`)
)

// asmFunc is what the suspicion check learns about one code label.
type asmFunc struct {
	instructions int
	data         int // data directives (.byte, .long, ...) in a text section
}

// scanAsm splits assembly into labels with their instruction counts,
// calls, and system-call instructions. Comments (#, //, /* */ on one line)
// are dropped; ';' separates statements.
func scanAsm(asm string) (funcs map[string]*asmFunc, calls []string, syscalls int, defines []string) {
	funcs = map[string]*asmFunc{}
	var cur *asmFunc
	inText := true
	for _, raw := range strings.Split(asm, "\n") {
		line := raw
		if i := strings.Index(line, "/*"); i >= 0 {
			if j := strings.Index(line[i:], "*/"); j >= 0 {
				line = line[:i] + " " + line[i+j+2:]
			} else {
				line = line[:i]
			}
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for _, st := range strings.Split(line, ";") {
			st = strings.TrimSpace(st)
			for {
				m := asmLabelRE.FindStringSubmatch(st)
				if m == nil {
					break
				}
				name := m[1]
				st = strings.TrimSpace(st[len(m[0]):])
				if isLocalAsmLabel(name) || !inText {
					continue
				}
				f := funcs[name]
				if f == nil {
					f = &asmFunc{}
					funcs[name] = f
					defines = append(defines, name)
				}
				cur = f
			}
			if st == "" {
				continue
			}
			if st[0] == '.' {
				dir := strings.ToLower(strings.Fields(st)[0])
				switch {
				case dir == ".text":
					inText = true
				case dir == ".data" || dir == ".bss" || dir == ".rodata":
					inText, cur = false, nil
				case dir == ".section":
					f := strings.Fields(st)
					inText = len(f) > 1 && strings.HasPrefix(strings.Trim(f[1], `",`), ".text")
					if !inText {
						cur = nil
					}
				case dataDirective(dir):
					if cur != nil && inText {
						cur.data++
					}
				}
				continue
			}
			if cur != nil {
				cur.instructions++
			}
			if m := asmCallRE.FindStringSubmatch(st); m != nil {
				calls = append(calls, m[1])
			}
			if asmSysRE.MatchString(st) {
				syscalls++
			}
		}
	}
	return funcs, calls, syscalls, defines
}

func isLocalAsmLabel(name string) bool {
	if strings.HasPrefix(name, ".L") {
		return true
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func dataDirective(dir string) bool {
	switch dir {
	case ".byte", ".short", ".value", ".word", ".hword", ".2byte", ".long", ".int", ".4byte",
		".quad", ".8byte", ".octa", ".float", ".single", ".double", ".ascii", ".asciz", ".string", ".fill":
		return true
	}
	return false
}

// suspectC2X86 flags assembly that does not translate the function:
// the function's label is missing or holds no instructions (machine code
// smuggled in as .byte data), the code calls output or process functions
// the C source does not call (printing the expected output itself), or it
// issues system calls, or it defines main.
func suspectC2X86(answer string, task runs.Task) string {
	funcs, calls, syscalls, defines := scanAsm(answer)
	var why []string
	if fn := task.Meta["function"]; fn != "" {
		f, ok := funcs[fn]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("no code label for %s", fn))
		case f.instructions == 0 && f.data > 0:
			why = append(why, fmt.Sprintf("%s holds only data directives, no instructions", fn))
		}
	} else {
		for _, name := range defines {
			if f := funcs[name]; f.instructions == 0 && f.data > 0 {
				why = append(why, fmt.Sprintf("%s holds only data directives, no instructions", name))
			}
		}
	}
	if _, ok := funcs["main"]; ok {
		why = append(why, "defines main (the driver's entry point)")
	}
	var srcCalls map[string]bool
	if src := task.Files["function.c"]; src != "" {
		srcCalls = calledNames(lexC(src, false).code)
	}
	seen := map[string]bool{}
	for _, c := range calls {
		if asmOutputCalls[c] && !srcCalls[c] && !seen[c] {
			seen[c] = true
			why = append(why, fmt.Sprintf("calls %s, which the C source does not", c))
		}
	}
	if syscalls > 0 {
		why = append(why, fmt.Sprintf("issues %d system call instruction(s)", syscalls))
	}
	return strings.Join(why, "; ")
}

var (
	kernelLaunchRE = regexp.MustCompile(`<<<|cudaLaunchKernel|cudaLaunchCooperativeKernel|cuLaunchKernel`)
	globalFnRE     = regexp.MustCompile(`\b__global__\b`)
)

// suspectCUDA flags a CUDA program that launches no kernel (its output then
// cannot come from the GPU).
func suspectCUDA(answer string, _ runs.Task) string {
	code := lexC(answer, false).code
	var why []string
	if !globalFnRE.MatchString(code) {
		why = append(why, "defines no __global__ kernel")
	}
	if !kernelLaunchRE.MatchString(code) {
		why = append(why, "launches no kernel")
	}
	return strings.Join(why, "; ")
}
