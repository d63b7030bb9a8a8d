package jobs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// ServerConfig configures a NATS server with JetStream: the one kiln
// serve --dispatch embeds, or a node of a cluster (kiln nats-node).
type ServerConfig struct {
	// StoreDir holds JetStream's file store (streams, object store), and
	// the generated TLS files (StoreDir/tls). It lives in the data folder,
	// so queued jobs survive a restart.
	StoreDir string
	// Name is the server's name, unique in a cluster. Default "kiln".
	Name string
	// Host is the client listen address. Default 127.0.0.1. Anything but
	// loopback needs TLS (TLS not off) and authentication (nkeys).
	Host string
	// Port is the client port; 0 or -1 picks a free one.
	Port int
	// Cluster is the cluster (route) listen address, host:port; empty: a
	// single server. Every node of a cluster needs one and a unique Name.
	Cluster string
	// ClusterName names the cluster (the same on every node). Default
	// "kiln".
	ClusterName string
	// Routes are the cluster addresses of the other nodes (host:port or
	// nats-route://host:port); a node's own address may be among them, so
	// every node can be given the same list.
	Routes []string
	// WorkerNKeys are the public nkeys (U...) of the workers allowed in.
	// When they or DaemonNKeys are set, every client must authenticate:
	// workers with their nkey seed, a daemon with its own (DaemonNKeys)
	// or, in the same process, with a key pair made at start
	// (Server.ClientOptions). Workers get only the subjects their work
	// needs (WorkerPermissions). None at all: no authentication (loopback
	// only).
	WorkerNKeys []string
	// DaemonNKeys are the public nkeys of daemons (kiln serve --dispatch
	// --nats), allowed everything: they make the streams and publish jobs.
	DaemonNKeys []string
	// TLS is TLSAuto (default), TLSOn or TLSOff. With TLS and no TLSCert,
	// a CA and a server certificate are generated in StoreDir/tls (and
	// reused on the next start); clients need the CA (Server.CAFile).
	TLS string
	// TLSCert and TLSKey are the server certificate and key (PEM); they
	// turn TLS on.
	TLSCert, TLSKey string
	// TLSCA is the CA certificate the nodes' certificates chain to: cluster
	// routes verify each other with it, both ways. Default: the generated
	// CA. Required for a cluster with TLSCert.
	TLSCA string
	// ClientCA, when set, makes clients present a certificate this CA
	// signed (mutual TLS), on top of their nkey.
	ClientCA string
	// Log receives the server's notices, warnings and errors (debug with
	// a debug-level handler); nil: none.
	Log *slog.Logger
}

