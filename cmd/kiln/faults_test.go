package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/report"
)

// faultClass is the class kiln must give each fault the fake server injects
// (agent.FaultClass, as "kiln run" prints it).
var faultClass = map[string]string{
	"timeout":  "timeout",      // no headers until the client's timeout
	"stall":    "timeout",      // the stream starts, then stalls
	"429":      "rate_limited", // Retry-After: 0
	"429wait":  "rate_limited", // Retry-After: 1
	"500":      "server_error",
	"502":      "server_error", // an HTML page from a proxy
	"503":      "server_error",
	"truncate": "truncated",    // connection dropped mid-stream
	"badjson":  "bad_response", // a data: line that is not JSON
	"nonjson":  "bad_response", // 200, application/json, not JSON
	"html":     "bad_response", // 200, an HTML page, no event stream
	"toolong":  "bad_response", // one 9 MiB SSE line
}

// TestLLMFaults runs a campaign against an OpenAI-compatible server that
// injects, by a fixed schedule per task, every kind of fault a model server
// shows: hangs past the client's timeout (before the headers and mid-stream),
// 429 storms (one longer than the retries), 500/502/503, a stream cut without
// [DONE], a garbage data: line, 200 bodies that are not JSON or no event
// stream, empty answers, answers of several megabytes and one SSE line past
// the client's limit. It checks that the campaign completes with exactly one
// verdict per task and the expected outcome for each, that kiln counts every
// injected fault under the right class (the "model faults" line of kiln
// run), that Retry-After is honoured, and that nothing leaks: no goroutine
// and no HTTP connection outlives the run.
func TestLLMFaults(t *testing.T) {
	// Not parallel: the goroutine count is process-wide.
	bs := []behaviour{
		{id: "bit_001_popcount", turns: []string{"right"}, pass: true}, // control
		{id: "bit_002_reverse_bits", turns: []string{"right"}, fault: "timeout", pass: true},
		{id: "bit_003_power_of_two", turns: []string{"right"}, fault: "stall", pass: true},
		{id: "bit_004_clz_manual", turns: []string{"right"}, fault: "429x2", pass: true},
		{id: "bit_005_rotate", turns: []string{"right"}, fault: "429waitx2", pass: true},
		// Four 429s outlive the three tries: the task goes back to the
		// queue and its second lease succeeds.
		{id: "bit_006_bswap", turns: []string{"right"}, fault: "429x4", pass: true},
		{id: "bit_007_parity", turns: []string{"right"}, fault: "500", pass: true},
		{id: "bit_008_gray_code", turns: []string{"right"}, fault: "502", pass: true},
		{id: "bit_009_bit_field_extract", turns: []string{"right"}, fault: "503", pass: true},
		{id: "bit_010_morton", turns: []string{"right"}, fault: "truncate", pass: true},
		{id: "bit_011_crc32", turns: []string{"right"}, fault: "badjson", pass: true},
		{id: "bit_012_xorshift", turns: []string{"right"}, fault: "nonjson", pass: true},
		{id: "bit_013_fnv1a", turns: []string{"right"}, fault: "html", pass: true},
		{id: "bit_014_hamming", turns: []string{"right"}, fault: "toolong", pass: true},
		// Three different faults use up the tries; the second lease passes.
		{id: "bit_015_sign_extend", turns: []string{"right"}, fault: "503,timeout,429", pass: true},
		// A fault on the repair turn's call.
		{id: "bit_016_lowest_set_bit", turns: []string{"wrong", "right"}, fault: ",503", pass: true, repairs: 1},
		{id: "bit_017_double_bits", turns: []string{"empty", "right"}, pass: true, repairs: 1},
		{id: "bit_018_adler32", turns: []string{"empty"}, class: "no_answer", repairs: 1},
		{id: "bit_019_base64_encode", turns: []string{"bigprose"}, pass: true},
		{id: "bit_020_transpose8x8", turns: []string{"bigasm"}, pass: true},
	}
	wantLeases := map[string]int{"bit_006_bswap": 2, "bit_015_sign_extend": 2}

	baseline := runtime.NumGoroutine()
	f := newFakeLLM(t, bs)
	var conns connTracker
	srv := httptest.NewUnstartedServer(f.openai())
	srv.Config.ConnState = conns.track
	srv.Start()
	serverUp := true
	defer func() {
		if serverUp {
			srv.Close()
		}
	}()

	dir := t.TempDir()
	ids := make([]string, len(bs))
	for i, b := range bs {
		ids[i] = b.id
	}
	// A 2 s timeout per call: the hangs cost that much each.
	specPath := writeSpec(t, dir, "faults", fmt.Sprintf(`  - {name: vllm, kind: openai, base_url: %s/v1, model: qwen-test, concurrency: 4, timeout: 2s}`, srv.URL), ids)
	data := filepath.Join(dir, "data")
	sharedCaches(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	code, out, errs := runKiln(t, ctx, "run", "--data", data, specPath)
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("kiln run: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	checkResults(t, data, "faults", f, bs, 100, 50)

	// Exactly one original verdict per task; a task whose tries ran out
	// was leased again.
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Campaign(ctx, "faults")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := originalVerdicts(t, st, tasks)
	var big struct{ transcript, answer int }
	for _, task := range tasks {
		item := task.Meta["item"]
		if verdicts[task.ID] != 1 {
			t.Errorf("%s: %d original verdicts, want 1", item, verdicts[task.ID])
		}
		want := wantLeases[item]
		if want == 0 {
			want = 1
		}
		if task.Leases != want {
			t.Errorf("%s: leased %d times, want %d", item, task.Leases, want)
		}
		if item == "bit_019_base64_encode" || item == "bit_020_transpose8x8" {
			atts, err := st.Attempts(ctx, task.ID)
			if err != nil || len(atts) != 1 {
				t.Fatalf("%s: attempts %d, %v", item, len(atts), err)
			}
			if item == "bit_019_base64_encode" {
				big.transcript = len(atts[0].Transcript)
			} else {
				big.answer = len(atts[0].Answer)
			}
		}
	}
	st.Close()
	if big.transcript < bigAnswer || big.answer < bigAnswer {
		t.Errorf("big answers not kept whole: transcript %d bytes, answer %d bytes, want over %d", big.transcript, big.answer, bigAnswer)
	}

	// Every scheduled fault was served, and kiln counted each under its class.
	f.mu.Lock()
	injected := maps.Clone(f.injected)
	served := maps.Clone(f.served)
	times := maps.Clone(f.times)
	f.mu.Unlock()
	scheduled := map[string]int{}
	for _, b := range bs {
		for _, k := range faultSchedule(b.fault) {
			if k != "" {
				scheduled[k]++
			}
		}
	}
	if !maps.Equal(injected, scheduled) {
		t.Errorf("faults served %v, scheduled %v", injected, scheduled)
	}
	wantClasses := map[string]int{}
	for k, n := range injected {
		cl, ok := faultClass[k]
		if !ok {
			t.Fatalf("no class for fault %q", k)
		}
		wantClasses[cl] += n
	}
	gotClasses := parseFaultLine(t, out)
	if !maps.Equal(gotClasses, wantClasses) {
		t.Errorf("kiln counted faults %v, want %v (injected %v)\nstdout: %s", gotClasses, wantClasses, injected, out)
	}
	// The same counts are stored with the campaign and reported.
	if code, rout, rerrs := runKiln(t, ctx, "report", "--json", "--data", data, "faults"); code != 0 {
		t.Errorf("kiln report: exit %d: %s", code, rerrs)
	} else {
		var rep struct {
			ModelFaults map[string]int `json:"model_faults"`
		}
		if err := json.Unmarshal([]byte(rout), &rep); err != nil || !maps.Equal(rep.ModelFaults, wantClasses) {
			t.Errorf("report model_faults %v (%v), want %v", rep.ModelFaults, err, wantClasses)
		}
	}
	if !strings.Contains(errs, "failed model calls in this run") {
		t.Errorf("no fault summary in the log:\n%.2000s", errs)
	}
	if served["empty"] != 3 || served["bigprose"] != 1 || served["bigasm"] != 1 {
		t.Errorf("answers served %v, want 3 empty, 1 bigprose, 1 bigasm", served)
	}
	// Retry-After: 1 was waited for (the backoff alone is at most 20 ms).
	fn := corpusItem(t, "bit_005_rotate").Function
	if ts := times[fn]; len(ts) != 3 {
		t.Errorf("%s: %d requests, want 3", fn, len(ts))
	} else {
		for i := 1; i < 3; i++ {
			if d := ts[i].Sub(ts[i-1]); d < 900*time.Millisecond {
				t.Errorf("%s: retry %d came %v after a 429 with Retry-After: 1", fn, i, d)
			}
		}
	}

	// No leaks: once the client's idle connections are closed, the
	// server sees every connection closed (no response body left open),
	// and the goroutines are back to what they were before the server.
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if open := conns.waitClosed(10 * time.Second); open > 0 {
		t.Errorf("%d connections to the fake server still open after the run (%s)", open, conns.summary())
	}
	srv.Close()
	serverUp = false
	if n, stacks := settleGoroutines(baseline, 10*time.Second); n > baseline {
		t.Errorf("goroutines: %d before, %d after the campaign:\n%s", baseline, n, stacks)
	}

	total := 0
	for _, n := range injected {
		total += n
	}
	keys := slices.Sorted(maps.Keys(injected))
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, injected[k]))
	}
	t.Logf("LLM faults: %d tasks, each judged once, in %v; %d faults injected and survived (%s); classified by kiln as %s; "+
		"plus %d empty answers and 2 answers of %d MiB; %d HTTP connections, all closed; goroutines %d before, back to baseline after",
		len(bs), elapsed.Round(time.Second), total, strings.Join(parts, ", "), report.TopClasses(gotClasses, len(gotClasses)),
		served["empty"], bigAnswer>>20, conns.total(), baseline)
}

