package sandboxes

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Shared by the tests: one runner (one uid range) and helper binaries.
var (
	testRoot   string
	testBins   string
	testRunner *Runner
)

// weak lets the tests run on a host lacking some layer (the tests of the
// missing layers skip themselves); CI runs strict.
var (
	weak         = flag.Bool("sandbox.weak", false, "allow missing isolation layers")
	cgParentFlag = flag.String("sandbox.cgroup-parent", "", "Config.CgroupParent for the tests")
)

func TestMain(m *testing.M) {
	MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "kiln-sandboxes-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testRoot = filepath.Join(dir, "boxes")
	testBins = filepath.Join(dir, "bin")
	if err := os.Mkdir(testBins, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := buildHelpers(testBins); err != nil {
		fmt.Fprintln(os.Stderr, "build helpers:", err)
		return 1
	}
	cfg := testConfig(2_100_000_000)
	cfg.AllowWeakIsolation = *weak
	cfg.CgroupParent = *cgParentFlag
	testRunner, err = New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "new runner:", err)
		return 1
	}
	code := m.Run()
	if err := testRunner.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close runner:", err)
		return 1
	}
	if code == 0 {
		if left := leftovers(); left != "" {
			fmt.Fprintln(os.Stderr, "left behind:", left)
			return 1
		}
	}
	return code
}

// testConfig is the tests' runner config: helper binaries visible
// read-only, a small scratch.
func testConfig(uidBase uint32) Config {
	return Config{ScratchRoot: testRoot, UIDBase: uidBase, ReadOnlyPaths: []string{testBins},
		ScratchSize: 32 << 20, ScratchInodes: 2000, CgroupParent: *cgParentFlag}
}

// leftovers reports mounts and cgroups of the test runners still there.
func leftovers() string {
	var out []string
	for _, m := range mountPoints() {
		if within(testRoot, m) {
			out = append(out, "mount "+m)
		}
	}
	if ents, _ := os.ReadDir(testRoot); len(ents) > 0 {
		out = append(out, fmt.Sprintf("%d scratch dirs", len(ents)))
	}
	return strings.Join(out, ", ")
}

// helperSources are small C programs the tests run in boxes.
var helperSources = map[string]string{
	// allocate and touch argv[1] MiB; exit 3 if malloc fails.
	"alloc": `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int c, char **v) { size_t n = (size_t)atol(v[1]) << 20; char *p = malloc(n);
if (!p) { puts("alloc failed"); return 3; } memset(p, 1, n); printf("allocated %d\n", p[n / 2] + p[n - 1]); return 0; }`,
	// fork spinners forever; report the first failed fork.
	"forkbomb": `#include <stdio.h>
#include <unistd.h>
int main(void) { int said = 0; for (;;) { pid_t p = fork(); if (p == 0) for (;;) ;
if (p < 0 && !said) { said = 1; fputs("fork failed\n", stderr); } } }`,
	// connect to 127.0.0.1:argv[1]; print the errno name.
	"connect": `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <arpa/inet.h>
#include <sys/socket.h>
int main(int c, char **v) { int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {0};
a.sin_family = AF_INET; a.sin_port = htons(atoi(v[1])); a.sin_addr.s_addr = htonl(0x7f000001);
if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) { puts("connected"); return 0; }
printf("connect failed: %s\n", strerror(errno)); return 1; }`,
}

func buildHelpers(dir string) error {
	for name, src := range helperSources {
		cfile := filepath.Join(dir, name+".c")
		if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
			return err
		}
		out, err := exec.Command("gcc", "-O1", "-o", filepath.Join(dir, name), cfile).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", name, err, out)
		}
	}
	return nil
}

func openBox(t *testing.T) *Box {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := testRunner.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// procsOfUID lists live processes whose real uid is uid.
func procsOfUID(uid uint32) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	want := "Uid:\t" + strconv.FormatUint(uint64(uid), 10) + "\t"
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), want) {
			name, _, _ := strings.Cut(string(b), "\n")
			out = append(out, e.Name()+" "+name)
		}
	}
	return out
}

