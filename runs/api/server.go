package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// Defaults for Config.
const (
	DefaultAddr              = "127.0.0.1:7878"
	DefaultMaxBody           = 1 << 20
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultHeartbeat         = 15 * time.Second

	minTokenLen = 16
)

// Config configures the server. Zero fields take the defaults above.
type Config struct {
	// Addr is the listen address (default 127.0.0.1:7878; ":0" picks a
	// port). Anything but a loopback address needs a Token.
	Addr string
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every request but GET /healthz; at least 16 characters, no spaces.
	Token string
	// MaxBody bounds request bodies in bytes (default 1 MiB); larger
	// bodies get 413.
	MaxBody int64
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout cut off slow or idle
	// clients. WriteTimeout bounds each response; on the event stream it
	// bounds each write instead of the whole (endless) response.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// Heartbeat is the interval of comment lines on event streams that keep
	// proxies from closing them and find dead clients (default 15s).
	Heartbeat time.Duration
	// Metrics, when set, answers GET /metrics (Prometheus text format),
	// under the same token rule as the API.
	Metrics http.Handler
	// UI, when set, answers every path the API does not own (the web
	// dashboard), under the same token rule as the API.
	UI http.Handler
	// Workers, when set, answers GET /v1/workers with
	// {"workers": Workers()}: the worker hosts of the scale-out queue
	// (kiln serve --dispatch), a JSON-encodable list. Unset, the route is
	// 404.
	Workers func() any
	// Queue, when set, answers GET /v1/queue with what it returns (JSON):
	// the scale-out queue's jobs by capability, job results and retries
	// (kiln serve --dispatch). Unset, the route is 404.
	Queue func(ctx context.Context) (any, error)
}

// Defaults fills zero fields with their defaults.
func (c *Config) Defaults() {
	set := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	set(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&c.ReadTimeout, DefaultReadTimeout)
	set(&c.WriteTimeout, DefaultWriteTimeout)
	set(&c.IdleTimeout, DefaultIdleTimeout)
	set(&c.Heartbeat, DefaultHeartbeat)
}

// Validate checks a config with defaults applied.
func (c Config) Validate() error {
	var errs []error
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		errs = append(errs, fmt.Errorf("addr %q: %w", c.Addr, err))
	} else if !isLoopback(host) && c.Token == "" {
		errs = append(errs, fmt.Errorf("addr %q is not a loopback address: a token is required to listen there", c.Addr))
	}
	if c.Token != "" {
		if len(c.Token) < minTokenLen {
			errs = append(errs, fmt.Errorf("token must be at least %d characters", minTokenLen))
		}
		if strings.IndexFunc(c.Token, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsPrint(r) || r == ' ' }) >= 0 {
			errs = append(errs, errors.New("token must be printable ASCII without spaces"))
		}
	}
	if c.MaxBody < 0 {
		errs = append(errs, errors.New("max body must be >= 0"))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"read header timeout", c.ReadHeaderTimeout}, {"read timeout", c.ReadTimeout}, {"write timeout", c.WriteTimeout}, {"idle timeout", c.IdleTimeout}, {"heartbeat", c.Heartbeat}} {
		if d.d < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0", d.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("api config: %w", err)
	}
	return nil
}

// isLoopback reports whether a listen or Host host names only this machine.
// The empty host (all interfaces) is not loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Server serves the API. Create it with New, then Start and Stop it.
type Server struct {
	cfg     Config
	svc     Service
	log     *slog.Logger
	handler http.Handler
	cop     *http.CrossOriginProtection
	token   [sha256.Size]byte

	// streams is cancelled by Stop so that event streams end before
	// Shutdown waits for handlers.
	streams     context.Context
	stopStreams context.CancelFunc

	bound atomic.Pointer[string] // listener address once started

	mu     sync.Mutex
	state  int // 0 new, 1 started, 2 stopped
	srv    *http.Server
	served chan struct{} // closed when Serve returns
}

// New checks cfg (after applying defaults) and builds a server; it does not
// listen yet. A nil logger discards logs.
func New(cfg Config, svc Service, log *slog.Logger) (*Server, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if svc == nil {
		return nil, errors.New("api: nil service")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, svc: svc, log: log, cop: http.NewCrossOriginProtection()}
	if cfg.Token != "" {
		s.token = sha256.Sum256([]byte(cfg.Token))
	}
	s.streams, s.stopStreams = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s, nil
}

// Handler returns the API's handler (for tests and for mounting it in
// another server).
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on cfg.Addr and serves in the background; it returns once
// the listener is bound (an error if the address is taken). ctx bounds the
// listen only: stop the server with Stop. A server starts once.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case 1:
		return errors.New("api: already started")
	case 2:
		return errors.New("api: stopped")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("api: listen: %w", err)
	}
	addr := ln.Addr().String()
	s.bound.Store(&addr)
	s.srv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.served = make(chan struct{})
	s.state = 1
	srv, served := s.srv, s.served
	go func() {
		defer close(served)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("api: serve", "err", err)
		}
	}()
	s.log.Info("api: listening", "addr", ln.Addr().String(), "token", s.cfg.Token != "")
	return nil
}

// Addr returns the bound address once started (useful with ":0"), else the
// configured one.
func (s *Server) Addr() string {
	if a := s.bound.Load(); a != nil {
		return *a
	}
	return s.cfg.Addr
}

// Stop ends event streams, then shuts down gracefully: it stops accepting,
// lets in-flight requests finish until ctx is done, then closes what is
// left. It waits for the serving goroutine and is idempotent (a second call,
// or a call before Start, returns nil).
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev := s.state
	s.state = 2
	s.stopStreams()
	if prev != 1 {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	<-s.served
	if err != nil {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	return nil
}

// authorized reports whether r carries the configured bearer token (always
// true without one). The comparison is over SHA-256 digests, so it takes
// the same time whatever the length or content of the guess.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.Token == "" {
		return true
	}
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return s.tokenMatches(strings.TrimSpace(got))
	}
	// The dashboard's browsers carry the token in a cookie set by /login.
	if c, err := r.Cookie(sessionCookie); err == nil && s.cfg.UI != nil {
		got, err := hex.DecodeString(c.Value)
		return err == nil && subtle.ConstantTimeCompare(got, s.token[:]) == 1
	}
	return false
}

func (s *Server) tokenMatches(got string) bool {
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
}

// hostAllowed guards a token-less server against DNS rebinding: a page
// served from attacker.example that resolves to 127.0.0.1 sends
// "Host: attacker.example". With a token the token does that job (and
// reverse proxies may set any Host).
func (s *Server) hostAllowed(r *http.Request) bool {
	if s.cfg.Token != "" {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return isLoopback(host)
}
