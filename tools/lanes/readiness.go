package lanes

import (
	"sort"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// Toolchains is whether a lane's toolchains (kit.Kit.Toolchains) are
// on this host.
type Toolchains struct {
	Lane    string   `json:"lane"`
	Needs   []string `json:"needs"`
	Missing []string `json:"missing,omitempty"`
}

// Readiness lists, for every lane, the toolchains it needs and those
// reg lacks, sorted by lane.
func Readiness(reg *toolchain.Registry) []Toolchains {
	var out []Toolchains
	for _, k := range Kits() {
		l := Toolchains{Lane: k.Name, Needs: k.Toolchains}
		for _, t := range k.Toolchains {
			if _, ok := reg.Get(t); !ok {
				l.Missing = append(l.Missing, t)
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lane < out[j].Lane })
	return out
}
