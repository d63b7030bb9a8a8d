package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Environment for the crash test's child process (tests may read the
// environment; library code does not).
const (
	crashDirEnv      = "KILN_RUNS_CRASH_DIR"
	crashCampaignEnv = "KILN_RUNS_CRASH_CAMPAIGN"
	crashTasks       = 300
	crashKills       = 20
)

func crashAnswer(key string, number int) string {
	return fmt.Sprintf("asm for %s attempt %d", key, number)
}

// TestHelperProcess is the crash test's child: it works a campaign to the
// end, claim -> SaveAnswer -> (simulated verification) -> Finish, and is
// SIGKILLed by the parent at random moments. It does nothing unless started
// by TestCrashRecovery.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("crash test child; run by TestCrashRecovery")
	}
	cid := os.Getenv(crashCampaignEnv)
	ctx := context.Background()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ReclaimAll(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		l, err := s.Claim(ctx, cid, fmt.Sprint("pid", os.Getpid()), time.Hour)
		if errors.Is(err, ErrNoTask) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		ans := crashAnswer(l.Task.Key, l.Number)
		a, err := s.SaveAnswer(ctx, l, Attempt{
			Model: "m", Endpoint: "e", Answer: ans,
			Transcript: []byte(fmt.Sprintf(`{"key":%q,"number":%d}`, l.Task.Key, l.Number)),
			Usage:      Usage{PromptTokens: 10, CompletionTokens: 20, Calls: 1},
			StartedAt:  time.Now(), FinishedAt: time.Now(),
		})
		if err != nil {
			t.Fatal(err)
		}
		art, err := s.Blobs().Put([]byte(ans))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(2000+rand.IntN(8000)) * time.Microsecond) // verification
		v := Verdict{Pass: l.Number%2 == 1, Stage: "run", Stages: []byte(`[]`), Artifacts: map[string]string{"answer": art}}
		if err := s.Finish(ctx, l, a, v); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashRecovery SIGKILLs a worker process at random moments and checks
// that the store stays consistent and every task is judged exactly once.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test is slow-ish")
	}
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("in child")
	}
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCampaign(t, s, "crash")
	mustAdd(t, s, c.ID, mkTasks(0, crashTasks))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	ready := filepath.Join(dir, "ready")
	start := func() (*exec.Cmd, chan error) {
		os.Remove(ready)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashCampaignEnv+"="+c.ID)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			if err != nil {
				err = fmt.Errorf("%w\n%s", err, out.String())
			}
			done <- err
		}()
		return cmd, done
	}

	kills, early := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for kills < crashKills {
		if time.Now().After(deadline) {
			t.Fatalf("only %d kills after working phase in time (%d before)", kills, early)
		}
		cmd, done := start()
		select {
		case err := <-done:
			t.Fatalf("child finished before %d kills (got %d): %v", crashKills, kills, err)
		case <-time.After(time.Duration(5+rand.IntN(76)) * time.Millisecond):
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		err := <-done
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Exited() {
			// It exited by itself: a real failure, not our kill.
			t.Fatalf("child was not killed: %v", err)
		}
		if _, err := os.Stat(ready); err == nil {
			kills++
		} else {
			early++
		}
	}
	_, done := start()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final child: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("final child did not finish")
	}

	s, err = Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	cnt, err := s.Counts(ctx, c.ID, -1)
	if err != nil || cnt.Done != crashTasks || cnt.Tasks != crashTasks || cnt.Pass+cnt.Fail != crashTasks {
		t.Fatalf("counts %+v %v", cnt, err)
	}
	q := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := s.r.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := q(`SELECT COUNT(*) FROM tasks WHERE state <> 'done' OR judged_attempt_id IS NULL`); n != 0 {
		t.Fatalf("%d tasks not done", n)
	}
	if n := q(`SELECT COUNT(*) FROM verdicts WHERE revision = 0`); n != crashTasks {
		t.Fatalf("%d original verdicts, want %d", n, crashTasks)
	}
	if n := q(`SELECT COUNT(*) FROM tasks t WHERE (SELECT COUNT(*) FROM verdicts v
		WHERE v.task_id = t.id AND v.revision = 0 AND v.attempt_id = t.judged_attempt_id) <> 1`); n != 0 {
		t.Fatalf("%d tasks without exactly one original verdict on their judged attempt", n)
	}
	if n := q(`SELECT COUNT(*) FROM verdicts v JOIN attempts a ON a.id = v.attempt_id WHERE a.task_id <> v.task_id`); n != 0 {
		t.Fatalf("%d verdicts point at another task's attempt", n)
	}
	res, err := s.Results(ctx, c.ID, -1)
	if err != nil || len(res) != crashTasks {
		t.Fatalf("results: %d %v", len(res), err)
	}
	reLeased := 0
	for _, r := range res {
		a := r.Attempt
		if a.Answer != crashAnswer(r.Task.Key, a.Number) || a.Usage.CompletionTokens != 20 || a.Model != "m" {
			t.Fatalf("attempt %s damaged: %+v", a.ID, a)
		}
		var tr struct {
			Key    string
			Number int
		}
		if err := json.Unmarshal(a.Transcript, &tr); err != nil || tr.Key != r.Task.Key || tr.Number != a.Number {
			t.Fatalf("attempt %s transcript %q: %v", a.ID, a.Transcript, err)
		}
		if a.Number > r.Task.Leases || r.Verdict.Pass != (a.Number%2 == 1) {
			t.Fatalf("task %s: attempt %d, leases %d, pass %v", r.Task.Key, a.Number, r.Task.Leases, r.Verdict.Pass)
		}
		blob, err := s.Blobs().Get(r.Verdict.Artifacts["answer"])
		if err != nil || string(blob) != a.Answer {
			t.Fatalf("artifact of %s: %v", a.ID, err)
		}
		if r.Task.Leases > 1 {
			reLeased++
		}
	}
	unjudged := q(`SELECT COUNT(*) FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.attempt_id = a.id)`)
	t.Logf("%d kills in the working phase (%d during start-up); %d tasks re-leased; %d saved attempts left unjudged",
		kills, early, reLeased, unjudged)
	if reLeased == 0 {
		t.Fatal("no kill interrupted a leased task; the test exercised nothing")
	}
}
