package sandboxes

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInitBinary: a kiln-sandbox-init named in the config starts the runs
// (seen as the executable of the box's processes from the host), with the
// same results and isolation as the re-executed test binary, also after
// the file is replaced; without one
// (and none in the environment) the runner re-executes itself; a binary
// that is not the trampoline, or is missing, fails New naming the field.
func TestInitBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "kiln-sandbox-init")
	if out, err := exec.Command("go", "build", "-o", bin, "./kiln-sandbox-init").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	newRunner := func(initBin string, uidBase uint32) (*Runner, error) {
		cfg := testConfig(uidBase)
		cfg.AllowWeakIsolation = *weak
		cfg.InitBinary = initBin
		return New(cfg)
	}
	// seenExe runs a command in a box for a second and reports, from the
	// host, the executables of the runner's trampoline processes (argv[0]
	// the trampoline marker, the runner's instance in the spec).
	seenExe := func(r *Runner) map[string]bool {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		b, err := r.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		done := make(chan Result, 1)
		go func() {
			res, err := b.Run(ctx, Spec{Argv: []string{"sh", "-c", "sleep 1; echo in-box"}})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		seen := map[string]bool{}
		for deadline := time.Now().Add(900 * time.Millisecond); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range procs {
				cl, err := os.ReadFile(p)
				if err != nil || !strings.HasPrefix(string(cl), initArg0+"\x00") || !strings.Contains(string(cl), r.instance) {
					continue
				}
				if exe, err := os.Readlink(filepath.Join(filepath.Dir(p), "exe")); err == nil {
					seen[exe] = true
				}
			}
		}
		res := <-done
		if res.ExitCode != 0 || string(res.Stdout) != "in-box\n" {
			t.Errorf("run: %s, stdout %q, stderr %q", res.Describe(), res.Stdout, res.Stderr)
		}
		return seen
	}

	r, err := newRunner(bin, 2_100_090_000)
	if err != nil {
		t.Fatal(err)
	}
	if r.InitBinary() != bin {
		t.Errorf("InitBinary %q, want %q", r.InitBinary(), bin)
	}
	self, _ := os.Executable()
	seen := seenExe(r)
	if os.Geteuid() == 0 && (!seen[bin] || seen[self]) {
		t.Errorf("box processes ran %v, want %s only", seen, bin)
	}
	if c, want := r.Capabilities(), testRunner.Capabilities(); c.String() != want.String() {
		t.Errorf("capabilities through the trampoline binary: %s, want %s", c, want)
	}
	// The file replaced while the runner lives (./setup.sh run again): the
	// runs still start with the binary the runner checked and holds open.
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	seen = seenExe(r)
	if os.Geteuid() == 0 && !seen[bin+" (deleted)"] {
		t.Errorf("after the file was replaced, box processes ran %v, want the held %s (deleted)", seen, bin)
	}
	r.Close()

	t.Setenv(InitBinaryEnv, "")
	r, err = newRunner("", 2_100_091_000)
	if err != nil {
		t.Fatal(err)
	}
	if r.InitBinary() != selfExe {
		t.Errorf("without a trampoline binary: InitBinary %q, want %s", r.InitBinary(), selfExe)
	}
	seen = seenExe(r)
	if os.Geteuid() == 0 && (!seen[self] || seen[bin]) {
		t.Errorf("box processes ran %v, want %s only", seen, self)
	}
	r.Close()

	for _, bad := range []string{"/bin/true", filepath.Join(dir, "missing")} {
		if r, err := newRunner(bad, 2_100_092_000); err == nil {
			r.Close()
			t.Errorf("%s accepted as the trampoline", bad)
		} else if !strings.Contains(err.Error(), "Config.InitBinary") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %q does not name the field and the file", bad, err)
		}
	}
	t.Setenv(InitBinaryEnv, "/bin/true")
	if r, err := newRunner("", 2_100_093_000); err == nil {
		r.Close()
		t.Error("$KILN_SANDBOX_INIT=/bin/true accepted")
	} else if !strings.Contains(err.Error(), "$"+InitBinaryEnv) {
		t.Errorf("error %q does not name $%s", err, InitBinaryEnv)
	}
}
