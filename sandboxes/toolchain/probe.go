package toolchain

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// probeVersion changes whenever the probe programs or commands change, so
// cached results of older probes are ignored.
const probeVersion = "probe-v2"

// detector carries one Detect call's settings.
type detector struct {
	cfg Config
	log *slog.Logger
}

// toolEnv is what a tool needs in its environment on every call.
func toolEnv(name string) []string {
	if name == HIPCC {
		// hipcc picks the NVIDIA platform whenever nvcc is installed.
		return []string{"HIP_PLATFORM=amd"}
	}
	return nil
}

// lookPath finds name in the configured path (not the process's PATH:
// library code reads no environment).
func lookPath(name, path string) (string, error) {
	if filepath.IsAbs(name) {
		if err := isExecutable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in %s", name, path)
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// locate finds tool name and reads its version.
func (d *detector) locate(ctx context.Context, name string) Tool {
	t := Tool{Name: name, Env: toolEnv(name)}
	if name == Torch {
		return d.locateTorch(ctx, t)
	}
	var errs []string
	for _, exe := range d.cfg.Names[name] {
		p, err := lookPath(exe, d.cfg.Path)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		t.Path = p
		break
	}
	if t.Path == "" {
		t.Error = "not found"
		if len(errs) > 0 {
			t.Error = strings.Join(errs, "; ")
		}
		return t
	}
	arg := "--version"
	out, err := d.exec(ctx, "", t.Env, 10*time.Second, t.Path, arg)
	if err != nil {
		t.Error = fmt.Sprintf("%s %s: %v", t.Path, arg, firstLine(err.Error()))
		return t
	}
	t.Version = parseVersion(name, out)
	if t.Version == "" {
		t.Error = fmt.Sprintf("%s %s printed no version", t.Path, arg)
	}
	return t
}

// torchQuery prints Python's version, torch's version, torch's CUDA
// version and torch's package folder without importing torch (which costs
// seconds): from the package metadata and torch/version.py.
const torchQuery = `import importlib.metadata as m, importlib.util as u, os, re, sys
s = u.find_spec("torch")
if s is None or not s.submodule_search_locations:
    sys.exit("no torch module")
d = list(s.submodule_search_locations)[0]
cuda = "none"
try:
    v = open(os.path.join(d, "version.py")).read()
    g = re.search(r"^cuda\s*(?::\s*\S+)?\s*=\s*['\"]([^'\"]+)['\"]", v, re.M)
    if g:
        cuda = g.group(1)
except OSError:
    pass
print("python %d.%d.%d, torch %s, cuda %s" % (sys.version_info[:3] + (m.version("torch"), cuda)))
print(os.path.dirname(d))
print(sys.prefix)`

// locateTorch finds the first python3 that has torch: every configured
// name (Config.Names[Torch]; an absolute one as is, others looked up in
// each folder of Config.Path in turn), asked for torch's versions and
// folders without importing it. Dirs get torch's site-packages and the
// Python prefix (a virtualenv) for the sandbox view.
func (d *detector) locateTorch(ctx context.Context, t Tool) Tool {
	var cands []string
	for _, exe := range d.cfg.Names[Torch] {
		if filepath.IsAbs(exe) {
			cands = append(cands, exe)
			continue
		}
		for _, dir := range filepath.SplitList(d.cfg.Path) {
			if p := filepath.Join(dir, exe); dir != "" && isExecutable(p) == nil {
				cands = append(cands, p)
			}
		}
	}
	var errs []string
	seen := map[string]bool{}
	for _, p := range cands {
		if seen[p] {
			continue
		}
		seen[p] = true
		out, err := d.exec(ctx, "", t.Env, 30*time.Second, p, "-I", "-c", torchQuery)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", p, firstLine(err.Error())))
			continue
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "python ") {
			errs = append(errs, fmt.Sprintf("%s: unexpected answer %q", p, clip(out, 200)))
			continue
		}
		t.Path, t.Version = p, lines[0]
		for _, dir := range lines[1:] {
			if dir = strings.TrimSpace(dir); filepath.IsAbs(dir) {
				t.Dirs = append(t.Dirs, dir)
			}
		}
		return t
	}
	t.Error = "no python3 with torch found"
	if len(errs) > 0 {
		t.Error += ": " + strings.Join(errs, "; ")
	}
	if len(cands) > 0 {
		t.Path = cands[0]
	}
	return t
}

// parseVersion picks the line that identifies a tool's version.
func parseVersion(name, out string) string {
	lines := strings.Split(strings.ReplaceAll(out, "\r", ""), "\n")
	pick := func(pred func(string) bool) string {
		for _, l := range lines {
			if l = strings.TrimSpace(l); l != "" && pred(l) {
				return l
			}
		}
		return ""
	}
	switch name {
	case NVCC, CUObjdump:
		// "Cuda compilation tools, release 11.8, V11.8.89"
		return pick(func(l string) bool { return strings.Contains(l, "release") })
	case HIPCC:
		// "HIP version: 5.2.21153-0" then the clang it drives.
		hip := pick(func(l string) bool { return strings.HasPrefix(l, "HIP version") })
		clang := pick(func(l string) bool { return strings.Contains(l, "clang version") })
		switch {
		case hip != "" && clang != "":
			return hip + "; " + clang
		case hip != "":
			return hip
		}
		return clang
	case LLVMMC, LLVMDis, LLVMAs:
		return pick(func(l string) bool { return strings.Contains(l, "LLVM version") })
	}
	return pick(func(string) bool { return true })
}

// exec runs a trusted command with a minimal environment in dir and
// returns stdout+stderr. A non-zero exit is an error carrying the output.
func (d *detector) exec(ctx context.Context, dir string, env []string, timeout time.Duration, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	tmp := dir
	if tmp == "" {
		tmp = d.cfg.WorkDir
	}
	cmd.Env = append([]string{"PATH=" + d.cfg.Path, "LC_ALL=C", "TMPDIR=" + tmp, "HOME=" + tmp}, env...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return out.String(), fmt.Errorf("%s: %w", filepath.Base(argv[0]), ctx.Err())
		}
		return out.String(), fmt.Errorf("%s: %v: %s", filepath.Base(argv[0]), err, strings.TrimSpace(clip(out.String(), 2000)))
	}
	return out.String(), nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Probe programs.
const (
	probeC      = "int main(void) { return 0; }\n"
	probeAsm    = ".text\n.globl _start\n_start:\n\tmovl $60, %eax\n\txorl %edi, %edi\n\tsyscall\n"
	probeKernel = `extern "C" __global__ void kiln_probe(float *p) { p[threadIdx.x] *= 2.0f; }
`
	probeCUDA = probeKernel + `int main() {
  float *p = 0;
  cudaMalloc(&p, 32 * sizeof(float));
  kiln_probe<<<1, 32>>>(p);
  cudaDeviceSynchronize();
  cudaFree(p);
  return 0;
}
`
	probeHIP = `#include <hip/hip_runtime.h>
extern "C" __global__ void kiln_probe(float *p) { p[threadIdx.x] *= 2.0f; }
int main() {
  float *p = 0;
  if (hipMalloc(&p, 32 * sizeof(float)) != hipSuccess) return 1;
  hipLaunchKernelGGL(kiln_probe, dim3(1), dim3(32), 0, 0, p);
  return hipDeviceSynchronize() != hipSuccess;
}
`
	probeAMDGPUAsm = "s_endpgm\n"
)

// probeResult is one target's verdict for one tool.
type probeResult struct {
	tool, target string
	err          error
}

// probeJob builds in its own folder and reports target results.
type probeJob struct {
	name  string
	needs []string // tools that must be found
	run   func(ctx context.Context, dir string) []probeResult
}

func (d *detector) jobs(r *Registry) []probeJob {
	pe := probeEnv{d: d, r: r, to: d.cfg.ProbeTimeout}
	jobs := pe.hostJobs()
	jobs = append(jobs, pe.nvccJob())
	return append(jobs, pe.amdJobs()...)
}

// probeEnv is what the probe jobs of a registry share: its tools' paths
// and environments, the timeout, and the detector that runs them.
type probeEnv struct {
	d  *detector
	r  *Registry
	to time.Duration
}

func (pe probeEnv) path(n string) string  { return pe.r.tools[n].Path }
func (pe probeEnv) env(n string) []string { return pe.r.tools[n].Env }

func probeWrite(dir, name, content string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
}

func one(tool, target string, err error) []probeResult {
	return []probeResult{{tool, target, err}}
}

// hostJobs probe the host compilers: gcc, binutils (as, then ld), clang.
func (pe probeEnv) hostJobs() []probeJob {
	var jobs []probeJob
	jobs = append(jobs, probeJob{name: "gcc host", needs: []string{GCC}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "p.c", probeC); err != nil {
			return one(GCC, TargetHost, err)
		}
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(GCC), "-o", "p", "p.c")
		return one(GCC, TargetHost, err)
	}})
	jobs = append(jobs, probeJob{name: "binutils host", needs: []string{AS}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "p.s", probeAsm); err != nil {
			return one(AS, TargetHost, err)
		}
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(AS), "--64", "-o", "p.o", "p.s")
		out := one(AS, TargetHost, err)
		if pe.r.tools[LD].Found() {
			if err == nil {
				_, err = pe.d.exec(ctx, dir, nil, pe.to, pe.path(LD), "-o", "p", "p.o")
			} else {
				err = fmt.Errorf("as failed, ld not probed")
			}
			out = append(out, probeResult{LD, TargetHost, err})
		}
		return out
	}})
	jobs = append(jobs, probeJob{name: "clang host", needs: []string{Clang}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "p.c", probeC); err != nil {
			return one(Clang, TargetHost, err)
		}
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(Clang), "-c", "-o", "p.o", "p.c")
		return one(Clang, TargetHost, err)
	}})
	return jobs
}

