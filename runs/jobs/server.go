package jobs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ServerConfig configures the NATS server with JetStream that kiln serve
// embeds when no external one is given.
type ServerConfig struct {
	// StoreDir holds JetStream's file store (streams, object store). It
	// lives in the data folder, so queued jobs survive a daemon restart.
	StoreDir string
	// Host is the listen address. Only loopback is accepted for now: a
	// listener reachable from other hosts needs TLS, which is not wired
	// yet. Default 127.0.0.1.
	Host string
	// Port is the client port; 0 or -1 picks a free one.
	Port int
	// WorkerNKeys are the public nkeys (U...) of the workers allowed in.
	// When set, every client must authenticate: workers with their nkey
	// seed, the daemon with a key pair made at start (Server.ClientOptions).
	// Workers get only the subjects their work needs (WorkerPermissions).
	// Empty: no authentication (loopback only, single-user machine).
	WorkerNKeys []string
}

// Defaults fills in zero fields.
func (c *ServerConfig) Defaults() {
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Port == 0 {
		c.Port = server.RANDOM_PORT
	}
}

// Validate reports a configuration the server cannot start with.
func (c *ServerConfig) Validate() error {
	if c.StoreDir == "" {
		return errors.New("jobs server: StoreDir is required")
	}
	ip := net.ParseIP(c.Host)
	if c.Host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("jobs server: host %q is not loopback; a listener other hosts reach needs TLS, which kiln does not set up yet: run an external NATS cluster with TLS and pass its URL", c.Host)
	}
	for _, k := range c.WorkerNKeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return fmt.Errorf("jobs server: %q is not a public user nkey (U...)", k)
		}
	}
	return nil
}

// Server is an embedded NATS server with JetStream.
type Server struct {
	ns       *server.Server
	daemonKP nkeys.KeyPair // nil without authentication
	stopOnce sync.Once
}

// StartServer starts the embedded server and waits until it accepts
// clients.
func StartServer(cfg ServerConfig) (*Server, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs server: %w", err)
	}
	dir, err := filepath.Abs(cfg.StoreDir)
	if err != nil {
		return nil, fmt.Errorf("jobs server: %w", err)
	}
	opts := &server.Options{
		ServerName: "kiln",
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
		// A job result may carry a verdict with its diagnostics; artifacts
		// go through the object store.
		MaxPayload: 8 << 20,
	}
	s := &Server{}
	if len(cfg.WorkerNKeys) > 0 {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("jobs server: daemon key: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("jobs server: daemon key: %w", err)
		}
		s.daemonKP = kp
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub}} // the daemon: everything
		for _, k := range cfg.WorkerNKeys {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k, Permissions: WorkerPermissions()})
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("jobs server: %w", err)
	}
	s.ns = ns
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("jobs server: not ready after 30s")
	}
	return s, nil
}

// URL is the server's client URL (nats://127.0.0.1:PORT).
func (s *Server) URL() string { return s.ns.ClientURL() }

// ClientOptions are the connection options the daemon's own client needs
// (its nkey when workers authenticate).
func (s *Server) ClientOptions() []nats.Option {
	if s.daemonKP == nil {
		return nil
	}
	pub, _ := s.daemonKP.PublicKey()
	return []nats.Option{nats.Nkey(pub, s.daemonKP.Sign)}
}

// Stop shuts the server down (JetStream state is flushed to the store
// folder). It is idempotent.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	})
}

// WorkerPermissions are what a worker may publish and subscribe to: pull
// jobs of any capability from the jobs stream, ack them, publish results
// and heartbeats, and read and write the artifact object store. It cannot
// publish jobs, read results, create or delete streams, or touch anything
// else. (Workers never receive API tokens or model keys: nothing in a job
// carries them.)
func WorkerPermissions() *server.Permissions {
	obj := "OBJ_" + ArtifactBucket
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO." + JobsStream,
			"$JS.API.CONSUMER.INFO." + JobsStream + ".>",
			"$JS.API.CONSUMER.MSG.NEXT." + JobsStream + ".>",
			"$JS.ACK." + JobsStream + ".>",
			ResultsPrefix + ">",
			HeartbeatPrefix + ">",
			// object store: get and put artifacts
			"$JS.API.STREAM.INFO." + obj,
			"$JS.API.STREAM.MSG.GET." + obj,
			"$JS.API.DIRECT.GET." + obj + ".>",
			"$JS.API.CONSUMER.CREATE." + obj + ".>",
			"$JS.API.CONSUMER.DELETE." + obj + ".>",
			"$JS.API.CONSUMER.INFO." + obj + ".>",
			"$JS.API.STREAM.PURGE." + obj,
			"$JS.FC." + obj + ".>",
			"$O." + ArtifactBucket + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
		Response:  &server.ResponsePermission{MaxMsgs: 1},
	}
}

// ConnConfig says how a client reaches NATS.
type ConnConfig struct {
	// URL is the server (or cluster, comma separated) URL.
	URL string
	// Name names the connection in the server's monitoring.
	Name string
	// CredsFile is a NATS credentials file (JWT + seed) for an external
	// cluster with decentralised auth.
	CredsFile string
	// NKeySeedFile is a file holding the client's nkey seed (SU...), for a
	// server that lists its public key (ServerConfig.WorkerNKeys).
	NKeySeedFile string
	// Options are added as they are (the embedded server's
	// Server.ClientOptions).
	Options []nats.Option
}

// Connect connects to NATS; reconnects are retried forever, so a restarted
// server or a failed-over cluster node is picked up again.
func Connect(cfg ConnConfig) (*nats.Conn, error) {
	if cfg.URL == "" {
		return nil, errors.New("connect nats: no URL")
	}
	opts := []nats.Option{
		nats.Name(cfg.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.NKeySeedFile != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("connect nats: nkey seed: %w", err)
		}
		opts = append(opts, o)
	}
	opts = append(opts, cfg.Options...)
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect nats %s: %w", redactURL(cfg.URL), err)
	}
	return nc, nil
}

// redactURL drops user info from a URL for messages.
func redactURL(u string) string {
	if i := strings.Index(u, "@"); i >= 0 {
		if j := strings.Index(u, "://"); j >= 0 && j < i {
			return u[:j+3] + "***" + u[i:]
		}
	}
	return u
}
