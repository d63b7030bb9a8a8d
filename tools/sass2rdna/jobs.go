package sass2rdna

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/buildjob"
)

// newJobs is the lane's job farm: the sandbox, the content-hash cache
// (keyed under cacheVersion, with the ROCm library folder derived; tool
// environments are not keyed) and the Parallel bound.
func newJobs(cfg Config, cache *toolchain.Cache) *buildjob.Runner {
	return buildjob.New(buildjob.Config{Namespace: cacheVersion, Toolchains: cfg.Toolchains, Sandbox: cfg.Sandbox,
		Limits: cfg.BuildLimits, Cache: cache, Parallel: cfg.Parallel, MaxOutputFile: maxOutputFile,
		KeyArgs: buildjob.DeriveROCmLibPath, Actor: "the tool", Logger: cfg.Logger, LogMessage: "sass2rdna job"})
}

// maxOutputFile bounds a file read back from a job.
const maxOutputFile = 256 << 20

// toolDiagnostics keeps a tool's error lines with the source line and
// caret that llvm-mc and clang print after each ("answer.s:12:5: error:
// ..." then the line and a caret), without sandbox paths; the first lines
// of the text when no line says error.
var toolDiagnostics = buildjob.Diagnostics{
	ErrorLine: toolErrorRE,
	Ignore:    "-Wunused-command-line-argument",
	Excerpt: func(line string) bool {
		return !toolErrorRE.MatchString(line) && strings.TrimSpace(line) != ""
	},
	Count: "error:",
}

var toolErrorRE = regexp.MustCompile(`(?i)\b(error|fatal|undefined|unknown|invalid)\b`)

// diagnostic is a failed job's diagnostic: why the sandbox ended it when
// it did not just exit, then the tool's error lines.
func diagnostic(r *buildjob.Result, maxLines int) string {
	return r.FailureText(toolDiagnostics.Of(string(r.Entry.Stderr)+string(r.Entry.Stdout), maxLines))
}

// llvmTool returns the absolute path of an LLVM program (ld.lld,
// clang-offload-bundler) installed next to the registry's llvm-mc (Debian:
// /usr/bin/llvm-mc-15 -> /usr/lib/llvm-15/bin/llvm-mc, beside ld.lld).
func llvmTool(reg *toolchain.Registry, name string) (string, error) {
	mc, ok := reg.Get(toolchain.LLVMMC)
	if !ok {
		return "", reg.Require(toolchain.LLVMMC)
	}
	real, err := filepath.EvalSymlinks(mc.Path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", toolchain.ErrUnavailable, name, err)
	}
	p := filepath.Join(filepath.Dir(real), name)
	if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s: not found next to %s (install lld-15 / llvm-15)", toolchain.ErrUnavailable, name, real)
	}
	return p, nil
}
