package jobs_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/kiln-dev/kiln/runs/jobs"
)

// userKey makes an nkey user: its public key and a file with its seed.
func userKey(t *testing.T, dir, name string) (pub, seedFile string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ = kp.PublicKey()
	seed, _ := kp.Seed()
	seedFile = filepath.Join(dir, name+".nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return pub, seedFile
}

// TestTLSListener: a listener with TLS forced on (loopback) and a
// generated certificate accepts a client that trusts its CA, refuses one
// that does not with an error that says what to give, and refuses a plain
// text client; the daemon in the same process connects in-process.
func TestTLSListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pub, seed := userKey(t, dir, "worker")
	srv, err := jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "nats"), TLS: jobs.TLSOn, WorkerNKeys: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if !srv.TLS() || !strings.HasPrefix(srv.URL(), "tls://") {
		t.Fatalf("TLS %v, URL %s", srv.TLS(), srv.URL())
	}
	ca := srv.CAFile()
	if ca != filepath.Join(dir, "nats", jobs.TLSDir, jobs.CACertFile) {
		t.Fatalf("CA file %q", ca)
	}
	for _, f := range []string{jobs.CAKeyFile, jobs.ServerKeyFile} {
		st, err := os.Stat(filepath.Join(dir, "nats", jobs.TLSDir, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("key file %s: %v %v", f, st.Mode(), err)
		}
	}

	// The daemon's own client: in-process, no certificate to check.
	dnc, err := jobs.Connect(jobs.ConnConfig{URL: srv.URL(), Name: "daemon", Options: srv.ClientOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dnc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := jobs.NewQueue(ctx, dnc, jobs.QueueConfig{}); err != nil {
		t.Fatal(err)
	}

	// A worker that trusts the CA, by the tls:// URL and by nats://.
	for _, u := range []string{srv.URL(), strings.Replace(srv.URL(), "tls://", "nats://", 1)} {
		nc, err := jobs.Connect(jobs.ConnConfig{URL: u, Name: "worker", NKeySeedFile: seed, CAFile: ca})
		if err != nil {
			t.Fatalf("%s with the CA: %v", u, err)
		}
		if !nc.TLSRequired() {
			t.Errorf("%s: not TLS", u)
		}
		js, _ := jetstream.New(nc)
		if _, err := js.Stream(ctx, jobs.JobsStream); err != nil {
			t.Errorf("%s: stream info over TLS: %v", u, err)
		}
		nc.Close()
	}

	// Without the CA: refused, and the error says what is missing.
	_, err = jobs.Connect(jobs.ConnConfig{URL: srv.URL(), Name: "worker", NKeySeedFile: seed})
	if !errors.Is(err, jobs.ErrTLSUntrusted) || !strings.Contains(err.Error(), "CA certificate") {
		t.Errorf("without the CA: %v", err)
	}
	// A CA file that is not there is named.
	_, err = jobs.Connect(jobs.ConnConfig{URL: srv.URL(), NKeySeedFile: seed, CAFile: filepath.Join(dir, "nope.pem")})
	if err == nil || !strings.Contains(err.Error(), "nope.pem") {
		t.Errorf("missing CA file: %v", err)
	}

	// Plain text: the server says TLS is required and drops a client that
	// goes on without it.
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(srv.URL(), "tls://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("INFO %q %v", info, err)
	}
	if _, err := conn.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r) // until the server closes the connection
	var ne net.Error
	if strings.Contains(string(rest), "PONG") || (errors.As(err, &ne) && ne.Timeout()) {
		t.Errorf("plain-text client answered or kept: %q %v", rest, err)
	}
}

// TestTLSCertReused: the generated CA and certificate are kept across
// restarts, so workers keep trusting the server.
func TestTLSCertReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "nats")
	read := func() (string, string) {
		ca, err1 := os.ReadFile(filepath.Join(store, jobs.TLSDir, jobs.CACertFile))
		cert, err2 := os.ReadFile(filepath.Join(store, jobs.TLSDir, jobs.ServerCertFile))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		return string(ca), string(cert)
	}
	srv, err := jobs.StartServer(jobs.ServerConfig{StoreDir: store, TLS: jobs.TLSOn})
	if err != nil {
		t.Fatal(err)
	}
	ca1, cert1 := read()
	srv.Stop()
	srv, err = jobs.StartServer(jobs.ServerConfig{StoreDir: store, TLS: jobs.TLSOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ca2, cert2 := read()
	if ca1 != ca2 || cert1 != cert2 {
		t.Error("the CA or the server certificate was made again on restart")
	}
	nc, err := jobs.Connect(jobs.ConnConfig{URL: srv.URL(), CAFile: srv.CAFile()})
	if err != nil {
		t.Fatalf("with the first start's CA: %v", err)
	}
	nc.Close()
}

// TestMutualTLS: with a client CA, a client without a certificate is
// refused and one with a certificate that CA signed gets in.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A second store's generated CA and certificate (usable as a client
	// certificate) stand for the operator's client PKI.
	other, err := jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "other"), TLS: jobs.TLSOn})
	if err != nil {
		t.Fatal(err)
	}
	other.Stop()
	pki := filepath.Join(dir, "other", jobs.TLSDir)
	srv, err := jobs.StartServer(jobs.ServerConfig{StoreDir: filepath.Join(dir, "nats"), TLS: jobs.TLSOn,
		ClientCA: filepath.Join(pki, jobs.CACertFile)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if _, err := jobs.Connect(jobs.ConnConfig{URL: srv.URL(), CAFile: srv.CAFile()}); err == nil {
		t.Error("a client without a certificate got in")
	}
	nc, err := jobs.Connect(jobs.ConnConfig{URL: srv.URL(), CAFile: srv.CAFile(),
		CertFile: filepath.Join(pki, jobs.ServerCertFile), KeyFile: filepath.Join(pki, jobs.ServerKeyFile)})
	if err != nil {
		t.Fatalf("with a client certificate: %v", err)
	}
	nc.Close()
}

// TestServerConfigValidate: what may listen where (validation only).
func TestServerConfigValidate(t *testing.T) {
	t.Parallel()
	pub, _ := userKey(t, t.TempDir(), "w")
	for _, tc := range []struct {
		name string
		cfg  jobs.ServerConfig
		err  string // "" valid
		tls  bool
	}{
		{"loopback plain", jobs.ServerConfig{}, "", false},
		{"loopback forced TLS", jobs.ServerConfig{TLS: jobs.TLSOn}, "", true},
		{"off loopback, TLS auto", jobs.ServerConfig{Host: "10.1.2.3", WorkerNKeys: []string{pub}}, "", true},
		{"any address, TLS auto", jobs.ServerConfig{Host: "0.0.0.0", WorkerNKeys: []string{pub}}, "", true},
		{"off loopback, TLS off", jobs.ServerConfig{Host: "10.1.2.3", TLS: jobs.TLSOff, WorkerNKeys: []string{pub}},
			"10.1.2.3 is not a loopback address and TLS is off", false},
		{"off loopback, no auth", jobs.ServerConfig{Host: "0.0.0.0"}, "authentication", true},
		{"route off loopback, TLS off", jobs.ServerConfig{Cluster: "127.0.0.1:6222", Routes: []string{"10.0.0.2:6222"}, TLS: jobs.TLSOff,
			DaemonNKeys: []string{pub}}, "10.0.0.2:6222 is not a loopback address and TLS is off", false},
		{"cluster on loopback", jobs.ServerConfig{Cluster: "127.0.0.1:6222", Routes: []string{"127.0.0.1:6223", "nats-route://127.0.0.1:6224"}}, "", false},
		{"cluster off loopback", jobs.ServerConfig{Cluster: "0.0.0.0:6222", Routes: []string{"10.0.0.2:6222"}, DaemonNKeys: []string{pub}}, "", true},
		{"routes without cluster", jobs.ServerConfig{Routes: []string{"127.0.0.1:6222"}}, "routes need a cluster", false},
		{"bad route", jobs.ServerConfig{Cluster: "127.0.0.1:6222", Routes: []string{"nohost"}}, "route \"nohost\"", false},
		{"bad mode", jobs.ServerConfig{TLS: "maybe"}, "TLS mode", false},
		{"cert without key", jobs.ServerConfig{TLSCert: "c.pem"}, "go together", true},
		{"missing cert file", jobs.ServerConfig{TLSCert: "/nonexistent/c.pem", TLSKey: "/nonexistent/k.pem"}, "/nonexistent/c.pem", true},
		{"cluster cert without CA", jobs.ServerConfig{Cluster: "127.0.0.1:6222", TLSCert: "c.pem", TLSKey: "k.pem"}, "TLSCA", true},
		{"bad nkey", jobs.ServerConfig{WorkerNKeys: []string{"nope"}}, "not a public user nkey", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.StoreDir = "x"
			cfg.Defaults()
			err := cfg.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
			if got := cfg.TLSEnabled(); got != tc.tls {
				t.Errorf("TLSEnabled %v, want %v", got, tc.tls)
			}
		})
	}
}

