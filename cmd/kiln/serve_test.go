package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/sandboxes"
)

// syncBuffer is a goroutine-safe strings.Builder.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs "kiln serve" in-process and drives it through the HTTP API:
// a bad spec is refused with the field named, a campaign submitted over HTTP
// runs to the end while its events stream, a second one is cancelled, and a
// soft stop ends the daemon.
func TestServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	it := corpusItem(t, "int_001_gcd_unsigned")
	slow := corpusItem(t, "int_002_lcm_checked")
	lines := []string{}
	for _, x := range []struct {
		fn, resp string
	}{
		{it.Function, "```asm\n" + gccAsm(t, it, "-O0") + "```"},
		{slow.Function, "```asm\n" + gccAsm(t, slow, "-O0") + "```"},
	} {
		b, _ := json.Marshal(map[string]string{"match": "`" + x.fn + "`", "response": x.resp})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := serveKiln(ctx, t, nil, "--data", filepath.Join(dir, "data"), "--spec-root", dir)
	cl := srv.cl

	// A bad spec: 400 naming line and field.
	_, err := cl.Submit(ctx, []byte("name: x\nlane: c2x86\nconcurency: 3\nmodels: [{name: m, kind: script, script: answers.jsonl}]\n"))
	var bad *api.BadSpec
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "spec.yaml:3: concurency: unknown field") {
		t.Fatalf("bad spec: %v", err)
	}

	// Corpus folders of one item each.
	mk := func(name string, item string) {
		d := filepath.Join(dir, name, item)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		x := corpusItem(t, item)
		meta, _ := json.Marshal(map[string]any{"function": x.Function, "categories": x.Categories})
		for n, body := range map[string]string{"meta.json": string(meta), "function.c": x.Files["function.c"], "driver.c": x.Files["driver.c"]} {
			if err := os.WriteFile(filepath.Join(d, n), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("one", it.ID)
	mk("slow", slow.ID)
	quick := []byte("name: quick\nlane: c2x86\ntasks: {corpus: one, samples_per_task: 3}\n" +
		"models: [{name: m, kind: script, script: answers.jsonl}]\nconcurrency: 2\n")
	info, err := cl.Submit(ctx, quick)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	ch, err := cl.Watch(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var last api.Progress
	events := 0
	for p := range ch {
		last = p
		events++
	}
	if events == 0 || last.State != "done" || last.Done != 3 || last.Pass != 3 {
		t.Fatalf("events %d, last %+v", events, last)
	}
	got, err := cl.Show(ctx, info.ID)
	if err != nil || got.State != "done" || got.Counts["pass"] != 3 {
		t.Fatalf("show: %+v %v", got, err)
	}

	// A slow campaign (10 s per answer) is cancelled while it runs.
	slowSpec := []byte("name: slow\nlane: c2x86\ntasks: {corpus: slow, samples_per_task: 4}\n" +
		"models: [{name: m, kind: script, script: answers.jsonl, latency: 10s}]\nconcurrency: 2\n")
	sinfo, err := cl.Submit(ctx, slowSpec)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cl.Cancel(ctx, sinfo.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	got, err = cl.Show(ctx, sinfo.ID)
	if err != nil || got.State != "cancelled" || got.Counts["done"] != 0 || got.Counts["queued"] != 4 {
		t.Fatalf("after cancel: %+v %v", got, err)
	}
	if err := cl.Cancel(ctx, sinfo.ID); !errors.Is(err, api.ErrConflict) {
		t.Fatalf("second cancel: %v", err)
	}
	list, err := cl.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d %v", len(list), err)
	}

	srv.stop(t, 40*time.Second)
}

// TestServeRefusesPublicAddressWithoutToken: the API binds loopback unless
// a token is configured.
func TestServeRefusesPublicAddressWithoutToken(t *testing.T) {
	t.Parallel()
	code, _, errs := runKiln(t, context.Background(), "serve", "--data", t.TempDir(), "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(strings.ToLower(errs), "token") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

// TestServePublicBindGuards runs "kiln serve" bound to every interface with a
// token and checks the daemon's own guards over a non-loopback address:
// requests without the token are refused, an oversized spec gets 413, and a
// slowloris client trickling its headers is cut off by the server's header
// timeout (5 s by default) while a normal client is served. After a soft
// stop the daemon's sandbox runner has left no scratch directory behind.
func TestServePublicBindGuards(t *testing.T) {
	t.Parallel()
	const token = "serve-test-token-0123456789"
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	host := "127.0.0.1"
	if ip := nonLoopbackIP(); ip != "" {
		host = ip
	}
	base := "http://" + net.JoinHostPort(host, port)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	soft := make(chan struct{})
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", data, "--addr", "0.0.0.0:" + port, "--token-env", "KILN_TEST_TOKEN", "--spec-root", dir},
			env{stdout: &stderr, stderr: &stderr, soft: soft, getenv: func(k string) string {
				if k == "KILN_TEST_TOKEN" {
					return token
				}
				return ""
			}})
	}()
	cl := &api.Client{BaseURL: base, Token: token}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := cl.List(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up on %s: %s", base, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A slowloris client: the request line and headers one byte every
	// 50 ms, 20 s worth of them.
	conn, err := net.Dial("tcp", net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	slow := make(chan string, 1)
	go func() {
		req := "GET /v1/campaigns HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nX-Pad: " + strings.Repeat("p", 300) + "\r\n\r\n"
		begin := time.Now()
		for i := 0; i < len(req); i++ {
			if _, err := conn.Write([]byte{req[i]}); err != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(conn)
		slow <- fmt.Sprintf("%v %.40q", time.Since(begin).Round(100*time.Millisecond), b)
	}()

	noToken := *cl
	noToken.Token = ""
	var se *api.StatusError
	if _, err := noToken.List(ctx); !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
		t.Errorf("list without a token via %s: %v, want 401", host, err)
	}
	if _, err := noToken.Submit(ctx, []byte("name: x\n")); !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
		t.Errorf("submit without a token via %s: %v, want 401", host, err)
	}
	if _, err := cl.Submit(ctx, []byte("name: big\n#"+strings.Repeat("x", 2<<20)+"\n")); !errors.As(err, &se) || se.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB spec: %v, want 413", err)
	}
	select {
	case got := <-slow:
		// Cut off at the 5 s header timeout: the trickle would have
		// taken 20 s, and it never reached the route (no 200).
		d, _, _ := strings.Cut(got, " ")
		if dur, err := time.ParseDuration(d); err != nil || dur > 10*time.Second || strings.Contains(got, "200 OK") {
			t.Errorf("slowloris client: %s; want it cut off after about 5 s", got)
		}
		t.Logf("slowloris client (headers at 20 bytes/s) cut off after %s", got)
	case <-time.After(30 * time.Second):
		t.Fatal("slowloris client not cut off in 30 s")
	}
	if _, err := cl.List(ctx); err != nil {
		t.Errorf("list with the token after the slow client: %v", err)
	}

	close(soft)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, stderr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
	root, err := sandboxes.ScratchRootFor(data)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(root); len(ents) > 0 {
		t.Errorf("serve left %d sandbox instance dirs in %s", len(ents), root)
	}
}

// nonLoopbackIP returns a non-loopback IPv4 address of this host, or "".
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}
