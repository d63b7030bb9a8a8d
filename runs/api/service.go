// Package api is the HTTP API of "kiln serve": submit, list, show and cancel
// campaigns, and follow a campaign's progress as Server-Sent Events.
//
// Routes:
//
//	POST /v1/campaigns              body: a YAML campaign spec -> 201 CampaignInfo
//	GET  /v1/campaigns              -> 200 {"campaigns": [CampaignInfo...]}
//	GET  /v1/campaigns/{id}         -> 200 CampaignInfo
//	POST /v1/campaigns/{id}/cancel  -> 202 {"id": ..., "status": "cancel requested"}
//	GET  /v1/campaigns/{id}/events  -> text/event-stream of Progress
//	GET  /healthz                   -> 200 {"status": "ok"} (no token needed)
//
// Errors are JSON, {"error": "..."} (plus "details" for a bad spec). The
// server binds loopback by default; a token is required to bind anything
// else, and when set every request but /healthz must carry
// "Authorization: Bearer <token>". Without a token the Host header must name
// a loopback host (against DNS rebinding). Cross-origin browser POSTs are
// refused (net/http.CrossOriginProtection).
//
// The package owns the transport only: the campaign logic sits behind the
// Service interface, which main wires to the engine. Client is the matching
// Go client; it implements Service too.
package api

import (
	"context"
	"errors"
	"time"
)

// Service is what the API needs from the engine. Each call's ctx is the
// HTTP request's: it ends when the client leaves, so it bounds the call, not
// the campaign a Submit starts.
type Service interface {
	// Submit parses, validates and starts a campaign. A spec the caller got
	// wrong is reported as a *BadSpec error (HTTP 400).
	Submit(ctx context.Context, specYAML []byte) (CampaignInfo, error)
	// List returns every campaign, newest first.
	List(ctx context.Context) ([]CampaignInfo, error)
	// Show returns one campaign, or ErrNotFound.
	Show(ctx context.Context, id string) (CampaignInfo, error)
	// Cancel asks a campaign to stop: ErrNotFound, or ErrConflict when it
	// has already finished.
	Cancel(ctx context.Context, id string) error
	// Watch streams a campaign's progress. The channel is closed when the
	// campaign ends or ctx is done; the implementation must never block
	// forever on a send once ctx is done. ErrNotFound for an unknown id.
	Watch(ctx context.Context, id string) (<-chan Progress, error)
}

// Errors a Service returns that the API maps to status codes.
var (
	// ErrNotFound: no campaign with that id (404).
	ErrNotFound = errors.New("campaign not found")
	// ErrConflict: the request does not fit the campaign's state, such as
	// cancelling a finished campaign (409).
	ErrConflict = errors.New("conflict with the campaign's state")
)

// BadSpec is a Submit error caused by the spec itself (HTTP 400). Err is
// shown to the client; when it unwraps to several errors (spec.Errors does),
// each becomes one entry of "details".
type BadSpec struct {
	Err error
}

func (e *BadSpec) Error() string { return "bad spec: " + e.Err.Error() }
func (e *BadSpec) Unwrap() error { return e.Err }

// CampaignInfo is the summary of one campaign.
type CampaignInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Lane  string `json:"lane"`
	State string `json:"state"` // the engine's campaign state (queued, running, done, cancelled, failed, ...)
	Round int    `json:"round"`
	// Counts are named totals such as "tasks", "done", "pass" (complete
	// passes only), "fail", "pending" (stages left for another host, never
	// a pass) and "task_faults" (the task's reference failed, never a fail).
	Counts     map[string]int `json:"counts,omitempty"`
	Tokens     int64          `json:"tokens"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at,omitzero"`
	FinishedAt time.Time      `json:"finished_at,omitzero"`
	Error      string         `json:"error,omitempty"` // why a failed campaign failed
}

// Progress is one update of a running campaign.
type Progress struct {
	Time    time.Time `json:"time"`
	State   string    `json:"state"`
	Round   int       `json:"round"`
	Done    int       `json:"done"`  // attempts finished this round
	Total   int       `json:"total"` // attempts planned this round
	Pass    int       `json:"pass"`  // complete passes only
	Fail    int       `json:"fail"`
	Pending int       `json:"pending"` // passed every stage that ran, stages left for another host
	// TaskFaults: the task's own reference failed (neither pass nor fail).
	TaskFaults int    `json:"task_faults"`
	Tokens     int64  `json:"tokens"` // all tokens so far
	Message    string `json:"message,omitempty"`
}
