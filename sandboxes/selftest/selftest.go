// Package selftest attacks a sandboxes.Runner with hostile programs and
// reports, case by case, whether the sandbox held: infinite loops, pause(),
// fork bombs, memory hogs, disk and inode fillers, output floods, network
// attempts (TCP and UDP, loopback included), writes outside the scratch,
// secret reading (a planted file, /etc/shadow, the host's /etc/passwd, the
// caller's environment, other processes' /proc), symlinks planted for the
// host to follow, orphans (double fork, setsid), compile-time inclusion
// (.incbin, #include of a secret), compile bombs (macro explosion, a huge
// .fill), ptrace/mount/unshare/bpf/... attempts, x32 syscalls and signals
// to the trampoline.
//
// Every program is compiled with gcc inside the sandbox (compiling
// untrusted code is as dangerous as running it). After each case the suite
// checks that no process of the box is left, that nothing was written
// outside the scratch (a world-writable canary directory, the host paths
// attacked) and that no secret appears in any output. It needs gcc and as
// in the sandbox's view; [MeasureOverhead] gives the per-run cost.
//
//	results := selftest.Run(ctx, runner, selftest.Options{EnvSecret: v})
//	for _, c := range results { fmt.Println(c) }
package selftest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

// Options tune a Run.
type Options struct {
	// EnvSecret is a value the caller has placed in its own environment
	// (any variable): no run may be able to print it. Empty skips that
	// check (the other secrets are planted by the suite itself).
	EnvSecret string
	// SecretDir is where the suite plants its secret file and canary
	// directory (outside the sandbox scratch). Default os.TempDir().
	SecretDir string
	// Parallel bounds the cases run at once. Default 2.
	Parallel int
	// Only runs the named cases (all when empty); see Cases.
	Only []string
	// Logger receives one record per case; nil discards.
	Logger *slog.Logger
}

// CaseResult is the verdict on one case.
type CaseResult struct {
	Name string `json:"name"`
	// Pass: the sandbox held. Skipped: the case needs a layer this Runner
	// does not have (its policy is lowered), so it was not attempted.
	Pass    bool `json:"pass"`
	Skipped bool `json:"skipped,omitempty"`
	// Detail says what happened (and why it failed).
	Detail  string            `json:"detail"`
	Outcome sandboxes.Outcome `json:"outcome,omitempty"`
	Wall    time.Duration     `json:"wall"`
}

func (c CaseResult) String() string {
	status := "FAIL"
	switch {
	case c.Skipped:
		status = "SKIP"
	case c.Pass:
		status = "ok"
	}
	return fmt.Sprintf("%-4s %-22s %6s  %s", status, c.Name, c.Wall.Round(time.Millisecond), c.Detail)
}

// Summary counts passed, failed and skipped cases.
func Summary(results []CaseResult) (passed, failed, skipped int) {
	for _, r := range results {
		switch {
		case r.Skipped:
			skipped++
		case r.Pass:
			passed++
		default:
			failed++
		}
	}
	return
}

// Cases lists the case names in the order Run reports them.
func Cases() []string {
	var out []string
	for _, c := range hostileCases() {
		out = append(out, c.name)
	}
	return out
}

// env is what every case may use: the planted secrets, host listeners.
type env struct {
	runner     *sandboxes.Runner
	caps       sandboxes.Capabilities
	dir        string // the planted directory (outside any scratch)
	secret     string // content of secretFile
	secretFile string
	canary     string // world-writable directory that must stay empty
	envSecret  string
	hostLines  []string // lines of the host's /etc/passwd
	tcp        net.Listener
	udp        net.PacketConn
	accepted   chan struct{}
}

