package sass2rdna

import (
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// asmLangs are the info strings of an assembly block.
var asmLangs = map[string]bool{"asm": true, "s": true, "S": true, "assembly": true, "gas": true, "nasm": false,
	"amdgpu": true, "amdgcn": true, "rdna": true, "rdna3": true, "llvm-mc": true, "hip-asm": true, "x86asm": true}

var thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)

// Extract returns the answer of a model's reply: the first fenced block
// marked as assembly (```asm, ```s, ```amdgpu, ...), else the first block
// without an info string; ok is false when there is none or it is blank.
// Reasoning in <think> tags is skipped.
func Extract(text string) (string, bool) {
	blocks := tools.Fences(thinkRE.ReplaceAllString(text, ""))
	for _, pass := range []func(lang string) bool{
		func(lang string) bool { return asmLangs[lang] || asmLangs[strings.ToLower(lang)] },
		func(lang string) bool { return lang == "" },
	} {
		for _, b := range blocks {
			if pass(b.Lang) && strings.TrimSpace(b.Body) != "" {
				return strings.TrimRight(b.Body, " \n") + "\n", true
			}
		}
	}
	return "", false
}
