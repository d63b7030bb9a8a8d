package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// fakePart records its starts and stops in a shared log.
type fakePart struct {
	name     string
	log      *[]string
	startErr error
	stopErr  error
}

func (p *fakePart) Start(context.Context) error {
	*p.log = append(*p.log, "start "+p.name)
	return p.startErr
}

func (p *fakePart) Stop(context.Context) error {
	*p.log = append(*p.log, "stop "+p.name)
	return p.stopErr
}

func TestServingOrder(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name      string
		failStart string // part whose Start fails
		stopErr   error  // the daemon's Stop error
		queue     bool
		want      []string
		wantErr   error
	}{
		{name: "ok", queue: true, want: []string{"start notifier", "start daemon", "start api",
			"stop api", "stop daemon", "stop queue", "stop notifier"}},
		{name: "no queue", want: []string{"start notifier", "start daemon", "start api",
			"stop api", "stop daemon", "stop notifier"}},
		{name: "notifier fails", failStart: "notifier", want: []string{"start notifier"}, wantErr: boom},
		{name: "daemon fails", failStart: "daemon", want: []string{"start notifier", "start daemon", "stop notifier"}, wantErr: boom},
		{name: "api fails", failStart: "api", want: []string{"start notifier", "start daemon", "start api",
			"stop daemon", "stop notifier"}, wantErr: boom},
		{name: "grace ran out", stopErr: context.DeadlineExceeded, want: []string{"start notifier", "start daemon", "start api",
			"stop api", "stop daemon", "stop notifier"}},
		{name: "stop fails", stopErr: boom, want: []string{"start notifier", "start daemon", "start api",
			"stop api", "stop daemon", "stop notifier"}, wantErr: boom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log []string
			part := func(name string) *fakePart {
				p := &fakePart{name: name, log: &log}
				if name == tc.failStart {
					p.startErr = boom
				}
				if name == "daemon" {
					p.stopErr = tc.stopErr
				}
				return p
			}
			s := &Serving{API: part("api"), Daemon: part("daemon"), Notifier: part("notifier"), Grace: time.Second, NotifyGrace: time.Second}
			if tc.queue {
				s.Queue = part("queue")
			}
			err := s.Start(context.Background())
			if err == nil {
				err = s.Stop(context.Background())
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(log, tc.want) {
				t.Errorf("order %q, want %q", log, tc.want)
			}
		})
	}
}
