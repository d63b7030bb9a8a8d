package torch2cuda

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"golang.org/x/sync/singleflight"
)

// The GPU judge is a two-stage pipeline. Stage one builds each
// candidate's extensions on the CPU cores, in a sandbox of its own
// ("judge.py batch --compile-only"), at most CompileParallel at once and
// one build per candidate at a time; the built extensions (or the build's
// failure) are kept in the lane's cache folder by candidate content, torch
// version and GPU architecture, so a candidate is compiled once, whatever
// host-side retries or rescores follow. Stage two runs on the GPU:
// evaluations whose builds are done are taken in batches of at most
// MaxBatch; a GPU slot's batches go to one sandboxed judge.py process that
// lives across them (serve.go), which imports torch once and forks a
// fresh, Landlock-confined child per evaluation (judge/README.md). The GPU stage never waits for a compiler,
// and builds go on while the GPU judges: a batch's verdicts come back when
// it ends, after about three seconds per evaluation. A GPU whose batch ends
// badly and that then fails a health probe is quarantined, and the batch's
// evaluations are requeued (health.go).

// batchWindow is how long a GPU batch waits for more evaluations to join.
const batchWindow = 200 * time.Millisecond

type judgeJob struct {
	ctx       context.Context
	ref, cand string
	key       string            // the candidate's cache key
	built     map[string][]byte // its build folder's kept files
	done      chan judgeOut     // buffered: the runner never blocks on it
	requeues  int               // times put back after its GPU failed a probe
	lim       evalLimits        // from the problem's check
}

type judgeOut struct {
	res judgeResult
	raw []byte
	err error
	// fault is set with err when the judge process itself failed (died,
	// killed, no result): why the GPU may be at fault.
	fault string
}

// batcher holds both stages: build tokens, and the queue of built
// evaluations that GPU runners (at most GPUSlots) take in batches. Its
// runner goroutines end when the queue is empty, or when their GPU is
// quarantined (see health.go).
type batcher struct {
	l      *Lane
	builds chan struct{}      // one token per build running
	flight singleflight.Group // one build per cache key at a time

	// The GPU stage. runBatch and probe are the lane's (fakes in tests);
	// a nil probe (Device "cpu") turns the health checks off.
	runBatch func(jobs []*judgeJob, gpu int) []judgeOut
	probe    func(ctx context.Context, gpu int) error
	window   time.Duration // batchWindow
	maxBatch int
	probeFor time.Duration // Config.ProbeTimeout
	reprobe  time.Duration // Config.ReprobeInterval
	log      *slog.Logger
	probes   singleflight.Group // one probe per GPU at a time

	mu    sync.Mutex
	queue []*judgeJob
	free  []int      // GPU slots no runner holds; slot i judges on GPU i mod len(gpus)
	gpus  []gpuState // by GPU index
	// slots reports the slots' states to the sandbox runner's metrics from
	// the first evaluation submitted until Lane.Close (nil: not at all).
	slots     *sandboxes.SlotGauge
	slotsLive bool
	nslots    int
}

func newBatcher(l *Lane) *batcher {
	b := &batcher{l: l, builds: make(chan struct{}, l.cfg.CompileParallel), runBatch: l.runBatch,
		slots: sandboxes.NewSlotGauge(l.cfg.Sandbox.Metrics(), LaneName)}
	if l.cfg.Device != "cpu" {
		b.probe = l.probeGPU
	}
	b.initGPU(l.cfg)
	return b
}

// initGPU sets the GPU stage up from cfg (defaults applied).
func (b *batcher) initGPU(cfg Config) {
	b.window, b.maxBatch, b.probeFor, b.reprobe, b.log = batchWindow, cfg.MaxBatch, cfg.ProbeTimeout, cfg.ReprobeInterval, cfg.Logger
	for i := range cfg.GPUSlots {
		b.free = append(b.free, i)
	}
	b.nslots = cfg.GPUSlots
	// Slot i judges on GPU i mod GPUs; with fewer slots than GPUs, the
	// GPUs past the slots get no work.
	b.gpus = make([]gpuState, max(1, min(cfg.GPUs, cfg.GPUSlots)))
}

// judge evaluates one candidate (see batcher); an error means the judge
// could not run, not that the answer failed.
func (l *Lane) judge(ctx context.Context, ref, cand string, lim evalLimits) (judgeResult, []byte, error) {
	arch := l.arch(ctx)
	key := l.cacheKey(cand, arch)
	built, err := l.build(ctx, key, ref, cand, arch)
	if err != nil {
		return judgeResult{}, nil, err
	}
	return l.judgeBuilt(ctx, ref, cand, key, built, lim)
}

