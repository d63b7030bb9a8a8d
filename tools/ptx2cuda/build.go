package ptx2cuda

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// newBuilds is the lane's compile farm: the sandbox, the content-hash
// cache (keyed under cacheVersion, with each tool's environment) and the
// Parallel bound.
func newBuilds(cfg Config, cache *toolchain.Cache) *buildjob.Runner {
	return buildjob.New(buildjob.Config{Namespace: cacheVersion, Toolchains: cfg.Toolchains, Sandbox: cfg.Sandbox,
		Limits: cfg.BuildLimits, Cache: cache, Parallel: cfg.Parallel, MaxOutputFile: maxOutputFile, KeyEnv: true,
		Actor: "the compiler", Logger: cfg.Logger, LogMessage: "ptx2cuda compile"})
}

// maxOutputFile bounds a file read back from a compile.
const maxOutputFile = 64 << 20

// buildJob is the compile of a kernel source (the reference or an
// answer) into the task's harness: both get the same command and the same
// file names, so a right answer that repeats the reference shares its
// cache entry.
func (l *Lane) buildJob(h HarnessSpec, kernel string) buildjob.Job {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(l.cfg.SM, "sm_", "compute_", 1), l.cfg.SM)}
	args = append(args, h.Flags...)
	args = append(args, "-o", exeFile, harnessFile)
	return buildjob.Command("build", toolchain.NVCC, args,
		map[string][]byte{harnessFile: []byte(GenerateHarness(h, l.cfg.Reps)), kernelInBox: []byte(kernel)}, exeFile)
}

// ptxJob is the PTX compile of a corpus kernel with a variant's flags.
func (l *Lane) ptxJob(kernel string, flags []string) buildjob.Job {
	args := []string{"-ptx", "-arch=" + strings.Replace(l.cfg.SM, "sm_", "compute_", 1)}
	args = append(args, flags...)
	args = append(args, "-o", FilePTX, kernelInBox)
	return buildjob.Command("ptx", toolchain.NVCC, args, map[string][]byte{kernelInBox: []byte(kernel)}, FilePTX)
}

// exeFile is the executable a build makes.
const exeFile = "prog"

// compilerDiagnostics keeps a compiler's error lines (up to two per line
// of the budget), without sandbox paths; all of stderr's first lines when
// no line says error.
var compilerDiagnostics = buildjob.Diagnostics{
	ErrorLine:     regexp.MustCompile(`(?i)\b(error|fatal|undefined reference|multiple definition)\b`),
	ErrorsPerLine: 2,
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