// procsInDir lists live processes whose working directory is dir.
func procsInDir(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			out = append(out, e.Name())
		}
	}
	return out
}

// assertNoProcs checks that nothing started in b is alive: by working
// directory always, and by uid when boxes have uids of their own (root).
func assertNoProcs(t *testing.T, b *Box) {
	t.Helper()
	if left := procsInDir(b.Dir()); len(left) > 0 {
		t.Fatalf("processes in box dir left: %v", left)
	}
	if os.Geteuid() != 0 {
		return // every box shares the caller's uid
	}
	if left := procsOfUID(b.uid); len(left) > 0 {
		t.Fatalf("processes of box uid %d left: %v", b.uid, left)
	}
}

func run(t *testing.T, b *Box, spec Spec) Result {
	t.Helper()
	res, err := b.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("run %v: %v", spec.Argv, err)
	}
	return res
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	c := testRunner.Capabilities()
	if os.Geteuid() != 0 {
		t.Skip("layers differ when not root")
	}
	if !c.UIDDrop || c.Network || c.TreeKill != "pid-namespace" || !c.NoNewPrivs || c.Policy != "strict" {
		t.Fatalf("capabilities: %+v", c)
	}
	if len(c.Layers) != len(Layers()) {
		t.Errorf("layers %v", c.Layers)
	}
	for _, l := range c.Layers {
		if !l.Active || l.Detail == "" {
			t.Errorf("layer %s: active=%v %q", l.Layer, l.Active, l.Detail)
		}
	}
	if !strings.Contains(c.String(), "policy=strict") {
		t.Errorf("String() = %s", c.String())
	}
	for _, ns := range []string{"pid", "net", "ipc", "uts", "mount"} {
		if !strings.Contains(strings.Join(c.Namespaces, ","), ns) {
			t.Errorf("namespace %s missing: %v", ns, c.Namespaces)
		}
	}
	for _, rl := range []string{"cpu", "as", "nproc", "fsize", "nofile", "core"} {
		if !strings.Contains(strings.Join(c.Rlimits, ","), rl) {
			t.Errorf("rlimit %s missing: %v", rl, c.Rlimits)
		}
	}
}

func TestRunBasics(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	tests := []struct {
		name      string
		spec      Spec
		code      int
		stdout    string
		stderrHas string
	}{
		{"hello", Spec{Argv: []string{"echo", "hello", "world"}}, 0, "hello world\n", ""},
		{"exit code", Spec{Argv: []string{"sh", "-c", "echo oops >&2; exit 3"}}, 3, "", "oops"},
		{"stdin", Spec{Argv: []string{"cat"}, Stdin: []byte("in\n")}, 0, "in\n", ""},
		{"env is minimal", Spec{Argv: []string{"sh", "-c", "env | sort | tr '\\n' ' '"}, Env: []string{"X=1"}},
			0, "HOME=" + b.Dir() + " LC_ALL=C PATH=/usr/local/bin:/usr/bin:/bin PWD=" + b.Dir() + " TMPDIR=" + b.Dir() + " X=1 ", ""},
		{"uid", Spec{Argv: []string{"sh", "-c", "id -u; pwd; hostname"}}, 0, "", ""},
	}
	for _, tt := range tests {
		res := run(t, b, tt.spec)
		if res.ExitCode != tt.code || res.Signal != 0 || res.Killed != KillNone {
			t.Errorf("%s: %s, want exit %d (stderr %q)", tt.name, res.Describe(), tt.code, res.Stderr)
		}
		if tt.stdout != "" && string(res.Stdout) != tt.stdout {
			t.Errorf("%s: stdout %q, want %q", tt.name, res.Stdout, tt.stdout)
		}
		if !strings.Contains(string(res.Stderr), tt.stderrHas) {
			t.Errorf("%s: stderr %q lacks %q", tt.name, res.Stderr, tt.stderrHas)
		}
		if tt.name == "uid" && os.Geteuid() == 0 {
			want := fmt.Sprintf("%d\n%s\n", b.uid, b.Dir())
			if !strings.HasPrefix(string(res.Stdout), want) {
				t.Errorf("uid: got %q, want prefix %q", res.Stdout, want)
			}
		}
		if res.Wall <= 0 || res.CPU <= 0 {
			t.Errorf("%s: wall %v cpu %v", tt.name, res.Wall, res.CPU)
		}
	}
}

