package kit

import "strings"

// BenchLanes lists the lanes that have a bench set, for messages: "none"
// when there is none (or r is nil: the registry could not be built).
func (r *Registry) BenchLanes() []string {
	return r.lanesWhere(func(k *Kit) (string, bool) { return k.Name, k.Bench != nil })
}

// RecordLanes lists the lanes that take records, each with the lanes it
// takes them of, for messages: "none" when there is none (or r is nil).
func (r *Registry) RecordLanes() []string {
	return r.lanesWhere(func(k *Kit) (string, bool) {
		return k.Name + " (of " + strings.Join(k.RecordLanes, ", ") + ")", len(k.RecordLanes) > 0
	})
}

func (r *Registry) lanesWhere(f func(*Kit) (string, bool)) []string {
	var out []string
	if r != nil {
		for _, name := range r.Names() {
			k, _ := r.Get(name)
			if s, ok := f(k); ok {
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "none")
	}
	return out
}
