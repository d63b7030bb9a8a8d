package torch2cuda

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// The problem check. Before a problem's first candidate is judged (and,
// through tools.TaskChecker, before any model is asked to solve it), the
// lane runs "judge.py check" on the problem alone: it loads, its
// reference builds, its inputs are drawn, the reference runs twice on the
// same inputs and agrees with itself, and a few runs are timed. The result
// is kept in the cache folder by the problem's content, the judge's
// content, the check's settings and the device (torch version and GPU
// model), so each problem is checked once per host kind. A problem that
// fails its check is a task fault (tools.ClassReferenceError), never an
// answer's failure; the check's figures set the evaluation's time and
// memory limits (evalLimits).

// StageCheck is the stage of a verdict given by the problem check alone
// (the problem failed it; no candidate was judged).
const StageCheck = "problem-check"

// ArtifactCheck is the problem check's JSON, kept with a task-fault verdict.
const ArtifactCheck = "check.json"

// checkVersion names the check's procedure and its cached JSON; bump it
// when what the Go side reads of a check changes.
const checkVersion = "torch2cuda-check-v1"

// ProblemCheck is judge.py check's result for one problem (judge/README.md).
type ProblemCheck struct {
	ID string `json:"id,omitempty"`
	// OK: the reference ran twice on the same inputs and agreed with
	// itself. Else Reason says why not: timeout, oom, crash,
	// nondeterministic or invalid (the problem does not load).
	OK         bool   `json:"ok"`
	Reason     string `json:"reason,omitempty"`
	Diagnostic string `json:"diagnostic,omitempty"`
	// JudgeError: the check itself failed (not the problem).
	JudgeError bool `json:"judge_error,omitempty"`
	// RefMS is the median forward time (CUDA events on a GPU), WallMS its
	// synchronised wall time; InitMS builds the reference, DrawMS draws one
	// input set (synchronised).
	RefMS  *float64 `json:"ref_ms"`
	WallMS *float64 `json:"wall_ms"`
	InitMS *float64 `json:"init_ms"`
	DrawMS *float64 `json:"draw_ms"`
	// InputDraw is where get_inputs drew ("device" or "cpu"); DrawNote why a
	// GPU draw fell back to the CPU.
	InputDraw string `json:"input_draw,omitempty"`
	DrawNote  string `json:"draw_note,omitempty"`
	// PeakBytes is torch.cuda.max_memory_allocated over building the
	// reference, drawing the inputs and one forward (nil on the CPU);
	// HostRSSPeakBytes the check process's peak resident memory, the
	// judge's own torch included (nil where it cannot be reset per problem,
	// as in the sandbox), HostRSSBytes its resident memory right after the
	// first forward.
	PeakBytes         *int64 `json:"peak_bytes"`
	HostRSSPeakBytes  *int64 `json:"host_rss_peak_bytes"`
	HostRSSBytes      *int64 `json:"host_rss_bytes"`
	DeviceMemoryBytes *int64 `json:"device_memory_bytes"`
	InputBytes        *int64 `json:"input_bytes"`
	OutputBytes       *int64 `json:"output_bytes"`
	// Inputs and Outputs are their signatures (shapes, dtypes, and for
	// outputs float64 sum, min, max).
	Inputs               []json.RawMessage `json:"inputs,omitempty"`
	Outputs              []json.RawMessage `json:"outputs,omitempty"`
	BitwiseDeterministic *bool             `json:"bitwise_deterministic"`
	// ReturnsInput lists the outputs that are one of the inputs ("out[0]
	// = input 1": the same tensor, or equal values of the same shape and
	// dtype); the screen of synthesised problems rejects them.
	ReturnsInput []string `json:"returns_input,omitempty"`
	TimingDevice string   `json:"timing_device,omitempty"`
	Env          struct {
		Torch  string `json:"torch"`
		CUDA   string `json:"cuda"`
		Device string `json:"device"`
	} `json:"env"`
	// Cached is set when the result came from the cache.
	Cached bool `json:"cached,omitempty"`
}

// Cost is what one use of the reference costs, in ms: a forward plus an
// input draw (0 when unmeasured).
func (c ProblemCheck) Cost() float64 { return val(c.RefMS) + val(c.DrawMS) }

// checkPending says why this host cannot check problems ("" when it can):
// the check runs where the judge does.
func (l *Lane) checkPending() string { return l.cannotJudge() }

// deviceKind names the device a check's figures hold for.
func (l *Lane) deviceKind() string {
	t, _ := l.cfg.Toolchains.Get(toolchain.Torch)
	dev := "cpu"
	if l.cfg.Device != "cpu" {
		dev = "gpu"
		if g := l.cfg.Toolchains.GPU(); len(g.Names) > 0 {
			dev = g.Names[0]
		}
	}
	return dev + "|torch " + t.Version
}

