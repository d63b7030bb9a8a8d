package c2x86

import (
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// asmLangs are fence info strings that mark assembly.
var asmLangs = map[string]bool{
	"asm": true, "s": true, "x86asm": true, "gas": true, "assembly": true, "x86": true,
	"x86-64": true, "x86_64": true, "amd64": true, "att": true, "nasm": true, "masm": true,
	"assembler": true, "as": true, "x64": true, "x86-asm": true, "x86_64-asm": true,
}

var thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)

// ExtractAsm pulls the assembly answer out of a model message: the last
// fenced block labelled as assembly (```asm, ```s, ```x86asm, ```gas,
// ```assembly, ...), else the last unlabelled fence whose text looks like
// x86 assembly. Text inside <think>...</think> is ignored; a last fence cut
// off by the end of the message counts. ok is false when there is none.
func ExtractAsm(text string) (string, bool) {
	text = thinkRE.ReplaceAllString(text, "")
	if i := strings.Index(text, "<think>"); i >= 0 && !strings.Contains(text[i:], "</think>") {
		text = text[:i] // unterminated thinking: nothing after it is an answer
	}
	var labelled, bare []tools.Fence
	for _, f := range tools.Fences(text) {
		lang := strings.ToLower(f.Lang)
		switch {
		case asmLangs[lang]:
			labelled = append(labelled, f)
		case lang == "" && looksLikeAsm(f.Body):
			bare = append(bare, f)
		}
	}
	var pick []tools.Fence
	switch {
	case len(labelled) > 0:
		pick = labelled
	case len(bare) > 0:
		pick = bare
	default:
		return "", false
	}
	body := pick[len(pick)-1].Body
	if strings.TrimSpace(body) == "" {
		return "", false
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body, true
}

// looksLikeAsm: most meaningful lines are directives, labels or x86
// instructions.
func looksLikeAsm(body string) bool {
	asm, total := 0, 0
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") || strings.HasPrefix(t, ";") {
			continue
		}
		total++
		switch {
		case strings.ContainsAny(t, "{}") || strings.HasSuffix(t, ";") && !strings.Contains(t, "\t;"):
		case strings.HasPrefix(t, ".") && len(t) > 1 && t[1] >= 'a' && t[1] <= 'z':
			asm++
		case isLabelStart(t):
			asm++
		default:
			word, rest, _ := strings.Cut(strings.ReplaceAll(t, "\t", " "), " ")
			if isMnemonic(word) && (rest == "" || strings.ContainsAny(rest, "%$[") || strings.Contains(strings.ToLower(rest), "ptr")) {
				asm++
			} else if isMnemonic(word) && len(strings.Fields(rest)) <= 2 {
				asm++
			}
		}
	}
	return asm >= 2 && asm*10 >= total*6
}

// mnemonicPrefixes cover the x86-64 instructions compilers and models
// write for ordinary C (integer, SSE scalar/packed, string ops).
var mnemonicPrefixes = []string{
	"mov", "push", "pop", "lea", "add", "sub", "mul", "imul", "div", "idiv", "cmp", "test",
	"j", "call", "ret", "leave", "enter", "clt", "cqt", "cwt", "cdq", "cqo", "cbw", "cwd",
	"cvt", "xor", "and", "or", "not", "neg", "sal", "sar", "shl", "shr", "rol", "ror", "inc",
	"dec", "set", "cmov", "nop", "endbr", "pxor", "por", "pand", "ucomi", "comi", "sqrt",
	"max", "min", "unpck", "punpck", "shuf", "pshuf", "bt", "bs", "rep", "stos", "lods",
	"scas", "cmps", "xchg", "syscall", "int", "hlt", "ud2", "lock", "adc", "sbb", "rcl", "rcr",
	"pcmp", "padd", "psub", "pmul", "psll", "psrl", "psra", "round", "vmov", "vadd", "vsub",
	"vmul", "vdiv", "vxor", "vcvt", "vucomi", "vfmadd", "tzcnt", "lzcnt", "popcnt", "bswap",
}

// isMnemonic reports whether word (any case, maybe with an operand size
// suffix) starts like an x86 mnemonic.
func isMnemonic(word string) bool {
	w := strings.ToLower(word)
	if w == "" || len(w) > 12 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	for _, p := range mnemonicPrefixes {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}
