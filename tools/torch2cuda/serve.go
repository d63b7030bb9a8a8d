package torch2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// One judge process per GPU slot for the whole campaign (issue 23, item 3).
// Before, every GPU batch started a sandboxed judge.py of its own, which
// imported torch and found its GPU again: seconds per batch, and batches are
// small when builds finish one by one. Now a slot's batches go to a
// long-lived "judge.py serve" in a box of its own: each evaluation is
// written into the box (its files, its built extension, then
// inbox/ID.json and an empty inbox/ID.ready), the process judges it as
// "batch" would (a fresh Landlock-confined child per evaluation) and writes
// outbox/ID.json when it is done. The batcher's batches, health probes and
// quarantine are unchanged: a batch whose process dies, is killed, or gives
// no result within the batch's bound is a fault as before, and that process
// is replaced. A server is also replaced when a batch needs a larger memory
// bound than it was started with, and when it is older than serverMaxAge;
// it ends by itself after serverIdleExit without work.
//
// Isolation is that of the batch process: candidate code runs only in the
// children, which may write only their own build folder and scratch, so no
// candidate can write another's result. The process now lives longer, so a
// child that escaped its confinement could reach more evaluations than one
// batch; Config.OneShotJudge brings the process per batch back.

const (
	serverIdleExit = 10 * time.Minute // judge.py serve --idle-exit
	serverMaxAge   = time.Hour        // replaced between batches after this
	serverWall     = 24 * time.Hour   // the process's own wall-clock bound
	serverPoll     = 100 * time.Millisecond
	serverScratch  = 3 << 30 // tmpfs bound of its box (in memory, holding only what is written: a batch's built extensions and the children's scratch)
)

// judgeServer is one "judge.py serve" process and its box.
type judgeServer struct {
	gpu    int
	rss    int64 // the memory bound it was started with
	box    *sandboxes.Box
	cancel context.CancelFunc
	ended  chan struct{} // closed when the process has ended; res and err are then set
	res    sandboxes.Result
	err    error
	seq    int
	born   time.Time
}

// servers holds the idle judge servers by GPU.
type servers struct {
	mu     sync.Mutex
	idle   map[int][]*judgeServer
	closed bool
}

func (s *judgeServer) alive() bool {
	select {
	case <-s.ended:
		return false
	default:
		return true
	}
}

// stop asks the process to end (inbox/stop), kills it if it has not within
// a few seconds, and closes its box.
func (s *judgeServer) stop() {
	if s.alive() {
		_ = s.box.WriteFile("inbox/stop", nil, 0o644)
		select {
		case <-s.ended:
		case <-time.After(10 * time.Second):
		}
	}
	s.kill()
}

// kill ends the process at once and closes its box.
func (s *judgeServer) kill() {
	s.cancel()
	<-s.ended
	_ = s.box.Close()
}

// why says how the process ended, with the end of its stderr.
func (s *judgeServer) why() string {
	switch {
	case s.res.Killed != sandboxes.KillNone:
		return "killed: " + string(s.res.Killed)
	case s.err != nil:
		return "the judge did not run: " + s.err.Error()
	}
	return fmt.Sprintf("exit %d", s.res.ExitCode)
}

// startServer starts a judge server for gpu whose process may hold rss
// bytes of memory.
func (l *Lane) startServer(gpu int, rss int64) (*judgeServer, error) {
	py, err := l.python()
	if err != nil {
		return nil, err
	}
	par := l.cfg.SlotsPerDevice
	lim := l.judgeLimits(1, par, serverWall)
	lim.Wall, lim.CPU, lim.RSS = serverWall, serverWall*time.Duration(2*par), max(lim.RSS, rss)
	argv := []string{py, "-I", "judge.py", "serve", "--inbox", "inbox", "--outbox", "outbox",
		"--idle-exit", strconv.Itoa(int(serverIdleExit / time.Second)),
		"--trials", strconv.Itoa(l.cfg.Trials), "--seed", strconv.Itoa(l.cfg.Seed), "--tolerance", l.cfg.Tolerance,
		"--timeout", strconv.Itoa(int(l.cfg.RunTimeout / time.Second))}
	argv = append(argv, l.deviceArgs(gpu)...)
	s, err := l.launch(serverScratch, "judge", sandboxes.Spec{Argv: argv, Env: judgeEnv(py, l.arch(context.Background())),
		GPU: l.cfg.Device != "cpu", Limits: lim})
	if err != nil {
		return nil, err
	}
	s.gpu = gpu
	return s, nil
}

// launch opens a box of scratch bytes with the judge's files in it and
// starts spec's long-lived process there (a judge or a build server).
func (l *Lane) launch(scratch int64, what string, spec sandboxes.Spec) (*judgeServer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	box, err := l.cfg.Sandbox.OpenSized(ctx, scratch, 1<<20)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("torch2cuda %s: %w", what, err)
	}
	if err := box.WriteTree(".", map[string][]byte{"judge.py": judgeScript, "nvcc_par.py": nvccParScript}); err != nil {
		cancel()
		_ = box.Close()
		return nil, fmt.Errorf("torch2cuda %s: %w", what, err)
	}
	s := &judgeServer{rss: spec.Limits.RSS, box: box, cancel: cancel, ended: make(chan struct{}), born: time.Now()}
	go func() {
		s.res, s.err = box.Run(ctx, spec)
		close(s.ended)
	}()
	return s, nil
}