func TestExecError(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	_, err := b.Run(context.Background(), Spec{Argv: []string{"no-such-command-kiln"}})
	if !errors.Is(err, ErrExec) {
		t.Fatalf("err = %v, want ErrExec", err)
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    Spec
		killed  KillReason
		outcome Outcome
		maxWall time.Duration
		check   func(t *testing.T, r Result)
	}{
		{
			name:    "infinite loop times out",
			spec:    Spec{Argv: []string{"sh", "-c", "while :; do :; done"}, Limits: Limits{Wall: 300 * time.Millisecond}},
			killed:  KillTimeout,
			outcome: OutcomeTimeout,
			maxWall: 2 * time.Second,
		},
		{
			name:    "cpu burner hits RLIMIT_CPU",
			spec:    Spec{Argv: []string{"sh", "-c", "while :; do :; done"}, Limits: Limits{Wall: 20 * time.Second, CPU: time.Second}},
			killed:  KillCPU,
			outcome: OutcomeResourceLimit,
			maxWall: 10 * time.Second,
			check: func(t *testing.T, r Result) {
				if r.Signal != syscall.SIGXCPU || r.CPU < 500*time.Millisecond { // rusage is tick-sampled
					t.Errorf("signal %v cpu %v", r.Signal, r.CPU)
				}
			},
		},
		{
			name:    "file size limit",
			spec:    Spec{Argv: []string{"dd", "if=/dev/zero", "of=big", "bs=1M", "count=4"}, Limits: Limits{FileSize: 1 << 20}},
			killed:  KillFileSize,
			outcome: OutcomeResourceLimit,
			maxWall: 5 * time.Second,
		},
		{
			name:    "output cap kills",
			spec:    Spec{Argv: []string{"yes"}, Limits: Limits{Output: 1000}, KillOnOutputCap: true},
			killed:  KillOutput,
			outcome: OutcomeResourceLimit,
			maxWall: 5 * time.Second,
			check: func(t *testing.T, r Result) {
				if len(r.Stdout) != 1000 || !r.StdoutTruncated || string(r.Stdout[:4]) != "y\ny\n" {
					t.Errorf("stdout %d bytes truncated=%v", len(r.Stdout), r.StdoutTruncated)
				}
			},
		},
		{
			name:    "output cap discards",
			spec:    Spec{Argv: []string{"head", "-c", "300000", "/dev/zero"}, Limits: Limits{Output: 1000}},
			killed:  KillNone,
			outcome: OutcomeExited,
			maxWall: 5 * time.Second,
			check: func(t *testing.T, r Result) {
				if len(r.Stdout) != 1000 || !r.StdoutTruncated || r.ExitCode != 0 {
					t.Errorf("stdout %d bytes truncated=%v exit %d", len(r.Stdout), r.StdoutTruncated, r.ExitCode)
				}
			},
		},
		{
			name:    "memory limit fails allocation",
			spec:    Spec{Argv: []string{filepath.Join(testBins, "alloc"), "512"}, Limits: Limits{Memory: 128 << 20}},
			killed:  KillNone,
			outcome: OutcomeExited,
			maxWall: 5 * time.Second,
			check: func(t *testing.T, r Result) {
				if r.ExitCode != 3 {
					t.Errorf("alloc under RLIMIT_AS: %s, stdout %q", r.Describe(), r.Stdout)
				}
			},
		},
		{
			name:    "memory limit off",
			spec:    Spec{Argv: []string{filepath.Join(testBins, "alloc"), "64"}, Limits: Limits{Memory: NoLimit}},
			killed:  KillNone,
			outcome: OutcomeExited,
			maxWall: 5 * time.Second,
			check: func(t *testing.T, r Result) {
				if r.ExitCode != 0 || r.MaxRSS < 64<<20 {
					t.Errorf("alloc without limit: %s, maxrss %d", r.Describe(), r.MaxRSS)
				}
			},
		},
		{
			name:    "segfault is a crash",
			spec:    Spec{Argv: []string{"sh", "-c", "kill -SEGV $$"}},
			killed:  KillNone,
			outcome: OutcomeCrashed,
			maxWall: 5 * time.Second,
			check: func(t *testing.T, r Result) {
				if r.Signal != syscall.SIGSEGV || !strings.Contains(r.Describe(), "SIGSEGV") {
					t.Errorf("got %s", r.Describe())
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := openBox(t)
			res := run(t, b, tt.spec)
			if res.Killed != tt.killed || res.Outcome() != tt.outcome {
				t.Errorf("killed=%q outcome=%q (%s), want %q %q", res.Killed, res.Outcome(), res.Describe(), tt.killed, tt.outcome)
			}
			if res.Wall > tt.maxWall {
				t.Errorf("wall %v > %v", res.Wall, tt.maxWall)
			}
			if tt.check != nil {
				tt.check(t, res)
			}
			assertNoProcs(t, b)
		})
	}
}

func TestForkBombContained(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	start := time.Now()
	res := run(t, b, Spec{
		// Forks spinners forever; forks beyond RLIMIT_NPROC fail with
		// EAGAIN and it retries until the wall clock ends it.
		Argv:   []string{filepath.Join(testBins, "forkbomb")},
		Limits: Limits{Wall: time.Second, Procs: 32},
	})
	if res.Killed != KillTimeout {
		t.Errorf("fork bomb: %s", res.Describe())
	}
	if !strings.Contains(string(res.Stderr), "fork failed") {
		t.Errorf("fork bomb never hit RLIMIT_NPROC; stderr %q", clip(string(res.Stderr), 200))
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("fork bomb took %v to clean up", time.Since(start))
	}
	assertNoProcs(t, b)
}

func TestOrphansKilled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		killed KillReason
	}{
		{"after exit", `setsid sh -c 'sleep 60' & (sleep 60 &) ; sleep 0.2; echo done`, KillNone},
		{"after timeout", `setsid sh -c 'sleep 60' & sleep 60`, KillTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := openBox(t)
			start := time.Now()
			res := run(t, b, Spec{Argv: []string{"sh", "-c", tt.script}, Limits: Limits{Wall: time.Second}})
			if res.Killed != tt.killed {
				t.Errorf("%s", res.Describe())
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			assertNoProcs(t, b)
		})
	}
}