// checkKey names a problem's check in the cache.
func (l *Lane) checkKey(ref string) string {
	return l.checkKeyOn(ref, l.deviceKind(), l.cfg.CheckTimeout)
}

// checkKeyOn names a problem's check on device (deviceKind's form) with
// timeout in the cache.
func (l *Lane) checkKeyOn(ref, device string, timeout time.Duration) string {
	js := sha256.Sum256(judgeScript)
	h := sha256.New()
	for _, part := range []string{checkVersion, hex.EncodeToString(js[:]), device, strconv.Itoa(l.cfg.Seed), l.cfg.Tolerance,
		timeout.String(), ref} {
		fmt.Fprintf(h, "%d:%s\x00", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (l *Lane) checkPath(key string) string {
	if l.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(l.cfg.CacheDir, "checks", key+".json")
}

func (l *Lane) loadCheck(key string) (ProblemCheck, bool) {
	p := l.checkPath(key)
	if p == "" {
		return ProblemCheck{}, false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ProblemCheck{}, false
	}
	var c ProblemCheck
	if json.Unmarshal(b, &c) != nil {
		return ProblemCheck{}, false
	}
	c.Cached = true
	return c, true
}

// storeCheck keeps a check (temp file, then rename).
func (l *Lane) storeCheck(key string, c ProblemCheck) {
	p := l.checkPath(key)
	if p == "" {
		return
	}
	c.Cached, c.ID = false, ""
	b, err := json.Marshal(c)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(p), 0o755)
	}
	if err == nil {
		var f *os.File
		if f, err = os.CreateTemp(filepath.Dir(p), ".tmp-"); err == nil {
			_, err = f.Write(b)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(f.Name(), p)
			}
			os.Remove(f.Name())
		}
	}
	if err != nil {
		l.cfg.Logger.Warn("torch2cuda check cache", "err", err)
	}
}

// CheckProblems checks problems (their reference sources), from the cache
// or in one judge process on GPU 0 (the CPU with Device "cpu"); results
// in the order given. A check that the judge could not make (judge_error),
// or a failed check on a GPU that then fails its health probe, is an
// error, and is not cached. The host must be able to judge (checkPending).
func (l *Lane) CheckProblems(ctx context.Context, refs []string) ([]ProblemCheck, error) {
	if why := l.checkPending(); why != "" {
		return nil, fmt.Errorf("torch2cuda check: cannot check problems here: %s", why)
	}
	out := make([]ProblemCheck, len(refs))
	keys := make([]string, len(refs))
	var todo []int
	seen := map[string]bool{}
	for i, ref := range refs {
		keys[i] = l.checkKey(ref)
		if c, ok := l.loadCheck(keys[i]); ok {
			out[i] = c
			continue
		}
		if !seen[keys[i]] {
			seen[keys[i]] = true
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		srcs := make([]string, len(todo))
		for k, i := range todo {
			srcs[k] = refs[i]
		}
		got, err := l.checkRun(ctx, srcs)
		if err != nil {
			return nil, err
		}
		if err := l.vetChecks(ctx, got); err != nil {
			return nil, err
		}
		fresh := map[string]ProblemCheck{}
		for k, i := range todo {
			fresh[keys[i]] = got[k]
			l.storeCheck(keys[i], got[k])
		}
		for i := range refs {
			if c, ok := fresh[keys[i]]; ok && !out[i].Cached {
				out[i] = c
			}
		}
	}
	return out, nil
}

// vetChecks refuses checks the judge could not make, and failed checks on
// a GPU that fails its health probe (the GPU's fault, not the problem's).
func (l *Lane) vetChecks(ctx context.Context, cs []ProblemCheck) error {
	failed := false
	for _, c := range cs {
		if c.JudgeError {
			return fmt.Errorf("torch2cuda check: the judge failed: %s", clip(c.Diagnostic, 1500))
		}
		failed = failed || !c.OK
	}
	if failed && l.cfg.Device != "cpu" {
		if err := l.batches.probeOnce(0); err != nil {
			return fmt.Errorf("torch2cuda check: a problem failed its check and GPU 0 then failed its health probe "+
				"(the GPU's fault, not the problem's): %w", err)
		}
	}
	return nil
}

// checkOne is a problem's check, cached. Checks not in the cache wait in
// the lane's check queue, which runs them a few at a time in one judge
// process each (checkQueue).
func (l *Lane) checkOne(ctx context.Context, ref string) (ProblemCheck, error) {
	key := l.checkKey(ref)
	if c, ok := l.loadCheck(key); ok {
		return c, nil
	}
	call := l.checkq.join(l, key, ref)
	select {
	case <-call.done:
		return call.c, call.err
	case <-ctx.Done():
		return ProblemCheck{}, ctx.Err()
	}
}

// The check queue (issue 23). Each check process imports torch and opens
// a CUDA context on GPU 0, which costs more than checking a problem; a
// campaign completed on a GPU host (rescore --pending) asks for the checks
// of all its new problems in its first second, which was one process per
// problem, all at once, beside the first builds. The queue gathers the
// checks asked for at once and runs them at most checksPerRun to a
// process, at most checkRuns processes at a time.
var (
	checksPerRun = 8
	checkRuns    = 2
	checkGather  = 50 * time.Millisecond // how long a run waits for the rest of a burst
)

type checkQueue struct {
	mu      sync.Mutex
	calls   map[string]*checkCall // queued or running, by check key
	queue   []*checkCall
	running int
}

type checkCall struct {
	key, ref string
	done     chan struct{}
	c        ProblemCheck
	err      error
}

// join returns the call of key's check, queued (and a run started) if
// there is none.
func (q *checkQueue) join(l *Lane, key, ref string) *checkCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.calls[key]; c != nil {
		return c
	}
	if q.calls == nil {
		q.calls = map[string]*checkCall{}
	}
	c := &checkCall{key: key, ref: ref, done: make(chan struct{})}
	q.calls[key] = c
	q.queue = append(q.queue, c)
	if q.running < checkRuns {
		q.running++
		go q.run(l)
	}
	return c
}

