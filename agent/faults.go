package agent

import (
	"context"
	"errors"
	"net/http"
	"os"
)

// ErrCallTimeout marks a call that ran out of the adapter's own per-call
// timeout (Config.Timeout of agent/openai and agent/ollama) while the
// caller's context was still live. Adapters wrap it in a KindRetryable
// *Error.
var ErrCallTimeout = errors.New("call timed out")

// Fault classes: FaultClass sorts a failed model call into one of these (or
// the ErrorKind of a non-retryable *Error).
const (
	FaultRateLimited = "rate_limited" // HTTP 429
	FaultServerError = "server_error" // HTTP 5xx
	FaultTimeout     = "timeout"      // the per-call timeout or HTTP 408
	FaultStreamError = "stream_error" // an error event inside a 200 stream
	FaultConnection  = "connection"   // refused, reset, closed before an answer
	FaultTruncated   = string(KindTruncated)
	FaultBadResponse = string(KindBadResponse)
	FaultOther       = "other" // not an *Error
)

// FaultClass names what went wrong in a failed model call, more finely than
// its ErrorKind: the retryable kind is split by cause (rate limit, server
// error, timeout, error event in the stream, connection); other kinds keep
// their own name. Errors that are not an *Error are FaultOther.
func FaultClass(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return FaultOther
	}
	if e.Kind != KindRetryable {
		return string(e.Kind)
	}
	switch {
	case e.Status == http.StatusTooManyRequests:
		return FaultRateLimited
	case e.Status >= 500:
		return FaultServerError
	case e.Status == http.StatusRequestTimeout || errors.Is(err, ErrCallTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return FaultTimeout
	case e.Status == http.StatusOK:
		return FaultStreamError
	}
	return FaultConnection
}

type faultObserverKey struct{}

// WithFaultObserver returns a context that makes Retry report every failed
// try of a model call made with it to fn: the tries that a later one
// recovered as well as the last one, but never a try cut short because the
// caller's context ended. fn must be safe for concurrent use and quick. Like
// net/http/httptrace, this lets the owner of a piece of work count the
// faults of the model calls made for it without building models per call.
func WithFaultObserver(ctx context.Context, fn func(err error)) context.Context {
	return context.WithValue(ctx, faultObserverKey{}, fn)
}

// observeFault reports err to ctx's fault observer, if any.
func observeFault(ctx context.Context, err error) {
	if fn, ok := ctx.Value(faultObserverKey{}).(func(error)); ok && fn != nil {
		fn(err)
	}
}
