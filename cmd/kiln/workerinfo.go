package main

import (
	"context"
	"log/slog"
	"slices"

	"github.com/kiln-dev/kiln/runs/jobs"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools/kit"
)

// workerHost is what kiln worker advertises of its host: the GPUs, the
// toolchains found, and the lanes whose pending stages it can complete (a
// capability it offers, every toolchain the lane needs present). A
// capability no lane on this host can serve is logged: its jobs would fail
// on every delivery.
func workerHost(ctx context.Context, w *wiring, caps []string, log *slog.Logger) jobs.HostInfo {
	var info jobs.HostInfo
	reg, err := w.registry(ctx, false)
	if err != nil {
		log.Warn("worker: toolchains not probed; heartbeats advertise none", "err", err)
		return info
	}
	g := reg.GPU()
	info.GPUs, info.Driver, info.Toolchains = g.Names, g.Driver, reg.Versions()
	kits, err := w.lanes()
	if err != nil {
		log.Warn("worker: lanes", "err", err)
		return info
	}
	var ks []*kit.Kit
	for _, name := range kits.Names() {
		if k, ok := kits.Get(name); ok {
			ks = append(ks, k)
		}
	}
	info.Lanes = servedLanes(ks, caps, reg)
	for _, c := range caps {
		if c == "gpu" && !g.Present {
			log.Warn("worker: offers capability gpu, but this host has no NVIDIA GPU: its jobs will fail", "capability", c)
		}
	}
	return info
}

// servedLanes are the lanes of kits whose capability is in caps and whose
// toolchains reg has, sorted.
func servedLanes(kits []*kit.Kit, caps []string, reg *toolchain.Registry) []string {
	var out []string
	for _, k := range kits {
		if k.Capability == "" || !slices.Contains(caps, k.Capability) {
			continue
		}
		ok := true
		for _, t := range k.Toolchains {
			if _, found := reg.Get(t); !found {
				ok = false
			}
		}
		if ok {
			out = append(out, k.Name)
		}
	}
	slices.Sort(out)
	return out
}
