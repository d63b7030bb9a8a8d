package cuda2hip

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

// testHost is the real host the tests verify on: a sandbox runner and the
// toolchains found here, caches in a temp folder.
var testHost kit.Host

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kiln-cuda2hip-test-")
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
	regs := map[bool]*toolchain.Registry{}
	toolchains := func(ctx context.Context, probe bool) (*toolchain.Registry, error) {
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
	testHost = kit.Host{Sandbox: func() (*sandboxes.Runner, error) { return runner, nil }, Toolchains: toolchains,
		DataDir: filepath.Join(dir, "data"), Log: log}
	return m.Run()
}