func TestCancelKillsTree(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := b.Run(ctx, Spec{Argv: []string{"sh", "-c", "sleep 60 & setsid sleep 60 & sleep 60"}})
	if !errors.Is(err, context.Canceled) || res.Killed != KillCanceled {
		t.Fatalf("err %v killed %q", err, res.Killed)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
	assertNoProcs(t, b)
}

func TestNoNetwork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// Sanity: the helper does connect outside a box.
	if out, err := exec.Command(filepath.Join(testBins, "connect"), port).CombinedOutput(); err != nil {
		t.Fatalf("helper outside box: %v %s", err, out)
	}
	<-accepted
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{filepath.Join(testBins, "connect"), port}})
	if res.ExitCode != 1 || !strings.Contains(string(res.Stdout), "connect failed") {
		t.Fatalf("inside box: %s, stdout %q", res.Describe(), res.Stdout)
	}
	select {
	case <-accepted:
		t.Fatal("listener accepted a connection from inside the box")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestReadBackRefusesLinks(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{"sh", "-c",
		"ln -s /etc/passwd abs && ln -s ../../../../etc/passwd rel && mkfifo fifo && mkdir d && echo ok > real"}})
	if !res.OK() {
		t.Fatalf("setup: %s %s", res.Describe(), res.Stderr)
	}
	for _, name := range []string{"abs", "rel", "fifo", "d"} {
		data, err := b.ReadFile(name, 1<<20)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrNotRegular", name, data, err)
		}
	}
	for _, name := range []string{"/etc/passwd", "../x", ""} {
		if _, err := b.ReadFile(name, 1<<20); !errors.Is(err, ErrBadName) {
			t.Errorf("ReadFile(%q): %v, want ErrBadName", name, err)
		}
	}
	if data, err := b.ReadFile("real", 1<<20); err != nil || string(data) != "ok\n" {
		t.Errorf("ReadFile(real) = %q, %v", data, err)
	}
	if _, err := b.ReadFile("real", 2); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile cap: %v", err)
	}
}