// judgeBuilt judges a candidate built (build's files, under cache key key)
// in the next batch on a GPU.
func (l *Lane) judgeBuilt(ctx context.Context, ref, cand, key string, built map[string][]byte, lim evalLimits) (judgeResult, []byte, error) {
	j := &judgeJob{ctx: ctx, ref: ref, cand: cand, key: key, done: make(chan judgeOut, 1), lim: lim, built: built}
	l.batches.submit(j)
	select {
	case out := <-j.done:
		out.res.Build = readBuildRecords(built)
		return out.res, out.raw, out.err
	case <-ctx.Done():
		return judgeResult{}, nil, ctx.Err()
	}
}

func (b *batcher) submit(j *judgeJob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.slotsLive = true
	b.queue = append(b.queue, j)
	b.scheduleLocked(1)
}

// run takes batches off the queue until it is empty, or until its GPU is
// quarantined; evaluations whose caller has gone are dropped.
func (b *batcher) run(slot int) {
	gpu := slot % len(b.gpus)
	for {
		time.Sleep(b.window)
		b.mu.Lock()
		if b.gpus[gpu].down != "" {
			b.free = append(b.free, slot)
			b.scheduleLocked(1)
			b.mu.Unlock()
			return
		}
		var jobs []*judgeJob
		for len(b.queue) > 0 && len(jobs) < b.maxBatch {
			j := b.queue[0]
			b.queue = b.queue[1:]
			if j.ctx.Err() == nil {
				jobs = append(jobs, j)
			}
		}
		if len(jobs) == 0 && len(b.queue) == 0 {
			b.free = append(b.free, slot)
			b.reportLocked()
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		if len(jobs) == 0 {
			continue
		}
		b.deliver(jobs, b.runBatch(jobs, gpu), gpu)
	}
}

// buildVersion names the way judge.py builds extensions (its BuildCache,
// the load_inline arguments it sets, the files it keeps); bump it when that
// changes, and every cached build is made again. Changes to the judging
// itself (trials, timing, anti-cheat) keep the builds.
const buildVersion = "torch2cuda-build-v4"

// cacheKey names a candidate's built extensions in the lane's cache.
func (l *Lane) cacheKey(cand, arch string) string {
	t, _ := l.cfg.Toolchains.Get(toolchain.Torch)
	h := sha256.New()
	for _, part := range []string{buildVersion, t.Version, arch, l.cfg.Device, cand} {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// buildRecords is what a candidate's build recorded when it ran (in its
// kiln_done.json files), whether it ran now or came from the cache.
type buildRecords struct {
	MS        float64 // the builds' wall time, summed
	N         int     // extension builds with a record
	Slim      int     // CUDA sources built with a slimmer header than written
	Header    string  // that header: judge.py's PEROP_NAME or <SLIM_HEADER> (of the last such build)
	AsWritten int     // CUDA sources built as written after the slimmer build failed
	PCH       int     // builds whose pybind module had a precompiled header (pch.go)
}

func readBuildRecords(files map[string][]byte) buildRecords {
	var r buildRecords
	for name, b := range files {
		if path.Base(name) != "kiln_done.json" {
			continue
		}
		var rec struct {
			MS     *float64 `json:"ms"`
			Slim   *bool    `json:"slim"`
			Header string   `json:"header"`
			PCH    bool     `json:"pch"`
		}
		if json.Unmarshal(b, &rec) != nil || rec.MS == nil {
			continue
		}
		r.N++
		r.MS += *rec.MS
		if rec.PCH {
			r.PCH++
		}
		if rec.Slim != nil {
			if *rec.Slim {
				r.Slim++
				if r.Header = rec.Header; r.Header == "" {
					r.Header = "<torch/types.h>" // written by a judge before the per-operator prelude
				}
			} else {
				r.AsWritten++
			}
		}
	}
	return r
}

// keptFile reports whether a file of a build folder is kept in the cache:
// the judge's records and the built module, not the objects.
func keptFile(name string) bool {
	base := path.Base(name)
	return base == "kiln_done.json" || base == "kiln_failed.json" || (strings.HasPrefix(base, "kiln_") && strings.HasSuffix(base, ".so"))
}

// maxCachedBuild bounds one candidate's kept build files.
const maxCachedBuild = 256 << 20

func (l *Lane) loadCached(key string) map[string][]byte {
	if l.cfg.CacheDir == "" {
		return nil
	}
	dir := filepath.Join(l.cfg.CacheDir, key)
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil || len(out) == 0 {
		return nil
	}
	return out
}

// storeCached keeps a candidate's build files (written to a temp folder,
// then renamed into place: readers see all or nothing).
func (l *Lane) storeCached(key string, files map[string][]byte) {
	if l.cfg.CacheDir == "" || len(files) == 0 {
		return
	}
	final := filepath.Join(l.cfg.CacheDir, key)
	if _, err := os.Stat(final); err == nil {
		return
	}
	if err := os.MkdirAll(l.cfg.CacheDir, 0o755); err != nil {
		l.cfg.Logger.Warn("torch2cuda build cache", "err", err)
		return
	}
	tmp, err := os.MkdirTemp(l.cfg.CacheDir, ".tmp-")
	if err != nil {
		l.cfg.Logger.Warn("torch2cuda build cache", "err", err)
		return
	}
	defer os.RemoveAll(tmp)
	for name, b := range files {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			l.cfg.Logger.Warn("torch2cuda build cache", "err", err)
			return
		}
	}
	if err := os.Rename(tmp, final); err != nil && !os.IsExist(err) {
		l.cfg.Logger.Warn("torch2cuda build cache", "err", err)
	}
}

// arch is the GPU's compute capability for TORCH_CUDA_ARCH_LIST ("9.0"),
// read once with nvidia-smi; "" when judging on the CPU or unknown.
func (l *Lane) arch(ctx context.Context) string {
	l.archOnce.Do(func() {
		g := l.cfg.Toolchains.GPU()
		if l.cfg.Device == "cpu" || g.SMI == "" {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, g.SMI, "--query-gpu=compute_cap", "--format=csv,noheader").Output()
		if err != nil {
			l.cfg.Logger.Warn("torch2cuda: nvidia-smi compute_cap", "err", err)
			return
		}
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if _, err := strconv.ParseFloat(strings.TrimSpace(first), 64); err == nil {
			l.archList = strings.TrimSpace(first)
		}
	})
	return l.archList
}

// judgeEnv is the judge's environment; the python's own folder comes
// first in PATH: a virtualenv's ninja lives there.
func judgeEnv(py, arch string) []string {
	env := []string{"XDG_CACHE_HOME=.cache", "PYTHONDONTWRITEBYTECODE=1", "MAX_JOBS=2",
		"PATH=" + filepath.Dir(py) + ":/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"}
	if arch != "" {
		env = append(env, "TORCH_CUDA_ARCH_LIST="+arch)
	}
	return env
}

// build returns a candidate's kept build files: from the cache, or built
// now (at most CompileParallel builds at once, one per candidate). A build
// that left no record (it timed out, the sandbox failed) returns no files,
// and the GPU stage's judge builds the candidate itself within its run
// timeout.
func (l *Lane) build(ctx context.Context, key, ref, cand, arch string) (map[string][]byte, error) {
	// Builds found in the cache and builds run go to the sandbox runner's
	// metrics; callers that wait for another's build count as neither.
	metrics := l.cfg.Sandbox.Metrics()
	if files := l.loadCached(key); files != nil {
		metrics.CompileCache(LaneName, true)
		return files, nil
	}
	v, err, _ := l.batches.flight.Do(key, func() (any, error) {
		if files := l.loadCached(key); files != nil {
			metrics.CompileCache(LaneName, true)
			return files, nil
		}
		metrics.CompileCache(LaneName, false)
		select {
		case l.batches.builds <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-l.batches.builds }()
		compile := l.compile
		if l.compileRun != nil {
			compile = l.compileRun
		}
		files, err := compile(ctx, ref, cand, arch)
		if err != nil {
			return nil, err
		}
		l.storeCached(key, files)
		return files, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string][]byte), nil
}

// compile builds one candidate's extensions: on a build server
// (buildserve.go), or with Config.OneShotJudge in a sandbox of its own.
func (l *Lane) compile(ctx context.Context, ref, cand, arch string) (map[string][]byte, error) {
	py, err := l.python()
	if err != nil {
		return nil, err
	}
	if !l.cfg.OneShotJudge {
		return l.compileServed(ctx, py, ref, cand, arch)
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout+5*time.Minute)
	defer cancel()
	// Building an extension writes hundreds of megabytes of intermediates.
	box, err := l.cfg.Sandbox.OpenSized(ctx, 2<<30, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("torch2cuda compile: %w", err)
	}
	defer box.Close()
	job, _ := json.Marshal(map[string]string{"id": "0", "reference": "reference.py", "candidate": "candidate.py", "build_dir": "build"})
	if err := box.WriteTree(".", map[string][]byte{"judge.py": judgeScript, "nvcc_par.py": nvccParScript, "reference.py": []byte(ref),
		"candidate.py": []byte(cand), "jobs.jsonl": append(job, '\n')}); err != nil {
		return nil, fmt.Errorf("torch2cuda compile: %w", err)
	}
	// Builds run at nice 10, the campaign's batch work, meant to yield the
	// CPU to the judge servers, the problem checks and the making of the
	// precompiled headers. Where the kernel's autogroup scheduling is on
	// (the default of Debian and Ubuntu, and on the GPU host), nice counts
	// only inside a session and every box is a session of its own, so there
	// it orders only a build's own processes. Lowering the boxes' autogroups
	// was tried and taken out: it starved builds under other load on the
	// host, and showed no gain on the GPU host (GPU_RESULTS §12).
	argv := []string{py, "-I", "judge.py", "batch", "--jobs", "jobs.jsonl", "--out", "compiled.jsonl", "--compile-only",
		"--parallel", "1", "--timeout", strconv.Itoa(int(l.cfg.Timeout / time.Second)), "--nice", strconv.Itoa(buildNice)}
	if arch != "" {
		argv = append(argv, "--arch", arch)
	}
	var ro []string
	if pch := l.pchRoot(py, arch); pch != "" {
		argv = append(argv, "--pch-root", pch)
		ro = []string{pch}
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: judgeEnv(py, arch), Limits: l.judgeLimits(1, 1, l.cfg.Timeout), ReadOnly: ro})
	if err != nil {
		return nil, fmt.Errorf("torch2cuda compile: %w", err)
	}
	if !res.OK() {
		l.cfg.Logger.Warn("torch2cuda compile", "exit", res.ExitCode, "killed", res.Killed, "stderr", clip(string(res.Stderr), 500))
	}
	return readKept(box, "build"), nil
}

// readKept reads the kept files of a box's build folder dir (none when it
// cannot be read: the build left no record).
func readKept(box *sandboxes.Box, dir string) map[string][]byte {
	kept := map[string][]byte{}
	built, err := box.ReadTree(dir, maxCachedBuild, 10000)
	if err != nil {
		return kept
	}
	for name, b := range built {
		if keptFile(name) {
			kept[name] = b
		}
	}
	return kept
}

// buildNice is the niceness of the candidates' builds (compile).
const buildNice = 10

// runBatch judges built jobs on GPU gpu (or the CPU with Device "cpu"):
// on the slot's judge server (serve.go), or with a process of their own;
// one result per job.
func (l *Lane) runBatch(jobs []*judgeJob, gpu int) []judgeOut {
	var built int64
	for _, j := range jobs {
		for _, b := range j.built {
			built += int64(len(b))
		}
	}
	// a batch whose extensions would crowd the server's scratch gets a box of its own size
	if !l.cfg.OneShotJudge && built+1<<30 <= serverScratch {
		return l.runServed(jobs, gpu)
	}
	return l.runOneShot(jobs, gpu)
}

// runOneShot judges jobs on gpu with a judge process of their own.
func (l *Lane) runOneShot(jobs []*judgeJob, gpu int) []judgeOut {
	outs := make([]judgeOut, len(jobs))
	fail := func(err error) []judgeOut {
		for i := range outs {
			if outs[i].err == nil && outs[i].raw == nil {
				outs[i].err = err
			}
		}
		return outs
	}
	py, err := l.python()
	if err != nil {
		return fail(err)
	}
	n := len(jobs)
	lim := l.batchLimits(jobs)
	ctx, cancel := context.WithTimeout(context.Background(), lim.Wall+5*time.Minute)
	defer cancel()
	arch := l.arch(ctx)
	var lines bytes.Buffer
	size := int64(1 << 30)
	files := map[string][]byte{"judge.py": judgeScript, "nvcc_par.py": nvccParScript}
	for i, j := range jobs {
		dir := "jobs/" + strconv.Itoa(i)
		files[dir+"/reference.py"] = []byte(j.ref)
		files[dir+"/candidate.py"] = []byte(j.cand)
		for name, b := range j.built {
			files["build/"+j.key+"/"+name] = b
			size += int64(len(b))
		}
		b, _ := json.Marshal(map[string]any{"id": strconv.Itoa(i), "reference": dir + "/reference.py",
			"candidate": dir + "/candidate.py", "build_dir": "build/" + j.key,
			"timeout": max(j.lim.timeout, l.cfg.RunTimeout).Seconds(), "reference_timeout": max(j.lim.refTimeout, l.cfg.RunTimeout).Seconds()})
		lines.Write(append(b, '\n'))
	}
	files["jobs.jsonl"] = lines.Bytes()
	box, err := l.cfg.Sandbox.OpenSized(ctx, size, 1<<20)
	if err != nil {
		return fail(fmt.Errorf("torch2cuda judge: %w", err))
	}
	defer box.Close()
	if err := box.WriteTree(".", files); err != nil {
		return fail(fmt.Errorf("torch2cuda judge: %w", err))
	}
	argv := []string{py, "-I", "judge.py", "batch", "--jobs", "jobs.jsonl", "--out", "results.jsonl",
		"--trials", strconv.Itoa(l.cfg.Trials), "--seed", strconv.Itoa(l.cfg.Seed), "--tolerance", l.cfg.Tolerance,
		"--timeout", strconv.Itoa(int(l.cfg.RunTimeout / time.Second))}
	argv = append(argv, l.deviceArgs(gpu)...)
	onGPU := l.cfg.Device != "cpu"
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: judgeEnv(py, arch), GPU: onGPU, Limits: lim})
	if err != nil {
		return faulted(fail(fmt.Errorf("torch2cuda judge: %w", err)), "the judge did not run: "+err.Error())
	}
	raw, err := box.ReadFile("results.jsonl", int64(n)*maxJudgeJSON)
	if err != nil {
		raw = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), maxJudgeJSON)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(line, &id) != nil {
			continue
		}
		i, err := strconv.Atoi(id.ID)
		if err != nil || i < 0 || i >= n {
			continue
		}
		r, err := parseJudge(line)
		outs[i] = judgeOut{res: r, raw: line, err: err}
	}
	why := fmt.Sprintf("exit %d", res.ExitCode)
	if res.Killed != sandboxes.KillNone {
		why = "killed: " + string(res.Killed)
	}
	stderr := strings.TrimSpace(string(res.Stderr))
	return faulted(fail(fmt.Errorf("torch2cuda judge gave no result for this candidate (%s): %s", why, clip(stderr, 1500))),
		"the judge gave no result ("+why+"): "+clip(lastLine(stderr), 300))
}

