package toolchain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Tool names in the registry.
const (
	GCC       = "gcc"
	AS        = "as"
	LD        = "ld"
	Clang     = "clang"
	NVCC      = "nvcc"
	CUObjdump = "cuobjdump"
	HIPCC     = "hipcc"
	LLVMMC    = "llvm-mc"
	LLVMDis   = "llvm-dis"
	LLVMAs    = "llvm-as"
	// Torch is python3 with PyTorch (the torch2cuda judge). Its version
	// line names Python, torch and torch's CUDA; Dirs hold torch's
	// site-packages folder for the sandbox view.
	Torch = "torch"
)

// Targets a tool can build for.
const (
	TargetHost      = "host"       // x86-64 host code or executables
	TargetSM86      = "sm_86"      // NVIDIA Ampere SASS
	TargetSM90      = "sm_90"      // NVIDIA Hopper SASS
	TargetGFX1030   = "gfx1030"    // AMD RDNA2
	TargetGFX1100   = "gfx1100"    // AMD RDNA3 (needs the derived device libs)
	TargetHIPNvidia = "hip-nvidia" // HIP sources built by nvcc (__HIP_PLATFORM_NVIDIA__)
)

// ErrUnavailable means a tool is missing or cannot build a target here.
// Errors from [Registry.Require] wrap it.
var ErrUnavailable = errors.New("toolchain unavailable")

// DefaultPath is where tools are looked up unless Config.Path says
// otherwise.
const DefaultPath = "/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"

// DefaultROCmDeviceLibDirs are searched, in order, for the system's AMD
// device bitcode when Config.ROCmDeviceLibDir is empty.
var defaultROCmDeviceLibDirs = []string{
	"/usr/lib/x86_64-linux-gnu/amdgcn/bitcode", // Debian, Ubuntu
	"/opt/rocm/amdgcn/bitcode",                 // AMD's packages
	"/usr/lib/amdgcn/bitcode",
}

// defaultNames are the executable names tried per tool, in order.
func defaultNames() map[string][]string {
	return map[string][]string{
		GCC:       {"gcc"},
		AS:        {"as"},
		LD:        {"ld"},
		Clang:     {"clang-15", "clang"},
		NVCC:      {"nvcc"},
		CUObjdump: {"cuobjdump"},
		HIPCC:     {"hipcc"},
		LLVMMC:    {"llvm-mc-15", "llvm-mc"},
		LLVMDis:   {"llvm-dis-15", "llvm-dis"},
		LLVMAs:    {"llvm-as-15", "llvm-as"},
		Torch:     {"python3"},
	}
}

// toolOrder is the registry's (and the report's) order.
var toolOrder = []string{GCC, AS, LD, Clang, NVCC, CUObjdump, HIPCC, LLVMMC, LLVMDis, LLVMAs, Torch}

// Config configures [Detect].
type Config struct {
	// Path is searched for the tools (colon-separated). Default DefaultPath.
	Path string
	// Names overrides the executable names tried for a tool (by tool name):
	// {"clang": {"clang-17"}}. An absolute name is used as is.
	Names map[string][]string
	// ROCmDeviceLibDir is the system's AMD device bitcode folder (holding
	// oclc_isa_version_1030.bc). Default: the first of the usual places
	// that exists.
	ROCmDeviceLibDir string
	// DeviceLibDir receives the derived RDNA3 device libraries (for example
	// <data dir>/rocm-device-libs). Empty: no derivation, so hipcc cannot
	// build gfx1100 unless the system folder already has it. It must be
	// readable by the sandbox uids (it is created with mode 0755).
	DeviceLibDir string
	// WorkDir holds the probes' scratch folders. Default os.TempDir().
	WorkDir string
	// ProbeCache is a JSON file keeping probe results between runs; empty
	// probes every time.
	ProbeCache string
	// SkipProbes reads versions only; no target is then verified.
	SkipProbes bool
	// Parallel bounds concurrent probes. Default 8.
	Parallel int
	// ProbeTimeout bounds one probe command. Default 60s.
	ProbeTimeout time.Duration
	// DevDir is where GPU device nodes are looked for. Default "/dev".
	DevDir string
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	names := defaultNames()
	for k, v := range c.Names {
		names[k] = v
	}
	c.Names = names
	if c.WorkDir == "" {
		c.WorkDir = os.TempDir()
	}
	if c.Parallel == 0 {
		c.Parallel = 8
	}
	if c.ProbeTimeout == 0 {
		c.ProbeTimeout = 60 * time.Second
	}
	if c.DevDir == "" {
		c.DevDir = "/dev"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	for what, p := range map[string]string{"device lib dir": c.DeviceLibDir, "rocm device lib dir": c.ROCmDeviceLibDir,
		"work dir": c.WorkDir, "probe cache": c.ProbeCache, "dev dir": c.DevDir} {
		if p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("toolchain config: %s %q is not absolute", what, p)
		}
	}
	if c.Parallel < 0 || c.ProbeTimeout < 0 {
		return errors.New("toolchain config: negative parallelism or timeout")
	}
	return nil
}