func TestWriteFileReplacesPlantedLink(t *testing.T) {
	t.Parallel()
	victim := filepath.Join(filepath.Dir(testRoot), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o666); err != nil {
		t.Fatal(err)
	}
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{"ln", "-s", victim, "input.c"}})
	if !res.OK() {
		t.Fatalf("ln: %s %s", res.Describe(), res.Stderr)
	}
	if err := b.WriteFile("input.c", []byte("int x;"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious" {
		t.Fatalf("victim overwritten: %q", got)
	}
	res = run(t, b, Spec{Argv: []string{"cat", "input.c"}})
	if string(res.Stdout) != "int x;" {
		t.Fatalf("box sees %q", res.Stdout)
	}
}

func TestBoxesAreSeparate(t *testing.T) {
	t.Parallel()
	b1, b2 := openBox(t), openBox(t)
	if b1.Dir() == b2.Dir() || (os.Geteuid() == 0 && b1.uid == b2.uid) {
		t.Fatalf("boxes share dir or uid: %s %s %d %d", b1.Dir(), b2.Dir(), b1.uid, b2.uid)
	}
	if err := b1.WriteFile("secret", []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := run(t, b2, Spec{Argv: []string{"cat", filepath.Join(b1.Dir(), "secret")}})
	if os.Geteuid() == 0 && (res.OK() || bytes.Contains(res.Stdout, []byte("s"))) {
		t.Fatalf("box 2 read box 1's file: %s %q", res.Describe(), res.Stdout)
	}
	dir := b1.Dir()
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("box dir not removed: %v", err)
	}
	if _, err := b1.Run(context.Background(), Spec{Argv: []string{"true"}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("run after close: %v", err)
	}
}

func TestOpenWaitsForFreeBox(t *testing.T) {
	t.Parallel()
	cfg := testConfig(2_100_100_000)
	cfg.MaxBoxes = 1
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := r.Open(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second open: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := r.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b2.Close()
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ok", Config{ScratchRoot: "/tmp/x"}, true},
		{"no root", Config{}, false},
		{"relative root", Config{ScratchRoot: "x"}, false},
		{"system uid", Config{ScratchRoot: "/tmp/x", UIDBase: 10}, false},
		{"bad limit", Config{ScratchRoot: "/tmp/x", Defaults: Limits{Wall: -5}}, false},
		{"no limit", Config{ScratchRoot: "/tmp/x", Defaults: Limits{Memory: NoLimit}}, true},
		{"scratch in the view", Config{ScratchRoot: "/usr/local/kiln"}, false},
		{"scratch under a read-only path", Config{ScratchRoot: "/opt/t/boxes", ReadOnlyPaths: []string{"/opt/t"}}, false},
		{"read-only path relative", Config{ScratchRoot: "/tmp/x", ReadOnlyPaths: []string{"opt"}}, false},
		{"read-only path ok", Config{ScratchRoot: "/tmp/x", ReadOnlyPaths: []string{"/opt/cuda"}}, true},
		{"negative scratch", Config{ScratchRoot: "/tmp/x", ScratchSize: -2}, false},
		{"disable ns strict", Config{ScratchRoot: "/tmp/x", DisableNamespaces: true}, false},
		{"disable ns weak", Config{ScratchRoot: "/tmp/x", DisableNamespaces: true, AllowWeakIsolation: true}, true},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v", tt.name, err)
		}
	}
}

