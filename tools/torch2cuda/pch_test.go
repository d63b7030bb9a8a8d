package torch2cuda

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

// TestPCHOnCPU: the lane makes a precompiled torch/extension.h in a
// sandbox, and a candidate's build then uses it (read-only in its box),
// with the verdict of a build without it.
func TestPCHOnCPU(t *testing.T) {
	if !longTier {
		t.Skip("long tier: precompiling torch/extension.h takes 1-2 minutes of a core")
	}
	needSandbox(t)
	py, ok := testRegistry.Get(toolchain.Torch)
	if !ok {
		t.Skip("no python3 with torch")
	}
	saved := pchFlagSets
	// one header is enough here; the second flag set fails, and must not
	// keep the first header from the builds
	pchFlagSets = [][]string{{}, {"--kiln-no-such-flag"}}
	t.Cleanup(func() { pchFlagSets = saved })
	if err := (Config{PCH: "yes"}).withDefaults().Validate(); err == nil {
		t.Error("pch \"yes\" accepted")
	}
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: "cpu", Timeout: 3 * time.Minute,
		RunTimeout: judgeRunTimeout, Trials: 3, CacheDir: t.TempDir(), PCH: PCHOn})
	if err != nil {
		t.Fatal(err)
	}
	cases, correct := judgeCases(t)
	ref := cases[0].ref
	root := l.pchRoot(py.Path, "") // starts making it
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Fatalf("the headers' folder is not there from the start: %v", err)
	}
	// A build server started now, before the header is made, sees it
	// once it is made (its box's view of the folder is live): the
	// candidate's build below goes to this server.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := l.compile(ctx, ref, fixture(t, "cand_no_ext.py"), ""); err != nil {
		t.Fatal(err)
	}
	l.builders.mu.Lock()
	early := append([]*buildServer(nil), l.builders.idle...)
	l.builders.mu.Unlock()
	header := filepath.Join(root, "0", "kiln_pch.json")
	_, err = os.Stat(header)
	if madeEarly := err == nil; len(early) != 1 || madeEarly {
		t.Fatalf("%d idle build servers, header made %v: want one server started before any header", len(early), madeEarly)
	}
	deadline := time.Now().Add(8 * time.Minute)
	var pchErr error
	for {
		l.pch.mu.Lock()
		done, err := l.pch.done, l.pch.err
		l.pch.mu.Unlock()
		pchErr = err
		_, statErr := os.Stat(header)
		if done && statErr != nil {
			t.Fatalf("no precompiled header: %v", err)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no precompiled header after 8 minutes")
		}
		time.Sleep(time.Second)
	}
	if pchErr == nil {
		t.Error("a flag set g++ refuses gave no error")
	}
	if again := l.pchRoot(py.Path, ""); again != root {
		t.Fatalf("headers' folder %q, then %q", root, again)
	}
	if left, _ := filepath.Glob(root + ".*"); len(left) > 0 {
		t.Errorf("left beside the headers: %v", left)
	}
	if _, err := os.Stat(filepath.Join(root, "1")); !os.IsNotExist(err) {
		t.Errorf("a header for the refused flag set: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(root, "0", "torch", "extension.h.gch")); err != nil || fi.Size() < 1<<20 {
		t.Fatalf("precompiled header: %v", err)
	}
	v, err := l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: ref}}, correct)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass {
		t.Fatalf("the correct candidate failed with the precompiled header: %s %s", v.Class, v.Diagnostic)
	}
	key := l.cacheKey(correct, l.arch(ctx))
	rec := readBuildRecords(l.loadCached(key))
	if rec.N != 1 || rec.PCH != 1 {
		t.Fatalf("build records %+v: want one build with the precompiled header", rec)
	}
	l.builders.mu.Lock()
	late := append([]*buildServer(nil), l.builders.idle...)
	l.builders.mu.Unlock()
	if len(late) != 1 || late[0] != early[0] {
		t.Errorf("the build with the header did not go to the server started before it was made")
	}
	t.Logf("built in %.1f s with the precompiled header (%s)", rec.MS/1000, root)
}

// A header's copy left by a killed kiln goes once it is old; one being
// copied now stays, as do the headers and other files.
func TestRemoveStaleTmp(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "0123456789abcdef")
	old, fresh, other := root+".0.tmp-111", root+".1.tmp-222", filepath.Join(dir, "fedcba9876543210.0.tmp-333")
	for _, p := range []string{filepath.Join(root, "0"), old, fresh, other} {
		if err := os.MkdirAll(filepath.Join(p, "torch"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old, other} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleTmp(root, time.Hour)
	for p, want := range map[string]bool{old: false, fresh: true, other: true, filepath.Join(root, "0"): true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: there %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