// nvccJob probes nvcc: one executable for both SASS targets (its cubins
// then go through cuobjdump); only when that fails, one cubin per target
// tells which target is broken.
func (pe probeEnv) nvccJob() probeJob {
	return probeJob{name: "nvcc", needs: []string{NVCC}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "p.cu", probeCUDA); err != nil {
			return one(NVCC, TargetHost, err)
		}
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(NVCC), "--keep", "-gencode", "arch=compute_86,code=sm_86",
			"-gencode", "arch=compute_90,code=sm_90", "-o", "p", "p.cu")
		if err == nil {
			out := []probeResult{{NVCC, TargetHost, nil}, {NVCC, TargetSM86, nil}, {NVCC, TargetSM90, nil}}
			if pe.r.tools[CUObjdump].Found() {
				sass, cerr := pe.d.exec(ctx, dir, nil, pe.to, pe.path(CUObjdump), "-sass", "p.fatbin")
				for _, sm := range []string{TargetSM86, TargetSM90} {
					e := cerr
					if e == nil && !sassHasKernel(sass, sm, "kiln_probe") {
						e = fmt.Errorf("cuobjdump -sass does not show kiln_probe for %s", sm)
					}
					out = append(out, probeResult{CUObjdump, sm, e})
				}
			}
			return out
		}
		return pe.nvccPerTarget(ctx, dir, err)
	}}
}

