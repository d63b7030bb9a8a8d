package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/tools/c2x86"
)

// TestVerifyCorpus runs "kiln verify c2x86" on corpus functions: gcc's
// own -O0 and -O2 assembly must pass (exit 0), the same assembly made to
// return at once with garbage must fail (exit 1) as wrong output or a crash,
// and text that is not assembly must fail as an assemble error. The command
// is wiring over the lane, so it checks one item per category (-tags long)
// or three categories (default tier); every corpus item is verified with gcc
// by the lane's own tests (tools/c2x86 TestCorpusWithGCC and its long twin).
func TestVerifyCorpus(t *testing.T) {
	t.Parallel()
	all, err := c2x86.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	// Plain integer code, symbolic floats and jump tables in the default
	// tier; under -tags long the first items that cover every category.
	want := map[string]bool{"bitops": true, "float_const": true, "switch_many": true}
	if longTier {
		for _, c := range c2x86.CorpusSpec().Categories {
			want[c] = true
		}
	}
	// An item counts for every category it lists.
	var items []prompts.CorpusItem
	for _, it := range all {
		picked := false
		for _, c := range it.Categories {
			if want[c] {
				delete(want, c)
				picked = true
			}
		}
		if picked {
			items = append(items, it)
		}
	}
	if len(want) != 0 {
		t.Fatalf("no corpus item for categories %v", want)
	}
	dir := t.TempDir()
	// Each item has its own folder and data folder (its verifies run one
	// after another; the items in parallel).
	verify := func(t *testing.T, it prompts.CorpusItem, asm string) (int, report.VerdictJSON) {
		t.Helper()
		d := filepath.Join(dir, it.ID)
		data := filepath.Join(d, "data")
		if _, err := os.Lstat(filepath.Join(data, "cache")); err != nil {
			sharedCaches(t, data)
		}
		fn, drv, cand := filepath.Join(d, "function.c"), filepath.Join(d, "driver.c"), filepath.Join(d, "cand.s")
		for p, body := range map[string]string{fn: it.Files["function.c"], drv: it.Files["driver.c"], cand: asm} {
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for name := range it.Files {
			if strings.HasSuffix(name, ".h") {
				t.Fatalf("%s has a header file; kiln verify takes none", it.ID)
			}
		}
		// Each verify has its own deadline: a slow, loaded machine makes
		// one call slow, never every later call fail.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		code, out, errs := runKiln(t, ctx, "verify", "c2x86", "--data", data, "--function", fn, "--driver", drv, "--candidate", cand, "--json")
		var v report.VerdictJSON
		if code != 2 {
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("verify output is not a verdict: %v\n%s\n%s", err, out, errs)
			}
		} else {
			t.Fatalf("verify: bad input: %s", errs)
		}
		return code, v
	}
	// One kiln verify per call, each with its own sandbox runner; the
	// items run as parallel subtests (-test.parallel at a time).
	t.Run("items", func(t *testing.T) {
		for _, it := range items {
			t.Run(it.ID, func(t *testing.T) {
				t.Parallel()
				for _, opt := range []string{"-O0", "-O2"} {
					if code, v := verify(t, it, gccAsm(t, it, opt)); code != 0 || !v.Pass {
						t.Errorf("gcc %s assembly: exit %d, verdict %+v", opt, code, v)
					}
				}
				code, v := verify(t, it, mutate(t, gccAsm(t, it, "-O0"), it.Function))
				if code != 1 || v.Pass || (v.Class != "wrong_output" && v.Class != "crash") {
					t.Errorf("mutated assembly: exit %d, verdict %+v", code, v)
				}
			})
		}
	})
	it := items[0]
	if code, v := verify(t, it, it.Function+":\n\tnot an instruction\n"); code != 1 || v.Class != "assemble_error" {
		t.Errorf("garbage: exit %d, verdict %+v", code, v)
	}
	// Bad input: a missing file is exit 2.
	if code, _, errs := runKiln(t, context.Background(), "verify", "c2x86", "--function", "/nonexistent.c", "--driver", "x", "--candidate", "y"); code != 2 || !strings.Contains(errs, "nonexistent") {
		t.Errorf("missing file: exit %d, %s", code, errs)
	}
}