// TestWithoutNamespaces exercises the fallback: subreaper instead of a pid
// namespace, no network isolation.
func TestWithoutNamespaces(t *testing.T) {
	t.Parallel()
	cfg := testConfig(2_100_110_000)
	cfg.MaxBoxes = 4
	cfg.DisableNamespaces = true
	if _, err := New(cfg); err == nil {
		t.Fatal("DisableNamespaces without lowering the policy was accepted")
	}
	cfg.AllowMissing = []Layer{LayerNamespaces, LayerFilesystem}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := r.Capabilities()
	if len(c.Namespaces) != 0 || !c.Network || c.TreeKill != "subreaper+cgroup" ||
		c.Policy != "lowered(without namespaces,filesystem)" {
		t.Fatalf("capabilities %+v", c)
	}
	if c.Layer(LayerNamespaces).Active || c.Layer(LayerFilesystem).Active || !c.Layer(LayerLandlock).Active {
		t.Fatalf("layers %+v", c.Layers)
	}
	b, err := r.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tests := []struct {
		name   string
		spec   Spec
		killed KillReason
	}{
		{"hello", Spec{Argv: []string{"echo", "hi"}}, KillNone},
		{"orphans after exit", Spec{Argv: []string{"sh", "-c", `setsid sh -c 'sleep 60' & (sleep 60 &); sleep 0.2`}}, KillNone},
		{"timeout", Spec{Argv: []string{"sh", "-c", "sleep 60 & sleep 60"}, Limits: Limits{Wall: 300 * time.Millisecond}}, KillTimeout},
		{"cpu", Spec{Argv: []string{"sh", "-c", "while :; do :; done"}, Limits: Limits{CPU: time.Second}}, KillCPU},
		// Without the view, Landlock still limits reads to the system paths.
		{"landlock hides /etc/passwd", Spec{Argv: []string{"sh", "-c", "cat /etc/passwd && exit 0; exit 7"}}, KillNone},
	}
	for _, tt := range tests {
		res := run(t, b, tt.spec)
		if strings.HasPrefix(tt.name, "landlock") {
			if res.ExitCode != 7 || len(res.Stdout) > 0 {
				t.Errorf("%s: %s, stdout %q", tt.name, res.Describe(), clip(string(res.Stdout), 100))
			}
			continue
		}
		if res.Killed != tt.killed || (tt.killed == KillNone && !res.OK()) {
			t.Errorf("%s: %s", tt.name, res.Describe())
		}
		if left := procsInDir(b.Dir()); len(left) > 0 {
			t.Errorf("%s: processes left: %v", tt.name, left)
		}
	}
}

