package agent

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind tells callers what to do with a failed model call.
type ErrorKind string

const (
	// KindRetryable: 429, 5xx, connection refused/reset, timeouts. Retry with backoff.
	KindRetryable ErrorKind = "retryable"
	// KindTruncated: the stream ended before the server said it was done.
	// Retryable, but never use the partial text as an answer.
	KindTruncated ErrorKind = "truncated"
	// KindModelNotFound: the model is not served (Ollama: not pulled). Not retryable.
	KindModelNotFound ErrorKind = "model_not_found"
	// KindBadRequest: 4xx other than 429/404 model; the request itself is wrong. Not retryable.
	KindBadRequest ErrorKind = "bad_request"
	// KindAuth: 401/403. Not retryable.
	KindAuth ErrorKind = "auth"
	// KindBadResponse: the server answered 200 with something we cannot parse.
	// Retryable (a later sample may be fine).
	KindBadResponse ErrorKind = "bad_response"
)

// Error is the typed error every adapter returns for a failed call.
type Error struct {
	Kind     ErrorKind
	Endpoint string // endpoint name or base URL
	Model    string
	Status   int           // HTTP status when there was one
	RetryIn  time.Duration // server's Retry-After, if any
	Err      error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("model %s at %s: %s", e.Model, e.Endpoint, e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err, or "" when err is not an *Error.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Retryable reports whether a call that failed with err may be tried again.
func Retryable(err error) bool {
	switch KindOf(err) {
	case KindRetryable, KindTruncated, KindBadResponse:
		return true
	}
	return false
}