// deviceArgs are judge.py's device flags for a batch on GPU gpu: the GPU
// named SlotsPerDevice times (that many evaluations at once on it, timing
// alone), or the CPU with as many at once.
func (l *Lane) deviceArgs(gpu int) []string {
	n := l.cfg.SlotsPerDevice
	var args []string
	if l.cfg.Device == "cpu" {
		args = []string{"--device", "cpu", "--parallel", strconv.Itoa(n)}
	} else {
		args = []string{"--devices", strings.Repeat(strconv.Itoa(gpu)+",", n-1) + strconv.Itoa(gpu)}
	}
	if n > 1 {
		args = append(args, "--exclusive-timing")
	}
	return args
}

// batchLimits bound a judge batch: each evaluation may take its reference
// stage's time and its own (evalLimits), and the host memory is what its
// problems need (times the evaluations that run at once, up to
// MaxJudgeRSS), at least judgeLimits' floor. The wall time stays the sum
// of the evaluations' times: with several at once, one may wait for
// another's timing.
func (l *Lane) batchLimits(jobs []*judgeJob) sandboxes.Limits {
	var each time.Duration
	var rss int64
	for _, j := range jobs {
		each += max(j.lim.timeout, l.cfg.RunTimeout) + max(j.lim.refTimeout, l.cfg.RunTimeout)
		rss = max(rss, j.lim.rss)
	}
	par := l.cfg.SlotsPerDevice
	lim := l.judgeLimits(1, par, each)
	lim.RSS = max(lim.RSS, min(rss*int64(par), max(rss, l.cfg.MaxJudgeRSS)))
	return lim
}

// faulted marks the outcomes without a result as the judge process's
// failure (judgeOut.fault).
func faulted(outs []judgeOut, why string) []judgeOut {
	for i := range outs {
		if outs[i].err != nil && outs[i].raw == nil {
			outs[i].fault = why
		}
	}
	return outs
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// judgeLimits bound a judge.py batch of n evaluations (or builds), par at
// a time, each within each.
func (l *Lane) judgeLimits(n, par int, each time.Duration) sandboxes.Limits {
	waves := (n + par - 1) / par
	wall := time.Duration(waves)*each + 2*time.Minute
	return sandboxes.Limits{Wall: wall, CPU: wall * time.Duration(2*par), Memory: 64 << 30, Procs: 1024 + 256*int64(par),
		FileSize: 1 << 30, OpenFiles: 4096, Output: 4 << 20, RSS: int64(min(16+6*par, 110)) << 30}
}
