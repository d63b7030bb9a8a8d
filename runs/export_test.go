package runs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func TestExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "export-me")
	mustAdd(t, s, c.ID, []Task{
		{Key: "r0/a#0", Files: map[string]string{"a.c": "int a;"}, Categories: []string{"loops", "simd"}, Meta: map[string]string{"src": "exebench"}, Prompt: "p-a"},
		{Key: "r0/b#0", Files: map[string]string{"b.c": "int b;"}},
		{Key: "r1/c#0", Round: 1, Files: map[string]string{"c.c": "int c;"}},
	})
	art, err := s.Blobs().Put([]byte("ELF"))
	if err != nil {
		t.Fatal(err)
	}
	// a passes, b fails, c (round 1) passes; leave nothing unjudged.
	for _, pass := range []bool{true, false, true} {
		l, err := s.Claim(ctx, c.ID, "w", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		v := testVerdict(pass)
		v.Artifacts = map[string]string{"bin": art}
		if err := s.Finish(ctx, l, testAttempt(l.Task.Key, l.Number), v); err != nil {
			t.Fatal(err)
		}
	}

	read := func(opt ExportOptions) []Sample {
		t.Helper()
		var buf bytes.Buffer
		n, err := s.Export(ctx, c.ID, &buf, opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []Sample
		sc := bufio.NewScanner(&buf)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var smp Sample
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&smp); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			out = append(out, smp)
		}
		if n != len(out) {
			t.Fatalf("Export returned %d, wrote %d lines", n, len(out))
		}
		return out
	}

	passing := read(ExportOptions{})
	if len(passing) != 2 || passing[0].TaskKey != "r0/a#0" || passing[1].TaskKey != "r1/c#0" {
		t.Fatalf("passing export: %+v", passing)
	}
	a := passing[0]
	res, _ := s.Results(ctx, c.ID, 0)
	want := res[0]
	checks := []struct {
		name string
		ok   bool
	}{
		{"schema", a.Schema == SampleSchema},
		{"id", a.ID == want.Attempt.ID && a.Attempt.ID == want.Attempt.ID},
		{"campaign", a.Campaign == SampleCampaign{ID: c.ID, Name: "export-me"}},
		{"lane/round", a.Lane == "c2x86" && a.Round == 0},
		{"task", a.TaskID == want.Task.ID},
		{"categories", len(a.Categories) == 2 && a.Categories[1] == "simd"},
		{"meta", a.Meta["src"] == "exebench"},
		{"files", a.Files["a.c"] == "int a;" && len(a.Files) == 1},
		{"prompt", a.Prompt == "p-a"},
		{"answer", a.Answer == "answer r0/a#0 #1"},
		{"pass", a.Pass && a.Verdict.Pass},
		{"verdict", a.Verdict.ID == want.Verdict.ID && a.Verdict.Revision == 0 && a.Verdict.Stage == "run" &&
			string(a.Verdict.Stages) == `[{"name":"assemble","ok":true}]`},
		{"usage", a.Usage.PromptTokens == 100 && a.Usage.ReasoningSource == "estimate" && a.Usage.TTFTMS == 90 && a.Usage.Calls == 2},
		{"attempt", a.Attempt.Number == 1 && a.Attempt.Turns == 2 && a.Attempt.RepairTurns == 1 &&
			a.Attempt.StartedAt.Equal(want.Attempt.StartedAt)},
		{"model", a.Model == "qwen-coder" && a.Endpoint == "http://gpu:8000/v1"},
		{"toolchain", a.Toolchain["gcc"] == "12.2.0"},
		{"policy", a.Policy == "c2x86/v1"},
		{"artifacts", a.Artifacts["bin"] == art},
		{"measurements", a.Measurements["cycles"] == 1234.5},
		{"created", a.CreatedAt.Equal(want.Verdict.CreatedAt) && !a.CreatedAt.IsZero()},
		{"no transcript", a.Transcript == nil},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("sample field %s wrong: %+v", ch.name, a)
		}
	}

	all := read(ExportOptions{All: true, Transcripts: true})
	if len(all) != 3 || all[1].Pass || all[1].Verdict.Class != "wrong_output" || all[1].Verdict.Diagnostic == "" {
		t.Fatalf("all export: %+v", all)
	}
	if string(all[0].Transcript) != `[{"role":"user","content":"r0/a#0"}]` {
		t.Fatalf("transcript = %s", all[0].Transcript)
	}
	r1 := 1
	if got := read(ExportOptions{All: true, Round: &r1}); len(got) != 1 || got[0].TaskKey != "r1/c#0" {
		t.Fatalf("round export: %+v", got)
	}

	// A rescore changes what is exported; the sample id stays the attempt id.
	if _, err := s.AddRescore(ctx, a.ID, testVerdict(false)); err != nil {
		t.Fatal(err)
	}
	after := read(ExportOptions{})
	if len(after) != 1 || after[0].TaskKey != "r1/c#0" {
		t.Fatalf("after rescore: %+v", after)
	}
	if got := read(ExportOptions{All: true}); got[0].ID != a.ID || got[0].Verdict.Revision != 1 {
		t.Fatalf("rescored sample: %+v", got[0])
	}
	// Export by name works too.
	var buf bytes.Buffer
	if n, err := s.Export(ctx, "export-me", &buf, ExportOptions{All: true}); err != nil || n != 3 {
		t.Fatalf("export by name: %d %v", n, err)
	}
}

