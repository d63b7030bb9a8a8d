package sass2rdna

import (
	"io/fs"

	"github.com/kiln-dev/kiln/tools/cassbench"
)

// Bench is the lane's benchmark set (tasks.corpus: bench, kiln eval): the
// CASS-Bench-style programs of package tools/cassbench, whose sm_90 SASS
// and kernel lists are prepared in sass/bench.
func Bench() (fs.FS, string, error) {
	return cassbench.FS, cassbench.Root, nil
}
