package cudasynth

import (
	"context"
	"regexp"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// newBuilds is the lane's compile farm: the sandbox, the content-hash
// cache (keyed under cacheVersion, with each tool's environment and the
// ROCm library folder derived) and the Parallel bound.
func newBuilds(cfg Config, cache *toolchain.Cache) *buildjob.Runner {
	return buildjob.New(buildjob.Config{Namespace: cacheVersion, Toolchains: cfg.Toolchains, Sandbox: cfg.Sandbox,
		Limits: cfg.BuildLimits, Cache: cache, Parallel: cfg.Parallel, MaxOutputFile: maxOutputFile, KeyEnv: true,
		KeyArgs: buildjob.DeriveROCmLibPath, Actor: "the compiler", Logger: cfg.Logger, LogMessage: "cuda-synth compile"})
}

// maxOutputFile bounds a file read back from a compile.
const maxOutputFile = 256 << 20

// compilerDiagnostics keeps a compiler's error lines (with gcc/clang's
// source excerpts), without sandbox paths; all of stderr's first lines
// when no line says error.
var compilerDiagnostics = buildjob.Diagnostics{
	ErrorLine: regexp.MustCompile(`(?i)\b(error|fatal|undefined reference|multiple definition)\b`),
	Ignore:    "-Wunused-command-line-argument",
	Excerpt:   regexp.MustCompile(`^\s*(\d+\s*)?\|`).MatchString,
}

// CUDACompileArgs are nvcc's arguments in the cuda-compile stage, run in a
// folder holding the program as program.cu (benchmarks run plain nvcc
// with them to compare).
func (l *Lane) CUDACompileArgs() []string {
	j, _ := l.cudaJob("")
	return j.Steps[0].Args
}

// cudaJob is the cuda-compile stage's compile of src and the name of the
// PTX file it keeps.
func (l *Lane) cudaJob(src string) (buildjob.Job, string) {
	cfg := l.cfg
	args := []string{"--keep", "-Xcompiler", "-save-temps=cwd"}
	args = append(args, cfg.NVCCFlags...)
	args = append(args, gencodes(cfg.SMs)...)
	args = append(args, "-o", cudaExe, SourceFile)
	ptxFile := "program." + strings.Replace(cfg.SMs[0], "sm_", "compute_", 1) + ".ptx"
	return buildjob.Command("cuda", toolchain.NVCC, args, map[string][]byte{SourceFile: []byte(src)},
		cudaExe, ptxFile, "program.fatbin", "program.s"), ptxFile
}

// CompileResult is one compile through the lane's compile farm.
type CompileResult struct {
	OK     bool          // the compiler exited 0
	Cached bool          // the cache answered (no compiler ran in this call)
	Wall   time.Duration // this call's time
	Detail string        // the compiler's first lines of diagnostics when !OK
}

// CompileCUDA runs the cuda-compile stage's compile of src alone through the
// compile farm Verify uses: the sandbox, the content-hash cache and the
// Parallel bound. It is safe for concurrent use (compile benchmarks).
func (l *Lane) CompileCUDA(ctx context.Context, src string) (CompileResult, error) {
	j, _ := l.cudaJob(src)
	res, err := l.builds.Run(ctx, j)
	if err != nil {
		return CompileResult{}, err
	}
	out := CompileResult{OK: res.OK(), Cached: res.Hit, Wall: res.Wall}
	if !out.OK {
		out.Detail = res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines))
	}
	return out, nil
}