// parseFaultLine reads the "model faults ...: class n, class n" line of
// kiln run's output.
func parseFaultLine(t *testing.T, out string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		_, list, ok := strings.Cut(line, "model faults (failed calls, retried ones included): ")
		if !ok {
			continue
		}
		for _, part := range strings.Split(list, ", ") {
			name, num, _ := strings.Cut(part, " ")
			n, err := strconv.Atoi(num)
			if err != nil {
				t.Fatalf("fault line %q: %v", line, err)
			}
			got[name] = n
		}
	}
	return got
}

// originalVerdicts counts each task's original (revision 0) verdicts.
func originalVerdicts(t testing.TB, st *runs.Store, tasks []runs.Task) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	for _, task := range tasks {
		atts, err := st.Attempts(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range atts {
			vs, err := st.Verdicts(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range vs {
				if v.Revision == 0 {
					out[task.ID]++
				}
			}
		}
	}
	return out
}

// connTracker follows an http.Server's connections (its ConnState hook).
type connTracker struct {
	mu    sync.Mutex
	state map[net.Conn]http.ConnState
}

func (c *connTracker) track(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == nil {
		c.state = map[net.Conn]http.ConnState{}
	}
	c.state[conn] = s
}

func (c *connTracker) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.state {
		if s != http.StateClosed && s != http.StateHijacked {
			n++
		}
	}
	return n
}

func (c *connTracker) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.state)
}

func (c *connTracker) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	by := map[string]int{}
	for _, s := range c.state {
		by[s.String()]++
	}
	return fmt.Sprint(by)
}

// waitClosed waits up to d for every connection to close and returns how
// many are still open.
func (c *connTracker) waitClosed(d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := c.open()
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settleGoroutines waits up to d for the goroutine count to drop to max and
// returns the count, with every goroutine's stack when it stays above.
func settleGoroutines(max int, d time.Duration) (int, string) {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= max {
			return n, ""
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			return n, string(buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