// Run runs the cases against r and returns one result per case, in
// Cases() order. It fails a case, never the whole run, on sandbox errors.
func Run(ctx context.Context, r *sandboxes.Runner, opts Options) []CaseResult {
	if opts.Parallel <= 0 {
		opts.Parallel = 2
	}
	if opts.SecretDir == "" {
		opts.SecretDir = os.TempDir()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cases := hostileCases()
	if len(opts.Only) > 0 {
		cases = slices.DeleteFunc(cases, func(c hostileCase) bool { return !slices.Contains(opts.Only, c.name) })
	}
	results := make([]CaseResult, len(cases))
	e, cleanup, err := newEnv(r, opts)
	if err != nil {
		for i, c := range cases {
			results[i] = CaseResult{Name: c.name, Detail: "suite setup: " + err.Error()}
		}
		return results
	}
	defer cleanup()
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = CaseResult{Name: c.name, Detail: "canceled"}
				return
			}
			defer func() { <-sem }()
			results[i] = e.runCase(ctx, c)
			log.Info("sandbox selftest case", "case", c.name, "pass", results[i].Pass,
				"skipped", results[i].Skipped, "detail", results[i].Detail)
		}()
	}
	wg.Wait()
	return results
}

func newEnv(r *sandboxes.Runner, opts Options) (*env, func(), error) {
	dir, err := os.MkdirTemp(opts.SecretDir, "kiln-selftest-")
	if err != nil {
		return nil, nil, err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, nil, err
	}
	e := &env{
		runner:     r,
		caps:       r.Capabilities(),
		dir:        dir,
		secret:     "KILN-SELFTEST-SECRET-" + hex.EncodeToString(rnd[:]),
		secretFile: filepath.Join(dir, "secret.txt"),
		canary:     filepath.Join(dir, "canary"),
		envSecret:  opts.EnvSecret,
		accepted:   make(chan struct{}, 16),
	}
	cleanup := func() {
		if e.tcp != nil {
			e.tcp.Close()
		}
		if e.udp != nil {
			e.udp.Close()
		}
		os.RemoveAll(dir)
	}
	// World-readable and world-writable: only the sandbox stands between
	// the box and these.
	err = errors.Join(
		os.Chmod(dir, 0o755),
		os.WriteFile(e.secretFile, []byte(e.secret+"\n"), 0o644),
		os.Chmod(e.secretFile, 0o644),
		os.Mkdir(e.canary, 0o777),
		os.Chmod(e.canary, 0o777),
	)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Count(l, ":") >= 6 {
				e.hostLines = append(e.hostLines, l)
			}
		}
	}
	if e.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		cleanup()
		return nil, nil, err
	}
	if e.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		cleanup()
		return nil, nil, err
	}
	go func() {
		for {
			c, err := e.tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case e.accepted <- struct{}{}:
			default:
			}
		}
	}()
	return e, cleanup, nil
}

// secrets are the strings no output may hold.
func (e *env) secrets() []string {
	s := []string{e.secret}
	if e.envSecret != "" {
		s = append(s, e.envSecret)
	}
	return s
}

// leak returns a description of the first secret found in data.
func (e *env) leak(data []byte) string {
	for _, s := range e.secrets() {
		if bytes.Contains(data, []byte(s)) {
			return "a planted secret"
		}
	}
	for _, l := range e.hostLines {
		if bytes.Contains(data, []byte(l)) {
			return fmt.Sprintf("host /etc/passwd line %q", l)
		}
	}
	return ""
}

// leftProcesses lists live processes of the box: its uid (when the box has
// one of its own) or a working directory inside its scratch.
func leftProcesses(box *sandboxes.Box, uidOwn bool) []string {
	ents, _ := os.ReadDir("/proc")
	want := "\nUid:\t" + strconv.FormatUint(uint64(box.UID()), 10) + "\t"
	var out []string
	for _, d := range ents {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		p := filepath.Join("/proc", d.Name())
		if cwd, err := os.Readlink(filepath.Join(p, "cwd")); err == nil &&
			(cwd == box.Dir() || strings.HasPrefix(cwd, box.Dir()+"/")) {
			out = append(out, d.Name())
			continue
		}
		if uidOwn {
			if b, err := os.ReadFile(filepath.Join(p, "status")); err == nil && strings.Contains(string(b), want) {
				out = append(out, d.Name())
			}
		}
	}
	return out
}