// TestTrees: a tree written into a box comes back out as written, what the
// box adds comes out too, links it plants are skipped (never followed),
// and the caps hold.
func TestTrees(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(filepath.Dir(testRoot), "tree-secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openBox(t)
	in := map[string][]byte{"a.txt": []byte("a"), "sub/b.bin": {0, 1, 2}, "sub/deeper/c": []byte("c")}
	if err := b.WriteTree("build", in); err != nil {
		t.Fatal(err)
	}
	res := run(t, b, Spec{Argv: []string{"sh", "-c", "cat build/sub/deeper/c && echo new > build/sub/new && ln -s " + secret + " build/link && ln -s /etc build/dirlink"}})
	if !res.OK() || string(res.Stdout) != "c" {
		t.Fatalf("box: %s %q %s", res.Describe(), res.Stdout, res.Stderr)
	}
	out, err := b.ReadTree("build", 1<<20, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "a", "sub/b.bin": "\x00\x01\x02", "sub/deeper/c": "c", "sub/new": "new\n"}
	if len(out) != len(want) {
		t.Errorf("read back %d files: %v", len(out), out)
	}
	for k, v := range want {
		if string(out[k]) != v {
			t.Errorf("%s: %q, want %q", k, out[k], v)
		}
	}
	if _, err := b.ReadTree("build", 3, 100); !errors.Is(err, ErrTreeTooLarge) {
		t.Errorf("byte cap: %v", err)
	}
	if _, err := b.ReadTree("build", 1<<20, 2); !errors.Is(err, ErrTreeTooLarge) {
		t.Errorf("file cap: %v", err)
	}
	if got, err := b.ReadTree("missing", 1<<20, 10); err != nil || len(got) != 0 {
		t.Errorf("missing dir: %v %v", got, err)
	}
	if err := b.WriteTree("../escape", in); !errors.Is(err, ErrBadName) {
		t.Errorf("write outside the box: %v", err)
	}
}

// TestSpecEnvOverrides: Spec.Env replaces the minimal environment's
// entries of the same key (PATH, HOME) instead of doubling them.
func TestSpecEnvOverrides(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{"/usr/bin/env"}, Env: []string{"PATH=/opt/x/bin:/usr/bin:/bin", "HOME=.", "EXTRA=1"}})
	if !res.OK() {
		t.Fatalf("env: %s %s", res.Describe(), res.Stderr)
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k]++
		if (k == "PATH" && v != "/opt/x/bin:/usr/bin:/bin") || (k == "HOME" && v != ".") {
			t.Errorf("%s=%s", k, v)
		}
	}
	if got["PATH"] != 1 || got["HOME"] != 1 || got["EXTRA"] != 1 || got["LC_ALL"] != 1 {
		t.Errorf("environment keys: %v", got)
	}
}

// A long-lived process takes its work through the box's files: they may be
// written, read and removed while it runs, a second Run is refused, and
// Close waits for the run to end.
func TestFilesDuringRun(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := b.Run(context.Background(), Spec{Argv: []string{"sh", "-c",
			"i=0; while [ ! -e go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; " +
				"cat go > reply.tmp && mv reply.tmp reply; while [ -e reply ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; " +
				"[ -e reply ] && echo reply-left || echo reply-removed"},
			Limits: Limits{Wall: 30 * time.Second}})
		done <- out{res, err}
	}()
	waitBusy(t, b)
	deadline := time.Now().Add(10 * time.Second)
	if err := b.WriteFile("go", []byte("work 1\n"), 0o644); err != nil {
		t.Fatalf("write during the run: %v", err)
	}
	var reply []byte
	for {
		var err error
		if reply, err = b.ReadFile("reply", 1<<10); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply from the running process: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if string(reply) != "work 1\n" {
		t.Errorf("reply %q", reply)
	}
	if err := b.RemoveAll("reply"); err != nil {
		t.Fatalf("remove during the run: %v", err)
	}
	o := <-done
	if o.err != nil || o.res.ExitCode != 0 || strings.TrimSpace(string(o.res.Stdout)) != "reply-removed" {
		t.Fatalf("run: %v, %s, stdout %q stderr %q", o.err, o.res.Describe(), o.res.Stdout, o.res.Stderr)
	}
	if err := b.RemoveAll("no/such/thing"); err != nil {
		t.Errorf("removing what is not there: %v", err)
	}
	if err := b.RemoveAll("../x"); !errors.Is(err, ErrBadName) {
		t.Errorf("RemoveAll outside the box: %v, want ErrBadName", err)
	}
	// Close waits for a run in progress
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, _ = b.Run(ctx, Spec{Argv: []string{"sleep", "30"}}) }()
	waitBusy(t, b)
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned during a run: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return after the run ended")
	}
}

// waitBusy returns once b has a run in progress.
func waitBusy(t *testing.T, b *Box) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		running := b.running
		b.mu.Unlock()
		if running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := b.Run(context.Background(), Spec{Argv: []string{"true"}}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second run: %v, want ErrBusy while the first runs", err)
	}
}
