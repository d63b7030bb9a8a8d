package main

import (
	"context"
	"fmt"

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
	cfg, err := toolchain.HostConfig(dir, w.e.getenv("PATH"), probe, w.log)
	if err != nil {
		return nil, err
	}
	reg, err := toolchain.Detect(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("detect toolchains: %w", err)
	}
	w.reg, w.regProbed = reg, probe
	return reg, nil
}
