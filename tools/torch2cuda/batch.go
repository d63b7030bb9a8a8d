package torch2cuda

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
)

// The GPU judge runs in batches: evaluations that arrive together (a
// rescore of many pending verdicts, a busy campaign) share one sandboxed
// judge.py process per GPU slot, which imports torch once and forks a
// fresh, Landlock-confined child per evaluation (judge/README.md). Before
// the GPU phase, the batch's extensions are built on the CPU cores in
// parallel ("batch --compile-only"), each job in a build folder of its
// own; the built extensions are kept in the lane's cache folder by
// candidate content, torch version and GPU architecture, so a candidate is
// compiled once, whatever host-side retries or rescores follow.

// batchWindow is how long a batch waits for more evaluations to join.
const batchWindow = 200 * time.Millisecond

type judgeJob struct {
	ref, cand string
	done      chan judgeOut // buffered: the runner never blocks on it
}

type judgeOut struct {
	res judgeResult
	raw []byte
	err error
}

// batcher queues evaluations and runs them in batches, at most GPUSlots
// batches at a time. Its runner goroutines end when the queue is empty.
type batcher struct {
	l       *Lane
	mu      sync.Mutex
	queue   []*judgeJob
	running int
}

// judge evaluates one candidate (see batcher); an error means the judge
// could not run, not that the answer failed.
func (l *Lane) judge(ctx context.Context, ref, cand string) (judgeResult, []byte, error) {
	j := &judgeJob{ref: ref, cand: cand, done: make(chan judgeOut, 1)}
	l.batches.submit(j)
	select {
	case out := <-j.done:
		return out.res, out.raw, out.err
	case <-ctx.Done():
		return judgeResult{}, nil, ctx.Err()
	}
}

func (b *batcher) submit(j *judgeJob) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, j)
	if b.running < b.l.cfg.GPUSlots {
		b.running++
		go b.run()
	}
}

// run takes batches off the queue until it is empty.
func (b *batcher) run() {
	for {
		time.Sleep(batchWindow)
		b.mu.Lock()
		n := min(len(b.queue), b.l.cfg.MaxBatch)
		if n == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		jobs := append([]*judgeJob(nil), b.queue[:n]...)
		b.queue = b.queue[n:]
		b.mu.Unlock()
		outs := b.l.runBatch(jobs)
		for i, j := range jobs {
			j.done <- outs[i]
		}
	}
}

// cacheKey names a candidate's built extensions in the lane's cache.
func (l *Lane) cacheKey(cand, arch string) string {
	t, _ := l.cfg.Toolchains.Get(toolchain.Torch)
	h := sha256.New()
	for _, part := range []string{"torch2cuda-build-v1", string(judgeScript), t.Version, arch, l.cfg.Device, cand} {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
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

// runBatch judges jobs in one sandbox: the compile phase on the CPU cores,
// then the GPU phase; one result per job.
func (l *Lane) runBatch(jobs []*judgeJob) []judgeOut {
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(n+1)*(l.cfg.Timeout+l.cfg.RunTimeout)+5*time.Minute)
	defer cancel()
	arch := l.arch(ctx)
	// Building an extension writes hundreds of megabytes of intermediates.
	box, err := l.cfg.Sandbox.OpenSized(ctx, int64(1+min(n, l.cfg.CompileParallel))<<30, 1<<20)
	if err != nil {
		return fail(fmt.Errorf("torch2cuda judge: %w", err))
	}
	defer box.Close()
	var lines bytes.Buffer
	keys := make([]string, n)
	uncached := 0
	files := map[string][]byte{"judge.py": judgeScript}
	for i, j := range jobs {
		keys[i] = l.cacheKey(j.cand, arch)
		dir := "jobs/" + strconv.Itoa(i)
		files[dir+"/reference.py"] = []byte(j.ref)
		files[dir+"/candidate.py"] = []byte(j.cand)
		if cached := l.loadCached(keys[i]); cached != nil {
			for name, b := range cached {
				files["build/"+keys[i]+"/"+name] = b
			}
		} else {
			uncached++
		}
		b, _ := json.Marshal(map[string]string{"id": strconv.Itoa(i), "reference": dir + "/reference.py",
			"candidate": dir + "/candidate.py", "build_dir": "build/" + keys[i]})
		lines.Write(append(b, '\n'))
	}
	files["jobs.jsonl"] = lines.Bytes()
	if err := box.WriteTree(".", files); err != nil {
		return fail(fmt.Errorf("torch2cuda judge: %w", err))
	}
	// The python's own folder first: a virtualenv's ninja lives there.
	env := []string{"XDG_CACHE_HOME=.cache", "PYTHONDONTWRITEBYTECODE=1", "MAX_JOBS=2",
		"PATH=" + filepath.Dir(py) + ":/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin"}
	if arch != "" {
		env = append(env, "TORCH_CUDA_ARCH_LIST="+arch)
	}
	timeout := strconv.Itoa(int(l.cfg.Timeout / time.Second))
	runTimeout := strconv.Itoa(int(l.cfg.RunTimeout / time.Second))
	if uncached > 0 {
		par := min(uncached, l.cfg.CompileParallel)
		argv := []string{py, "-I", "judge.py", "batch", "--jobs", "jobs.jsonl", "--out", "compiled.jsonl", "--compile-only",
			"--parallel", strconv.Itoa(par), "--timeout", timeout}
		if arch != "" {
			argv = append(argv, "--arch", arch)
		}
		res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: env, Limits: l.judgeLimits(n, par, l.cfg.Timeout)})
		if err != nil {
			return fail(fmt.Errorf("torch2cuda compile: %w", err))
		}
		if !res.OK() {
			l.cfg.Logger.Warn("torch2cuda compile phase", "exit", res.ExitCode, "killed", res.Killed, "stderr", clip(string(res.Stderr), 500))
		}
		for i := range jobs {
			built, err := box.ReadTree("build/"+keys[i], maxCachedBuild, 10000)
			if err != nil {
				continue
			}
			kept := map[string][]byte{}
			for name, b := range built {
				if keptFile(name) {
					kept[name] = b
				}
			}
			l.storeCached(keys[i], kept)
		}
	}
	argv := []string{py, "-I", "judge.py", "batch", "--jobs", "jobs.jsonl", "--out", "results.jsonl",
		"--trials", strconv.Itoa(l.cfg.Trials), "--seed", strconv.Itoa(l.cfg.Seed), "--tolerance", l.cfg.Tolerance, "--timeout", runTimeout}
	gpu := l.cfg.Device != "cpu"
	if !gpu {
		argv = append(argv, "--device", "cpu")
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: env, GPU: gpu, Limits: l.judgeLimits(n, 1, l.cfg.RunTimeout)})
	if err != nil {
		return fail(fmt.Errorf("torch2cuda judge: %w", err))
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
	return fail(fmt.Errorf("torch2cuda judge gave no result for this candidate (%s): %s", why,
		clip(strings.TrimSpace(string(res.Stderr)), 1500)))
}

// judgeLimits bound a judge.py batch of n evaluations (or builds), par at
// a time, each within each.
func (l *Lane) judgeLimits(n, par int, each time.Duration) sandboxes.Limits {
	waves := (n + par - 1) / par
	wall := time.Duration(waves)*each + 2*time.Minute
	return sandboxes.Limits{Wall: wall, CPU: wall * time.Duration(2*par), Memory: 64 << 30, Procs: 1024 + 256*int64(par),
		FileSize: 1 << 30, OpenFiles: 4096, Output: 4 << 20, RSS: int64(min(16+6*par, 110)) << 30}
}
