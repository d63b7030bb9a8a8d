package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

// TestReadOnlyVerbs: verbs that read campaigns, pointed at a data folder
// that does not exist (or holds no run database), say so in one line,
// exit 2 and create nothing; an unknown campaign is one message that names
// it once.
func TestReadOnlyVerbs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	verbs := [][]string{
		{"report", "nosuch"}, {"status"}, {"status", "nosuch"}, {"export", "nosuch"},
		{"export", "--format", "messages", "-o", "ds/", "nosuch"},
		{"resume", "nosuch"}, {"rescore", "nosuch"}, {"refine", "nosuch"}, {"gc", "--dry-run"},
	}
	for _, args := range verbs {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			missing := filepath.Join(dir, "kiln-data")
			code, out, errs := runKiln(t, ctx, append([]string{args[0], "--data", missing}, args[1:]...)...)
			if code != exitBadInput || out != "" || oneLine(errs) == "" || !strings.Contains(errs, "no data folder "+missing) {
				t.Errorf("missing folder: exit %d, stdout %q, stderr:\n%s", code, out, errs)
			}
			if strings.Contains(errs, "migrated") {
				t.Errorf("schema migrations logged:\n%s", errs)
			}
			// An empty folder: no database made in it.
			if err := os.Mkdir(missing, 0o755); err != nil {
				t.Fatal(err)
			}
			code, _, errs = runKiln(t, ctx, append([]string{args[0], "--data", missing}, args[1:]...)...)
			if code != exitBadInput || oneLine(errs) == "" || !strings.Contains(errs, "no run database in "+missing) {
				t.Errorf("empty folder: exit %d, stderr:\n%s", code, errs)
			}
			if ents, _ := os.ReadDir(missing); len(ents) != 0 {
				t.Errorf("the empty folder now holds %d entries", len(ents))
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the verb made files beside the folder: %d entries", len(ents))
			}
		})
	}

	// A data folder with a store: an unknown campaign is one message.
	data := filepath.Join(t.TempDir(), "data")
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, verb := range []string{"report", "status", "export", "resume"} {
		code, _, errs := runKiln(t, ctx, verb, "--data", data, "nosuch")
		want := `kiln ` + verb + `: no campaign "nosuch" in ` + data + ` (kiln status --data ` + data + ` lists them)`
		if code != exitBadInput || strings.TrimSpace(errs) != want {
			t.Errorf("%s nosuch: exit %d, stderr %q, want %q", verb, code, errs, want)
		}
	}
	// A bad flag is one message too, and -h is no error.
	if code, _, errs := runKiln(t, ctx, "report", "--data", data, "--bogus", "x"); code != exitBadInput ||
		oneLine(errs) != "kiln report: flag provided but not defined: -bogus (kiln report -h lists the flags)" {
		t.Errorf("bad flag: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runKiln(t, ctx, "report", "-h"); code != exitOK || !strings.Contains(errs, "-svg") || strings.Contains(errs, "help requested") {
		t.Errorf("report -h: exit %d, stderr %q", code, errs)
	}
}

// oneLine returns errs trimmed when it is a single line, else "".
func oneLine(errs string) string {
	s := strings.TrimSpace(errs)
	if s == "" || strings.Contains(s, "\n") {
		return ""
	}
	return s
}

// TestReadOnlyTextCommands: kiln ptx roll and unroll take the file as an
// argument as well as --file, list only their own flags (no sandbox, data
// folder or toolchain flags), and refuse the file given twice or extra
// arguments with one message.
func TestReadOnlyTextCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ptx, err := filepath.Abs(filepath.Join("..", "..", "tools", "ptx2cuda", "corpus", "builtin", "mm_tiled", "t16.ptx"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(ptx)
	if err != nil {
		t.Fatal(err)
	}
	code, rolled, errs := runKiln(t, ctx, "ptx", "roll", ptx)
	if code != 0 || rolled != rollptx.Roll(string(raw)) || errs != "" {
		t.Fatalf("ptx roll FILE: exit %d, stderr %q", code, errs)
	}
	if code, byFlag, _ := runKiln(t, ctx, "ptx", "roll", "--file", ptx); code != 0 || byFlag != rolled {
		t.Errorf("ptx roll --file: exit %d, same output %v", code, byFlag == rolled)
	}
	rp := filepath.Join(t.TempDir(), "t16.rptx")
	if err := os.WriteFile(rp, []byte(rolled), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, back, errs := runKiln(t, ctx, "ptx", "unroll", rp); code != 0 || back != string(raw) {
		t.Errorf("ptx unroll FILE: exit %d, round trip %v, stderr %q", code, back == string(raw), errs)
	}
	for _, verb := range []string{"roll", "unroll"} {
		code, _, errs := runKiln(t, ctx, "ptx", verb, "-h")
		if code != exitOK || !strings.Contains(errs, "-file") {
			t.Errorf("ptx %s -h: exit %d\n%s", verb, code, errs)
		}
		for _, unused := range []string{"-data", "-allow-missing-layers", "-cgroup-parent", "-log-level"} {
			if strings.Contains(errs, unused) {
				t.Errorf("ptx %s -h lists %s, which it does not use:\n%s", verb, unused, errs)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ptx", "roll"}, "kiln ptx: want a PTX file: kiln ptx roll F.ptx (or --file F.ptx)"},
		{[]string{"ptx", "roll", ptx, ptx}, "kiln ptx: unexpected arguments: [" + ptx + " " + ptx + "]"},
		{[]string{"ptx", "roll", "--file", ptx, ptx}, "kiln ptx: --file " + ptx + " and the argument " + ptx + ": give the file once"},
		{[]string{"ptx", "unroll", "nope.rptx"}, "kiln ptx: --file: open nope.rptx: no such file or directory"},
	} {
		code, out, errs := runKiln(t, ctx, tc.args...)
		if code != exitBadInput || out != "" || strings.TrimSpace(errs) != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}