// Tool is one program of the registry.
type Tool struct {
	Name string `json:"name"`
	// Path is the absolute path; empty when the tool was not found.
	Path string `json:"path,omitempty"`
	// Version is the tool's own version line ("Cuda compilation tools,
	// release 11.8, V11.8.89").
	Version string `json:"version,omitempty"`
	// Env is what every call of the tool needs in its environment
	// (hipcc: HIP_PLATFORM=amd).
	Env []string `json:"env,omitempty"`
	// Targets are the targets verified by a probe build, sorted.
	Targets []string `json:"targets,omitempty"`
	// Failed says why a target's probe failed.
	Failed map[string]string `json:"failed,omitempty"`
	// Dirs are folders outside the system folders the tool needs in a
	// sandbox's view (torch's site-packages in a virtualenv or /opt).
	Dirs []string `json:"dirs,omitempty"`
	// Error says why the tool is unusable (not found, no version).
	Error string `json:"error,omitempty"`
	// Cached is set when the targets come from the probe cache.
	Cached bool `json:"cached,omitempty"`
}

// Found reports whether the tool exists and answered its version query.
func (t Tool) Found() bool { return t.Path != "" && t.Error == "" }

// Supports reports whether a probe verified target.
func (t Tool) Supports(target string) bool {
	for _, x := range t.Targets {
		if x == target {
			return true
		}
	}
	return false
}

// GPU says whether this host has an NVIDIA GPU to run programs on.
type GPU struct {
	Present bool `json:"present"`
	// Devices are the /dev/nvidiaN nodes found.
	Devices []string `json:"devices,omitempty"`
	// SMI is nvidia-smi's path; Names and Driver come from it.
	SMI    string   `json:"nvidia_smi,omitempty"`
	Names  []string `json:"names,omitempty"`
	Driver string   `json:"driver,omitempty"`
	// Error is what went wrong asking nvidia-smi (informative only).
	Error string `json:"error,omitempty"`
}

// Report is the registry as JSON (kiln doctor --json, and the replay
// registry of [FromReport]).
type Report struct {
	Tools []Tool `json:"tools"`
	GPU   GPU    `json:"gpu"`
	// ROCmDeviceLibDir is the system bitcode folder; DeviceLibDir the
	// derived one passed with --rocm-device-lib-path (empty: none).
	ROCmDeviceLibDir string `json:"rocm_device_lib_dir,omitempty"`
	DeviceLibDir     string `json:"device_lib_dir,omitempty"`
	// Problems are hints for a human (a missing package, a failed target).
	Problems   []string  `json:"problems,omitempty"`
	DetectedAt time.Time `json:"detected_at"`
	DurationMS float64   `json:"duration_ms"`
}

// Registry is the result of [Detect]: immutable, safe for concurrent use.
type Registry struct {
	tools    map[string]Tool
	gpu      GPU
	rocmDir  string
	libDir   string
	problems []string
	at       time.Time
	took     time.Duration
}

// Get returns the tool called name; ok is false when it is unknown or was
// not found on this host.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	t, ok := r.tools[name]
	if !ok || !t.Found() {
		return t, false
	}
	t.Targets = append([]string(nil), t.Targets...)
	t.Env = append([]string(nil), t.Env...)
	return t, true
}

// Path returns the tool's path, "" when not found.
func (r *Registry) Path(name string) string {
	t, _ := r.Get(name)
	return t.Path
}

// Supports reports whether tool name was verified for target.
func (r *Registry) Supports(name, target string) bool {
	t, ok := r.Get(name)
	return ok && t.Supports(target)
}

