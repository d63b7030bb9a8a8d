package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/agent/ollama/ollamatest"
	"github.com/kiln-dev/kiln/runs"
)

// TestRealOllamaKillResume: a c2x86 campaign against a real Ollama server
// (agent/ollama/ollamatest: the server built from the ollama module,
// serving the tiny model, OLLAMA_NUM_PARALLEL 2 under kiln concurrency 4).
// The server is killed mid-campaign: the campaign stops with the unjudged
// tasks queued. The server restarts and `kiln resume` finishes: every task
// judged exactly once, nothing lost. The tiny model answers in prose, so
// every verdict is no_answer (the path is under test, not the answers).
func TestRealOllamaKillResume(t *testing.T) {
	t.Parallel()
	s := ollamatest.Start(t, ollamatest.Options{NumParallel: 2})
	dir := t.TempDir()
	ids := []string{"int_001_gcd_unsigned", "int_002_lcm_checked", "int_003_isqrt_newton", "int_004_digit_sum",
		"int_005_reverse_digits", "int_006_mod_pow", "int_007_is_leap_year", "int_008_floor_div_mod"}
	ids = existingItems(t, ids)
	name := "real-ollama"
	spec := writeSpec(t, dir, name, fmt.Sprintf(`  - {name: local, kind: ollama, base_url: %s, model: %s, num_ctx: 16384, keep_alive: 5m, concurrency: 4}`,
		s.URL, ollamatest.ModelName), ids)
	// The tiny model answers in prose, so with a repair turn each task
	// costs a second, longer call: half of the test's CPU, spent by the
	// llama.cpp runner (prompt tokens are bytes). The default tier asks
	// once per task; the long tier keeps writeSpec's repair turn. (Repair
	// turns over the native adapter: TestEndToEndOllama; a second turn on
	// the real server: agent/ollama/ollamatest TestInteropChat's tool round
	// trip.)
	if !longTier {
		setSpecLine(t, spec, "agent: {repair_turns: 1, max_tool_calls: 4}", "agent: {repair_turns: 0, max_tool_calls: 4}")
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	type result struct {
		code      int
		out, errs string
	}
	first := make(chan result, 1)
	go func() {
		code, out, errs := runKiln(t, ctx, "run", "--data", data, spec)
		first <- result{code, out, errs}
	}()
	// Kill the server once some tasks are judged and others are not.
	var judgedAtKill int
	for judgedAtKill == 0 {
		select {
		case r := <-first:
			t.Fatalf("the campaign ended before the server was killed (exit %d): make it longer\n%s%s", r.code, r.out, r.errs)
		case <-time.After(200 * time.Millisecond):
		}
		judgedAtKill = doneTasks(t, data, name)
	}
	s.Kill()
	r := <-first
	t.Logf("server killed with %d of %d tasks judged; kiln run exit %d: %.400s", judgedAtKill, len(ids), r.code, r.errs)
	if r.code == 0 {
		t.Fatalf("kiln run succeeded with the server killed mid-campaign:\n%s", r.out)
	}
	afterKill := doneTasks(t, data, name)
	if afterKill >= len(ids) {
		t.Fatalf("every task was judged before the kill took effect: make the campaign longer")
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runKiln(t, ctx, "resume", "--data", data, name)
	if code != 0 {
		t.Fatalf("kiln resume: exit %d\n%s\n%s\nserver log:\n%s", code, out, errs, s.LogTail(3000))
	}
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != runs.CampaignDone || n.Tasks != len(ids) || n.Done != len(ids) || n.Queued != 0 || n.Leased != 0 {
		t.Fatalf("after resume: state %s counts %+v; want %d tasks done", c.State, n, len(ids))
	}
	all, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := originalVerdicts(t, st, all)
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range all {
		if verdicts[task.ID] != 1 {
			t.Errorf("task %s has %d original verdicts, want exactly 1", task.Key, verdicts[task.ID])
		}
	}
	for _, r := range res {
		// The tiny model writes prose: no answer, from the real server.
		if r.Verdict.Class != "no_answer" || r.Attempt.Model == "" || r.Attempt.Usage.CompletionTokens == 0 {
			t.Errorf("%s: class %q model %q usage %+v; want no_answer from a served model", r.Task.Key, r.Verdict.Class,
				r.Attempt.Model, r.Attempt.Usage)
		}
	}
	t.Logf("resumed: %d tasks, each judged once (%d before the kill, %d when kiln run stopped)", len(all), judgedAtKill, afterKill)
}

// existingItems keeps the ids of the builtin c2x86 corpus (so that a
// renamed item fails loudly rather than shrinking the test).
func existingItems(t *testing.T, ids []string) []string {
	t.Helper()
	for _, id := range ids {
		_ = corpusItem(t, id)
	}
	return ids
}

// doneTasks opens the store and counts the campaign's judged tasks (0
// before the campaign exists).
func doneTasks(t *testing.T, data, name string) int {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		return 0
	}
	defer st.Close()
	c, err := st.Campaign(ctx, name)
	if err != nil {
		return 0
	}
	n, err := st.Counts(ctx, c.ID, -1)
	if err != nil {
		return 0
	}
	return n.Done
}

// setSpecLine replaces the line old of the spec file at path with new
// (old must be there).
func setSpecLine(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "\n"+old+"\n", "\n"+new+"\n", 1)
	if s == string(b) {
		t.Fatalf("%s: no line %q", path, old)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