// nvccPerTarget probes nvcc one cubin per SASS target, after the
// executable of both failed with err.
func (pe probeEnv) nvccPerTarget(ctx context.Context, dir string, err error) []probeResult {
	out := one(NVCC, TargetHost, err)
	if err := probeWrite(dir, "k.cu", probeKernel); err != nil {
		return append(out, probeResult{NVCC, TargetSM86, err}, probeResult{NVCC, TargetSM90, err})
	}
	for _, sm := range []string{TargetSM86, TargetSM90} {
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(NVCC), "-cubin", "-arch="+sm, "-o", "k_"+sm+".cubin", "k.cu")
		out = append(out, probeResult{NVCC, sm, err})
		if pe.r.tools[CUObjdump].Found() {
			cerr := errors.New("nvcc failed, cuobjdump not probed")
			if err == nil {
				var sass string
				sass, cerr = pe.d.exec(ctx, dir, nil, pe.to, pe.path(CUObjdump), "-sass", "k_"+sm+".cubin")
				if cerr == nil && !sassHasKernel(sass, sm, "kiln_probe") {
					cerr = fmt.Errorf("cuobjdump -sass does not show kiln_probe for %s", sm)
				}
			}
			out = append(out, probeResult{CUObjdump, sm, cerr})
		}
	}
	return out
}