// TestTLSClusterRoutes: three nodes on loopback with TLS forced on, the
// second and third given the first's CA (as an operator copies it), form
// a cluster over TLS routes that verify each other: a stream of 3
// replicas can be made.
func TestTLSClusterRoutes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dpub, dseed := userKey(t, dir, "daemon")
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, net.JoinHostPort("127.0.0.1", p))
	}
	var srvs []*jobs.Server
	for i := range 3 {
		store := filepath.Join(dir, "n"+string(rune('1'+i)))
		if i > 0 { // the first node's CA, copied
			tlsDir := filepath.Join(store, jobs.TLSDir)
			if err := os.MkdirAll(tlsDir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{jobs.CACertFile, jobs.CAKeyFile} {
				b, err := os.ReadFile(filepath.Join(dir, "n1", jobs.TLSDir, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(tlsDir, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		srv, err := jobs.StartServer(jobs.ServerConfig{StoreDir: store, Name: "n" + string(rune('1'+i)), TLS: jobs.TLSOn,
			Cluster: routes[i], Routes: routes, DaemonNKeys: []string{dpub}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		srvs = append(srvs, srv)
	}
	urls := []string{}
	for _, s := range srvs {
		urls = append(urls, s.URL())
	}
	nc, err := jobs.Connect(jobs.ConnConfig{URL: strings.Join(urls, ","), NKeySeedFile: dseed, CAFile: srvs[0].CAFile()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	t0 := time.Now()
	defer func() { t.Logf("queue set-up %s", time.Since(t0)) }()
	// First with one replica (as made on a single server), then three:
	// the streams and consumers are updated in place.
	q, err := jobs.NewQueue(ctx, nc, jobs.QueueConfig{Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.EnsureCapability(ctx, "gpu"); err != nil {
		t.Fatal(err)
	}
	t.Logf("R1 queue after %s", time.Since(t0))
	if q, err = jobs.NewQueue(ctx, nc, jobs.QueueConfig{Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{jobs.JobsStream, jobs.ResultsStream, "OBJ_kiln_artifacts"} {
		s, err := q.JetStream().Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo()
		if info.Config.Replicas != 3 || info.Cluster == nil {
			t.Errorf("stream %s: replicas %d, cluster %+v", name, info.Config.Replicas, info.Cluster)
		}
	}
	// Consumers follow their stream's replica count.
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := q.JetStream().Consumer(ctx, jobs.JobsStream, jobs.ConsumerName("gpu"))
		if err != nil {
			t.Fatal(err)
		}
		ci := c.CachedInfo()
		if ci.Cluster != nil && len(ci.Cluster.Replicas) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer not on three nodes: replicas %d, cluster %+v", ci.Config.Replicas, ci.Cluster)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// freePorts returns n free loopback ports.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		_, p, _ := net.SplitHostPort(l.Addr().String())
		out = append(out, p)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}
