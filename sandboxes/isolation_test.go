package sandboxes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestViewHidesHost(t *testing.T) {
	t.Parallel()
	if !testRunner.Capabilities().Layer(LayerFilesystem).Active {
		t.Skip("no filesystem view here")
	}
	hostPasswd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	b := openBox(t)
	tests := []struct {
		name, script string
		wantOK       bool
	}{
		{"shadow absent", "cat /etc/shadow", false},
		{"root home absent", "ls /root", false},
		{"home absent", "ls /home", false},
		{"sys absent", "ls /sys", false},
		{"helpers dir visible read-only", "test -x " + filepath.Join(testBins, "alloc") + " && ! touch " + filepath.Join(testBins, "x"), true},
		{"root read-only", "touch /x", false},
		{"usr read-only", "touch /usr/x", false},
		{"etc read-only", "echo x >> /etc/passwd", false},
		{"scratch parent read-only", "touch " + filepath.Join(filepath.Dir(b.Dir()), "x"), false},
		{"scratch writable", "echo hi > f && cat f", true},
		{"dev null writable", "echo hi > /dev/null", true},
		{"only box processes in /proc", `n=$(ls -d /proc/[0-9]* | wc -l); echo $n; test $n -le 6`, true},
		{"proc environ of pid 1 unreadable", "cat /proc/1/environ", false},
		{"synthesized passwd", "grep -q '^kiln:x:" + fmt.Sprint(b.UID()) + ":' /etc/passwd", true},
		{"no suid", "test ! -u /usr/bin/su || ! su -c true", true},
	}
	for _, tt := range tests {
		res := run(t, b, Spec{Argv: []string{"sh", "-c", tt.script}})
		if res.OK() != tt.wantOK {
			t.Errorf("%s: %s (stdout %q stderr %q)", tt.name, res.Describe(), clip(string(res.Stdout), 200), clip(string(res.Stderr), 200))
		}
	}
	res := run(t, b, Spec{Argv: []string{"cat", "/etc/passwd"}})
	for _, line := range strings.Split(string(hostPasswd), "\n") {
		if line != "" && strings.Contains(string(res.Stdout), line) {
			t.Errorf("host passwd line visible: %q", line)
		}
	}
	if _, err := os.Stat(filepath.Join(testBins, "x")); err == nil {
		t.Error("box wrote into a read-only bind")
	}
}

func TestScratchQuota(t *testing.T) {
	t.Parallel()
	if !testRunner.Capabilities().Layer(LayerScratch).Active {
		t.Skip("no scratch quota here")
	}
	b := openBox(t)
	// 32 MiB scratch: the second 20 MiB file cannot fit.
	res := run(t, b, Spec{Argv: []string{"sh", "-c",
		"dd if=/dev/zero of=a bs=1M count=20 2>/dev/null && dd if=/dev/zero of=b bs=1M count=20"}})
	if res.OK() || !strings.Contains(string(res.Stderr), "No space left") {
		t.Errorf("disk filler: %s, stderr %q", res.Describe(), res.Stderr)
	}
	if st, err := statfs(b.Dir()); err != nil || st > 32<<20 {
		t.Errorf("scratch holds %d bytes (err %v)", st, err)
	}
	// 2000 inodes: creating 3000 files stops short.
	res = run(t, b, Spec{Argv: []string{"sh", "-c", "rm -f a b; mkdir d && cd d && seq 1 3000 | xargs touch; ls | wc -l"}})
	if !strings.Contains(string(res.Stderr), "No space left") {
		t.Errorf("inode bomb: %s, stderr %q", res.Describe(), clip(string(res.Stderr), 200))
	}
	var n int
	fmt.Sscan(string(res.Stdout), &n)
	if n < 1000 || n >= 2000 {
		t.Errorf("inode bomb created %d files", n)
	}
}

func statfs(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, nil
}

