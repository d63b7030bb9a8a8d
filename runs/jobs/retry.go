package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterWait bounds how long a JetStream API call of the queue's set-up
// is retried while the cluster cannot answer (a node down, a leader being
// elected, a cluster still forming).
const clusterWait = 2 * time.Minute

// One JetStream API call in a retry loop gets firstTry, then twice as
// long as the one before, at most maxTry: a request sent while a cluster
// has no leader gets no answer at all, and waiting long on it only delays
// the next one; a loaded server may need longer.
const (
	firstTry = 2 * time.Second
	maxTry   = 10 * time.Second
)

// Transient reports whether a JetStream error may go away by itself: no
// server answered (a node down, a stream or consumer leader being
// elected), a timeout, a connection being re-established, the cluster
// temporarily unavailable or short of peers. Calls that fail so are
// retried; others (a bad configuration) are not.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case 10005, // no suitable peers for placement (a node down)
			10008, // JetStream system temporarily unavailable (no meta leader)
			10009, // JetStream cluster can not handle request
			10023, // insufficient resources (peers down)
			10118, // stream is offline
			10119: // consumer is offline
			return true
		}
		return false
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// retry runs fn until it succeeds, fails with an error that is not
// Transient, ctx ends, or wait has passed; each try is bounded (firstTry,
// doubling up to maxTry). It returns the last error.
func retry(ctx context.Context, wait time.Duration, fn func(context.Context) error) error {
	deadline := time.Now().Add(wait)
	pause, try := 100*time.Millisecond, firstTry
	for {
		tctx, cancel := context.WithTimeout(ctx, try)
		err := fn(tctx)
		cancel()
		try = min(2*try, maxTry)
		if err == nil || !Transient(err) || ctx.Err() != nil {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("%w (still failing after %s)", err, wait)
		}
		sleepCtx(ctx, pause)
		if ctx.Err() != nil {
			return err
		}
		pause = min(2*pause, 2*time.Second)
	}
}