// amdJobs probe the HIP and AMD toolchains: HIP through nvcc, hipcc per
// RDNA target and for the host, llvm-mc per RDNA target.
func (pe probeEnv) amdJobs() []probeJob {
	var jobs []probeJob
	jobs = append(jobs, probeJob{name: "nvcc hip", needs: []string{NVCC}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "h.hip", probeHIP); err != nil {
			return one(NVCC, TargetHIPNvidia, err)
		}
		_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(NVCC), "-x", "cu", "-D__HIP_PLATFORM_NVIDIA__", "-arch=sm_86", "-c", "-o", "h.o", "h.hip")
		return one(NVCC, TargetHIPNvidia, err)
	}})
	for _, arch := range []string{TargetGFX1030, TargetGFX1100} {
		jobs = append(jobs, probeJob{name: "hipcc " + arch, needs: []string{HIPCC}, run: func(ctx context.Context, dir string) []probeResult {
			if err := probeWrite(dir, "h.hip", probeHIP); err != nil {
				return one(HIPCC, arch, err)
			}
			argv := append([]string{pe.path(HIPCC)}, pe.r.HIPArgs(arch)...)
			argv = append(argv, "--cuda-device-only", "-S", "-o", "h.s", "h.hip")
			_, err := pe.d.exec(ctx, dir, pe.env(HIPCC), pe.to, argv...)
			if err == nil {
				err = expectIn(dir, "h.s", `.amdgcn_target "amdgcn-amd-amdhsa--`+arch, "kiln_probe")
			}
			return one(HIPCC, arch, err)
		}})
	}
	jobs = append(jobs, probeJob{name: "hipcc host", needs: []string{HIPCC}, run: func(ctx context.Context, dir string) []probeResult {
		if err := probeWrite(dir, "h.hip", probeHIP); err != nil {
			return one(HIPCC, TargetHost, err)
		}
		_, err := pe.d.exec(ctx, dir, pe.env(HIPCC), pe.to, pe.path(HIPCC), "--offload-arch=gfx1030", "--cuda-host-only", "-S", "-o", "h.s", "h.hip")
		if err == nil {
			err = expectIn(dir, "h.s", "main:")
		}
		return one(HIPCC, TargetHost, err)
	}})
	for _, arch := range []string{TargetGFX1030, TargetGFX1100} {
		jobs = append(jobs, probeJob{name: "llvm-mc " + arch, needs: []string{LLVMMC}, run: func(ctx context.Context, dir string) []probeResult {
			if err := probeWrite(dir, "k.s", probeAMDGPUAsm); err != nil {
				return one(LLVMMC, arch, err)
			}
			_, err := pe.d.exec(ctx, dir, nil, pe.to, pe.path(LLVMMC), "-triple=amdgcn-amd-amdhsa", "-mcpu="+arch, "-filetype=obj", "-o", "k.o", "k.s")
			return one(LLVMMC, arch, err)
		}})
	}
	return jobs
}

// sassHasKernel reports whether cuobjdump output has a "code for sm"
// section naming kernel.
func sassHasKernel(sass, sm, kernel string) bool {
	_, rest, ok := strings.Cut(sass, "code for "+sm)
	if !ok {
		return false
	}
	for ok {
		section := rest
		if i := strings.Index(rest, "code for "); i >= 0 {
			section = rest[:i]
		}
		if strings.Contains(section, "Function : "+kernel) {
			return true
		}
		_, rest, ok = strings.Cut(rest, "code for "+sm)
	}
	return false
}

// expectIn checks that file name in dir contains every want.
func expectIn(dir, name string, want ...string) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	for _, w := range want {
		if !bytes.Contains(b, []byte(w)) {
			return fmt.Errorf("%s lacks %q", name, w)
		}
	}
	return nil
}

// probeCacheFile is Config.ProbeCache's content.
type probeCacheFile struct {
	Key     string                       `json:"key"`
	Targets map[string][]string          `json:"targets"`
	Failed  map[string]map[string]string `json:"failed"`
	At      time.Time                    `json:"at"`
}

