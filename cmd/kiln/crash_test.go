package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools/c2x86"
)

// TestKillAndResume runs a campaign as a child process (this test binary
// acting as kiln), kills it with SIGKILL at random moments, restarts it each
// time, and checks that no verdict stored before a kill is ever lost or
// changed, and at the end that every task has exactly one verdict, that
// every verdict is right (the script model answers every task correctly, so
// a lost or mangled answer would show as a failure), that no task is left
// leased, that the store is intact, and that no sandbox is left behind (no
// scratch dir, mount, cgroup or sandbox-uid process of any of the kiln
// processes).
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short")
	}
	// 50 SIGKILLs over 75 corpus items in the long tier, 6 over 15 in the
	// default tier, each 150 ms to 3 s after the start of a kiln process
	// (the first one: after its first verdict; start-up to the first
	// verdict takes about 1.4 s on the loaded 2-core VM): during its
	// start-up, its claims, its model calls, its sandbox runs and its
	// verdict writes. When few tasks are left (fewer than
	// endgame), kills come within 600 ms so that the campaign outlives
	// them on a faster machine.
	const (
		minDelay = 150
		spread   = 2850
	)
	var (
		kills   = tierPick(6, 50)
		items   = tierPick(15, 75)
		endgame = tierPick(25, 60)
		tasks   = 3 * items
	)
	corpus, err := c2x86.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	corpus = corpus[:items]
	dir := t.TempDir()
	for _, it := range corpus {
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
	for _, it := range corpus {
		resp := "```asm\n" + gccAsm(t, it, "-O0") + "```"
		b, _ := json.Marshal(map[string]string{"match": "`" + it.Function + "`", "response": resp, "reasoning": "r"})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, "answers.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// items x 3 samples; 200 ms of model latency per call, so that the
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
	var (
		pids        []int                 // every kiln process started: their sandbox instances
		judged      = map[string]string{} // task id -> verdict id, as seen after each kill
		leases      = map[string]int{}    // task id -> lease count, as seen after each kill
		interrupted int                   // kills of a process with attempts in flight
		productive  int                   // kills of a process that had stored verdicts
		begin       = time.Now()
	)
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
		pids = append(pids, cmd.Process.Pid)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !started {
			// The first process's delay counts from its first stored
			// verdict (its start-up outlasts every delay on a loaded
			// host): at least one kill hits a process that stored
			// verdicts. The others are killed during their start-up too.
			waitForVerdict(t, data, "crash", done, out)
			started = true
		}
		ms := minDelay + rng.IntN(spread)
		if tasks-len(judged) < endgame {
			ms = minDelay + rng.IntN(450)
		}
		delay := time.Duration(ms) * time.Millisecond
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("kiln stopped by itself before the kill: %v\n%s", err, out)
			}
			// Finished before the kill: the campaign is complete.
			t.Fatalf("the campaign ended before %d kills (after %d): make it longer\n%s", kills, killed, out)
		case <-time.After(delay):
			// SIGKILL the whole process group: kiln and its sandbox children.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			killed++
		}
		had := len(judged)
		if checkJudged(t, data, judged, leases) {
			interrupted++
		}
		if len(judged) > had {
			productive++
		}
	}
	killPhase := time.Since(begin)
	if productive == 0 {
		t.Errorf("no kill hit a process that had stored verdicts (%d kills)", killed)
	}
	// Run to completion.
	cmd := child("resume", "--data", data, "--log-level", "error", "crash")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("final resume: %v\n%s", err, out)
	}
	pids = append(pids, cmd.Process.Pid)
	// No finished attempt lost: every verdict seen after a kill is still there.
	before := len(judged)
	checkJudged(t, data, judged, leases)

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
	if c.State != runs.CampaignDone || n.Tasks != tasks || n.Done != tasks || n.Pass != tasks || n.Leased != 0 || n.Queued != 0 {
		t.Fatalf("after %d kills: state %s, counts %+v; want %d tasks done and passing, none leased", killed, c.State, n, tasks)
	}
	all, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	// None duplicated: exactly one original verdict per task.
	verdicts := originalVerdicts(t, st, all)
	releases := 0
	for _, task := range all {
		if verdicts[task.ID] != 1 {
			t.Errorf("task %s has %d original verdicts, want exactly 1", task.Key, verdicts[task.ID])
		}
		if task.State != runs.TaskDone {
			t.Errorf("task %s is %s, want done", task.Key, task.State)
		}
		if task.Leases > 1 {
			releases++
		}
	}
	// No stale sandbox: no scratch dir, tmpfs mount, cgroup or process
	// left by any of the kiln processes, killed or not.
	stale := checkNoStaleSandbox(t, data, pids)
	t.Logf("kill-restart cycles: %d SIGKILLs in %v: %d with attempts in flight, %d after the process had stored verdicts, %d before it had stored any; "+
		"%d verdicts stored by killed processes, all kept; final resume %v; %d of %d tasks leased more than once, each judged once; "+
		"%d scratch dirs, mounts, cgroups or processes left by the %d kiln processes",
		killed, killPhase.Round(time.Second), interrupted, productive, killed-productive, before,
		time.Since(begin.Add(killPhase)).Round(time.Second), releases, len(all), stale, len(pids))
}

