package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
)

type fixture struct {
	st      *runs.Store
	d       *engine.Daemon
	h       *Handler
	srv     *httptest.Server
	camp    runs.Campaign
	attempt map[string]string // task key -> attempt id
}

const testSpec = "name: web-test\nlane: cuda-synth\nmodels:\n  - name: m\n    api_key: sk-live-SECRET123\n    api_key_env: OPENAI_KEY\n"

// newFixture stores a campaign of n judged tasks: outcomes cycle pass,
// wrong_output, pending, compile_error; every fifth task is also "loops".
func newFixture(t *testing.T, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{st: st, attempt: map[string]string{}}
	f.d = &engine.Daemon{Engine: &engine.Engine{Store: st},
		Prepare: func(b []byte) (runs.Campaign, error) {
			if strings.Contains(string(b), "bogus") {
				return runs.Campaign{}, &api.BadSpec{Err: errors.Join(errors.New("lane: unknown lane \"bogus\""), errors.New("models: none"))}
			}
			return runs.Campaign{Name: "submitted", Lane: "c2x86", Spec: b}, nil
		},
		Plan: func(ctx context.Context, c runs.Campaign) (*engine.Plan, error) {
			return nil, errors.New("no lanes in this test")
		}}
	if err := f.d.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.d.Stop(context.Background()) })
	f.camp, err = st.CreateCampaign(ctx, runs.Campaign{Name: "web-test", Lane: "cuda-synth", Spec: []byte(testSpec)})
	if err != nil {
		t.Fatal(err)
	}
	var tasks []runs.Task
	for i := range n {
		cats := []string{"basic"}
		if i%5 == 0 {
			cats = append(cats, "loops")
		}
		tasks = append(tasks, runs.Task{Key: fmt.Sprintf("r0/k%05d#0", i), Files: map[string]string{"program.cu": "__global__ void k(int *x) { x[0] = 1; }\n"},
			Meta: map[string]string{}, Categories: cats, Prompt: "Write a CUDA program <b>now</b>."})
	}
	if _, err := st.AddTasks(ctx, f.camp.ID, tasks); err != nil {
		t.Fatal(err)
	}
	put := func(s string) string {
		h, err := st.Blobs().Put([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	outCUDA, outHIP, bin := put("sum 10\nmax 4\nmin 1\n"), put("sum 10\nmax 5\nmin 1\n"), put("\x7fELF\x00\x01binary")
	src := put("#include <cstdio>\n__global__ void k(int *x) { x[0] = 1; } // kernel\n")
	start := time.Now().UTC().Add(-10 * time.Minute)
	for i := 0; ; i++ {
		l, err := st.Claim(ctx, f.camp.ID, "w", time.Minute)
		if errors.Is(err, runs.ErrNoTask) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a := runs.Attempt{Endpoint: "http://llm:8000/v1", Model: []string{"qwen", "llama"}[i%2],
			Answer: "```cuda\n__global__ void k(int *x) { x[0] = 1; }\n<script>alert(1)</script>\n```",
			Transcript: []byte(`[{"role":"system","content":"You write CUDA."},` +
				`{"role":"user","content":"Write a CUDA program."},` +
				`{"role":"assistant","content":"","reasoning":"Let me think about the kernel.","tool_calls":[{"id":"call_1","name":"compile","arguments":{"source":"int main(){}"}}]},` +
				`{"role":"tool","content":"compiled OK","tool_call_id":"call_1","name":"compile"},` +
				`{"role":"assistant","content":"Here it is:\n` + "```cuda\\n__global__ void k() {}\\n```" + `"}]`),
			Usage:     runs.Usage{PromptTokens: 100, CompletionTokens: 50, PromptSource: "server", CompletionSource: "server", ReasoningSource: "server", LatencyMS: 900, TTFTMS: 80, Calls: 1},
			StartedAt: start.Add(time.Duration(i) * time.Second), FinishedAt: start.Add(time.Duration(i)*time.Second + 500*time.Millisecond)}
		v := runs.Verdict{Pass: true, Stage: "run", Stages: []byte(`[{"name":"compile","ok":true,"duration_ns":1500000000}]`),
			Measurements: map[string]float64{"run_ms": 12.5}, Toolchain: map[string]string{"nvcc": "11.8"}, Policy: "cuda-synth/v1",
			Artifacts: map[string]string{"cuda_source": src, "output_cuda": outCUDA, "output_hip": outCUDA, "cuda_binary": bin}}
		switch i % 4 {
		case 1:
			v.Pass, v.Class, v.Diagnostic = false, "wrong_output", "line 2: expected \"max 4\"\n got \"max 5\""
			v.Artifacts["output_hip"] = outHIP
		case 2:
			v.Stages = []byte(`[{"name":"compile","ok":true},{"name":"gpu-run","ok":false,"skipped":true,"detail":"no GPU"}]`)
		case 3:
			v.Pass, v.Class, v.Stage, v.Diagnostic = false, "compile_error", "compile", "error: expected ';'"
		}
		if err := st.Finish(ctx, l, a, v); err != nil {
			t.Fatal(err)
		}
		f.attempt[l.Task.Key] = ""
	}
	rows, err := st.BrowseVerdicts(ctx, f.camp.ID, runs.VerdictFilter{Round: -1}, 0, runs.MaxBrowse)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		f.attempt[r.TaskKey] = r.AttemptID
	}
	if err := st.SetCampaignState(ctx, f.camp.ID, runs.CampaignRunning, ""); err != nil {
		t.Fatal(err)
	}
	f.h, err = New(Config{Store: st, Service: f.d,
		Export: func(ctx context.Context, id string, w io.Writer) error {
			_, err := io.WriteString(w, `{"campaign":"`+id+`"}`+"\n")
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.h)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) get(t *testing.T, path string, wantCode int) string {
	t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, wantCode, b)
	}
	return string(b)
}

func mustContain(t *testing.T, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("%s lacks %q", what, s)
		}
	}
}

func TestPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 12)
	id := f.camp.ID

	list := f.get(t, "/", 200)
	// 12 tasks: 3 pass, 3 wrong_output, 3 pending, 3 compile_error.
	mustContain(t, "list", list, "web-test", "cuda-synth", `href="/campaigns/`+id+`"`, `<td class="n pass">3</td>`,
		`<td class="n fail">6</td>`, `<td class="n pending">3</td>`, "12/12", "/min", "finishing")

	page := f.get(t, "/campaigns/"+id, 200)
	mustContain(t, "campaign page", page, "Categories", "basic", "loops", "wrong_output", "compile_error",
		`data-events="/v1/campaigns/`+id+`/events"`, "Rounds", "Throughput and tokens", "<polyline", "95% CI")
	if strings.Contains(page, "SECRET123") || !strings.Contains(page, "OPENAI_KEY") {
		t.Error("the spec shown must hide the api_key value and keep the env var name")
	}
	stats := f.get(t, "/campaigns/"+id+"/stats", 200)
	if strings.Contains(stats, "<html") || !strings.Contains(stats, "Failure classes") {
		t.Errorf("stats fragment: %.200s", stats)
	}

	v := f.get(t, "/campaigns/"+id+"/verdicts?class=wrong_output", 200)
	if n := strings.Count(v, `<a href="/attempts/`); n != 3 {
		t.Errorf("class filter: %d rows, want 3", n)
	}
	v = f.get(t, "/campaigns/"+id+"/verdicts?outcome=pending&category=loops", 200)
	// loops: tasks 0, 5, 10 -> outcomes 0, 1, 2: one pending (task 10).
	if n := strings.Count(v, `<a href="/attempts/`); n != 1 || !strings.Contains(v, "r0/k00010#0") {
		t.Errorf("pending loops: %d rows\n%s", n, v)
	}
	v = f.get(t, "/campaigns/"+id+"/verdicts?model=llama&round=0", 200)
	if n := strings.Count(v, `<a href="/attempts/`); n != 6 {
		t.Errorf("model filter: %d rows, want 6", n)
	}
	f.get(t, "/campaigns/"+id+"/verdicts?round=x", 400)
	f.get(t, "/campaigns/"+id+"/verdicts?outcome=maybe", 400)
	f.get(t, "/campaigns/nope", 404)

	sample := f.get(t, "/attempts/"+f.attempt["r0/k00001#0"], 200)
	mustContain(t, "sample page", sample, "Let me think about the kernel.", "tool call call_1", "<b>compile</b>",
		"compiled OK", "wrong_output", "&lt;script&gt;alert(", `<span class="tk-kw">__global__</span>`,
		`<span class="ddel">- max 4</span>`, `<span class="dadd">&#43; max 5</span>`, "cuda_binary", "binary",
		"Write a CUDA program &lt;b&gt;now&lt;/b&gt;.", "1.5s", "run_ms")
	if strings.Contains(sample, "<script>alert") {
		t.Error("the answer is not escaped")
	}
	pending := f.get(t, "/attempts/"+f.attempt["r0/k00002#0"], 200)
	mustContain(t, "pending sample", pending, `<span class="pending">pending</span>`, "skipped", "no GPU")

	raw := f.get(t, "/attempts/"+f.attempt["r0/k00001#0"]+"/artifacts/cuda_binary", 200)
	if raw != "\x7fELF\x00\x01binary" {
		t.Errorf("artifact download = %q", raw)
	}
	f.get(t, "/attempts/"+f.attempt["r0/k00001#0"]+"/artifacts/none", 404)
	f.get(t, "/attempts/nope", 404)
	exp := f.get(t, "/campaigns/"+id+"/export", 200)
	if exp != `{"campaign":"`+id+`"}`+"\n" {
		t.Errorf("export = %q", exp)
	}
	css := f.get(t, "/static/app.css", 200)
	mustContain(t, "css", css, ".tk-kw")
}

func TestVerdictPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2*PageSize+7)
	next := regexp.MustCompile(`id="next-page" href="([^"]+)"|href="([^"]+)" id="next-page"`)
	path := "/campaigns/" + f.camp.ID + "/verdicts"
	seen := map[string]bool{}
	keyRe := regexp.MustCompile(`r0/k\d{5}#0`)
	for pages := 1; ; pages++ {
		body := f.get(t, path, 200)
		rows := strings.Count(body, `<a href="/attempts/`)
		for _, k := range keyRe.FindAllString(body, -1) {
			seen[k] = true
		}
		m := next.FindStringSubmatch(body)
		if m == nil {
			if pages != 3 || rows != 7 {
				t.Errorf("last page is page %d with %d rows, want page 3 with 7", pages, rows)
			}
			break
		}
		if rows != PageSize {
			t.Errorf("page %d has %d rows", pages, rows)
		}
		u, err := url.Parse(strings.ReplaceAll(m[1]+m[2], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		path = u.String()
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 2*PageSize+7 {
		t.Errorf("paging visited %d tasks", len(seen))
	}
}

func TestActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values) *http.Response {
		t.Helper()
		resp, err := noFollow.PostForm(f.srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A spec with errors: 400 and every error listed.
	resp, err := http.PostForm(f.srv.URL+"/campaigns", url.Values{"spec": {"lane: bogus"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "unknown lane &#34;bogus&#34;") || !strings.Contains(string(b), "models: none") {
		t.Errorf("bad spec: %d\n%s", resp.StatusCode, b)
	}
	if r := post("/campaigns", url.Values{"spec": {""}}); r.StatusCode != 400 {
		t.Errorf("empty spec: %d", r.StatusCode)
	}
	r := post("/campaigns", url.Values{"spec": {"lane: c2x86\n"}})
	if r.StatusCode != http.StatusSeeOther || !strings.HasPrefix(r.Header.Get("Location"), "/campaigns/") {
		t.Errorf("submit: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	// No resume or refine wired: 404, and no button.
	if r := post("/campaigns/"+f.camp.ID+"/resume", nil); r.StatusCode != 404 {
		t.Errorf("resume without a resumer: %d", r.StatusCode)
	}
	page := f.get(t, "/campaigns/"+f.camp.ID, 200)
	if strings.Contains(page, `id="resume"`) || strings.Contains(page, `id="refine"`) || !strings.Contains(page, `id="cancel"`) {
		t.Error("buttons do not follow the wiring and state")
	}
	if r := post("/campaigns/"+f.camp.ID+"/cancel", nil); r.StatusCode != http.StatusSeeOther {
		t.Errorf("cancel: %d", r.StatusCode)
	}
	c, err := f.st.Campaign(context.Background(), f.camp.ID)
	if err != nil || c.State != runs.CampaignCancelled {
		t.Errorf("after cancel: %v %v", c.State, err)
	}
	if r := post("/campaigns/"+f.camp.ID+"/cancel", nil); r.StatusCode != http.StatusConflict {
		t.Errorf("cancel twice: %d", r.StatusCode)
	}
	if r := post("/campaigns/"+f.camp.ID+"/explode", nil); r.StatusCode != 404 {
		t.Errorf("unknown action: %d", r.StatusCode)
	}
}

func TestHighlightAndDiff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src, lang string
		want      []string
	}{
		{"int x = 0x1f; // c\n#include <a>\n", "c", []string{`<span class="tk-kw">int</span>`, `<span class="tk-num">0x1f</span>`, `<span class="tk-cm">// c</span>`, `<span class="tk-pp">#include</span> &lt;a&gt;`}},
		{"f:\n\tmovl\t$1, %eax # one\n", "asm", []string{`<span class="tk-lbl">f:</span>`, `<span class="tk-op">movl</span>`, `<span class="tk-reg">%eax</span>`, `<span class="tk-cm"># one</span>`}},
		{"\tld.global.f32 %f1, [%rd2];\n.reg .pred %p<3>;\n", "asm", []string{`<span class="tk-op">ld.global.f32</span>`, `<span class="tk-reg">%f1</span>`, `<span class="tk-dir">.reg</span>`}},
		{"\tv_add_f32 v1, v2, s[0:1]\n", "asm", []string{`<span class="tk-op">v_add_f32</span>`, `<span class="tk-reg">v1</span>`, `<span class="tk-reg">s[0:1]</span>`}},
		{"def f(x):\n    return '<x>'  # c\n", "python", []string{`<span class="tk-kw">def</span>`, `<span class="tk-str">&#39;&lt;x&gt;&#39;</span>`}},
	} {
		got := string(highlight(tc.src, tc.lang))
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("highlight(%q, %s) = %s\nlacks %s", tc.src, tc.lang, got, w)
			}
		}
	}
	for text, want := range map[string]string{
		"import torch\nclass ModelNew(nn.Module):\n":       "python",
		"#include <cstdio>\n__global__ void k() {}\n":      "c",
		"static int add(int a, int b) { return a + b; }\n": "c",
		"\t.text\n\t.globl f\nf:\n\tmovl %edi, %eax\n":     "asm",
		".version 7.8\n.target sm_86\n":                    "asm",
		"\tv_add_f32 v1, v2, v3\n\ts_endpgm\n":             "asm",
		"sum 10\nmax 4\n":                                  "text",
	} {
		if got := guessLang(text); got != want {
			t.Errorf("guessLang(%q) = %s, want %s", text, got, want)
		}
	}
	lines, cut := diff("a\nb\nc\n", "a\nx\nc\nd\n")
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Op + l.Text + ";")
	}
	if b.String() != " a;-b;+x; c;+d;" || cut {
		t.Errorf("diff = %s", b.String())
	}
	if got := maskSecrets("token: abc\napi_key_env: K\n  password: p w\nname: x"); got != "token: •••• (hidden)\napi_key_env: K\n  password: •••• (hidden)\nname: x" {
		t.Errorf("maskSecrets = %q", got)
	}
}
