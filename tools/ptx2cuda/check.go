package ptx2cuda

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/tools"
)

// maxAsmInstructions is how many PTX instructions an answer's inline asm
// may hold in all: one or two (a %laneid read, a special register) are
// decompilation; more is the PTX carried over.
const maxAsmInstructions = 2

var (
	thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)
	// asmStartRE finds an inline asm statement's opening parenthesis.
	asmStartRE = regexp.MustCompile(`\b(?:asm|__asm__|__asm)\s*(?:volatile|__volatile__)?\s*(?:goto\s*)?\(`)
	// stringLitRE finds C string literals.
	stringLitRE = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)
	// ptxDirectiveRE finds the directives of a PTX module or kernel.
	ptxDirectiveRE = regexp.MustCompile(`(?m)(^|[\s"])\.(entry|visible|version|target|address_size|reg\s+\.|param\s+\.)`)
	// moduleLoadRE finds run-time loading of PTX or cubins.
	moduleLoadRE = regexp.MustCompile(`\b(cuModuleLoad\w*|cuLinkAdd\w*|cuLinkCreate\w*|cuLibraryLoad\w*|cudaLibraryLoad\w*|nvrtc\w+|nvPTXCompiler\w*|cuModuleGetFunction)\s*\(`)
	// includeRE finds #include lines and what they name.
	includeRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]`)
)

// EmbeddedPTX says why answer carries PTX instead of decompiling it (""
// when it does not): inline asm with more than two instructions in all,
// PTX module directives (.entry, .version, .target, ...) in its text,
// loading a module at run time (cuModuleLoadData, NVRTC, ...), or an
// #include of a .ptx file or of the task's files.
func EmbeddedPTX(answer string) string {
	var why []string
	if n := asmInstructions(answer); n > maxAsmInstructions {
		why = append(why, fmt.Sprintf("inline asm with %d PTX instructions", n))
	}
	if m := ptxDirectiveRE.FindStringSubmatch(answer); m != nil {
		why = append(why, "PTX directive ."+strings.Fields(m[2])[0]+" in the source")
	}
	code := refinement.ParseSource(answer).Code()
	if m := moduleLoadRE.FindStringSubmatch(code); m != nil {
		why = append(why, "loads a module at run time ("+m[1]+")")
	}
	for _, m := range includeRE.FindAllStringSubmatch(answer, -1) {
		name := strings.TrimSpace(m[1])
		if strings.HasSuffix(name, ".ptx") || name == FileKernel || name == FileHarness || name == harnessFile || name == FileProgram || strings.HasSuffix(name, ".cubin") || strings.HasSuffix(name, ".fatbin") {
			why = append(why, "includes "+name)
		}
	}
	return strings.Join(why, "; ")
}

// asmInstructions counts the PTX instructions in an answer's inline asm
// statements (the ;-separated parts of their string literals).
func asmInstructions(src string) int {
	n := 0
	for _, loc := range asmStartRE.FindAllStringIndex(src, -1) {
		open := loc[1] - 1
		end := refinement.MatchClose(src, open)
		if end < 0 {
			end = len(src)
		}
		var text strings.Builder
		for _, lit := range stringLitRE.FindAllString(src[open:end], -1) {
			text.WriteString(strings.ReplaceAll(lit[1:len(lit)-1], `\n`, ";"))
			text.WriteString(";")
		}
		for _, part := range strings.FieldsFunc(text.String(), func(r rune) bool { return r == ';' || r == '\n' }) {
			part = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(part, `\t`, " "), "{", ""))
			part = strings.TrimSpace(strings.ReplaceAll(part, "}", ""))
			if part == "" || strings.HasPrefix(part, ".reg") || strings.HasPrefix(part, "//") || strings.HasSuffix(part, ":") {
				continue
			}
			n++
		}
	}
	return n
}

// CheckAnswer is the check stage: the answer must define a __global__
// function named kernel (compile_error otherwise) and carry no PTX
// (embedded_ptx, see EmbeddedPTX). It returns tools.ClassNone and "" when
// the answer passes.
func CheckAnswer(answer, kernel string) (tools.FailureClass, string) {
	if why := EmbeddedPTX(answer); why != "" {
		return ClassEmbeddedPTX, "the answer embeds PTX instead of decompiling it: " + why
	}
	if !definesKernel(answer, kernel) {
		return tools.ClassCompileError, fmt.Sprintf("the answer defines no __global__ kernel named %s (the harness launches %s by that name)", kernel, kernel)
	}
	return tools.ClassNone, ""
}

// definesKernel reports whether src defines a __global__ function name.
func definesKernel(src, name string) bool {
	for _, f := range refinement.ParseSource(src).Defs() {
		if f.Name == name && strings.Contains(f.Prefix, "__global__") {
			return true
		}
	}
	return false
}

// cudaLangs are fence info strings of CUDA source.
var cudaLangs = map[string]bool{"cuda": true, "cu": true, "cpp": true, "c++": true, "cxx": true, "cc": true, "c": true, "": true}

// ExtractKernel pulls the kernel source out of a model message: among the
// fenced blocks labelled cuda, cu, cpp, c++, c (or unlabelled), the last
// one with a __global__ function, else the last non-empty one. Text in
// <think>...</think> is ignored; a message without fences counts as the
// source when it has a __global__ function.
func ExtractKernel(text string) (string, bool) {
	text = thinkRE.ReplaceAllString(text, "")
	if i := strings.Index(text, "<think>"); i >= 0 {
		text = text[:i]
	}
	fs := tools.Fences(text)
	if len(fs) == 0 {
		if strings.Contains(text, "__global__") {
			return ensureNewline(strings.TrimSpace(text)), true
		}
		return "", false
	}
	var cands []string
	for _, f := range fs {
		if cudaLangs[strings.ToLower(f.Lang)] && strings.TrimSpace(f.Body) != "" {
			cands = append(cands, f.Body)
		}
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if strings.Contains(cands[i], "__global__") {
			return ensureNewline(cands[i]), true
		}
	}
	if len(cands) > 0 {
		return ensureNewline(cands[len(cands)-1]), true
	}
	return "", false
}

func ensureNewline(s string) string {
	if !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}
