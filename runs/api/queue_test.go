package api

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestQueue: GET /v1/queue answers what Config.Queue returns, under the
// token rule; its error is a 500; without Queue (dispatch off) the route
// is 404.
func TestQueue(t *testing.T) {
	t.Parallel()
	svc := &fakeService{}
	ctx := context.Background()

	_, c := start(t, Config{Token: testToken}, svc)
	if _, err := c.Queue(ctx); !errors.Is(err, ErrNotFound) {
		t.Errorf("dispatch off: want 404, got %v", err)
	}

	_, c = start(t, Config{Token: testToken, Queue: func(context.Context) (any, error) {
		return map[string]any{"queues": []map[string]any{{"capability": "gpu", "waiting": 3}}}, nil
	}}, svc)
	raw, err := c.Queue(ctx)
	if err != nil || !strings.Contains(string(raw), `"gpu"`) {
		t.Errorf("queue: %s %v", raw, err)
	}
	c.Token = ""
	if _, err := c.Queue(ctx); err == nil {
		t.Error("queue without the token: no error")
	}

	_, c = start(t, Config{Token: testToken, Queue: func(context.Context) (any, error) {
		return nil, errors.New("nats down")
	}}, svc)
	if _, err := c.Queue(ctx); err == nil || !strings.Contains(err.Error(), "nats down") {
		t.Errorf("failing queue: %v", err)
	}
}