// run takes calls off the queue until it is empty.
func (q *checkQueue) run(l *Lane) {
	for {
		time.Sleep(checkGather)
		q.mu.Lock()
		n := min(len(q.queue), checksPerRun)
		if n == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		calls := q.queue[:n:n]
		q.queue = q.queue[n:]
		q.mu.Unlock()
		l.runCheckCalls(calls)
		q.mu.Lock()
		for _, c := range calls {
			delete(q.calls, c.key)
		}
		q.mu.Unlock()
		for _, c := range calls {
			close(c.done)
		}
	}
}

// runCheckCalls checks the calls' problems in one run. When that run
// fails (a judge error, a GPU that fails its probe), each problem is
// checked again alone, so that the error is the failing problem's only.
// The run is no caller's: one caller giving up does not stop it.
func (l *Lane) runCheckCalls(calls []*checkCall) {
	ctx := context.Background()
	refs := make([]string, len(calls))
	for i, c := range calls {
		refs[i] = c.ref
	}
	cs, err := l.CheckProblems(ctx, refs)
	if err == nil {
		for i, c := range calls {
			c.c = cs[i]
		}
		return
	}
	if len(calls) == 1 {
		calls[0].err = err
		return
	}
	for _, c := range calls {
		one, err := l.CheckProblems(ctx, []string{c.ref})
		if err != nil {
			c.err = err
			continue
		}
		c.c = one[0]
	}
}

// CheckTask implements tools.TaskChecker: a problem that fails its check
// gives a task-fault verdict; on a host that cannot judge, the check waits
// for the judge (the zero verdict: the task goes on).
func (l *Lane) CheckTask(ctx context.Context, item tools.Item) (tools.Verdict, error) {
	ref := item.Files[ReferenceFile]
	if strings.TrimSpace(ref) == "" || l.checkPending() != "" {
		return tools.Verdict{}, nil
	}
	c, err := l.checkOne(ctx, ref)
	if err != nil || c.OK {
		return tools.Verdict{}, err
	}
	return l.checkVerdict(c), nil
}

// checkVerdict is the task-fault verdict of a failed check.
func (l *Lane) checkVerdict(c ProblemCheck) tools.Verdict {
	raw, _ := json.Marshal(c)
	diag := c.Diagnostic
	if c.Reason == "oom" {
		diag += fmt.Sprintf("\n(limits: the judge's host memory %d GiB", l.cfg.MaxJudgeRSS>>30)
		if c.DeviceMemoryBytes != nil {
			diag += fmt.Sprintf(", the GPU's memory %.1f GiB", float64(*c.DeviceMemoryBytes)/(1<<30))
		}
		diag += ")"
	}
	return tools.Verdict{Stage: StageCheck, Class: tools.ClassReferenceError,
		Diagnostic:   clip(refErrorDiag(c.Reason, diag), 4000),
		Stages:       []tools.Stage{{Name: StageCheck, Detail: firstLine(refErrorDiag(c.Reason, diag))}},
		Measurements: map[string]float64{}, Artifacts: map[string][]byte{ArtifactCheck: raw}}
}

// refErrorDiag is a task fault's diagnostic: it names the reason first.
func refErrorDiag(reason, diag string) string {
	if reason == "" {
		reason = "crash"
	}
	prefix := "reference_error (" + reason + "): "
	if strings.HasPrefix(diag, prefix) {
		return diag
	}
	return prefix + diag
}

