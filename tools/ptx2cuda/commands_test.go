package ptx2cuda

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

// runCommand parses args with c's flags and runs it on the test host.
func runCommand(t *testing.T, c kit.Command, args ...string) (string, string, error) {
	t.Helper()
	fs := flag.NewFlagSet(c.Verb, flag.ContinueOnError)
	run := c.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, testHost, &out, &errb)
	return out.String(), errb.String(), err
}

// TestRollCommands: kiln ptx roll prints rollptx.Roll of the file, kiln
// ptx unroll expands it back, and bad input is the user's error.
func TestRollCommands(t *testing.T) {
	t.Parallel()
	path := filepath.Join("corpus", "builtin", "mm_tiled", "t16.ptx")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rolled, _, err := runCommand(t, rollCommand(), "--file", path)
	if err != nil || rolled != rollptx.Roll(string(raw)) || !strings.Contains(rolled, "for.size.") {
		t.Fatalf("roll: %v\n%.500s", err, rolled)
	}
	rp := filepath.Join(t.TempDir(), "t16.rptx")
	if err := os.WriteFile(rp, []byte(rolled), 0o644); err != nil {
		t.Fatal(err)
	}
	back, _, err := runCommand(t, unrollCommand(), "--file", rp)
	if err != nil || back != string(raw) {
		t.Errorf("unroll: %v, round trip %v", err, back == string(raw))
	}
	for _, c := range []kit.Command{rollCommand(), unrollCommand(), prepareCommand()} {
		if _, _, err := runCommand(t, c); err == nil {
			t.Errorf("%s without flags: no error", c.Verb)
		} else if _, ok := err.(kit.UsageError); !ok {
			t.Errorf("%s without flags: %T %v", c.Verb, err, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.rptx")
	if err := os.WriteFile(bad, []byte("\tfor.size.3 i in range(0, 2, 1):\n\tadd.s32 %r1, %r1, 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCommand(t, unrollCommand(), "--file", bad); err == nil {
		t.Error("malformed Rolled-PTX unrolled")
	} else if _, ok := err.(kit.UsageError); !ok {
		t.Errorf("malformed Rolled-PTX: %T %v", err, err)
	}
}

// TestPrepareCommand: kiln ptx prepare writes the committed PTX for a
// folder holding a copy of a builtin item, and reports it unchanged the
// second time.
func TestPrepareCommand(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	dir := t.TempDir()
	src := filepath.Join("corpus", "builtin", "ew_bias_gelu")
	if err := os.MkdirAll(filepath.Join(dir, "gelu"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{KernelFile, MetaFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "gelu", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := runCommand(t, prepareCommand(), "--dir", dir)
	if err != nil || strings.Count(out, "written") != 3 {
		t.Fatalf("prepare: %v\n%s", err, out)
	}
	for _, v := range []string{"base", "b16x16", "fastmath"} {
		got, _ := os.ReadFile(filepath.Join(dir, "gelu", v+".ptx"))
		want, _ := os.ReadFile(filepath.Join(src, v+".ptx"))
		if len(got) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s.ptx differs from the committed one", v)
		}
	}
	out, _, err = runCommand(t, prepareCommand(), "--dir", dir)
	if err != nil || strings.Count(out, "unchanged") != 3 {
		t.Errorf("prepare again: %v\n%s", err, out)
	}
	if _, err := source(kit.Tasks{Corpus: dir}); err != nil {
		t.Errorf("the prepared folder as tasks.corpus: %v", err)
	}
}
