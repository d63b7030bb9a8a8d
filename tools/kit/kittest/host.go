package kittest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

// NewHost builds the real host a lane's tests verify on, as cmd/kiln
// wires it: the toolchains found here (detected once per probe setting,
// safe for concurrent use) and a sandbox runner whose read-only view holds
// their paths, with caches and scratch folders in a new temp folder named
// after prefix. Call it from TestMain after sandboxes.MaybeRunInit; cleanup
// closes the runner and removes the folder.
func NewHost(ctx context.Context, prefix string) (h kit.Host, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return kit.Host{}, nil, err
	}
	fail := func(err error) (kit.Host, func(), error) {
		os.RemoveAll(dir)
		return kit.Host{}, nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
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
		return fail(err)
	}
	runner, err := sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(dir, "boxes"), ReadOnlyPaths: reg.SandboxPaths(), Logger: log})
	if err != nil {
		return fail(fmt.Errorf("sandbox: %w", err))
	}
	h = kit.Host{Sandbox: func() (*sandboxes.Runner, error) { return runner, nil }, Toolchains: toolchains,
		DataDir: filepath.Join(dir, "data"), Log: log}
	return h, func() { runner.Close(); os.RemoveAll(dir) }, nil
}
