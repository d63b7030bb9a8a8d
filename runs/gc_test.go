package runs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Stages of a pending verdict (a run left for a GPU host) and of a complete
// one.
const (
	pendingStages  = `[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true,"detail":"no GPU"}]`
	completeStages = `[{"name":"compile","ok":true},{"name":"run","ok":true}]`
)

// judgeTask adds a task, leases it and judges it with revs[0], then stores
// revs[1:] as rescores.
func judgeTask(t *testing.T, s *Store, cid, key string, revs ...Verdict) {
	t.Helper()
	ctx := context.Background()
	mustAdd(t, s, cid, []Task{{Key: key, Meta: map[string]string{"item": key}}})
	l, err := s.Claim(ctx, cid, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if l.Task.Key != key {
		t.Fatalf("claimed %s, want %s", l.Task.Key, key)
	}
	a := testAttempt(key, l.Number)
	if err := s.Finish(ctx, l, a, revs[0]); err != nil {
		t.Fatal(err)
	}
	vs, err := s.Verdicts(ctx, mustJudged(t, s, cid, key))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range revs[1:] {
		if _, err := s.AddRescore(ctx, vs[0].AttemptID, v); err != nil {
			t.Fatal(err)
		}
	}
}

// mustJudged returns the judged attempt id of the task key.
func mustJudged(t *testing.T, s *Store, cid, key string) string {
	t.Helper()
	var id string
	if err := s.r.QueryRow(`SELECT judged_attempt_id FROM tasks WHERE campaign_id = ? AND key = ?`, cid, key).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// putAged stores data with its file's modification time age ago.
func putAged(t *testing.T, b *Blobs, data string, age time.Duration) string {
	t.Helper()
	h, err := b.Put([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	setAge(t, b, h, age)
	return h
}

func setAge(t *testing.T, b *Blobs, h string, age time.Duration) {
	t.Helper()
	at := time.Now().Add(-age)
	if err := os.Chtimes(b.path(h), at, at); err != nil {
		t.Fatal(err)
	}
}

func verdictWith(stages string, pass bool, arts map[string]string) Verdict {
	v := Verdict{Pass: pass, Stage: "run", Stages: []byte(stages), Artifacts: arts, Policy: "p"}
	if !pass {
		v.Class = "wrong_output"
	}
	return v
}

// TestGCLiveSet builds a store with every kind of reference and checks what
// a dry run reports, what GC removes and keeps, and that a second GC finds
// nothing more.
func TestGCLiveSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t)
	b := s.Blobs()
	c := mustCampaign(t, s, "gc")
	old := 2 * time.Hour
	put := func(data string) string { return putAged(t, b, data, old) }

	// A: one verdict: its artifacts are live.
	aSrc, aOut := put("A source"), put("A output")
	judgeTask(t, s, c.ID, "A", verdictWith(completeStages, true, map[string]string{"src": aSrc, "out": aOut}))
	// B: pending, then completed on a GPU host: the kept executables
	// (only the pending revision names them) go, the source stays.
	bSrc, bBin, bProbe, bOut := put("B source"), put("B cuda_binary"), put("gpu probe"), put("B output")
	judgeTask(t, s, c.ID, "B",
		verdictWith(pendingStages, true, map[string]string{"src": bSrc, "cuda_binary": bBin, "gpu_probe_binary": bProbe}),
		verdictWith(completeStages, true, map[string]string{"src": bSrc, "out": bOut}))
	// C: still pending: its executable is live.
	cBin := put("C cuda_binary")
	judgeTask(t, s, c.ID, "C", verdictWith(pendingStages, true, map[string]string{"cuda_binary": cBin}))
	// D: failed, then rescored: the superseded (not pending) revision's
	// artifact is history and stays.
	dOld, dNew := put("D stderr"), put("D output")
	judgeTask(t, s, c.ID, "D",
		verdictWith(completeStages, false, map[string]string{"stderr": dOld}),
		verdictWith(completeStages, true, map[string]string{"out": dNew}))
	// E completed a pending run whose executable F, still pending, shares:
	// it stays. G: pending twice, then failed in full: both pending
	// revisions' executables go.
	shared, g0, g1 := put("shared binary"), put("G binary 0"), put("G binary 1")
	judgeTask(t, s, c.ID, "E",
		verdictWith(pendingStages, true, map[string]string{"cuda_binary": shared}),
		verdictWith(completeStages, false, nil))
	judgeTask(t, s, c.ID, "F", verdictWith(pendingStages, true, map[string]string{"cuda_binary": shared}))
	judgeTask(t, s, c.ID, "G",
		verdictWith(pendingStages, true, map[string]string{"cuda_binary": g0}),
		verdictWith(pendingStages, true, map[string]string{"cuda_binary": g1}),
		verdictWith(`[{"name":"compile","ok":false}]`, false, nil))
	// A verdict naming a blob that is not stored.
	judgeTask(t, s, c.ID, "H", verdictWith(completeStages, true, map[string]string{"out": Hash([]byte("never stored"))}))
	// Round records (nested, the caller's JSON) and task meta.
	rPrompt, rReply := put("synth prompt"), put("synth reply")
	rec := fmt.Sprintf(`{"round":0,"synthesis":[{"category":"x","prompt_blob":%q,"reply_blob":%q}]}`, rPrompt, rReply)
	if err := s.SaveRoundDraft(ctx, c.ID, 0, []byte(rec)); err != nil {
		t.Fatal(err)
	}
	tMeta := put("named by a task")
	mustAdd(t, s, c.ID, []Task{{Key: "meta", Meta: map[string]string{"input_blob": tMeta}}})
	// Garbage, old and young; a writer's temp file.
	garbage := []string{put("orphan 1"), put("orphan 2"), put(strings.Repeat("big orphan ", 1000))}
	young := putAged(t, b, "young orphan", time.Minute)
	tmp := filepath.Join(filepath.Dir(b.path(young)), tmpPrefix+"writer")
	if err := os.WriteFile(tmp, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}

	live := []string{aSrc, aOut, bSrc, bOut, cBin, dOld, dNew, shared, rPrompt, rReply, tMeta}
	gone := append([]string{bBin, bProbe, g0, g1}, garbage...)
	size := func(hs ...string) (n int64) {
		for _, h := range hs {
			fi, err := os.Stat(b.path(h))
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
		return n
	}
	want := GCReport{
		Blobs: len(live) + len(gone) + 1, Bytes: size(live...) + size(gone...) + size(young),
		Live: len(live), LiveBytes: size(live...),
		Young: 1, YoungBytes: size(young),
		Removed: len(gone), RemovedBytes: size(gone...),
		Completed: 4, CompletedBytes: size(bBin, bProbe, g0, g1),
		Missing: 1, Other: 1,
	}
	// The shards the removals empty.
	keep := map[string]bool{}
	for _, h := range append(live, young) {
		keep[h[:2]] = true
	}
	keep[filepath.Base(filepath.Dir(tmp))] = true
	var emptied []string
	for _, h := range gone {
		if !keep[h[:2]] {
			keep[h[:2]] = true // counted once
			emptied = append(emptied, h[:2])
		}
	}
	want.Dirs = len(emptied)

	dry, err := s.GC(ctx, GCOptions{MinAge: time.Hour, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want.DryRun = true
	if dry != want {
		t.Errorf("dry run:\n got %+v\nwant %+v", dry, want)
	}
	for _, h := range gone {
		if !b.Has(h) {
			t.Fatalf("dry run removed %s", h)
		}
	}

	got, err := s.GC(ctx, GCOptions{MinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want.DryRun = false
	if got != want {
		t.Errorf("gc:\n got %+v\nwant %+v", got, want)
	}
	for _, h := range append(live, young) {
		if _, err := b.Get(h); err != nil {
			t.Errorf("live or young blob removed: %v", err)
		}
	}
	for _, h := range gone {
		if b.Has(h) {
			t.Errorf("garbage %s kept", h)
		}
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("temp file of a writer removed: %v", err)
	}
	for _, shard := range emptied {
		if _, err := os.Stat(filepath.Join(b.dir, shard)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("emptied fan-out folder %s left: %v", shard, err)
		}
	}
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			if sub, _ := os.ReadDir(filepath.Join(b.dir, e.Name())); len(sub) == 0 {
				t.Errorf("empty fan-out folder %s left", e.Name())
			}
		}
	}

	again, err := s.GC(ctx, GCOptions{MinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if again.Removed != 0 || again.Dirs != 0 || again.Live != len(live) || again.Young != 1 {
		t.Errorf("second gc: %+v", again)
	}
	// With no grace period the young orphan goes too.
	if r, err := s.GC(ctx, GCOptions{}); err != nil || r.Removed != 1 || b.Has(young) {
		t.Errorf("gc without grace: %+v %v", r, err)
	}
	if _, err := s.GC(ctx, GCOptions{MinAge: -time.Second}); err == nil {
		t.Error("negative min age accepted")
	}
}

// TestGCPutAgainRefreshes: putting content that is already stored makes it
// young again, so GC keeps an old orphan a campaign is about to refer to.
func TestGCPutAgainRefreshes(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	b := s.Blobs()
	h := putAged(t, b, "reused artifact", 3*time.Hour)
	if _, err := b.Put([]byte("reused artifact")); err != nil {
		t.Fatal(err)
	}
	r, err := s.GC(context.Background(), GCOptions{MinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if r.Removed != 0 || r.Young != 1 || !b.Has(h) {
		t.Fatalf("gc removed a blob put again: %+v", r)
	}
}

// TestGCConcurrentPut races GC against Puts of the same old, unreferenced
// contents: every Put that returned leaves its blob stored, and what was not
// put again is removed.
func TestGCConcurrentPut(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	b := s.Blobs()
	const n = 300
	var hs []string
	for i := 0; i < n; i++ {
		hs = append(hs, putAged(t, b, fmt.Sprintf("blob %d", i), 2*time.Hour))
	}
	var (
		wg  sync.WaitGroup
		rep GCReport
		err error
	)
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		rep, err = s.GC(context.Background(), GCOptions{MinAge: time.Hour})
	}()
	putErr := make(chan error, 1)
	go func() {
		defer wg.Done()
		<-start
		for i := n - 1; i >= 0; i -= 2 { // the odd ones, from the end
			if _, err := b.Put([]byte(fmt.Sprintf("blob %d", i))); err != nil {
				putErr <- err
				return
			}
		}
	}()
	close(start)
	wg.Wait()
	close(putErr)
	if err != nil {
		t.Fatal(err)
	}
	for err := range putErr {
		t.Fatal(err)
	}
	for i, h := range hs {
		if i%2 == 1 && !b.Has(h) {
			t.Errorf("blob %d was put again and is gone", i)
		}
		if i%2 == 0 && b.Has(h) {
			t.Errorf("blob %d was garbage and is kept", i)
		}
	}
	// An odd blob removed before its Put came is written anew by the Put
	// and counts as removed too.
	if rep.Removed < n/2 {
		t.Errorf("removed %d, want at least %d (%+v)", rep.Removed, n/2, rep)
	}
}
