package cuda2hip

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/tools/hipify"
)

// Leak is one CUDA dependency found in a HIP program.
type Leak struct {
	Line int    // 1-based
	Kind string // LeakHeader, LeakAPI, LeakMacro or LeakPTX
	What string // the header path, the name, or "asm"
	// HIP is the HIP counterpart the hipify table gives ("" when none).
	HIP string
}

// Leak kinds.
const (
	LeakHeader = "header" // #include of a CUDA toolkit header
	LeakAPI    = "api"    // a CUDA runtime, driver or library name
	LeakMacro  = "macro"  // a CUDA compiler macro (__CUDACC__, __CUDA_ARCH__)
	LeakPTX    = "ptx"    // inline PTX assembly
)

func (k Leak) String() string {
	var s string
	switch k.Kind {
	case LeakHeader:
		s = fmt.Sprintf("line %d: #include <%s>: a CUDA header", k.Line, k.What)
	case LeakAPI:
		s = fmt.Sprintf("line %d: %s: a CUDA API name", k.Line, k.What)
	case LeakMacro:
		s = fmt.Sprintf("line %d: %s: a CUDA compiler macro", k.Line, k.What)
	case LeakPTX:
		s = fmt.Sprintf("line %d: inline PTX assembly", k.Line)
	default:
		s = fmt.Sprintf("line %d: %s", k.Line, k.What)
	}
	if k.HIP != "" {
		s += " (HIP: " + k.HIP + ")"
	}
	return s
}

var (
	includeRE = regexp.MustCompile(`^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]`)
	identRE   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	// cudaCallRE: names only the hipify table's catch-all globs know
	// (cudaFoo, cuBar), which count when called.
	cudaCallRE = regexp.MustCompile(`^(?:cuda|cu)[A-Z][A-Za-z0-9_]*$`)
	// ptxRE: a PTX instruction with a type suffix (mov.u32, shf.l.wrap.b32,
	// add.cc.u32, setp.lt.s32) or a PTX register declaration. AMD
	// mnemonics use underscores (v_add_u32), not dots.
	ptxRE         = regexp.MustCompile(`\b[a-z]+(?:\.[a-z0-9]+)*\.(?:[usbf](?:8|16|32|64)|pred)\b|\.reg\s*\.|\bsetp\.|\bbar\.sync\b`)
	asmStartRE    = regexp.MustCompile(`\b(?:asm|__asm__|__asm)\b(?:\s*(?:volatile|__volatile__|goto|inline))*\s*\(`)
	funcDefNameRE = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?\{`)
	defineNameRE  = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)`)
)

// CUDALeaks lists what ties a HIP program to the CUDA toolkit, in source
// order, one entry per construct and line: #include of a header the hipify
// table maps or refuses (cuda_runtime.h, cuda.h, curand_kernel.h,
// cooperative_groups.h, thrust/..., cublas...); a name the table renames
// as a CUDA runtime, driver or library API, type or enumerator (cudaMalloc,
// cudaError_t, cudaMemcpyHostToDevice, cuLaunchKernel, curand_init) or
// refuses by name (cudaDeviceSetLimit), and a call of an unknown cuda*/cu*
// name the file does not define itself; CUDA compiler macros (__CUDACC__,
// __CUDA_ARCH__, __NVCC__); inline assembly that reads as PTX. Comments
// and string literals are not read, nor names after . or -> (members).
// Device intrinsics HIP 5.2 lacks (__shfl_down_sync, __activemask) are
// not leaks: the HIP compile rejects them.
//
// A HIP build on NVIDIA goes through nvcc, which includes cuda_runtime.h
// itself, so such a program may build and run there and still not be a
// HIP program: the lane fails it before any compile (cuda_in_hip), and the
// suspicion check flags it.
func CUDALeaks(src string) []Leak {
	table := hipify.Table()
	noComments := blank(src, true)
	lines := strings.Split(noComments, "\n")
	var leaks []Leak
	seen := map[string]bool{}
	add := func(l Leak) {
		key := fmt.Sprint(l.Line, l.Kind, l.What)
		if !seen[key] {
			seen[key] = true
			leaks = append(leaks, l)
		}
	}
	for i, line := range lines {
		m := includeRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if e, ok := table.LookupHeader(m[1]); ok {
			hip := ""
			if e.Kind == hipify.KindHeader {
				hip = "<" + e.HIP + ">"
			}
			add(Leak{Line: i + 1, Kind: LeakHeader, What: m[1], HIP: hip})
		}
		lines[i] = "" // the path is no identifier
	}
	for _, loc := range asmStartRE.FindAllStringIndex(noComments, -1) {
		open := loc[1] - 1
		end := closeParen(noComments, open)
		if end < 0 {
			end = len(noComments)
		}
		if ptxRE.MatchString(noComments[open:end]) {
			add(Leak{Line: strings.Count(noComments[:loc[0]], "\n") + 1, Kind: LeakPTX, What: "asm"})
		}
	}
	code := blank(strings.Join(lines, "\n"), false)
	own := map[string]bool{}
	for _, m := range funcDefNameRE.FindAllStringSubmatch(code, -1) {
		own[m[1]] = true
	}
	for _, m := range defineNameRE.FindAllStringSubmatch(code, -1) {
		own[m[1]] = true
	}
	lineStarts := lineIndex(code)
	for _, loc := range identRE.FindAllStringIndex(code, -1) {
		name := code[loc[0]:loc[1]]
		if loc[0] > 0 && isIdentByte(code[loc[0]-1]) {
			continue
		}
		if afterMember(code, loc[0]) {
			continue
		}
		e, ok := table.Lookup(name)
		exact := ok && e.CUDA == name
		line := lineOf(lineStarts, loc[0])
		switch {
		case exact && (e.Kind == hipify.KindMacro || e.Kind == hipify.KindDefined || name == "__NVCC__"):
			add(Leak{Line: line, Kind: LeakMacro, What: name, HIP: e.HIP})
		case exact && isCUDAName(e.Kind, name):
			add(Leak{Line: line, Kind: LeakAPI, What: name, HIP: e.HIP})
		case !exact && !own[name] && cudaCallRE.MatchString(name) && calledAt(code, loc[1]):
			add(Leak{Line: line, Kind: LeakAPI, What: name})
		}
	}
	sort.SliceStable(leaks, func(i, j int) bool { return leaks[i].Line < leaks[j].Line })
	return leaks
}

