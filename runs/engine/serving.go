package engine

import (
	"context"
	"errors"
	"time"
)

// Part is a component that a daemon process starts and stops around its
// Daemon: the API server, the notifier, the job queue.
type Part interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Serving is the running parts of kiln serve in their order: the
// notifier, the daemon and the API in front of it, and the job queue
// (started by the caller before them; nil: none).
type Serving struct {
	API      Part
	Daemon   Part
	Notifier Part
	Queue    Part
	// Grace bounds the soft stop of the API, the daemon and the queue;
	// NotifyGrace how long the notifier may take with the webhook calls
	// still queued.
	Grace, NotifyGrace time.Duration
}

// Start starts the notifier, the daemon and the API, in that order; on
// error, what it started is stopped. The notifier reads the store:
// started before the daemon, it takes what is there as its baseline and
// misses nothing the daemon does.
func (s *Serving) Start(ctx context.Context) error {
	if err := s.Notifier.Start(ctx); err != nil {
		return err
	}
	if err := s.Daemon.Start(ctx); err != nil {
		_ = s.Notifier.Stop(context.Background())
		return err
	}
	if err := s.API.Start(ctx); err != nil {
		_ = s.Daemon.Stop(context.Background())
		_ = s.Notifier.Stop(context.Background())
		return err
	}
	return nil
}

// Stop stops in order: the API, then the daemon (softly until ctx, the
// second signal, or the grace ends), then the queue (the scanner, the
// collector with the result in hand stored, NATS), and last the notifier,
// which reports the campaigns that ended meanwhile. A grace that ran out
// is no error.
func (s *Serving) Stop(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(context.Background(), s.Grace)
	defer cancel()
	errAPI := s.API.Stop(sctx)
	dctx, dcancel := context.WithTimeout(ctx, s.Grace)
	defer dcancel()
	errD := s.Daemon.Stop(dctx)
	var errQ error
	if s.Queue != nil {
		qctx, qcancel := context.WithTimeout(context.Background(), s.Grace)
		defer qcancel()
		errQ = s.Queue.Stop(qctx)
	}
	nctx, ncancel := context.WithTimeout(context.Background(), s.NotifyGrace)
	defer ncancel()
	errN := s.Notifier.Stop(nctx)
	if err := errors.Join(errAPI, errD, errQ, errN); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