// writtenOutside reports files the box left outside its scratch: in the
// canary, at the host paths attacked, or owned by its uid in the usual
// world-writable places.
func (e *env) writtenOutside(box *sandboxes.Box, uidOwn bool, attacked []string) []string {
	var out []string
	if ents, _ := os.ReadDir(e.canary); len(ents) > 0 {
		for _, d := range ents {
			out = append(out, filepath.Join(e.canary, d.Name()))
		}
	}
	for _, p := range attacked {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	if b, err := os.ReadFile(e.secretFile); err != nil || string(b) != e.secret+"\n" {
		out = append(out, e.secretFile+" (modified)")
	}
	if uidOwn {
		for _, dir := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
			ents, _ := os.ReadDir(dir)
			for _, d := range ents {
				fi, err := d.Info()
				if err != nil {
					continue
				}
				if ownerOf(fi) == box.UID() {
					out = append(out, filepath.Join(dir, d.Name()))
				}
			}
		}
	}
	return out
}

// active reports whether layer l is in force.
func (e *env) active(l sandboxes.Layer) bool { return e.caps.Layer(l).Active }

func (e *env) runCase(ctx context.Context, c hostileCase) CaseResult {
	res := CaseResult{Name: c.name}
	for _, l := range c.needs {
		if !e.active(l) {
			res.Skipped = true
			res.Detail = fmt.Sprintf("needs layer %s (%s)", l, e.caps.Layer(l).Detail)
			return res
		}
	}
	start := time.Now()
	box, err := e.runner.Open(ctx)
	if err != nil {
		res.Detail = "open box: " + err.Error()
		return res
	}
	defer box.Close()
	uidOwn := e.active(sandboxes.LayerUID)
	t := &trial{env: e, box: box, ctx: ctx}
	verdict := c.run(t)
	res.Wall = time.Since(start)
	res.Outcome = t.lastOutcome
	var problems []string
	if verdict != nil {
		problems = append(problems, verdict.Error())
	}
	if left := leftProcesses(box, uidOwn); len(left) > 0 {
		problems = append(problems, fmt.Sprintf("processes left: %v", left))
	}
	if w := e.writtenOutside(box, uidOwn, t.attacked); len(w) > 0 {
		problems = append(problems, fmt.Sprintf("written outside the scratch: %v", w))
	}
	for _, o := range t.outputs {
		if l := e.leak(o); l != "" {
			problems = append(problems, "output shows "+l)
			break
		}
	}
	if c.maxWall > 0 && res.Wall > c.maxWall {
		problems = append(problems, fmt.Sprintf("took %s, limit %s", res.Wall.Round(time.Millisecond), c.maxWall))
	}
	if len(problems) > 0 {
		res.Detail = strings.Join(problems, "; ")
		return res
	}
	res.Pass = true
	res.Detail = t.note
	return res
}

// trial is one case's run: helpers to compile and run, and what to check.
type trial struct {
	env         *env
	box         *sandboxes.Box
	ctx         context.Context
	outputs     [][]byte // every output and file read back, checked for secrets
	attacked    []string // host paths that must not exist afterwards
	note        string
	lastOutcome sandboxes.Outcome
}

// buildLimits bound the compile steps of the cases.
var buildLimits = sandboxes.Limits{Wall: 30 * time.Second, CPU: 30 * time.Second, Memory: 2 << 30}

// run runs spec and records its output.
func (t *trial) run(spec sandboxes.Spec) (sandboxes.Result, error) {
	res, err := t.box.Run(t.ctx, spec)
	t.outputs = append(t.outputs, res.Stdout, res.Stderr)
	t.lastOutcome = res.Outcome()
	return res, err
}

// compile writes src as name and builds it with argv (in the box).
func (t *trial) compile(name, src string, argv ...string) (sandboxes.Result, error) {
	if err := t.box.WriteFile(name, []byte(src), 0o644); err != nil {
		return sandboxes.Result{}, err
	}
	return t.run(sandboxes.Spec{Argv: argv, Limits: buildLimits})
}

// buildC compiles a C program to ./prog and fails unless that works.
func (t *trial) buildC(src string) error {
	res, err := t.compile("main.c", src, "gcc", "-O1", "-w", "-o", "prog", "main.c")
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if !res.OK() {
		return fmt.Errorf("compile: %s: %s", res.Describe(), clip(res.Stderr))
	}
	return nil
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// udpReceived returns a datagram the host UDP listener got, or "".
func (e *env) udpReceived() string {
	_ = e.udp.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	buf := make([]byte, 64)
	n, _, err := e.udp.ReadFrom(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// scratchBytes is the size of the regular files under dir (links not
// followed).
func scratchBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
