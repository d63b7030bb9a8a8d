package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
)

// TestKillAndResume runs a campaign as a child process (this test binary
// acting as kiln), kills it with SIGKILL at random moments, restarts it each
// time, and checks at the end that every task has exactly one verdict, that
// every verdict is right (the script model answers every task correctly, so
// a lost or mangled answer would show as a failure), and that the store is
// intact.
func TestKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const kills = 24
	items, err := prompts.LoadBuiltinCorpus("c2x86")
	if err != nil {
		t.Fatal(err)
	}
	items = items[:60]
	dir := t.TempDir()
	for _, it := range items {
		d := filepath.Join(dir, "corpus", it.ID)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"meta.json": fmt.Sprintf(`{"function": %q, "categories": [%q]}`, it.Function, it.Categories[0])}
		for name, body := range it.Files {
			files[name] = body
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var lines []string
	for _, it := range items {
		resp := "```asm\n" + gccAsm(t, it, "-O0") + "```"
		b, _ := json.Marshal(map[string]string{"match": "`" + it.Function + "`", "response": resp, "reasoning": "r"})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 60 items x 3 samples; 200 ms of model latency per call, so that the
	// campaign outlives the kills.
	spec := `name: crash
lane: c2x86
tasks: {corpus: corpus, samples_per_task: 3}
models:
  - {name: replay, kind: script, script: answers.jsonl, latency: 200ms, concurrency: 4}
concurrency: 4
`
	specPath := filepath.Join(dir, "crash.yaml")
	if err := os.WriteFile(specPath, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	child := func(args ...string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "KILN_TEST_MAIN=1")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	started := false
	killed := 0
	for killed < kills {
		var cmd *exec.Cmd
		if !started {
			cmd = child("run", "--data", data, "--log-level", "error", specPath)
		} else {
			cmd = child("resume", "--data", data, "--log-level", "error", "crash")
		}
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		delay := time.Duration(150+rng.IntN(750)) * time.Millisecond
		select {
		case err := <-done:
			// Finished before the kill: the campaign is complete.
			t.Fatalf("the campaign ended before %d kills (after %d; err %v): make it longer\n%s", kills, killed, err, out)
		case <-time.After(delay):
			// SIGKILL the whole process group: kiln and its sandbox children.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			killed++
		}
		if !started {
			started = campaignExists(t, data, "crash")
		}
	}
	// Run to completion.
	cmd := child("resume", "--data", data, "--log-level", "error", "crash")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, out)
	}

	ctx := context.Background()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Check(ctx); err != nil {
		t.Fatalf("store integrity: %v", err)
	}
	c, err := st.Campaign(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if n.Fail > 0 {
		res, _ := st.Results(ctx, c.ID, -1)
		for _, r := range res {
			if !r.Verdict.Pass {
				t.Logf("%s: %s at %s: %.1500s", r.Task.Key, r.Verdict.Class, r.Verdict.Stage, r.Verdict.Diagnostic)
			}
		}
	}
	if c.State != runs.CampaignDone || n.Tasks != 180 || n.Done != 180 || n.Pass != 180 {
		t.Fatalf("after %d kills: state %s, counts %+v; want 180 tasks done and passing", killed, c.State, n)
	}
	tasks, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	releases := 0
	for _, task := range tasks {
		atts, err := st.Attempts(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		judged := 0
		for _, a := range atts {
			vs, err := st.Verdicts(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if v.Revision == 0 {
					judged++
				}
			}
		}
		if judged != 1 {
			t.Errorf("task %s has %d original verdicts, want exactly 1", task.Key, judged)
		}
		if task.Leases > 1 {
			releases++
		}
	}
	t.Logf("%d kills; %d of %d tasks were leased more than once (work a kill interrupted)", killed, releases, len(tasks))
}

func campaignExists(t *testing.T, data, name string) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(data, "kiln.db")); err != nil {
		return false
	}
	st, err := runs.Open(context.Background(), data, nil)
	if err != nil {
		t.Fatalf("open store after a kill: %v", err)
	}
	defer st.Close()
	_, err = st.Campaign(context.Background(), name)
	return err == nil
}
