package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Debian's chromium; CI installs it (setup.sh), so
// there a missing browser fails the test rather than skipping it.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on the PATH: setup.sh installs it")
	}
	t.Skip("no chromium on the PATH (apt-get install chromium)")
	return ""
}

// TestDashboardBrowser drives the dashboard of a running "kiln serve" in
// headless Chromium while a script-model campaign runs: the campaigns
// list, the campaign page updating live over Server-Sent Events (no
// reload), the verdict browser and a sample page with its transcript.
// Screenshots are taken at each step (kept in $KILN_SCREENSHOTS when set)
// and the page text at that moment is checked; the browser console must
// stay free of errors (script errors, CSP refusals, failed loads).
func TestDashboardBrowser(t *testing.T) {
	longOnly(t, "the dashboard in headless Chromium (runs/web and runs/api test its pages and event stream over HTTP)")
	t.Parallel()
	chrome := chromiumPath(t)
	dir := t.TempDir()
	good := corpusItem(t, "int_001_gcd_unsigned")
	bad := corpusItem(t, "int_002_lcm_checked")
	var lines []string
	for _, x := range []struct{ fn, resp string }{
		{good.Function, "Here is the assembly.\n```asm\n" + gccAsm(t, good, "-O0") + "```"},
		{bad.Function, "```asm\n\tthis_is_not_an_instruction %eax\n```"},
	} {
		b, _ := json.Marshal(map[string]string{"match": "`" + x.fn + "`", "response": x.resp})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, it := range []string{good.ID, bad.ID} {
		x := corpusItem(t, it)
		d := filepath.Join(dir, "corpus", it)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		meta, _ := json.Marshal(map[string]any{"function": x.Function, "categories": x.Categories})
		for n, body := range map[string]string{"meta.json": string(meta), "function.c": x.Files["function.c"], "driver.c": x.Files["driver.c"]} {
			if err := os.WriteFile(filepath.Join(d, n), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := serveKiln(ctx, t, nil, "--data", filepath.Join(dir, "data"), "--spec-root", dir)
	defer srv.stop(t, 40*time.Second)
	base, cl := "http://"+srv.addr, srv.cl
	// 12 tasks, one answer at a time, each taking the script's latency:
	// several seconds of live progress to watch.
	info, err := cl.Submit(ctx, []byte("name: browser-run\nlane: c2x86\ntasks: {corpus: corpus, samples_per_task: 6}\n"+
		"models: [{name: scripted, kind: script, script: answers.jsonl, latency: 700ms}]\nconcurrency: 1\n"))
	if err != nil {
		t.Fatal(err)
	}

	shots := os.Getenv("KILN_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var consoleErrors []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				consoleErrors = append(consoleErrors, "console."+string(e.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			consoleErrors = append(consoleErrors, fmt.Sprintf("exception: %s (%s:%d)", e.ExceptionDetails.Text, e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				consoleErrors = append(consoleErrors, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	})
	shot := func(name string, wantText ...string) {
		t.Helper()
		var buf []byte
		var body string
		if err := chromedp.Run(bctx, chromedp.Text("body", &body, chromedp.ByQuery), chromedp.FullScreenshot(&buf, 100)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		img, err := png.Decode(bytes.NewReader(buf))
		if err != nil {
			t.Fatalf("%s: screenshot is not a PNG: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 400 {
			t.Errorf("%s: screenshot of %v", name, b)
		}
		if len(buf) < 5000 {
			t.Errorf("%s: screenshot of %d bytes looks blank", name, len(buf))
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range wantText {
			if !strings.Contains(body, w) {
				t.Errorf("%s: page text lacks %q:\n%.1500s", name, w, body)
			}
		}
	}
	intText := func(sel string) int {
		t.Helper()
		var s string
		if err := chromedp.Run(bctx, chromedp.Text(sel, &s, chromedp.ByQuery)); err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("%s = %q", sel, s)
		}
		return n
	}

	// The list.
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#campaigns", chromedp.ByQuery)); err != nil {
		t.Fatalf("list: %v", err)
	}
	shot("1-list", "Campaigns", "browser-run", "c2x86", "throughput")

	// The campaign page while it runs: the counters move without a reload.
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/campaigns/"+info.ID), chromedp.WaitVisible("#live", chromedp.ByQuery),
		chromedp.Evaluate(`window.__sameDocument = true`, nil)); err != nil {
		t.Fatalf("campaign page: %v", err)
	}
	first := intText("#live-done")
	if first >= 12 {
		t.Fatalf("the campaign finished before the page could watch it (%d judged)", first)
	}
	var moved int
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if moved = intText("#live-done"); moved > first {
			break
		}
	}
	if moved <= first {
		t.Fatalf("#live-done stayed at %d", first)
	}
	var same bool
	if err := chromedp.Run(bctx, chromedp.Evaluate(`window.__sameDocument === true`, &same)); err != nil || !same {
		t.Fatalf("the page reloaded instead of updating live (%v)", err)
	}
	shot("2-campaign-live", "browser-run", "judged", "Categories")
	// The end arrives over the stream too; the figures refresh.
	var state string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if err := chromedp.Run(bctx, chromedp.Text("#state", &state, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		if state == "done" {
			break
		}
	}
	if state != "done" || intText("#live-done") != 12 || intText("#live-pass") != 6 || intText("#live-fail") != 6 {
		t.Fatalf("final live counters: state %q done %d pass %d fail %d", state, intText("#live-done"), intText("#live-pass"), intText("#live-fail"))
	}
	time.Sleep(1500 * time.Millisecond) // the stats refresh after the end event
	shot("3-campaign-done", "done", "Failure classes", "Rounds", "50.0%")

	// The verdict browser, filtered to failures, then one sample.
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/campaigns/"+info.ID+"/verdicts?outcome=fail"),
		chromedp.WaitVisible("#verdicts", chromedp.ByQuery)); err != nil {
		t.Fatalf("verdicts: %v", err)
	}
	shot("4-verdicts", "Verdicts of browser-run", bad.ID)
	var rows int
	if err := chromedp.Run(bctx, chromedp.Evaluate(`document.querySelectorAll("#verdicts tbody tr").length`, &rows)); err != nil || rows != 6 {
		t.Fatalf("failure rows: %d %v", rows, err)
	}
	if err := chromedp.Run(bctx, chromedp.Click("#verdicts tbody tr a", chromedp.ByQuery), chromedp.WaitVisible("#transcript", chromedp.ByQuery)); err != nil {
		t.Fatalf("sample: %v", err)
	}
	shot("5-sample-fail", "Transcript", "this_is_not_an_instruction", "Verdict", "Prompt", bad.Function)
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/campaigns/"+info.ID+"/verdicts?outcome=pass"),
		chromedp.WaitVisible("#verdicts", chromedp.ByQuery), chromedp.Click("#verdicts tbody tr a", chromedp.ByQuery),
		chromedp.WaitVisible("#transcript", chromedp.ByQuery)); err != nil {
		t.Fatalf("passing sample: %v", err)
	}
	shot("6-sample-pass", "Here is the assembly.", "pass", good.Function, "Artifacts")

	// Start a refinement campaign from the finished one, targeting a
	// category: the button forks it and the daemon runs it.
	var loc string
	if err := chromedp.Run(bctx, chromedp.Navigate(base+"/campaigns/"+info.ID), chromedp.WaitVisible("#refine", chromedp.ByQuery),
		chromedp.SendKeys("#refine-categories", "int_arith", chromedp.ByQuery),
		chromedp.Click("#refine", chromedp.ByQuery), chromedp.WaitNotPresent("#refine", chromedp.ByQuery),
		chromedp.WaitVisible("#live", chromedp.ByQuery), chromedp.Location(&loc)); err != nil {
		t.Fatalf("refine: %v", err)
	}
	if !strings.Contains(loc, "/campaigns/") || strings.Contains(loc, info.ID) {
		t.Fatalf("refine went to %s", loc)
	}
	shot("7-refinement", "browser-run-refine", "refinement of", info.ID)

	// The workers page, from the header's link: this daemon runs without
	// --dispatch.
	if err := chromedp.Run(bctx, chromedp.Click("#nav-workers", chromedp.ByQuery),
		chromedp.WaitVisible("#dispatch-off", chromedp.ByQuery)); err != nil {
		t.Fatalf("workers page: %v", err)
	}
	shot("8-workers-off", "Dispatch is off", "kiln serve --dispatch")
	list, err := cl.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("campaigns after refine: %d %v", len(list), err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrors) > 0 {
		t.Errorf("browser console errors:\n%s", strings.Join(consoleErrors, "\n"))
	}
	resp, err := http.Get(base + "/campaigns/" + info.ID + "/export")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("export: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	fmt.Fprintf(os.Stderr, "dashboard screenshots in %s\n", shots)
}