// checkJudged opens the store after a kill and checks that every verdict
// recorded after an earlier kill is still there, unchanged; it adds the new
// ones to judged and reports whether the dead process had attempts in
// flight: tasks it leased (their lease count changed since the last call)
// and that are still leased.
func checkJudged(t *testing.T, data string, judged map[string]string, leases map[string]int) bool {
	t.Helper()
	ctx := context.Background()
	st, err := runs.Open(ctx, data, nil)
	if err != nil {
		t.Fatalf("open store after a kill: %v", err)
	}
	defer st.Close()
	c, err := st.Campaign(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]string{}
	for _, r := range res {
		now[r.Task.ID] = r.Verdict.ID
	}
	for task, v := range judged {
		if now[task] != v {
			t.Errorf("task %s: verdict %s stored before a kill is now %q", task, v, now[task])
		}
	}
	maps.Copy(judged, now)
	tasks, err := st.Tasks(ctx, c.ID, -1)
	if err != nil {
		t.Fatal(err)
	}
	inFlight := false
	for _, task := range tasks {
		if task.State == runs.TaskLeased && task.Leases != leases[task.ID] {
			inFlight = true
		}
		leases[task.ID] = task.Leases
	}
	return inFlight
}

// Sandbox uids: the automatic slots of sandboxes/uidslot.go (uidSlotBase,
// uidSlots * uidSlotStride).
const (
	slotUIDFirst = 2_110_000_000
	slotUIDEnd   = slotUIDFirst + 128<<17
)

// checkNoStaleSandbox checks that the kiln processes pids left no sandbox
// instance behind: no scratch dir under the data folder's sandbox root, no
// tmpfs mounted under it, no kiln-sandboxes/<instance> cgroup of theirs in
// any hierarchy and no process of a sandbox uid that belongs to them. It
// returns how many leftovers it found (each one is also an error).
func checkNoStaleSandbox(t *testing.T, data string, pids []int) int {
	t.Helper()
	stale := 0
	leftover := func(format string, args ...any) {
		t.Helper()
		stale++
		t.Errorf(format, args...)
	}
	root, err := sandboxes.ScratchRootFor(data)
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(root); err == nil && len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		leftover("sandbox scratch left in %s: %v", root, names)
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var cgroupDirs []string
	for _, line := range strings.Split(string(mountinfo), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f := strings.Fields(pre)
		if !ok || len(f) < 5 {
			continue
		}
		if strings.HasPrefix(f[4], root+"/") {
			leftover("a mount is left under the sandbox root: %s", f[4])
		}
		if fs := strings.Fields(post); len(fs) > 0 && (fs[0] == "cgroup" || fs[0] == "cgroup2") {
			cgroupDirs = append(cgroupDirs, f[4])
		}
	}
	mine := func(s string) bool {
		for _, pid := range pids {
			if strings.Contains(s, fmt.Sprintf("kiln-sandboxes/%d-", pid)) {
				return true
			}
		}
		return strings.Contains(s, root+"/")
	}
	// The kiln processes were children of this test: their cgroups are ours.
	for _, mp := range cgroupDirs {
		_ = filepath.WalkDir(mp, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if filepath.Base(filepath.Dir(p)) == "kiln-sandboxes" {
				if mine(p + "/") {
					leftover("cgroup left by a kiln process of this test: %s", p)
				}
				return fs.SkipDir
			}
			if strings.Count(strings.TrimPrefix(p, mp), "/") > 4 {
				return fs.SkipDir // deep enough for the daemon's own cgroup
			}
			return nil
		})
	}
	procs, _ := os.ReadDir("/proc")
	foreign := 0
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		uid := -1
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				uid, _ = strconv.Atoi(f[1])
			}
		}
		if uid < slotUIDFirst || uid >= slotUIDEnd {
			continue
		}
		cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if mine(string(cg)) || mine(string(environ)) {
			leftover("process %d (uid %d) of a sandbox of this test still runs: %s", pid, uid, strings.TrimSpace(strings.Split(string(status), "\n")[0]))
		} else {
			foreign++
		}
	}
	if foreign > 0 {
		t.Logf("%d processes of sandbox uids belong to other kiln processes on this host", foreign)
	}
	return stale
}

// waitForVerdict waits until the kiln process whose Wait ends in done has
// stored a verdict of campaign name in data; it fails if the process ends
// first or after three minutes.
func waitForVerdict(t *testing.T, data, name string, done chan error, out *strings.Builder) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(3 * time.Minute); ; {
		if campaignExists(t, data, name) {
			st, err := runs.Open(ctx, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.Campaign(ctx, name)
			var n runs.Counts
			if err == nil {
				n, err = st.Counts(ctx, c.ID, -1)
			}
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n.Done > 0 {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("kiln ended (%v) before it stored a verdict of %s:\n%s", err, name, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no verdict of %s after 3 minutes", name)
		}
	}
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