func TestCgroupMemoryLimit(t *testing.T) {
	t.Parallel()
	if !testRunner.Capabilities().Layer(LayerCgroups).Active {
		t.Skip("no cgroups here")
	}
	b := openBox(t)
	start := time.Now()
	// No address-space limit: only the cgroup stands in the way.
	res := run(t, b, Spec{Argv: []string{filepath.Join(testBins, "alloc"), "512"},
		Limits: Limits{Memory: NoLimit, RSS: 64 << 20}})
	if res.Killed != KillMemory || res.Outcome() != OutcomeResourceLimit {
		t.Errorf("memory hog: killed=%q %s, stdout %q", res.Killed, res.Describe(), res.Stdout)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	assertNoProcs(t, b)
	// The same program fits a larger limit.
	res = run(t, b, Spec{Argv: []string{filepath.Join(testBins, "alloc"), "32"},
		Limits: Limits{Memory: NoLimit, RSS: 256 << 20}})
	if !res.OK() {
		t.Errorf("alloc 32 MiB under 256 MiB: %s", res.Describe())
	}
}

func TestSeccompDenies(t *testing.T) {
	t.Parallel()
	if !testRunner.Capabilities().Layer(LayerSeccomp).Active {
		t.Skip("no seccomp here")
	}
	b := openBox(t)
	tests := []struct {
		name, script string
	}{
		{"unshare", "unshare -U true"},
		{"mount", "mount -t tmpfs none d"},
		{"udp socket", "echo x > /dev/udp/127.0.0.1/53"},
	}
	for _, tt := range tests {
		res := run(t, b, Spec{Argv: []string{"sh", "-c", "mkdir -p d; " + tt.script}})
		if res.OK() {
			t.Errorf("%s succeeded: %s", tt.name, res.Stdout)
		}
	}
	res := run(t, b, Spec{Argv: []string{"unshare", "-U", "true"}})
	if !strings.Contains(string(res.Stderr), "Operation not permitted") {
		t.Errorf("unshare: %s %q", res.Describe(), res.Stderr)
	}
}

func TestGPUSpecWithoutDevices(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{"sh", "-c", "ls /dev; ulimit -v"}, GPU: true, Limits: Limits{Memory: 1 << 30}})
	if !res.OK() {
		t.Fatalf("%s %s", res.Describe(), res.Stderr)
	}
	if len(gpuDevices()) == 0 && strings.Contains(string(res.Stdout), "nvidia") {
		t.Errorf("nvidia nodes without a GPU: %s", res.Stdout)
	}
	if !strings.HasSuffix(string(res.Stdout), "unlimited\n") {
		t.Errorf("GPU run keeps an address-space limit: %q", res.Stdout)
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	ls := layerSet{}
	for _, l := range Layers() {
		ls.set(l, true, "ok")
	}
	if p, missing := ls.policy(Config{}); p != "strict" || len(missing) != 0 {
		t.Fatalf("all active: %s %v", p, missing)
	}
	ls.set(LayerLandlock, false, "disabled at boot")
	ls.set(LayerCgroups, false, "no memory controller")
	p, missing := ls.policy(Config{})
	if p != "strict" || len(missing) != 2 {
		t.Fatalf("missing required: %s %v", p, missing)
	}
	err := error(&PolicyError{Missing: missing})
	if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "landlock (disabled at boot)") {
		t.Fatalf("error %v", err)
	}
	p, missing = ls.policy(Config{AllowMissing: []Layer{LayerCgroups}})
	if p != "lowered(without cgroups)" || len(missing) != 1 || missing[0].Layer != LayerLandlock {
		t.Fatalf("one allowed: %s %v", p, missing)
	}
	if p, missing = ls.policy(Config{AllowWeakIsolation: true}); len(missing) != 0 || p != "lowered(without cgroups,landlock)" {
		t.Fatalf("weak: %s %v", p, missing)
	}
	if err := (Config{ScratchRoot: "/x", AllowMissing: []Layer{"bogus"}}).Validate(); err == nil {
		t.Error("unknown layer accepted")
	}
}

