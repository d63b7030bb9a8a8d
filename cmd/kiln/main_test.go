package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools/c2x86"
)

// TestMain lets the test binary act as the sandbox trampoline, and as kiln
// itself when KILN_TEST_MAIN is set (the crash test runs it as a child).
// Every kiln of the test binary, in-process or child, shares one toolchain
// folder ($KILN_TOOLCHAIN_DIR): the first verb that needs the toolchain
// probe pays for it, the others read its cache.
func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	if os.Getenv("KILN_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kiln-cmd-toolchains-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Child processes (kiln run, worker, nats-node) inherit it.
	if err := os.Setenv(toolchainDirVar, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// toolchainDirVar names the shared toolchain folder (see TestMain).
const toolchainDirVar = "KILN_TOOLCHAIN_DIR"

// sharedCaches makes the data folder data (made if missing) use the test
// binary's caches by content: data/compile-cache (the CUDA lanes' builds)
// and data/cache/c2x86 (the c2x86 references: gcc's assembly, driver.o,
// the expected output) become links to folders beside the shared
// toolchain probe. Tests that build the same programs or judge the same
// corpus items then pay for each once per test binary (when they do not
// run at the same moment). Only for tests whose checks do not depend on a
// cold cache: not the metrics tests (they count cache lookups), not the
// kill loops (their kills are timed against the campaign's pace), not
// TestGoldenCUDASynth (a cached build's stage detail says "(cached)"). Both
// caches are safe for several processes at once (atomic renames).
func sharedCaches(t testing.TB, data string) {
	t.Helper()
	root := os.Getenv(toolchainDirVar)
	for _, l := range []struct{ link, target string }{
		{filepath.Join(data, "compile-cache"), filepath.Join(root, "compile-cache")},
		{filepath.Join(data, "cache", "c2x86"), filepath.Join(root, "c2x86-references")},
	} {
		for _, d := range []string{filepath.Dir(l.link), l.target} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(l.target, l.link); err != nil {
			t.Fatal(err)
		}
	}
}

// testGetenv is the environment of in-process kiln verbs: empty but for
// the shared toolchain folder.
func testGetenv(key string) string {
	if key == toolchainDirVar {
		return os.Getenv(key)
	}
	return ""
}

// runKiln runs the CLI in-process and returns its exit code and output.
func runKiln(t testing.TB, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	soft := make(chan struct{})
	code := run(ctx, args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: testGetenv, soft: soft})
	return code, out.String(), errb.String()
}

// corpusItem returns the builtin c2x86 corpus item id.
func corpusItem(t testing.TB, id string) prompts.CorpusItem {
	t.Helper()
	items, err := c2x86.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("corpus item %s not found", id)
	return prompts.CorpusItem{}
}

var (
	asmMu    sync.Mutex
	asmCache = map[string]string{}
)

// gccAsm compiles an item's function.c with gcc at opt (trusted corpus code).
func gccAsm(t testing.TB, it prompts.CorpusItem, opt string) string {
	t.Helper()
	key := it.ID + opt
	asmMu.Lock()
	defer asmMu.Unlock()
	if s, ok := asmCache[key]; ok {
		return s
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "function.c")
	if err := os.WriteFile(src, []byte(it.Files["function.c"]), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range it.Files {
		if strings.HasSuffix(name, ".h") {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := []string{opt, "-S", "-o", "-", src}
	if opt == "-O0" {
		args = []string{"-O0", "-fno-jump-tables", "-S", "-o", "-", src}
	}
	out, err := exec.Command("gcc", args...).Output()
	if err != nil {
		t.Fatalf("gcc %s %s: %v", opt, it.ID, err)
	}
	asmCache[key] = string(out)
	return string(out)
}

// mutate makes fn return at once with garbage in %eax and %xmm0: a change of
// behaviour for any function whose results the driver prints.
func mutate(t testing.TB, asm, fn string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(fn) + `:\n`)
	loc := re.FindStringIndex(asm)
	if loc == nil {
		t.Fatalf("label %s: not found in assembly", fn)
	}
	return asm[:loc[1]] + "\tmovl $1515870810, %eax\n\tmovl $1515870810, %edx\n\tmovd %eax, %xmm0\n\tret\n" + asm[loc[1]:]
}

// longOnly skips a test outside the long tier (-tags long): one whose
// behaviour another test covers once in the default tier, repeated here at
// length (why says what it adds).
func longOnly(t *testing.T, why string) {
	t.Helper()
	if !longTier {
		t.Skip("long tier (go test -tags long): " + why)
	}
}

// tierPick returns def in the default tier and long under -tags long.
func tierPick[T any](def, long T) T {
	if longTier {
		return long
	}
	return def
}
