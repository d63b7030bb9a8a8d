package torch2cuda

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"
)

// A compile slot's builds go to one long-lived build process
// (buildserve.go): the second build is made by the same process, its files
// leave the box, a process that has ended is replaced, and Close ends the
// idle ones. Real sandbox, real judge.py on the CPU. The default tier's
// candidates need no compiler (TestJudgeOnCPU builds a real extension
// through a build server); the long tier builds one here too.
func TestBuildServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts judge.py with torch")
	}
	needSandbox(t)
	t.Parallel()
	l := cpuLane(t)
	read := func(name string) string { return fixture(t, name) }
	ref := read("ref_relu_matmul.py")
	idle := func() []*buildServer {
		l.builders.mu.Lock()
		defer l.builders.mu.Unlock()
		return append([]*buildServer(nil), l.builders.idle...)
	}
	ctx := context.Background()
	for _, c := range []string{"cand_no_ext.py", "cand_syntax.py"} {
		if _, err := l.compile(ctx, ref, read(c), ""); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	first := idle()
	if len(first) != 1 || !first[0].alive() || first[0].seq != 2 {
		t.Fatalf("after two builds: %d idle build servers, want one alive that took both", len(first))
	}
	if tree, err := first[0].box.ReadTree(".", 1<<20, 100); err != nil {
		t.Fatal(err)
	} else {
		for name := range tree {
			if strings.HasPrefix(name, "jobs/") || strings.HasPrefix(name, "build/") || strings.HasPrefix(name, "outbox/") || strings.HasPrefix(name, "inbox/") {
				t.Errorf("left in the box after its build: %s", name)
			}
		}
	}
	if longTier {
		// a real extension: its record and module come back, from the same process
		kept, err := l.compile(ctx, ref, read("cand_correct.py"), "")
		if err != nil {
			t.Fatal(err)
		}
		var done, so bool
		for name := range kept {
			done = done || path.Base(name) == "kiln_done.json"
			so = so || strings.HasSuffix(name, ".so")
		}
		if !done || !so {
			t.Errorf("a real build through the server kept %d files, record %v module %v", len(kept), done, so)
		}
		if s := idle(); len(s) != 1 || s[0] != first[0] || s[0].seq != 3 {
			t.Errorf("the real build did not go to the same process")
		}
	}
	// A process that has ended (here: killed between builds) is replaced.
	first[0].cancel()
	<-first[0].ended
	if _, err := l.compile(ctx, ref, read("cand_no_ext.py"), ""); err != nil {
		t.Fatal(err)
	}
	second := idle()
	if len(second) != 1 || second[0] == first[0] || !second[0].alive() {
		t.Fatalf("the ended process was not replaced")
	}
	// One asked for another headers' folder than it sees is not handed out
	// (the folder is fixed per toolchain; this guards a change of it).
	s, err := l.takeBuilder(mustPython(t, l), "", "/nonexistent-pch")
	if err != nil {
		t.Fatal(err)
	}
	if s == second[0] || s.pch != "/nonexistent-pch" {
		t.Errorf("a build server without the headers was handed out for builds with them")
	}
	s.kill()
	// Close stops the idle processes.
	kept := idle()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range append(kept, second...) {
		for s.alive() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if s.alive() {
			t.Errorf("an idle build process outlived Close")
		}
	}
}

func mustPython(t *testing.T, l *Lane) string {
	t.Helper()
	py, err := l.python()
	if err != nil {
		t.Fatal(err)
	}
	return py
}
