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

// Build servers (issue 23: "keeping compiler processes warm"). A build
// used to be a sandboxed judge.py of its own, which started Python and
// imported torch before it built anything: about 7 s of a core per
// candidate on the GPU host, beside a 20-30 s build. Now each compile slot
// hands its builds to a long-lived "judge.py serve --compile-only" in a box
// of its own, exactly as a GPU slot hands its evaluations to a judge server
// (serve.go): the candidate's files go into the box, then inbox/ID.json and
// inbox/ID.ready; the process forks a fresh, Landlock-confined child that
// builds it as "batch --compile-only" would (the child may write only that
// build's folder), and writes outbox/ID.json when it is done. The lane then
// reads the build folder's kept files and removes the build's files from the
// box. A server whose process has ended, or that does not answer within the
// build's bound, is killed and the next build starts another. A server
// sees the precompiled headers' folder from its start, empty until the
// lane has made a header (pch.go), and each build reads what it holds.
// Config.OneShotJudge brings back a process per build.
//
// Isolation is that of the judge servers: candidate code (its module and
// the extension's import) runs only in the children, confined to their
// build folder; the process lives longer, so a child that escaped its
// confinement could reach later builds of the same slot.

// buildServer is one "judge.py serve --compile-only" and its box; pch is
// the precompiled headers' folder it was started with ("" for none).
type buildServer struct {
	*judgeServer
	pch string
}

// builders holds the idle build servers.
type builders struct {
	mu     sync.Mutex
	idle   []*buildServer
	closed bool
}

// startBuilder starts a build server that sees the precompiled headers in
// pch ("" for none).
func (l *Lane) startBuilder(py, arch, pch string) (*buildServer, error) {
	argv := []string{py, "-I", "judge.py", "serve", "--compile-only", "--inbox", "inbox", "--outbox", "outbox",
		"--idle-exit", strconv.Itoa(int(serverIdleExit / time.Second)), "--parallel", "1",
		"--timeout", strconv.Itoa(int(l.cfg.Timeout / time.Second)), "--nice", strconv.Itoa(buildNice)}
	if arch != "" {
		argv = append(argv, "--arch", arch)
	}
	var ro []string
	if pch != "" {
		argv = append(argv, "--pch-root", pch)
		ro = []string{pch}
	}
	lim := l.judgeLimits(1, 1, serverWall)
	lim.Wall, lim.CPU = serverWall, serverWall*2
	// building an extension writes hundreds of megabytes of intermediates
	s, err := l.launch(2<<30, "compile", sandboxes.Spec{Argv: argv, Env: judgeEnv(py, arch), Limits: lim, ReadOnly: ro})
	if err != nil {
		return nil, err
	}
	return &buildServer{judgeServer: s, pch: pch}, nil
}

// takeBuilder gives an idle build server that is alive, young enough and
// sees pch, or starts one; the others are stopped.
func (l *Lane) takeBuilder(py, arch, pch string) (*buildServer, error) {
	p := &l.builders
	p.mu.Lock()
	var stale []*buildServer
	var s *buildServer
	for len(p.idle) > 0 && s == nil {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if c.alive() && c.pch == pch && time.Since(c.born) < serverMaxAge {
			s = c
		} else {
			stale = append(stale, c)
		}
	}
	p.mu.Unlock()
	for _, c := range stale {
		go c.stop() // not on the build's path: stopping waits for the process
	}
	if s != nil {
		return s, nil
	}
	return l.startBuilder(py, arch, pch)
}

// putBuilder keeps a healthy build server for the next build.
func (l *Lane) putBuilder(s *buildServer) {
	p := &l.builders
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.stop()
		return
	}
	p.idle = append(p.idle, s)
	p.mu.Unlock()
}

// stopBuilders ends every idle build server (Lane.Close); busy ones stop
// when their build ends.
func (l *Lane) stopBuilders() {
	p := &l.builders
	p.mu.Lock()
	all := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, s := range all {
		s.stop()
	}
}

// compileServed builds one candidate's extensions on a build server:
// compile's contract (the build folder's kept files; none when the build
// left no record).
func (l *Lane) compileServed(ctx context.Context, py, ref, cand, arch string) (map[string][]byte, error) {
	s, err := l.takeBuilder(py, arch, l.pchRoot(py, arch))
	if err != nil {
		return nil, err
	}
	s.seq++
	id := strconv.Itoa(s.seq)
	dir, build := "jobs/"+id, "build/"+id
	fit := false
	defer func() {
		_ = s.box.RemoveAll(dir)
		_ = s.box.RemoveAll(build)
		_ = s.box.RemoveAll("outbox/" + id + ".json")
		if fit && s.alive() {
			l.putBuilder(s)
		} else {
			s.kill()
		}
	}()
	job, _ := json.Marshal(map[string]any{"reference": dir + "/reference.py", "candidate": dir + "/candidate.py",
		"build_dir": build, "timeout": l.cfg.Timeout.Seconds()})
	if err := s.box.WriteTree(".", map[string][]byte{dir + "/reference.py": []byte(ref), dir + "/candidate.py": []byte(cand),
		"inbox/" + id + ".json": job}); err != nil {
		return nil, fmt.Errorf("torch2cuda compile: %w", err)
	}
	if err := s.box.WriteFile("inbox/"+id+".ready", nil, 0o644); err != nil {
		return nil, fmt.Errorf("torch2cuda compile: %w", err)
	}
	// the process bounds the build by Timeout itself; this bounds the process
	bound := l.cfg.Timeout + 5*time.Minute
	deadline := time.Now().Add(bound)
	lastLook := false
	for {
		_, err := s.box.ReadFile("outbox/"+id+".json", maxJudgeJSON)
		if err == nil {
			fit = true
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("torch2cuda compile: result: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !s.alive() {
			if lastLook {
				l.cfg.Logger.Warn("torch2cuda compile: the build server ended", "why", s.why(),
					"stderr", clip(strings.TrimSpace(string(s.res.Stderr)), 500))
				break
			}
			lastLook = true // it may have written the result as it ended: one more look
			continue
		}
		if time.Now().After(deadline) {
			l.cfg.Logger.Warn("torch2cuda compile: the build server gave no result in time", "bound", time.Until(deadline))
			break
		}
		time.Sleep(serverPoll)
	}
	return readKept(s.box, build), nil
}