// TestExportTexts: with Texts, text artifacts are inlined and binary ones
// (NUL bytes, invalid UTF-8) stay hashes only; without it nothing is.
func TestExportTexts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "texts")
	mustAdd(t, s, c.ID, []Task{{Key: "r0/a#0", Files: map[string]string{"a.c": "int a;"}}})
	arts := map[string]string{}
	for name, body := range map[string]string{"sass": "code for sm_90\n\tFunction : k\n", "exe": "\x7fELF\x02\x01\x01\x00\x00", "latin1": "caf\xe9"} {
		h, err := s.Blobs().Put([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		arts[name] = h
	}
	l, err := s.Claim(ctx, c.ID, "w", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v := testVerdict(true)
	v.Artifacts = arts
	if err := s.Finish(ctx, l, testAttempt(l.Task.Key, l.Number), v); err != nil {
		t.Fatal(err)
	}
	for _, texts := range []bool{false, true} {
		var buf bytes.Buffer
		if _, err := s.Export(ctx, c.ID, &buf, ExportOptions{Texts: texts}); err != nil {
			t.Fatal(err)
		}
		var smp Sample
		if err := json.Unmarshal(buf.Bytes(), &smp); err != nil {
			t.Fatal(err)
		}
		if len(smp.Artifacts) != 3 {
			t.Errorf("texts=%v: artifacts %v", texts, smp.Artifacts)
		}
		if !texts {
			if smp.ArtifactText != nil {
				t.Errorf("texts off: %v", smp.ArtifactText)
			}
			continue
		}
		if len(smp.ArtifactText) != 1 || smp.ArtifactText["sass"] != "code for sm_90\n\tFunction : k\n" {
			t.Errorf("texts on: %q", smp.ArtifactText)
		}
	}
}

// A pending verdict (passed every stage that ran, one skipped) is neither a
// pass nor a failure: its own count, and exported only when asked.
func TestPendingCountsAndExport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	c := mustCampaign(t, s, "pending")
	mustAdd(t, s, c.ID, []Task{{Key: "r0/done#0"}, {Key: "r0/pending#0"}, {Key: "r0/failed#0"}})
	verdicts := []Verdict{
		testVerdict(true),
		testVerdict(true),
		testVerdict(false),
	}
	verdicts[1].Stages = []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true,"detail":"no GPU"}]`)
	// A failure with a skipped stage after it is a failure, not pending.
	verdicts[2].Stages = []byte(`[{"name":"compile","ok":false},{"name":"run","ok":false,"skipped":true}]`)
	for _, v := range verdicts {
		l, err := s.Claim(ctx, c.ID, "w", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Finish(ctx, l, testAttempt(l.Task.Key, l.Number), v); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Counts(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	if n.Pass != 1 || n.Fail != 1 || n.Pending != 1 || n.Done != 3 {
		t.Errorf("counts %+v: want pass 1, fail 1, pending 1", n)
	}
	keys := func(opt ExportOptions) (out []string) {
		var buf bytes.Buffer
		if _, err := s.Export(ctx, c.ID, &buf, opt); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			var smp Sample
			if err := json.Unmarshal(line, &smp); err != nil {
				t.Fatal(err)
			}
			if smp.Pending != (smp.TaskKey == "r0/pending#0") || smp.Pass != (smp.TaskKey == "r0/done#0") ||
				smp.Verdict.Pending != smp.Pending {
				t.Errorf("%s: pass %v pending %v (verdict pending %v)", smp.TaskKey, smp.Pass, smp.Pending, smp.Verdict.Pending)
			}
			out = append(out, smp.TaskKey)
		}
		return out
	}
	if got := keys(ExportOptions{}); !slices.Equal(got, []string{"r0/done#0"}) {
		t.Errorf("default export: %v", got)
	}
	if got := keys(ExportOptions{Pending: true}); !slices.Equal(got, []string{"r0/done#0", "r0/pending#0"}) {
		t.Errorf("export with pending: %v", got)
	}
	if got := keys(ExportOptions{All: true}); len(got) != 3 {
		t.Errorf("export all: %v", got)
	}
}
