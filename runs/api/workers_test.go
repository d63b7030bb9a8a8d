package api

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestWorkers: GET /v1/workers lists what Config.Workers returns, under the
// token rule; without Workers (dispatch off) the route is 404.
func TestWorkers(t *testing.T) {
	t.Parallel()
	svc := &fakeService{}
	type worker struct {
		ID           string   `json:"id"`
		Capabilities []string `json:"capabilities"`
	}
	tests := []struct {
		name    string
		workers func() any
		want    []string // ids; nil: 404
	}{
		{"dispatch off", nil, nil},
		{"none yet", func() any { return []worker{} }, []string{}},
		{"two", func() any {
			return []worker{{ID: "gpu-1", Capabilities: []string{"gpu"}}, {ID: "gpu-2", Capabilities: []string{"gpu", "torch"}}}
		}, []string{"gpu-1", "gpu-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := start(t, Config{Token: testToken, Workers: tt.workers}, svc)
			ws, err := c.Workers(context.Background())
			if tt.want == nil {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("want 404, got %v %s", err, ws)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) != len(tt.want) {
				t.Fatalf("got %d workers, want %d", len(ws), len(tt.want))
			}
			for i, raw := range ws {
				var w worker
				if err := json.Unmarshal(raw, &w); err != nil || w.ID != tt.want[i] {
					t.Errorf("worker %d: %s %v", i, raw, err)
				}
			}
			c.Token = ""
			if _, err := c.Workers(context.Background()); err == nil {
				t.Error("workers without the token: no error")
			}
		})
	}
}
