// Package lanes is the registry of the lanes this binary runs: the one
// place that lists them. Adding a lane is a folder tools/<lane> with a
// kit.Kit and one line here (see tools/README.md).
package lanes

import (
	"github.com/kiln-dev/kiln/tools/c2x86"
	"github.com/kiln-dev/kiln/tools/cuda2hip"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda"
	"github.com/kiln-dev/kiln/tools/sass2rdna"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// Kits returns every registered lane kit.
func Kits() []kit.Kit {
	return []kit.Kit{
		c2x86.Kit(),
		cuda2hip.Kit(),
		cudasynth.Kit(),
		ptx2cuda.Kit(),
		sass2rdna.Kit(),
		torch2cuda.Kit(),
	}
}

// Kit returns the kit of the lane named name (a copy), if this build has it.
func Kit(name string) (*kit.Kit, bool) {
	for _, k := range Kits() {
		if k.Name == name {
			return &k, true
		}
	}
	return nil, false
}

// Registry returns the registry of Kits.
func Registry() (*kit.Registry, error) { return kit.NewRegistry(Kits()...) }
