package sandboxes

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Layer names one isolation layer. [Capabilities.Layers] reports the state
// of each; Config.AllowMissing lists those a Runner may do without.
type Layer string

const (
	// LayerUID: each box runs under an unprivileged uid of its own, and the
	// trampoline under another (root daemon only).
	LayerUID Layer = "uid"
	// LayerNamespaces: new pid, net, ipc, uts and mount namespaces (plus
	// user when not root): no network, the whole tree dies with the run.
	LayerNamespaces Layer = "namespaces"
	// LayerFilesystem: a minimal read-only view (pivot_root into a tmpfs
	// holding read-only binds of the system directories, a minimal /etc,
	// a few /dev nodes, a fresh /proc and the box's scratch).
	LayerFilesystem Layer = "filesystem"
	// LayerScratch: the scratch is a tmpfs with size and inode caps.
	LayerScratch Layer = "scratch_quota"
	// LayerRlimits: CPU, address space, processes, file size, open files.
	LayerRlimits Layer = "rlimits"
	// LayerCgroups: a memory and a pids cgroup per run (killed and
	// removed after it).
	LayerCgroups Layer = "cgroups"
	// LayerNoNewPrivs: PR_SET_NO_NEW_PRIVS (no setuid, no file caps).
	LayerNoNewPrivs Layer = "no_new_privs"
	// LayerSeccomp: a syscall filter (no sockets but AF_UNIX, no ptrace,
	// mount, namespaces, bpf, keyrings, modules, io_uring...; x86-64 only).
	LayerSeccomp Layer = "seccomp"
	// LayerLandlock: reads limited to the view, writes to the scratch, no
	// TCP bind or connect, no signals or abstract sockets outside the box.
	LayerLandlock Layer = "landlock"
)

// Layers lists every layer, the default requirement.
func Layers() []Layer {
	return []Layer{LayerUID, LayerNamespaces, LayerFilesystem, LayerScratch, LayerRlimits,
		LayerCgroups, LayerNoNewPrivs, LayerSeccomp, LayerLandlock}
}

// ParseLayers reads a comma-separated list of layer names (kiln's
// --allow-missing-layers); an unknown name is an error that lists the
// known ones.
func ParseLayers(v string) ([]Layer, error) {
	var out []Layer
	for _, name := range strings.Split(v, ",") {
		l := Layer(strings.TrimSpace(name))
		if !l.known() {
			return nil, fmt.Errorf("unknown layer %q (known: %s)", string(l), JoinLayers(Layers(), ", "))
		}
		out = append(out, l)
	}
	return out, nil
}

// JoinLayers joins the names of ls with sep (",": what ParseLayers reads).
func JoinLayers(ls []Layer, sep string) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = string(l)
	}
	return strings.Join(names, sep)
}

func (l Layer) known() bool { return slices.Contains(Layers(), l) }

// LayerState is one layer's state on this host.
type LayerState struct {
	Layer  Layer `json:"layer"`
	Active bool  `json:"active"`
	// Detail says what is in force when active, why not otherwise.
	Detail string `json:"detail"`
}

// ErrPolicy means the host lacks an isolation layer the policy requires.
// New returns it as a *PolicyError.
var ErrPolicy = errors.New("sandbox isolation below policy")

// PolicyError is New's error when a required layer is unavailable. It
// carries what the host offers, for diagnostics ("kiln doctor").
type PolicyError struct {
	// Missing are the required layers that are not active.
	Missing []LayerState
	// Capabilities is what a Runner would have had.
	Capabilities Capabilities
}

func (e *PolicyError) Error() string {
	parts := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		parts[i] = fmt.Sprintf("%s (%s)", m.Layer, m.Detail)
	}
	return fmt.Sprintf("%v: missing %s; refusing to run untrusted code (Config.AllowMissing lowers the policy)",
		ErrPolicy, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrPolicy) hold.
func (e *PolicyError) Is(target error) bool { return target == ErrPolicy }

// layerSet accumulates layer states while New probes the host.
type layerSet map[Layer]LayerState

func (s layerSet) set(l Layer, active bool, format string, args ...any) {
	s[l] = LayerState{Layer: l, Active: active, Detail: fmt.Sprintf(format, args...)}
}

func (s layerSet) active(l Layer) bool { return s[l].Active }

// list returns the states in Layers() order.
func (s layerSet) list() []LayerState {
	out := make([]LayerState, 0, len(s))
	for _, l := range Layers() {
		if st, ok := s[l]; ok {
			out = append(out, st)
		}
	}
	return out
}

// policy returns the policy string and the required layers that are
// missing.
func (s layerSet) policy(cfg Config) (string, []LayerState) {
	var missing, lowered []LayerState
	for _, st := range s.list() {
		if st.Active {
			continue
		}
		if cfg.allowed(st.Layer) {
			lowered = append(lowered, st)
		} else {
			missing = append(missing, st)
		}
	}
	if len(lowered) == 0 {
		return "strict", missing
	}
	names := make([]string, len(lowered))
	for i, st := range lowered {
		names[i] = string(st.Layer)
	}
	return "lowered(without " + strings.Join(names, ",") + ")", missing
}
