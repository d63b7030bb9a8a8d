package web

// The dashboard at scale: a campaign of 100k judged tasks (the issue's
// figure). The store is filled with SQL in a few statements (the engine
// would take hours to judge that many), then the pages are timed through
// the real handler. Run:
//
//	go test ./runs/web -run '^$' -bench . -benchtime 20x
//
// Figures and how they were taken: DASHBOARD_BENCH.md.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
)

const benchTasks = 100_000

// bigFixture is a store holding one done campaign of n judged tasks
// (outcomes by i%10: 6 pass, 2 wrong_output, 1 compile_error, 1 pending),
// 12 categories, 2 models, 3 rounds; and nine small campaigns beside it.
func bigFixture(b *testing.B, n int) (*Handler, runs.Campaign) {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	st, err := runs.Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	camp, err := st.CreateCampaign(ctx, runs.Campaign{Name: "big", Lane: "cuda-synth", Spec: []byte("name: big\nlane: cuda-synth\n")})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 9 {
		c, err := st.CreateCampaign(ctx, runs.Campaign{Name: fmt.Sprintf("small-%d", i), Lane: "c2x86", Spec: []byte("lane: c2x86\n")})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.AddTasks(ctx, c.ID, []runs.Task{{Key: "k", Files: map[string]string{}, Meta: map[string]string{}, Categories: []string{"x"}}}); err != nil {
			b.Fatal(err)
		}
	}
	tasks := make([]runs.Task, n)
	for i := range tasks {
		tasks[i] = runs.Task{Round: i % 3, Key: fmt.Sprintf("r%d/item%06d#0", i%3, i), Files: map[string]string{"program.cu": "__global__ void k() {}"},
			Meta: map[string]string{}, Categories: []string{fmt.Sprintf("cat%02d", i%12)}, Prompt: "write a kernel"}
	}
	if _, err := st.AddTasks(ctx, camp.ID, tasks); err != nil {
		b.Fatal(err)
	}
	if err := st.SetCampaignState(ctx, camp.ID, runs.CampaignRunning, ""); err != nil {
		b.Fatal(err)
	}
	if err := st.SetCampaignState(ctx, camp.ID, runs.CampaignDone, ""); err != nil {
		b.Fatal(err)
	}
	st.Close()
	// Attempts and verdicts by SQL: one attempt per task, its verdict, the
	// task marked done (the columns are the store's schema).
	db, err := sql.Open("sqlite", filepath.Join(dir, "kiln.db"))
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now().UTC().Add(-5 * time.Hour).Format("2006-01-02T15:04:05.000000000Z")
	for _, q := range []string{
		`INSERT INTO attempts (id, task_id, number, endpoint, model, answer, transcript, prompt_tokens, completion_tokens,
			reasoning_tokens, prompt_source, completion_source, reasoning_source, latency_ms, ttft_ms, calls, turns, tool_calls,
			repair_turns, error, started_at, finished_at, saved_at)
		SELECT 'a-' || id, id, 1, 'http://llm/v1', CASE seq % 2 WHEN 0 THEN 'qwen' ELSE 'llama' END,
			'__global__ void k() { /* answer ' || seq || ' */ }', '{"messages":[]}', 800, 400, 100, 'server', 'server', 'server',
			2000, 150, 1, 1, 0, 0, '', strftime('%Y-%m-%dT%H:%M:%f000000Z', ?1, '+' || (seq / 6) || ' seconds'),
			strftime('%Y-%m-%dT%H:%M:%f000000Z', ?1, '+' || (seq / 6 + 2) || ' seconds'), ?1
		FROM tasks WHERE campaign_id = ?2`,
		`INSERT INTO verdicts (id, attempt_id, task_id, revision, pass, class, stage, stages, diagnostic, measurements,
			artifacts, toolchain, policy, created_at)
		SELECT 'v-' || t.id, 'a-' || t.id, t.id, 0,
			CASE WHEN t.seq % 10 IN (6, 7, 8) THEN 0 ELSE 1 END,
			CASE t.seq % 10 WHEN 6 THEN 'wrong_output' WHEN 7 THEN 'wrong_output' WHEN 8 THEN 'compile_error' ELSE '' END,
			'run',
			CASE WHEN t.seq % 10 = 9 THEN '[{"name":"compile","ok":true},{"name":"gpu-run","ok":false,"skipped":true}]'
				ELSE '[{"name":"compile","ok":true}]' END,
			CASE WHEN t.seq % 10 IN (6, 7) THEN 'line 3: expected "4" got "5"' ELSE '' END,
			'{}', '{}', '{"nvcc":"11.8"}', 'p', ?1
		FROM tasks t WHERE t.campaign_id = ?2`,
		`UPDATE tasks SET state = 'done', judged_attempt_id = 'a-' || id, done_at = ?1 WHERE campaign_id = ?2`,
		// The outcome columns the store keeps on every write.
		`UPDATE tasks SET outcome = CASE WHEN seq % 10 IN (6, 7, 8) THEN 'fail' WHEN seq % 10 = 9 THEN 'pending' ELSE 'pass' END,
			class = CASE seq % 10 WHEN 6 THEN 'wrong_output' WHEN 7 THEN 'wrong_output' WHEN 8 THEN 'compile_error' ELSE '' END,
			model = CASE seq % 2 WHEN 0 THEN 'qwen' ELSE 'llama' END,
			prompt_tokens = 800, completion_tokens = 400, reasoning_tokens = 100
		WHERE campaign_id = ?2 AND ?1 <> ''`,
	} {
		if _, err := db.ExecContext(ctx, q, start, camp.ID); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	st, err = runs.Open(ctx, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cnt, err := st.Counts(ctx, camp.ID, -1)
	if err != nil || cnt.Done != n || cnt.Pass != n*6/10 || cnt.Pending != n/10 || cnt.Fail != n*3/10 {
		b.Fatalf("fixture counts %+v, %v", cnt, err)
	}
	d := &engine.Daemon{Engine: &engine.Engine{Store: st}}
	h, err := New(Config{Store: st, Service: d})
	if err != nil {
		b.Fatal(err)
	}
	return h, camp
}

func benchPage(b *testing.B, h http.Handler, path, want string) {
	b.Helper()
	var bytes int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
			b.Fatalf("GET %s: %d\n%.300s", path, rec.Code, rec.Body.String())
		}
		bytes = rec.Body.Len()
	}
	b.ReportMetric(float64(bytes), "page-bytes")
}

