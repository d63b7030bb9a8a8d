package sass2rdna

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

// host is the real host the tests verify on: a sandbox runner and the
// toolchains found here, caches in a temp folder (as tools/lanes builds
// it for the conformance suite).
var host kit.Host

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kiln-sass2rdna-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	var mu sync.Mutex
	regs := map[bool]*toolchain.Registry{}
	toolchains := func(ctx context.Context, probe bool) (*toolchain.Registry, error) {
		mu.Lock()
		defer mu.Unlock()
		if r := regs[probe]; r != nil {
			return r, nil
		}
		r, err := toolchain.Detect(ctx, toolchain.Config{DeviceLibDir: filepath.Join(dir, "rocm-device-libs"),
			ProbeCache: filepath.Join(dir, "toolchain-probe.json"), SkipProbes: !probe, Logger: log})
		if err != nil {
			return nil, err
		}
		regs[probe] = r
		return r, nil
	}
	reg, err := toolchains(ctx, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runner, err := sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(dir, "boxes"), ReadOnlyPaths: reg.SandboxPaths(), Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	defer runner.Close()
	host = kit.Host{Sandbox: func() (*sandboxes.Runner, error) { return runner, nil }, Toolchains: toolchains,
		DataDir: filepath.Join(dir, "data"), Log: log}
	return m.Run()
}

// testLane opens the lane on the test host, skipping the test when a tool
// it needs is missing.
func testLane(t *testing.T, need ...string) *Lane {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	reg, err := host.Toolchains(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range append([]string{toolchain.LLVMMC, toolchain.HIPCC}, need...) {
		if err := reg.Require(tool); err != nil {
			t.Skipf("%v", err)
		}
	}
	l, err := openLane(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
