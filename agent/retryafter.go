package agent

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryAfter reads an HTTP Retry-After header (seconds, possibly
// fractional, or an HTTP date) as a duration from now; 0 when absent, past
// or unparsable. Adapters put it in Error.RetryIn.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
