// Package cassbench is kiln's CASS-Bench-style evaluation set: 20
// self-contained CUDA programs, four in each of five categories (math, data
// structures, graph, machine learning, physics simulation), each used for
// two tasks, CUDA->HIP source translation and SASS->RDNA3 assembly
// translation: 40 tasks, as in CASS-Bench (seed paper 000, section 4.2),
// weighted towards the categories where the paper saw assembly translation
// fail (math, data structures, graph, ML; appendix A.6).
//
// The programs were written for this project and are checked not to be
// near-duplicates of the cuda-synth starter corpus (tools/cudasynth/corpus),
// which seeds training data: the bench set must stay out of what kiln
// trains on. Exported datasets can be screened against it with
// [github.com/kiln-dev/kiln/runs/curate.Reference.LoadFS](FS, Root, "cassbench").
//
// # Layout
//
// FS holds one folder per program under [Root], laid out like the
// cuda-synth corpus so that cudasynth.LoadCorpus(FS, Root) reads it:
//
//	programs/<id>/program.cu           the CUDA program (the task input)
//	programs/<id>/meta.json            category, domain, features, description, prompt, expect_translate
//	programs/<id>/reference.hip        the HIP translation (the source task's right answer)
//	programs/<id>/expected_stdout.txt  what both print when they pass (PENDING-GPU until a GPU run)
//
// Ids are <prefix>_<nn>_<name> with the prefix of the category ([Prefix]);
// they are unique and no id contains another, so a literal id can serve as
// a match pattern. Every program generates its inputs, checks itself against
// a CPU reference, prints only deterministic results (integers, or floats
// at a precision their errors cannot reach) and returns 0 when the check
// passes; README.md lists the programs and how the expected outputs were
// recorded.
package cassbench

import "embed"

// FS holds the bench programs under [Root].
//
//go:embed programs
var FS embed.FS

// Root is the folder of FS that holds one folder per program.
const Root = "programs"

// File names inside a program's folder.
const (
	ProgramFile   = "program.cu"
	MetaFile      = "meta.json"
	ReferenceFile = "reference.hip"
	StdoutFile    = "expected_stdout.txt"
)

// Pending is the whole content of an expected_stdout.txt that still waits
// for a GPU run.
const Pending = "PENDING-GPU\n"

// PerCategory is the number of programs in each category.
const PerCategory = 4

// Categories returns the five categories, in the order of the README.
func Categories() []string {
	return []string{"math", "data_structures", "graph", "machine_learning", "physics_simulation"}
}

// Prefix returns the id prefix of a category ("" for an unknown one).
func Prefix(category string) string {
	switch category {
	case "math":
		return "math"
	case "data_structures":
		return "ds"
	case "graph":
		return "graph"
	case "machine_learning":
		return "ml"
	case "physics_simulation":
		return "phys"
	}
	return ""
}