// Defaults fills in zero fields.
func (c *ServerConfig) Defaults() {
	if c.Name == "" {
		c.Name = "kiln"
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Port == 0 {
		c.Port = server.RANDOM_PORT
	}
	if c.ClusterName == "" {
		c.ClusterName = "kiln"
	}
	if c.TLS == "" {
		c.TLS = TLSAuto
	}
}

// IsLoopback reports whether host (an IP address or a name) is loopback.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// notLoopback returns the first address of the client listener, the
// cluster listener and the routes that is not loopback ("" if none).
func (c *ServerConfig) notLoopback() string {
	if !IsLoopback(c.Host) {
		return c.Host
	}
	for _, a := range append([]string{c.Cluster}, c.Routes...) {
		if a == "" {
			continue
		}
		if h, _, err := splitRoute(a); err == nil && !IsLoopback(h) {
			return a
		}
	}
	return ""
}

// TLSEnabled reports whether the server's listeners use TLS.
func (c *ServerConfig) TLSEnabled() bool {
	switch c.TLS {
	case TLSOn:
		return true
	case TLSOff:
		return false
	}
	return c.TLSCert != "" || c.notLoopback() != ""
}

// splitRoute parses a cluster address: host:port, or a URL
// (nats-route://host:port, nats://host:port, tls://host:port).
func splitRoute(a string) (host string, port int, err error) {
	hp := a
	if i := strings.Index(a, "://"); i >= 0 {
		u, err := url.Parse(a)
		if err != nil {
			return "", 0, err
		}
		hp = u.Host
	}
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err = strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return h, port, nil
}

// Validate reports a configuration the server cannot start with.
func (c *ServerConfig) Validate() error {
	if c.StoreDir == "" {
		return errors.New("jobs server: StoreDir is required")
	}
	if c.Name != "" && strings.ContainsAny(c.Name, " \t\n") {
		return fmt.Errorf("jobs server: name %q has spaces", c.Name)
	}
	switch c.TLS {
	case "", TLSAuto, TLSOn, TLSOff:
	default:
		return fmt.Errorf("jobs server: TLS mode %q: want auto, on or off", c.TLS)
	}
	if c.Cluster != "" {
		if _, _, err := splitRoute(c.Cluster); err != nil {
			return fmt.Errorf("jobs server: cluster address %q: %v (want host:port)", c.Cluster, err)
		}
	} else if len(c.Routes) > 0 {
		return errors.New("jobs server: routes need a cluster listen address")
	}
	for _, r := range c.Routes {
		if _, _, err := splitRoute(r); err != nil {
			return fmt.Errorf("jobs server: route %q: %v (want host:port)", r, err)
		}
	}
	switch {
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return fmt.Errorf("jobs server: TLS certificate %q and key %q go together", c.TLSCert, c.TLSKey)
	case c.TLS == TLSOff && (c.TLSCert != "" || c.ClientCA != ""):
		return errors.New("jobs server: TLS is off, yet a certificate or client CA is given")
	}
	if far := c.notLoopback(); far != "" {
		if c.TLS == TLSOff {
			return fmt.Errorf("jobs server: %s is not a loopback address and TLS is off: connections from other hosts must use TLS "+
				"(leave TLS on auto to generate a certificate, or give one)", far)
		}
		if len(c.WorkerNKeys)+len(c.DaemonNKeys) == 0 {
			return fmt.Errorf("jobs server: %s is not a loopback address: other hosts may connect only with authentication; "+
				"list the workers' and daemons' public nkeys", far)
		}
	}
	if c.TLSEnabled() && c.Cluster != "" && c.TLSCert != "" && c.TLSCA == "" {
		return errors.New("jobs server: cluster routes with a given TLS certificate need the CA that signed the nodes' certificates (TLSCA), to verify each other")
	}
	for _, f := range []string{c.TLSCert, c.TLSKey, c.TLSCA, c.ClientCA} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("jobs server: %w", err)
		}
	}
	for _, k := range append(slices.Clone(c.WorkerNKeys), c.DaemonNKeys...) {
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
	tls      bool
	caFile   string
	stopOnce sync.Once
}

// StartServer starts the server and waits until it accepts clients.
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
		ServerName: cfg.Name,
		Host:       cfg.Host,
		Port:       cfg.Port,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      cfg.Log == nil,
		// A job result may carry a verdict with its diagnostics; artifacts
		// go through the object store.
		MaxPayload: 8 << 20,
	}
	s := &Server{}
	if cfg.Cluster != "" {
		h, p, _ := splitRoute(cfg.Cluster)
		opts.Cluster = server.ClusterOpts{Name: cfg.ClusterName, Host: h, Port: p}
		for _, r := range cfg.Routes {
			rh, rp, _ := splitRoute(r)
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: net.JoinHostPort(rh, strconv.Itoa(rp))})
		}
	}
	if cfg.TLSEnabled() {
		s.tls = true
		peerCA := cfg.TLSCA
		if cfg.TLSCert == "" {
			ca, cert, key, err := ensureCerts(filepath.Join(dir, TLSDir), certHosts(cfg.Host, opts.Cluster.Host))
			if err != nil {
				return nil, fmt.Errorf("jobs server: %w", err)
			}
			cfg.TLSCert, cfg.TLSKey, s.caFile = cert, key, ca
			if peerCA == "" {
				peerCA = ca
			}
		}
		clients, routes, err := serverTLS(cfg.TLSCert, cfg.TLSKey, cfg.ClientCA, peerCA)
		if err != nil {
			return nil, fmt.Errorf("jobs server: %w", err)
		}
		opts.TLS, opts.TLSConfig, opts.TLSVerify, opts.TLSTimeout = true, clients, cfg.ClientCA != "", 5
		if cfg.Cluster != "" {
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = routes, 5
		}
	}
	if len(cfg.WorkerNKeys)+len(cfg.DaemonNKeys) > 0 {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("jobs server: daemon key: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("jobs server: daemon key: %w", err)
		}
		s.daemonKP = kp
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub}} // the daemon in this process: everything
		for _, k := range cfg.DaemonNKeys {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k})
		}
		for _, k := range cfg.WorkerNKeys {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k, Permissions: WorkerPermissions()})
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("jobs server: %w", err)
	}
	if cfg.Log != nil {
		ns.SetLoggerV2(natsLogger{cfg.Log}, cfg.Log.Enabled(context.Background(), slog.LevelDebug), false, false)
	}
	s.ns = ns
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("jobs server: not ready after 30s")
	}
	return s, nil
}