// Require returns nil when tool name was found and verified for every
// target; otherwise an error wrapping ErrUnavailable that says why.
func (r *Registry) Require(name string, targets ...string) error {
	t, ok := r.Get(name)
	if !ok {
		why := "not found"
		if r != nil && r.tools[name].Error != "" {
			why = r.tools[name].Error
		}
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, name, why)
	}
	for _, tg := range targets {
		if !t.Supports(tg) {
			why := t.Failed[tg]
			if why == "" {
				why = "not probed"
			}
			return fmt.Errorf("%w: %s cannot build %s: %s", ErrUnavailable, name, tg, firstLine(why))
		}
	}
	return nil
}

// Versions maps each found tool to its version line. Verdicts record it.
func (r *Registry) Versions() map[string]string {
	out := map[string]string{}
	if r == nil {
		return out
	}
	for name, t := range r.tools {
		if t.Found() {
			out[name] = t.Version
		}
	}
	return out
}

// Recorded is what every verdict records of the toolchains: Versions,
// and the GPUs found, with their driver, as "gpu".
func (r *Registry) Recorded() map[string]string {
	v := r.Versions()
	if g := r.GPU(); g.Present {
		v["gpu"] = strings.Join(g.Names, ", ") + " (driver " + g.Driver + ")"
	}
	return v
}

// GPU returns what was found about NVIDIA GPUs.
func (r *Registry) GPU() GPU {
	g := r.gpu
	g.Devices = append([]string(nil), g.Devices...)
	g.Names = append([]string(nil), g.Names...)
	return g
}

// DeviceLibDir is the derived AMD device-library folder ("" when none).
func (r *Registry) DeviceLibDir() string { return r.libDir }

// sandboxSystemDirs are visible in every sandbox view already.
var sandboxSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// toolConfigFiles are files outside the system folders that a tool reads
// on every call.
var toolConfigFiles = map[string][]string{
	NVCC: {"/etc/nvcc.profile"}, // Debian's nvcc finds its libraries and gcc-11 wrapper through it
}

// SandboxPaths lists the host paths a sandbox must show (read-only) for the
// found tools to work: their configuration files outside /usr (Debian's
// /etc/nvcc.profile), the derived device-library folder, and the
// installation folders of tools that live outside the system folders
// (/opt/rocm, ...). Pass them as sandboxes.Config.ReadOnlyPaths. Every
// path exists and is clean.
func (r *Registry) SandboxPaths() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if p == "/" || seen[p] {
			return
		}
		for _, sys := range sandboxSystemDirs {
			if p == sys || strings.HasPrefix(p, sys+"/") {
				return
			}
		}
		if _, err := os.Stat(p); err != nil {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	for _, name := range r.names() {
		t := r.tools[name]
		if !t.Found() {
			continue
		}
		for _, f := range toolConfigFiles[name] {
			add(f)
		}
		for _, d := range t.Dirs {
			add(d)
		}
		// /opt/rocm-5.2/bin/hipcc -> /opt/rocm-5.2
		if real, err := filepath.EvalSymlinks(t.Path); err == nil {
			add(filepath.Dir(filepath.Dir(real)))
		}
	}
	if r.rocmDir != "" {
		add(r.rocmDir)
	}
	if r.libDir != "" {
		add(r.libDir)
	}
	sort.Strings(out)
	return out
}

// HIPArgs returns the hipcc flags for an AMD offload arch: the arch and,
// when derived device libraries exist, --rocm-device-lib-path.
func (r *Registry) HIPArgs(arch string) []string {
	args := []string{"--offload-arch=" + arch}
	if r.libDir != "" {
		args = append(args, "--rocm-device-lib-path="+r.libDir)
	}
	return args
}

// Report returns the registry as JSON-able data.
func (r *Registry) Report() Report {
	rep := Report{GPU: r.GPU(), ROCmDeviceLibDir: r.rocmDir, DeviceLibDir: r.libDir,
		Problems: append([]string(nil), r.problems...), DetectedAt: r.at, DurationMS: float64(r.took) / float64(time.Millisecond)}
	for _, name := range r.names() {
		t := r.tools[name]
		t.Targets = append([]string(nil), t.Targets...)
		rep.Tools = append(rep.Tools, t)
	}
	return rep
}

