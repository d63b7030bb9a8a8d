package cuda2hip

import (
	"io/fs"

	"github.com/kiln-dev/kiln/tools/cassbench"
)

// Bench is the lane's benchmark set (tasks.corpus: bench, kiln eval): the
// CASS-Bench-style CUDA programs of package tools/cassbench, read with
// LoadCorpus (every program, expect_translate or not: the rule-based
// baseline answers the ones it refuses with no answer).
func Bench() (fs.FS, string, error) {
	return cassbench.FS, cassbench.Root, nil
}
