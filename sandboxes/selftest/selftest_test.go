package selftest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
)

const envSecretName = "KILN_SELFTEST_PARENT_SECRET"

var (
	testRunner   *sandboxes.Runner
	envSecret    string
	cgParentFlag = flag.String("sandbox.cgroup-parent", "", "Config.CgroupParent for the tests")
)

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "kiln-selftest-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// A secret in the parent's environment: no box may see it.
	envSecret = fmt.Sprintf("parent-env-secret-%d", time.Now().UnixNano())
	os.Setenv(envSecretName, envSecret)
	testRunner, err = sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(dir, "boxes"), UIDBase: 2_100_400_000,
		ScratchSize: 64 << 20, ScratchInodes: 4096, CgroupParent: *cgParentFlag})
	if err != nil {
		fmt.Fprintln(os.Stderr, "new runner:", err)
		return 1
	}
	defer testRunner.Close()
	return m.Run()
}

// TestHostileCases runs the whole suite: every case must hold (or be
// skipped for a layer this host lacks, which the strict policy forbids).
func TestHostileCases(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	results := Run(ctx, testRunner, Options{EnvSecret: envSecret, Parallel: 3})
	if len(results) != len(Cases()) {
		t.Fatalf("%d results for %d cases", len(results), len(Cases()))
	}
	for _, r := range results {
		t.Log(r.String())
		if !r.Pass {
			t.Errorf("case %s: %s", r.Name, r.Detail)
		}
	}
	passed, failed, skipped := Summary(results)
	t.Logf("%d passed, %d failed, %d skipped in %s", passed, failed, skipped, time.Since(start).Round(time.Millisecond))
}

func TestOnly(t *testing.T) {
	res := Run(context.Background(), testRunner, Options{Only: []string{"infinite-loop"}})
	if len(res) != 1 || res[0].Name != "infinite-loop" || !res[0].Pass {
		t.Fatalf("%+v", res)
	}
}

func TestMeasureOverhead(t *testing.T) {
	o, err := MeasureOverhead(context.Background(), testRunner, 30)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(o.String())
	if o.Runs != 30 || o.Bare.Median <= 0 || o.Sandbox.Median <= o.Bare.Median || o.Policy != "strict" {
		t.Fatalf("%+v", o)
	}
	// The target is 50 ms; this machine is shared, so only catch gross regressions here.
	if o.Sandbox.Median > 250*time.Millisecond {
		t.Errorf("sandboxed run median %s", o.Sandbox.Median)
	}
}
