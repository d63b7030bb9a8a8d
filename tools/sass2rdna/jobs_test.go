package sass2rdna

import (
	"testing"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// TestAssembleKeyPinned pins the assemble job's cache key under fixed tool
// versions: a change here invalidates every sass2rdna job cache.
func TestAssembleKeyPinned(t *testing.T) {
	t.Parallel()
	reg := toolchain.FromReport(toolchain.Report{Tools: []toolchain.Tool{
		{Name: toolchain.LLVMMC, Path: "/usr/bin/llvm-mc-15", Version: "LLVM version 15.0.7", Env: []string{"Z=3"}}}})
	cfg := Config{Toolchains: reg}.withDefaults()
	l := &Lane{cfg: cfg, jobs: newJobs(cfg, nil)}
	if got, want := l.jobs.Key(l.assembleJob("s_endpgm\n")), "c1d9c0fb1aff7ea9822f4d93e8c05246340e5789dfdf9670c5f4ecaca631af98"; got != want {
		t.Errorf("assemble key = %s, want %s", got, want)
	}
}
