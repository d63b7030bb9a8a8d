package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/dispatch"
	"github.com/kiln-dev/kiln/runs/jobs"
)

// nkeyUser writes an nkey user's seed to dir/name.nk and its public key to
// dir/name.pub.
func nkeyUser(t *testing.T, dir, name string) (seedFile, pubFile string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile, pubFile = filepath.Join(dir, name+".nk"), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, []byte("# "+name+"\n"+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return seedFile, pubFile
}

// freeLoopbackPorts returns n free loopback ports.
func freeLoopbackPorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// TestNATSClusterNodeKilled: the scale-out queue on a three-node NATS
// cluster (three kiln nats-node processes on loopback, streams of 3
// replicas), the daemon's side (queue and collector storing into a real
// store) and three kiln worker processes connected to all three nodes; a
// campaign of fixed-time jobs; mid-run the node leading the jobs stream is
// SIGKILLed (and started again later), and a worker is SIGKILLed and
// restarted. Every job ends with exactly one stored result, none lost.
func TestNATSClusterNodeKilled(t *testing.T) {
	longOnly(t, "a node of a three-node NATS cluster killed mid-run (runs/jobs tests cluster routes, TestDispatchPendingToWorker the queue end to end)")
	if testing.Short() {
		t.Skip("three NATS nodes and three workers: not in -short")
	}
	start := time.Now()
	dir := t.TempDir()
	workerSeed, workerPub := nkeyUser(t, dir, "worker")
	daemonSeed, daemonPub := nkeyUser(t, dir, "daemon")
	ports := freeLoopbackPorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", ports[i]))
		routes = append(routes, fmt.Sprintf("127.0.0.1:%d", ports[3+i]))
	}
	nodes := map[string]*workerProc{}
	for i := range 3 {
		name := fmt.Sprintf("n%d", i+1)
		p := &workerProc{t: t, args: []string{"nats-node", "--data", dir, "--store", filepath.Join(dir, name), "--name", name,
			"--listen", fmt.Sprintf("127.0.0.1:%d", ports[i]), "--cluster", routes[i], "--routes", strings.Join(routes, ","),
			"--worker-nkeys", workerPub, "--daemon-nkeys", daemonPub, "--log-level", "error"}}
		p.start()
		t.Cleanup(p.kill)
		nodes[name] = p
	}
	allURLs := strings.Join(urls, ",")

	// The daemon's side, as kiln serve --dispatch --nats a,b,c
	// --nats-nkey FILE --nats-replicas 3 runs it.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var nc *nats.Conn
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		if nc, err = jobs.Connect(jobs.ConnConfig{URL: allURLs, Name: "daemon", NKeySeedFile: daemonSeed}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node answers: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Cleanup(nc.Close)
	q, err := jobs.NewQueue(ctx, nc, jobs.QueueConfig{AckWait: 2 * time.Second, MaxDeliver: 50, Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	d := &workerDaemon{q: q}
	if d.st, err = runs.Open(ctx, filepath.Join(dir, "data"), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.st.Close() })
	col := jobs.NewCollector(q, nc, func(ctx context.Context, r jobs.Result) error {
		ok, err := d.st.RecordJob(ctx, dispatch.ResultRecord(r))
		if err == nil && !ok {
			d.dupes.Add(1)
		}
		return err
	}, nil)
	if err := col.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = col.Stop(context.Background()) })
	t.Logf("cluster and queue ready after %s", time.Since(start).Round(time.Millisecond))

	const n, ms = 60, 300
	for i := range n {
		b, _ := json.Marshal(dispatch.SleepPayload{MS: ms})
		if _, err := q.Publish(ctx, jobs.Job{ID: fmt.Sprintf("sleep-%03d", i), Kind: dispatch.SleepJobKind, Capability: "test", Payload: b}); err != nil {
			t.Fatal(err)
		}
	}
	var ws []*workerProc
	for i := range 3 {
		w := &workerProc{t: t, args: []string{"worker", "--nats", allURLs, "--nkey", workerSeed, "--capabilities", "test",
			"--id", fmt.Sprintf("w%d", i), "--test-kinds", "--data", t.TempDir(), "--log-level", "error"}}
		w.start()
		t.Cleanup(w.kill)
		ws = append(ws, w)
	}

	// Mid-run: kill the node that leads the jobs stream (the one its
	// writes and acks go through), then a worker.
	d.waitJobs(t, n/6, 60*time.Second)
	stream, err := q.JetStream().Stream(ctx, jobs.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	info := stream.CachedInfo()
	for deadline := time.Now().Add(30 * time.Second); info.Cluster == nil || nodes[info.Cluster.Leader] == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("jobs stream: replicas %d, no leader among the nodes: %+v", info.Config.Replicas, info.Cluster)
		}
		time.Sleep(200 * time.Millisecond)
		if info, err = stream.Info(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if info.Config.Replicas != 3 || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("jobs stream: replicas %d, cluster %+v", info.Config.Replicas, info.Cluster)
	}
	victim := info.Cluster.Leader
	stored, _ := d.st.JobResults(ctx, "")
	nodes[victim].kill() // SIGKILL
	killedAt := time.Now()
	t.Logf("SIGKILLed node %s (jobs stream leader) after %d of %d results", victim, len(stored), n)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	time.Sleep(time.Duration(300+rng.IntN(700)) * time.Millisecond)
	w := ws[rng.IntN(len(ws))]
	w.kill()
	time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
	w.start()

	// The campaign goes on with two nodes; then the third comes back and
	// catches up.
	var during int
	for deadline := killedAt.Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		rs, _ := d.st.JobResults(ctx, "")
		if during = len(rs) - len(stored); during >= 6 || len(rs) == n {
			break
		}
	}
	if during == 0 {
		t.Errorf("no job finished in the minute after node %s was killed", victim)
	}
	t.Logf("%d results stored in %s with node %s down; starting it again", during, time.Since(killedAt).Round(time.Millisecond), victim)
	nodes[victim].start()

	d.waitJobs(t, n, 2*time.Minute)
	time.Sleep(2 * time.Second) // late duplicates: none may be stored
	rs, err := d.st.JobResults(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	redelivered := checkSleepResults(t, rs, n)
	if len(rs) != n {
		t.Errorf("%d stored results for %d jobs", len(rs), n)
	}
	if info, err := stream.Info(ctx); err == nil && info.Cluster != nil {
		t.Logf("jobs stream leader now %s, replicas %d, %d jobs left", info.Cluster.Leader, len(info.Cluster.Replicas), info.State.Msgs)
	}
	t.Logf("%d jobs on 3 nodes (node %s killed and restarted; worker %s killed): %d redelivered, %d duplicate results dropped by the store; %s in all",
		n, victim, w.args[8], redelivered, d.dupes.Load(), time.Since(start).Round(time.Millisecond))
	if t.Failed() {
		for name, p := range nodes {
			p.kill()
			t.Logf("node %s output:\n%s", name, p.out.String())
		}
	}
}

