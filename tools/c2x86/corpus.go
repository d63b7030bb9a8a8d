package c2x86

import (
	"embed"
	"io/fs"

	"github.com/kiln-dev/kiln/prompts"
)

// corpusFS holds the starter corpus (corpus/<id>/: meta.json, function.c,
// driver.c) and the lane's prompts (prompts/: system, user, repair).
//
//go:embed corpus prompts
var corpusFS embed.FS

// Categories of c2x86 corpus items (the constructs the seed paper studies:
// numeric constants, switches with few or many cases, struct offsets, ...).
const (
	CatIntArith     = "int_arith"     // integer arithmetic, division, overflow-free edge cases
	CatFloatConst   = "float_const"   // float/double arithmetic with literal constants (6.0, 0.125, 3e-5)
	CatLoop         = "loop"          // for/while/do loops
	CatSwitchFew    = "switch_few"    // switch with <= 4 case labels: compare chains even without -fno-jump-tables
	CatSwitchMany   = "switch_many"   // switch with >= 5 dense cases: a jump table unless -fno-jump-tables
	CatStruct       = "struct"        // struct layout, by-value passing and returning, bitfields, unions
	CatArrayPointer = "array_pointer" // arrays, pointer arithmetic, out parameters, function pointers
	CatString       = "string"        // NUL-terminated strings, string.h calls
	CatRecursion    = "recursion"     // direct and mutual recursion
	CatBitops       = "bitops"        // shifts, masks, rotations, bit tricks
	CatMathCall     = "math_call"     // libm calls (sin, sqrt, pow, floor, fabs, ...); link with -lm
	CatMixed        = "mixed"         // larger functions combining several of the above
)

// CorpusSpec is what a c2x86 corpus item looks like.
func CorpusSpec() prompts.CorpusSpec {
	return prompts.CorpusSpec{Lane: LaneName, Files: []string{"function.c", "driver.c"}, SourceFile: "function.c",
		Categories: []string{CatIntArith, CatFloatConst, CatLoop, CatSwitchFew, CatSwitchMany, CatStruct,
			CatArrayPointer, CatString, CatRecursion, CatBitops, CatMathCall, CatMixed}}
}

// LoadCorpus reads a c2x86 corpus folder (see prompts.LoadCorpus).
func LoadCorpus(fsys fs.FS, root string) ([]prompts.CorpusItem, error) {
	return prompts.LoadCorpus(fsys, root, CorpusSpec())
}

// LoadBuiltinCorpus reads the embedded starter corpus.
func LoadBuiltinCorpus() ([]prompts.CorpusItem, error) { return LoadCorpus(corpusFS, "corpus") }

// promptLibrary parses the lane's prompts.
func promptLibrary() (*prompts.Library, error) {
	return prompts.NewLaneLibrary(LaneName, corpusFS, "prompts")
}