// takeServer gives an idle server for gpu that is alive, young enough and
// started with at least rss of memory, or starts one. Servers that are not
// are stopped.
func (l *Lane) takeServer(gpu int, rss int64) (*judgeServer, error) {
	p := &l.servers
	p.mu.Lock()
	var stale []*judgeServer
	var s *judgeServer
	for len(p.idle[gpu]) > 0 && s == nil {
		c := p.idle[gpu][len(p.idle[gpu])-1]
		p.idle[gpu] = p.idle[gpu][:len(p.idle[gpu])-1]
		if c.alive() && c.rss >= rss && time.Since(c.born) < serverMaxAge {
			s = c
		} else {
			stale = append(stale, c)
		}
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.stop()
	}
	if s != nil {
		return s, nil
	}
	return l.startServer(gpu, rss)
}

// putServer keeps a healthy server for the next batch on its GPU.
func (l *Lane) putServer(s *judgeServer) {
	p := &l.servers
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.stop()
		return
	}
	if p.idle == nil {
		p.idle = map[int][]*judgeServer{}
	}
	p.idle[s.gpu] = append(p.idle[s.gpu], s)
	p.mu.Unlock()
}

// stopServers ends every idle server (Lane.Close); servers busy with a
// batch stop when it ends.
func (l *Lane) stopServers() {
	p := &l.servers
	p.mu.Lock()
	var all []*judgeServer
	for _, ss := range p.idle {
		all = append(all, ss...)
	}
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
}

// runServed judges jobs on gpu with a judge server: runBatch's contract.
func (l *Lane) runServed(jobs []*judgeJob, gpu int) []judgeOut {
	outs := make([]judgeOut, len(jobs))
	lim := l.batchLimits(jobs)
	s, err := l.takeServer(gpu, lim.RSS)
	if err != nil {
		for i := range outs {
			outs[i] = judgeOut{err: err, fault: "the judge did not start: " + err.Error()}
		}
		return outs
	}
	ok := l.serveBatch(s, jobs, lim.Wall+time.Minute, outs)
	if ok {
		l.putServer(s)
	} else {
		s.kill()
	}
	return outs
}

// serveBatch hands jobs to s and fills outs with their results. It reports
// whether s is fit for more: false when the process ended, or a result did
// not come within bound (then the outcomes without a result are faults).
func (l *Lane) serveBatch(s *judgeServer, jobs []*judgeJob, bound time.Duration, outs []judgeOut) bool {
	ids := make([]string, len(jobs))
	files := map[string][]byte{}
	for i, j := range jobs {
		s.seq++
		ids[i] = strconv.Itoa(s.seq)
		dir := "jobs/" + ids[i]
		files[dir+"/reference.py"] = []byte(j.ref)
		files[dir+"/candidate.py"] = []byte(j.cand)
		for name, b := range j.built {
			files["build/"+j.key+"/"+name] = b
		}
	}
	defer func() {
		for i, j := range jobs {
			_ = s.box.RemoveAll("jobs/" + ids[i])
			_ = s.box.RemoveAll("build/" + j.key)
			_ = s.box.RemoveAll("outbox/" + ids[i] + ".json")
		}
	}()
	fail := func(why string, err error) bool {
		for i := range outs {
			if outs[i].raw == nil && outs[i].err == nil {
				outs[i] = judgeOut{err: err, fault: why}
			}
		}
		return false
	}
	if err := s.box.WriteTree(".", files); err != nil {
		return fail("the judge's box: "+err.Error(), fmt.Errorf("torch2cuda judge: %w", err))
	}
	for i, j := range jobs {
		b, _ := json.Marshal(map[string]any{"reference": "jobs/" + ids[i] + "/reference.py",
			"candidate": "jobs/" + ids[i] + "/candidate.py", "build_dir": "build/" + j.key,
			"timeout": max(j.lim.timeout, l.cfg.RunTimeout).Seconds(), "reference_timeout": max(j.lim.refTimeout, l.cfg.RunTimeout).Seconds()})
		if err := s.box.WriteTree("inbox", map[string][]byte{ids[i] + ".json": b}); err != nil {
			return fail("the judge's box: "+err.Error(), fmt.Errorf("torch2cuda judge: %w", err))
		}
		if err := s.box.WriteFile("inbox/"+ids[i]+".ready", nil, 0o644); err != nil {
			return fail("the judge's box: "+err.Error(), fmt.Errorf("torch2cuda judge: %w", err))
		}
	}
	deadline := time.Now().Add(bound)
	left, lastLook := len(jobs), false
	for left > 0 {
		for i := range jobs {
			if outs[i].raw != nil {
				continue
			}
			raw, err := s.box.ReadFile("outbox/"+ids[i]+".json", maxJudgeJSON)
			if err != nil {
				if !errors.Is(err, os.ErrNotExist) {
					outs[i] = judgeOut{raw: []byte{}, err: fmt.Errorf("torch2cuda judge: result: %w", err)}
					left--
				}
				continue
			}
			r, err := parseJudge(raw)
			outs[i] = judgeOut{res: r, raw: raw, err: err}
			left--
		}
		if left == 0 {
			break
		}
		if !s.alive() {
			if lastLook {
				break
			}
			lastLook = true // it may have written results as it ended: one more look
			continue
		}
		if time.Now().After(deadline) {
			s.cancel()
			<-s.ended
			return fail(fmt.Sprintf("the judge gave no result within %s", bound.Round(time.Second)),
				fmt.Errorf("torch2cuda judge gave no result for this candidate within %s", bound.Round(time.Second)))
		}
		time.Sleep(serverPoll)
	}
	if left == 0 {
		return s.alive()
	}
	stderr := strings.TrimSpace(string(s.res.Stderr))
	why := s.why()
	return fail("the judge gave no result ("+why+"): "+clip(lastLine(stderr), 300),
		fmt.Errorf("torch2cuda judge gave no result for this candidate (%s): %s", why, clip(stderr, 1500)))
}
