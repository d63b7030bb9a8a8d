package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// registry detects the toolchains once per process. With probe false only
// versions and paths are read (fast: what the c2x86 lane and the sandbox
// view need); with probe true every target is verified by a tiny compile,
// cached in the data folder or $KILN_TOOLCHAIN_DIR (the CUDA lanes need
// this).
func (w *wiring) registry(ctx context.Context, probe bool) (*toolchain.Registry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reg != nil && (w.regProbed || !probe) {
		return w.reg, nil
	}
	// The derived device libraries and the probe cache live in the data
	// folder, or in $KILN_TOOLCHAIN_DIR, shared by the data folders of a
	// host (the tests share one probe per test binary).
	dir := w.e.getenv("KILN_TOOLCHAIN_DIR")
	if dir == "" {
		dir = w.data
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cfg := toolchain.Config{
		// torch lives in whichever python3 the user's PATH finds first
		// (a virtualenv on GPU hosts), else the system's.
		Names:        map[string][]string{toolchain.Torch: pythonCandidates(w.e.getenv("PATH"))},
		DeviceLibDir: filepath.Join(dir, "rocm-device-libs"),
		ProbeCache:   filepath.Join(dir, "toolchain-probe.json"),
		SkipProbes:   !probe,
		Logger:       w.log,
	}
	reg, err := toolchain.Detect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("detect toolchains: %w", err)
	}
	w.reg, w.regProbed = reg, probe
	return reg, nil
}

// pythonCandidates lists the python3 executables of path's folders, in
// order, then "python3" (looked up in the registry's own path).
func pythonCandidates(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			out = append(out, filepath.Join(dir, "python3"))
		}
	}
	return append(out, "python3")
}