// runChecks runs "judge.py check" over problems in one sandbox; one
// result per problem, in order.
func (l *Lane) runChecks(ctx context.Context, refs []string) ([]ProblemCheck, error) {
	// The check measures the problem: kiln's floor must not decide.
	return l.runChecksOn(ctx, refs, l.cfg.Device == "cpu", l.cfg.CheckTimeout, l.cfg.MaxJudgeRSS)
}

// runChecksOn is runChecks on the CPU (cpu) or GPU 0, with timeout per
// problem and the judge's host memory bounded by rss.
func (l *Lane) runChecksOn(ctx context.Context, refs []string, cpu bool, timeout time.Duration, rss int64) ([]ProblemCheck, error) {
	py, err := l.python()
	if err != nil {
		return nil, err
	}
	n := len(refs)
	lim := l.judgeLimits(n, 1, timeout)
	lim.RSS = rss
	ctx, cancel := context.WithTimeout(ctx, lim.Wall+time.Minute)
	defer cancel()
	files := map[string][]byte{"judge.py": judgeScript}
	var lines bytes.Buffer
	for i, ref := range refs {
		p := "problems/" + strconv.Itoa(i) + ".py"
		files[p] = []byte(ref)
		b, _ := json.Marshal(map[string]string{"id": strconv.Itoa(i), "reference": p})
		lines.Write(append(b, '\n'))
	}
	files["checks.jsonl"] = lines.Bytes()
	box, err := l.cfg.Sandbox.OpenSized(ctx, 1<<30, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("torch2cuda check: %w", err)
	}
	defer box.Close()
	if err := box.WriteTree(".", files); err != nil {
		return nil, fmt.Errorf("torch2cuda check: %w", err)
	}
	argv := []string{py, "-I", "judge.py", "check", "--problems", "checks.jsonl", "--out", "checked.jsonl",
		"--timeout", strconv.Itoa(int(timeout / time.Second)), "--seed", strconv.Itoa(l.cfg.Seed),
		"--tolerance", l.cfg.Tolerance}
	onGPU := !cpu
	if onGPU {
		argv = append(argv, "--devices", "0")
	} else {
		argv = append(argv, "--device", "cpu")
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Env: judgeEnv(py, ""), GPU: onGPU, Limits: lim})
	if err != nil {
		return nil, fmt.Errorf("torch2cuda check: %w", err)
	}
	raw, _ := box.ReadFile("checked.jsonl", int64(n)*maxJudgeJSON)
	out, got := parseChecks(raw, n)
	if got < n {
		return nil, fmt.Errorf("torch2cuda check: the judge checked %d of %d problems (%s): %s", got, n, res.Describe(),
			clip(strings.TrimSpace(string(res.Stderr)), 1500))
	}
	return out, nil
}

// parseChecks reads judge.py check's results by id (0..n-1); got counts
// the ids found.
func parseChecks(raw []byte, n int) (out []ProblemCheck, got int) {
	out = make([]ProblemCheck, n)
	have := make([]bool, n)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), maxJudgeJSON)
	for sc.Scan() {
		var c ProblemCheck
		if json.Unmarshal(sc.Bytes(), &c) != nil {
			continue
		}
		i, err := strconv.Atoi(c.ID)
		if err != nil || i < 0 || i >= n || have[i] {
			continue
		}
		c.ID = ""
		out[i], have[i] = c, true
		got++
	}
	return out, got
}

// evalLimits are one evaluation's limits, set from its problem's check:
// the candidate's stages get max(RunTimeout, RunTimeoutScale × the
// reference's cost), at most MaxRunTimeout, and the reference stage before
// them as much again plus twice the time the check took to build the
// reference; the judge's host memory is RSSScale times the check's peak
// resident memory (its resident memory after a forward where the peak is
// unknown), raised to the batch's floor (judgeLimits), at most MaxJudgeRSS.
type evalLimits struct {
	timeout, refTimeout time.Duration
	rss                 int64
}

func (l *Lane) evalLimits(c ProblemCheck) evalLimits {
	t := time.Duration(l.cfg.RunTimeoutScale * c.Cost() * float64(time.Millisecond))
	t = min(max(t, l.cfg.RunTimeout), l.cfg.MaxRunTimeout).Round(time.Second)
	ref := t + (2 * time.Duration(val(c.InitMS)*float64(time.Millisecond))).Round(time.Second)
	var rss int64
	if host := cmp.Or(c.HostRSSPeakBytes, c.HostRSSBytes); host != nil {
		rss = min(int64(l.cfg.RSSScale*float64(*host)), l.cfg.MaxJudgeRSS)
	}
	return evalLimits{timeout: t, refTimeout: ref, rss: rss}
}