func BenchmarkDashboard100k(b *testing.B) {
	h, camp := bigFixture(b, benchTasks)
	// The last page key of the browser: the first page's "next" link
	// names it; a deep page is found by key, not by offset.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/campaigns/"+camp.ID+"/verdicts?after=99000", nil))
	b.Run("list", func(b *testing.B) { benchPage(b, h, "/", "big") })
	b.Run("campaign", func(b *testing.B) { benchPage(b, h, "/campaigns/"+camp.ID, "cat11") })
	b.Run("stats", func(b *testing.B) { benchPage(b, h, "/campaigns/"+camp.ID+"/stats", "wrong_output") })
	b.Run("verdicts-first", func(b *testing.B) { benchPage(b, h, "/campaigns/"+camp.ID+"/verdicts", "next-page") })
	b.Run("verdicts-deep", func(b *testing.B) {
		benchPage(b, h, "/campaigns/"+camp.ID+"/verdicts?after=90000", "next-page")
	})
	b.Run("verdicts-class-filter", func(b *testing.B) {
		benchPage(b, h, "/campaigns/"+camp.ID+"/verdicts?class=compile_error&model=qwen&after=50000", "next-page")
	})
	b.Run("verdicts-rare-filter", func(b *testing.B) {
		// cat05 pending: 1 in 60 tasks match, scanned from the start.
		benchPage(b, h, "/campaigns/"+camp.ID+"/verdicts?category=cat05&outcome=pending", "next-page")
	})
	b.Run("sample", func(b *testing.B) {
		rows, err := h.cfg.Store.BrowseVerdicts(context.Background(), camp.ID, runs.VerdictFilter{Round: -1}, 77_000, 1)
		if err != nil || len(rows) != 1 {
			b.Fatal(rows, err)
		}
		benchPage(b, h, "/attempts/"+rows[0].AttemptID, "Answer")
	})
	_ = io.Discard
}
