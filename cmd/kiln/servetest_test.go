package main

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/api"
)

// servedKiln is "kiln serve" running in-process on a loopback port.
type servedKiln struct {
	addr   string // host:port
	cl     *api.Client
	stderr *syncBuffer
	soft   chan struct{}
	done   chan int
}

// serveKiln starts "kiln serve" in-process with args (--addr is added, on
// a free loopback port) and getenv (nil: testGetenv), and waits
// until its API answers. Stop it with stop.
func serveKiln(ctx context.Context, t *testing.T, getenv func(string) string, args ...string) *servedKiln {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &servedKiln{addr: l.Addr().String(), stderr: &syncBuffer{}, soft: make(chan struct{}), done: make(chan int, 1)}
	l.Close()
	if getenv == nil {
		getenv = testGetenv
	}
	go func() {
		s.done <- run(ctx, append([]string{"serve", "--addr", s.addr}, args...),
			env{stdout: s.stderr, stderr: s.stderr, getenv: getenv, soft: s.soft})
	}()
	s.cl = &api.Client{BaseURL: "http://" + s.addr}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := s.cl.List(ctx); err == nil {
			return s
		}
		select {
		case code := <-s.done:
			t.Fatalf("serve exited %d before answering: %s", code, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up: %s", s.stderr.String())
		}
	}
}

// stop stops the daemon softly and fails the test unless it exits 0
// within wait.
func (s *servedKiln) stop(t *testing.T, wait time.Duration) {
	t.Helper()
	close(s.soft)
	select {
	case code := <-s.done:
		if code != 0 {
			t.Fatalf("serve exit %d: %s", code, s.stderr.String())
		}
	case <-time.After(wait):
		t.Fatal("serve did not stop")
	}
}