// probeKey identifies everything the probe results depend on.
func (d *detector) probeKey(r *Registry) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", probeVersion, r.libDir)
	for _, name := range toolOrder {
		t := r.tools[name]
		fmt.Fprintf(h, "%s|%s|%s|%s", name, t.Path, t.Version, t.Error)
		if fi, err := os.Stat(t.Path); err == nil {
			fmt.Fprintf(h, "|%d|%d", fi.Size(), fi.ModTime().UnixNano())
		}
		h.Write([]byte{'\n'})
	}
	if r.libDir != "" {
		if b, err := os.ReadFile(filepath.Join(r.libDir, rdna3ISAFile)); err == nil {
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// probeAll fills Targets and Failed of every found tool.
func (d *detector) probeAll(ctx context.Context, r *Registry) error {
	key := d.probeKey(r)
	if c, ok := d.loadProbeCache(key); ok {
		for name, t := range r.tools {
			if !t.Found() {
				continue
			}
			t.Targets, t.Failed, t.Cached = c.Targets[name], c.Failed[name], true
			r.tools[name] = t
		}
		return nil
	}
	work, err := os.MkdirTemp(d.cfg.WorkDir, "kiln-toolchain-probe-")
	if err != nil {
		return fmt.Errorf("toolchain probe: %w", err)
	}
	defer os.RemoveAll(work)

	var mu sync.Mutex
	var results []probeResult
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(d.cfg.Parallel)
	for i, job := range d.jobs(r) {
		ready := true
		for _, n := range job.needs {
			ready = ready && r.tools[n].Found()
		}
		if !ready {
			continue
		}
		g.Go(func() error {
			dir := filepath.Join(work, fmt.Sprintf("%02d", i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			start := time.Now()
			res := job.run(gctx, dir)
			d.log.Debug("toolchain probe", "job", job.name, "took", time.Since(start))
			mu.Lock()
			results = append(results, res...)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("toolchain probe: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("toolchain probe: %w", err)
	}
	c := probeCacheFile{Key: key, Targets: map[string][]string{}, Failed: map[string]map[string]string{}, At: time.Now()}
	for _, res := range results {
		t := r.tools[res.tool]
		if res.err == nil {
			t.Targets = append(t.Targets, res.target)
		} else {
			if t.Failed == nil {
				t.Failed = map[string]string{}
			}
			t.Failed[res.target] = clip(res.err.Error(), 2000)
		}
		r.tools[res.tool] = t
	}
	for name, t := range r.tools {
		sort.Strings(t.Targets)
		r.tools[name] = t
		if t.Found() {
			c.Targets[name], c.Failed[name] = t.Targets, t.Failed
		}
	}
	d.saveProbeCache(c)
	return nil
}

func (d *detector) loadProbeCache(key string) (probeCacheFile, bool) {
	var c probeCacheFile
	if d.cfg.ProbeCache == "" {
		return c, false
	}
	b, err := os.ReadFile(d.cfg.ProbeCache)
	if err != nil {
		return c, false
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Key != key {
		return c, false
	}
	return c, true
}

// saveProbeCache writes the cache atomically; failing only costs a probe
// next time.
func (d *detector) saveProbeCache(c probeCacheFile) {
	if d.cfg.ProbeCache == "" {
		return
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err == nil {
		err = writeFileAtomic(d.cfg.ProbeCache, b, 0o644)
	}
	if err != nil {
		d.log.Warn("toolchain probe cache not written", "path", d.cfg.ProbeCache, "err", err)
	}
}

// writeFileAtomic writes data to path through a synced temp file and a
// rename, creating parent folders (mode 0755).
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// DetectGPU looks for NVIDIA device nodes (Config.DevDir) and asks
// nvidia-smi (found in Config.Path) for the GPUs' names. Detect calls it;
// a replayed registry ([FromReport]) takes this host's GPU through it.
func DetectGPU(ctx context.Context, cfg Config) GPU {
	cfg = cfg.withDefaults()
	var g GPU
	nodes, _ := filepath.Glob(filepath.Join(cfg.DevDir, "nvidia[0-9]*"))
	sort.Strings(nodes)
	g.Devices = nodes
	if smi, err := lookPath("nvidia-smi", cfg.Path); err == nil {
		g.SMI = smi
		d := &detector{cfg: cfg}
		out, err := d.exec(ctx, "", nil, 10*time.Second, smi, "--query-gpu=name,driver_version", "--format=csv,noheader")
		if err != nil {
			g.Error = firstLine(err.Error())
		} else {
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				name, drv, _ := strings.Cut(line, ",")
				if name = strings.TrimSpace(name); name != "" {
					g.Names = append(g.Names, name)
					g.Driver = strings.TrimSpace(drv)
				}
			}
		}
	}
	g.Present = len(g.Devices) > 0 || len(g.Names) > 0
	return g
}