// TestReclaimStale plants what a crashed daemon leaves (a scratch
// instance with a mounted box, a cgroup) and checks New removes it.
func TestReclaimStale(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%d-12345-deadbeef", dead.Process.Pid)
	box := filepath.Join(testRoot, id, "box-0")
	if err := os.MkdirAll(box, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("kiln-box", box, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(box, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cgDirs []string
	if testRunner.cg != nil {
		for _, h := range testRunner.cg.hiers {
			d := filepath.Join(filepath.Dir(h.dir), id, "run-1")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			cgDirs = append(cgDirs, filepath.Dir(d))
		}
	}
	r, err := New(testConfig(2_100_120_000))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := os.Stat(filepath.Join(testRoot, id)); !os.IsNotExist(err) {
		t.Errorf("stale scratch left: %v", err)
	}
	for _, m := range mountPoints() {
		if m == box {
			t.Errorf("stale mount left: %s", m)
		}
	}
	for _, d := range cgDirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("stale cgroup left: %s", d)
		}
	}
	// The live runner's instance is untouched.
	if _, err := os.Stat(testRunner.instDir); err != nil {
		t.Errorf("live instance removed: %v", err)
	}
}

func TestTrampolineNotSignalable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the trampoline has its own uid only under root")
	}
	b := openBox(t)
	res := run(t, b, Spec{Argv: []string{"sh", "-c", "kill -KILL 1; kill -TERM 1; echo survived"}})
	if string(res.Stdout) != "survived\n" || res.ExitCode != 0 {
		t.Fatalf("%s, stdout %q stderr %q", res.Describe(), res.Stdout, res.Stderr)
	}
}

func TestNewSession(t *testing.T) {
	t.Parallel()
	b := openBox(t)
	// The target's session is led by the trampoline (PID 1 of the box),
	// not the test's.
	res := run(t, b, Spec{Argv: []string{"cut", "-d", " ", "-f", "6", "/proc/self/stat"}})
	if !res.OK() || strings.TrimSpace(string(res.Stdout)) != "1" {
		t.Fatalf("%s: session %q, want 1", res.Describe(), res.Stdout)
	}
}

// Spec.ReadOnly binds a host folder into one run, read-only: the next run
// of the same box without it does not see it; a bad path is refused.
func TestSpecReadOnly(t *testing.T) {
	t.Parallel()
	if !testRunner.Capabilities().Layer(LayerFilesystem).Active {
		t.Skip("no filesystem view here")
	}
	shared := filepath.Join(filepath.Dir(testRoot), "ro", t.Name())
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(shared)) })
	if err := os.WriteFile(filepath.Join(shared, "data"), []byte("shared bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openBox(t)
	f := filepath.Join(shared, "data")
	res := run(t, b, Spec{Argv: []string{"sh", "-c", "cat " + f + " && ! echo x >> " + f + " && ! touch " + filepath.Join(shared, "new")},
		ReadOnly: []string{shared}})
	if !res.OK() || string(res.Stdout) != "shared bytes\n" {
		t.Errorf("with ReadOnly: %s (stdout %q stderr %q)", res.Describe(), res.Stdout, clip(string(res.Stderr), 300))
	}
	if res := run(t, b, Spec{Argv: []string{"cat", f}}); res.OK() {
		t.Errorf("without ReadOnly the folder is visible: %q", res.Stdout)
	}
	if got, _ := os.ReadFile(f); string(got) != "shared bytes\n" {
		t.Errorf("the box changed the shared file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(shared, "new")); err == nil {
		t.Error("the box created a file in the shared folder")
	}
	for _, bad := range []string{"relative/path", shared + "/../x", filepath.Join(shared, "missing"), b.Dir(), filepath.Dir(b.Dir())} {
		if _, err := b.Run(context.Background(), Spec{Argv: []string{"true"}, ReadOnly: []string{bad}}); err == nil {
			t.Errorf("ReadOnly %q: no error", bad)
		}
	}
}