func (r *Registry) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range toolOrder {
		if _, ok := r.tools[n]; ok {
			out = append(out, n)
			seen[n] = true
		}
	}
	var rest []string
	for n := range r.tools {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// FromReport rebuilds a registry from a report, without probing anything.
// It serves replays: a GPU host without the compilers can reuse a compile
// cache filled on the CPU host, since cache keys hold the versions. Use
// [Registry.WithGPU] to put this host's GPU in.
func FromReport(rep Report) *Registry {
	r := &Registry{tools: map[string]Tool{}, gpu: rep.GPU, rocmDir: rep.ROCmDeviceLibDir, libDir: rep.DeviceLibDir,
		problems: rep.Problems, at: rep.DetectedAt, took: time.Duration(rep.DurationMS * float64(time.Millisecond))}
	for _, t := range rep.Tools {
		r.tools[t.Name] = t
	}
	return r
}

// WithGPU returns a copy of r with g as its GPU.
func (r *Registry) WithGPU(g GPU) *Registry {
	c := *r
	c.gpu = g
	return &c
}

// Detect finds the tools, derives the RDNA3 device libraries, probes the
// targets (or reuses cached probe results) and looks for a GPU. Missing
// tools are not an error: the registry says what is missing. Errors are
// configuration faults and context cancellation.
func Detect(ctx context.Context, cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	d := &detector{cfg: cfg, log: cfg.Logger}
	r := &Registry{tools: map[string]Tool{}, at: start}

	// Versions, in parallel.
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Parallel)
	for _, name := range toolOrder {
		g.Go(func() error {
			t := d.locate(gctx, name)
			mu.Lock()
			r.tools[name] = t
			mu.Unlock()
			return nil
		})
	}
	var gpu GPU
	g.Go(func() error {
		gpu = DetectGPU(gctx, cfg)
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("toolchain detect: %w", err)
	}
	r.gpu = gpu

	// RDNA3 device libraries.
	r.rocmDir = cfg.ROCmDeviceLibDir
	if r.rocmDir == "" {
		for _, dir := range defaultROCmDeviceLibDirs {
			if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
				r.rocmDir = dir
				break
			}
		}
	}
	hip := r.tools[HIPCC]
	if hip.Found() && r.rocmDir != "" {
		switch {
		case fileExists(filepath.Join(r.rocmDir, "oclc_isa_version_1100.bc")):
			// A newer ROCm: nothing to derive.
		case cfg.DeviceLibDir == "":
			r.problems = append(r.problems, "gfx1100: the system device libraries lack oclc_isa_version_1100.bc "+
				"and no device lib dir is configured to derive it into")
		case !r.tools[LLVMDis].Found() || !r.tools[LLVMAs].Found():
			r.problems = append(r.problems, "gfx1100: llvm-dis/llvm-as (llvm-15) are needed to derive oclc_isa_version_1100.bc")
		default:
			if err := DeriveRDNA3DeviceLibs(ctx, r.tools[LLVMDis].Path, r.tools[LLVMAs].Path, r.rocmDir, cfg.DeviceLibDir); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("toolchain detect: %w", ctx.Err())
				}
				r.problems = append(r.problems, "gfx1100: "+err.Error())
			} else {
				r.libDir = cfg.DeviceLibDir
			}
		}
	}

	if !cfg.SkipProbes {
		if err := d.probeAll(ctx, r); err != nil {
			return nil, err
		}
	}
	r.problems = append(r.problems, hints(r)...)
	r.took = time.Since(start)
	d.log.Debug("toolchains detected", "took", r.took, "gpu", r.gpu.Present, "problems", len(r.problems))
	return r, nil
}

// hints turns missing tools and failed targets into advice.
func hints(r *Registry) []string {
	var out []string
	pkg := map[string]string{
		GCC: "gcc", AS: "binutils", LD: "binutils", Clang: "clang-15", NVCC: "nvidia-cuda-toolkit (Debian contrib non-free)",
		CUObjdump: "nvidia-cuda-toolkit", HIPCC: "hipcc libamdhip64-dev rocm-device-libs", LLVMMC: "llvm-15",
		LLVMDis: "llvm-15", LLVMAs: "llvm-15", Torch: "python3-torch (CPU only; a GPU host needs a CUDA build of PyTorch)",
	}
	for _, name := range r.names() {
		t := r.tools[name]
		if !t.Found() {
			out = append(out, fmt.Sprintf("%s: %s (package: %s)", name, t.Error, pkg[name]))
			continue
		}
		var failed []string
		for tg := range t.Failed {
			failed = append(failed, tg)
		}
		sort.Strings(failed)
		for _, tg := range failed {
			out = append(out, fmt.Sprintf("%s: cannot build %s: %s", name, tg, firstLine(t.Failed[tg])))
		}
	}
	return out
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}