// isCUDAName: a table entry that names the CUDA runtime, driver or a CUDA
// library (not a device intrinsic, not a member).
func isCUDAName(k hipify.Kind, name string) bool {
	switch k {
	case hipify.KindAPI, hipify.KindType, hipify.KindEnum, hipify.KindDriver, hipify.KindLibrary:
		return true
	case hipify.KindUnsupported:
		return strings.HasPrefix(name, "cu") || strings.HasPrefix(name, "CU")
	}
	return false
}

// LeakSummary is the leaks as a diagnostic: one line each, at most max.
func LeakSummary(leaks []Leak, max int) string {
	var b strings.Builder
	for i, l := range leaks {
		if i == max {
			fmt.Fprintf(&b, "... %d more\n", len(leaks)-i)
			break
		}
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// blank returns src with comments replaced by spaces and, unless
// keepLiterals, the contents of string and character literals too; line
// breaks stay where they were, so offsets and lines still match src.
func blank(src string, keepLiterals bool) string {
	b := []byte(src)
	n := len(b)
	wipe := func(from, to int) {
		for k := from; k < to && k < n; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	for i := 0; i < n; {
		c := b[i]
		switch {
		case c == '/' && i+1 < n && b[i+1] == '/':
			j := i
			for j < n && b[j] != '\n' {
				j++
			}
			wipe(i, j)
			i = j
		case c == '/' && i+1 < n && b[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := n
			if j >= 0 {
				end = i + 2 + j + 2
			}
			wipe(i, end)
			i = end
		case c == 'R' && i+1 < n && b[i+1] == '"' && (i == 0 || !isIdentByte(b[i-1])):
			// A raw string R"delim( ... )delim".
			open := strings.IndexByte(src[i+2:], '(')
			if open < 0 {
				i++
				continue
			}
			delim := src[i+2 : i+2+open]
			closeAt := strings.Index(src[i+2+open:], ")"+delim+"\"")
			end := n
			if closeAt >= 0 {
				end = i + 2 + open + closeAt + len(delim) + 2
			}
			if !keepLiterals {
				wipe(i+2, end-1)
			}
			i = end
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && b[j] != c && b[j] != '\n' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if !keepLiterals {
				wipe(i+1, j)
			}
			i = j + 1
		default:
			i++
		}
	}
	return string(b)
}

// closeParen returns the index just past the ')' closing the '(' at open,
// or -1.
func closeParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// afterMember reports whether the identifier at i follows . or ->.
func afterMember(s string, i int) bool {
	j := i - 1
	for j >= 0 && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
		j--
	}
	return j >= 0 && (s[j] == '.' || (s[j] == '>' && j > 0 && s[j-1] == '-'))
}

// calledAt reports whether a '(' follows position i (blanks skipped).
func calledAt(s string, i int) bool {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i < len(s) && s[i] == '('
}

func lineIndex(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}