// URL is the server's client URL (nats://127.0.0.1:PORT, tls://... with
// TLS).
func (s *Server) URL() string { return s.ns.ClientURL() }

// Name is the server's name.
func (s *Server) Name() string { return s.ns.Name() }

// TLS reports whether the listeners use TLS.
func (s *Server) TLS() bool { return s.tls }

// CAFile is the generated CA certificate clients need to trust the server
// (ConnConfig.CAFile); "" without TLS or with a given certificate.
func (s *Server) CAFile() string { return s.caFile }

// ClientOptions are the connection options a client in the same process
// needs: its nkey when clients authenticate, and an in-process connection
// when the listener uses TLS (no certificate to check in-process).
func (s *Server) ClientOptions() []nats.Option {
	var opts []nats.Option
	if s.daemonKP != nil {
		pub, _ := s.daemonKP.PublicKey()
		opts = append(opts, nats.Nkey(pub, s.daemonKP.Sign))
	}
	if s.tls {
		// URL() says tls://, so the client does TLS, over an in-process
		// pipe: there is no network peer whose certificate could be
		// checked.
		opts = append(opts, nats.InProcessServer(s.ns),
			nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true})) //nolint:gosec // in-process pipe
	}
	return opts
}

// Stop shuts the server down (JetStream state is flushed to the store
// folder). It is idempotent.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
	})
}

// natsLogger passes the server's log lines to slog.
type natsLogger struct{ log *slog.Logger }

func (l natsLogger) Noticef(format string, v ...any) {
	l.log.Info("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Warnf(format string, v ...any) { l.log.Warn("nats: " + fmt.Sprintf(format, v...)) }
func (l natsLogger) Fatalf(format string, v ...any) {
	l.log.Error("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Errorf(format string, v ...any) {
	l.log.Error("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Debugf(format string, v ...any) {
	l.log.Debug("nats: " + fmt.Sprintf(format, v...))
}
func (l natsLogger) Tracef(string, ...any) {}

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
	// CAFile is the CA certificate (PEM) that the server's TLS certificate
	// chains to: the generated one is StoreDir/tls/ca.pem on the server
	// (Server.CAFile). Empty: the system's roots.
	CAFile string
	// CertFile and KeyFile are the client's certificate and key, for a
	// server that wants mutual TLS (ServerConfig.ClientCA).
	CertFile, KeyFile string
	// Options are added as they are (the embedded server's
	// Server.ClientOptions).
	Options []nats.Option
}

// ErrTLSUntrusted is wrapped by Connect's error when the server's TLS
// certificate is not trusted: the client needs its CA (ConnConfig.CAFile).
var ErrTLSUntrusted = errors.New("the server's TLS certificate is not trusted: give the CA certificate that signed it")

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
	if cfg.CAFile != "" {
		if _, err := certPool(cfg.CAFile, "CA certificate"); err != nil {
			return nil, fmt.Errorf("connect nats: %w", err)
		}
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, fmt.Errorf("connect nats: client certificate %q and key %q go together", cfg.CertFile, cfg.KeyFile)
	}
	if cfg.CertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	opts = append(opts, cfg.Options...)
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		var unknown x509.UnknownAuthorityError
		var invalid x509.CertificateInvalidError
		if errors.As(err, &unknown) || errors.As(err, &invalid) {
			return nil, fmt.Errorf("connect nats %s: %w (%v)", redactURL(cfg.URL), ErrTLSUntrusted, err)
		}
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
