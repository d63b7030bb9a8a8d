package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
)

// TestGCCommand runs kiln gc on a store holding a judged task's artifact,
// an old orphan and a young one: the dry run reports the old orphan and
// keeps it, gc removes it (and its emptied fan-out folder) and nothing else.
func TestGCCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	st, err := runs.Open(ctx, data, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	blob := func(s string, age time.Duration) (string, string) {
		h, err := st.Blobs().Put([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(data, "blobs", h[:2], h)
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return h, p
	}
	_, artPath := blob("the answer's assembly", 3*time.Hour)
	orphan, orphanPath := blob(strings.Repeat("an executable nobody refers to ", 100), 3*time.Hour)
	_, youngPath := blob("put a minute ago", time.Minute)
	art := runs.Hash([]byte("the answer's assembly"))
	c, err := st.CreateCampaign(ctx, runs.Campaign{Name: "gc", Lane: "c2x86"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddTasks(ctx, c.ID, []runs.Task{{Key: "t"}}); err != nil {
		t.Fatal(err)
	}
	l, err := st.Claim(ctx, c.ID, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Finish(ctx, l, runs.Attempt{Answer: "x"},
		runs.Verdict{Pass: true, Stage: "run", Artifacts: map[string]string{"answer.s": art}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runKiln(t, ctx, "gc", "--data", data, "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("gc --dry-run: exit %d: %s", code, errs)
	}
	var rep struct {
		runs.GCReport
		MinAge float64 `json:"min_age_s"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("gc --json: %v\n%s", err, out)
	}
	if !rep.DryRun || rep.Blobs != 3 || rep.Live != 1 || rep.Young != 1 || rep.Removed != 1 ||
		rep.RemovedBytes != int64(len(strings.Repeat("an executable nobody refers to ", 100))) || rep.MinAge != 3600 {
		t.Fatalf("dry run report %+v", rep)
	}
	if _, err := os.Stat(orphanPath); err != nil {
		t.Fatalf("dry run removed the orphan: %v", err)
	}

	code, out, errs = runKiln(t, ctx, "gc", "--data", data)
	if code != 0 {
		t.Fatalf("gc: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "removed 1 blobs, 3.0 KiB freed") || !strings.Contains(out, "1 live") {
		t.Errorf("gc output:\n%s", out)
	}
	if _, err := os.Stat(orphanPath); !os.IsNotExist(err) {
		t.Errorf("orphan still stored: %v", err)
	}
	for _, p := range []string{artPath, youngPath} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("kept blob removed: %v", err)
		}
	}
	if p := filepath.Dir(orphanPath); orphan[:2] != art[:2] && orphan[:2] != filepath.Base(filepath.Dir(youngPath)) {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("emptied fan-out folder %s left: %v", p, err)
		}
	}

	if code, _, _ := runKiln(t, ctx, "gc", "--data", data, "--min-age", "-1s"); code != exitBadInput {
		t.Errorf("negative --min-age: exit %d, want %d", code, exitBadInput)
	}
}

// TestSandboxRootRemoved: a kiln process that ran sandboxes leaves no
// scratch root for its data folder under the temp folder, and removes the
// empty roots that earlier processes left for other data folders.
func TestSandboxRootRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	data := t.TempDir()
	root, err := sandboxes.ScratchRootFor(data)
	if err != nil {
		t.Fatal(err)
	}
	// An empty root left by an earlier kiln for a data folder gone since.
	stale, err := sandboxes.ScratchRootFor(filepath.Join(t.TempDir(), "gone"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(stale, 0o711); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runKiln(t, ctx, "selftest", "--data", data, "--only", "symlink-plant,write-outside")
	if code != 0 {
		t.Fatalf("selftest: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "2 contained, 0 escaped") {
		t.Errorf("selftest output:\n%s", out)
	}
	for _, dir := range []string{root, stale} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("scratch root %s left behind: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(root)); err != nil {
		t.Errorf("the sandbox folder itself must stay: %v", err)
	}
}
