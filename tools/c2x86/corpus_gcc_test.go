package c2x86

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
)

// gccFlags are the flags every corpus compile uses.
var gccFlags = []string{"-std=gnu11", "-Wall", "-Werror=implicit-function-declaration"}

var indirectJmpRE = regexp.MustCompile(`(?m)^\s*(notrack\s+)?jmp\s+\*`)

// sanitizerEnv is the environment of sanitizer runs.
var sanitizerEnv = []string{"ASAN_OPTIONS=detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS=print_stacktrace=1"}

type cmdResult struct {
	stdout, stderr string
	err            error
}

// runCmd runs name with args in dir, with a timeout.
func runCmd(ctx context.Context, dir string, timeout time.Duration, env []string, name string, args ...string) cmdResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s: timed out after %v", name, timeout)
	}
	return cmdResult{stdout: out.String(), stderr: errb.String(), err: err}
}

// sanitizerProbe builds and runs a tiny program with the sanitizers; the
// returned error says why they cannot be used here.
func sanitizerProbe(ctx context.Context, gcc, dir string) error {
	src := filepath.Join(dir, "probe.c")
	prog := "#include <stdio.h>\n#include <stdlib.h>\nint main(void){int *p=malloc(8);p[1]=3;printf(\"%d\\n\",p[1]);free(p);return 0;}\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		return err
	}
	r := runCmd(ctx, dir, time.Minute, nil, gcc, "-fsanitize=address,undefined", "-fno-sanitize-recover", src, "-o", "probe")
	if r.err != nil {
		return fmt.Errorf("build: %v: %s", r.err, r.stderr)
	}
	r = runCmd(ctx, dir, 30*time.Second, sanitizerEnv, "./probe")
	if r.err != nil || r.stdout != "3\n" {
		return fmt.Errorf("run: %v: %q %s", r.err, r.stdout, r.stderr)
	}
	return nil
}

// TestCorpusWithGCC builds and runs items of the builtin c2x86 corpus:
// function.c alone at -O0 -fno-jump-tables -S (the lane's reference) and at
// -O2 -S, each linked with driver.c compiled at the same level; both
// programs must exit 0 and print the same non-empty output. A build with
// -fsanitize=address,undefined must print it too. switch_many items must
// get a jump table at plain -O0, switch_few items must not, and the
// -fno-jump-tables reference must have no indirect jump. Items run as
// parallel subtests (bounded by -test.parallel, GOMAXPROCS by default).
// The default tier checks one item per category (peerSample, 12 items;
// it checked every tenth item, 25); the long tier (-tags long) the others
// too, in TestCorpusWithGCCRest.
func TestCorpusWithGCC(t *testing.T) {
	t.Parallel()
	checkCorpusWithGCC(t, inPeerSample)
}

// inPeerSample reports whether the corpus item of id is in
// peerSample(all).
func inPeerSample(all []prompts.CorpusItem) func(id string) bool {
	in := map[string]bool{}
	for _, it := range peerSample(all) {
		in[it.ID] = true
	}
	return func(id string) bool { return in[id] }
}

// checkCorpusWithGCC checks the corpus items that sample(all) accepts.
func checkCorpusWithGCC(t *testing.T, sample func(all []prompts.CorpusItem) func(id string) bool) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found in PATH")
	}
	all, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	keep := sample(all)
	var items []prompts.CorpusItem
	for _, it := range all {
		if keep(it.ID) {
			items = append(items, it)
		}
	}
	t.Logf("checking %d of %d items", len(items), len(all))
	ctx := t.Context()
	useSanitizer := true
	if err := sanitizerProbe(ctx, gcc, t.TempDir()); err != nil {
		useSanitizer = false
		t.Logf("sanitizer runs skipped: -fsanitize=address,undefined does not work here: %v", err)
	}
	t.Run("items", func(t *testing.T) {
		for _, it := range items {
			t.Run(it.ID, func(t *testing.T) {
				t.Parallel()
				checkItemWithGCC(t, gcc, it, useSanitizer)
			})
		}
	})
}

func checkItemWithGCC(t *testing.T, gcc string, it prompts.CorpusItem, useSanitizer bool) {
	ctx := t.Context()
	dir := t.TempDir()
	for name, text := range it.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compile := func(args ...string) cmdResult {
		r := runCmd(ctx, dir, 2*time.Minute, nil, gcc, append(append([]string{}, gccFlags...), args...)...)
		if r.err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
		}
		return r
	}
	// -O0 warnings fail the item (they are stable across GCC versions and
	// mean sloppy code); -O2 ones are only logged.
	strict := func(r cmdResult, what string) {
		if strings.TrimSpace(r.stderr) != "" {
			t.Errorf("%s: warnings:\n%s", what, r.stderr)
		}
	}
	strict(compile("-O0", "-fno-jump-tables", "-S", "function.c", "-o", "ref0.s"), "function.c -O0 -S")
	if r := compile("-O2", "-S", "function.c", "-o", "ref2.s"); strings.TrimSpace(r.stderr) != "" {
		t.Logf("function.c -O2: warnings:\n%s", r.stderr)
	}
	strict(compile("-O0", "-c", "driver.c", "-o", "driver0.o"), "driver.c -O0")
	if r := compile("-O2", "-c", "driver.c", "-o", "driver2.o"); strings.TrimSpace(r.stderr) != "" {
		t.Logf("driver.c -O2: warnings:\n%s", r.stderr)
	}
	compile("ref0.s", "driver0.o", "-o", "prog0", "-lm")
	compile("ref2.s", "driver2.o", "-o", "prog2", "-lm")

	run := func(prog string, env []string) string {
		r := runCmd(ctx, dir, 20*time.Second, env, "./"+prog)
		if r.err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", prog, r.err, r.stderr)
		}
		return r.stdout
	}
	out0 := run("prog0", nil)
	if strings.TrimSpace(out0) == "" {
		t.Fatal("-O0 program printed nothing")
	}
	if out2 := run("prog2", nil); out2 != out0 {
		t.Errorf("-O0 and -O2 outputs differ:\n%s", firstDiff(out0, out2))
	}
	if useSanitizer {
		compile("-O0", "-fsanitize=address,undefined", "-fno-sanitize-recover", "function.c", "driver.c", "-o", "progS", "-lm")
		if outS := run("progS", sanitizerEnv); outS != out0 {
			t.Errorf("sanitizer build output differs:\n%s", firstDiff(out0, outS))
		}
	}

	ref0, err := os.ReadFile(filepath.Join(dir, "ref0.s"))
	if err != nil {
		t.Fatal(err)
	}
	if indirectJmpRE.Match(ref0) {
		t.Errorf("-O0 -fno-jump-tables assembly has an indirect jump")
	}
	if it.HasCategory(CatSwitchMany) || it.HasCategory(CatSwitchFew) {
		compile("-O0", "-S", "function.c", "-o", "jt.s")
		jt, err := os.ReadFile(filepath.Join(dir, "jt.s"))
		if err != nil {
			t.Fatal(err)
		}
		hasTable := indirectJmpRE.Match(jt)
		if it.HasCategory(CatSwitchMany) && !hasTable {
			t.Errorf("switch_many item gets no jump table at -O0 (cases too few or too sparse)")
		}
		if it.HasCategory(CatSwitchFew) && hasTable {
			t.Errorf("switch_few item gets a jump table at -O0")
		}
	}
}

// firstDiff describes the first differing line of two outputs.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q vs %q", i+1, x, y)
		}
	}
	return "(no line differs)"
}