// TestNATSFlags: the NATS flags of nats-node, serve --dispatch and worker
// refuse what they must with errors that name the flag, and a worker given
// the server's CA (--nats-ca) gets in over TLS.
func TestNATSFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed, pub := nkeyUser(t, dir, "worker")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"node off loopback, TLS off", []string{"nats-node", "--data", dir, "--listen", "10.1.2.3:4222", "--tls", "off", "--worker-nkeys", pub},
			[]string{"10.1.2.3 is not a loopback address and TLS is off", "--tls off"}},
		{"node off loopback, no keys", []string{"nats-node", "--data", dir, "--listen", "0.0.0.0:4222"},
			[]string{"authentication", "--worker-nkeys/--daemon-nkeys"}},
		{"node cert without CA in a cluster", []string{"nats-node", "--data", dir, "--cluster", "127.0.0.1:6222", "--tls-cert", pub, "--tls-key", pub},
			[]string{"TLSCA", "--tls-ca"}},
		{"node bad listen", []string{"nats-node", "--data", dir, "--listen", "nohost"}, []string{"--listen"}},
		{"node keys file missing", []string{"nats-node", "--data", dir, "--daemon-nkeys", filepath.Join(dir, "none.pub")}, []string{"--daemon-nkeys", "none.pub"}},
		{"serve replicas on the embedded server", []string{"serve", "--data", dir, "--dispatch", "--nats-replicas", "3"},
			[]string{"--nats-replicas 3", "single node"}},
		{"serve client CA without --nats", []string{"serve", "--data", dir, "--dispatch", "--nats-ca", pub}, []string{"need --nats"}},
		{"serve embedded TLS with --nats", []string{"serve", "--data", dir, "--dispatch", "--nats", "nats://127.0.0.1:1", "--nats-tls", "on"},
			[]string{"--nats-tls"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runKiln(t, context.Background(), tc.args...)
			if code != exitBadInput {
				t.Errorf("exit %d, want %d; %s", code, exitBadInput, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}

	t.Run("worker and --nats-ca", func(t *testing.T) {
		pubKey, _ := os.ReadFile(pub)
		var keys []string
		for _, l := range strings.Split(string(pubKey), "\n") {
			if strings.HasPrefix(l, "U") {
				keys = append(keys, l)
			}
		}
		srv, err := jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "nats"), TLS: jobs.TLSOn, WorkerNKeys: keys})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		nc, err := jobs.Connect(jobs.ConnConfig{URL: srv.URL(), Options: srv.ClientOptions()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		if _, err := jobs.NewQueue(context.Background(), nc, jobs.QueueConfig{}); err != nil {
			t.Fatal(err)
		}
		args := []string{"worker", "--data", t.TempDir(), "--nats", srv.URL(), "--nkey", seed, "--capabilities", "test"}
		code, _, stderr := runKiln(t, context.Background(), args...)
		if code == exitOK || !strings.Contains(stderr, "--nats-ca FILE") {
			t.Errorf("without --nats-ca: exit %d:\n%s", code, stderr)
		}
		// With it the worker connects and pulls; stopped then, it exits 0.
		// (Its start-up takes seconds on a loaded host: wait for the line.)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var out syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, append(args, "--nats-ca", srv.CAFile()), env{stdin: strings.NewReader(""), stdout: &out, stderr: &out,
				getenv: testGetenv, soft: make(chan struct{})})
		}()
		for !strings.Contains(out.String(), "pulling test jobs") {
			select {
			case code := <-done:
				t.Fatalf("with --nats-ca: exit %d before pulling jobs:\n%s", code, out.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("with --nats-ca: exit %d after the stop:\n%s", code, out.String())
		}
	})
}
