package agent_test

import (
	"context"
	"sync/atomic"

	"github.com/kiln-dev/kiln/agent"
)

// fakeModel is a Model whose behaviour is a func; calls counts Chat calls.
type fakeModel struct {
	chat  func(ctx context.Context, req agent.Request, n int) (*agent.Response, error)
	calls atomic.Int64
}

func (f *fakeModel) Chat(ctx context.Context, req agent.Request) (*agent.Response, error) {
	n := int(f.calls.Add(1))
	return f.chat(ctx, req, n)
}

func reply(text string) *agent.Response {
	return &agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: text}}
}

func modelErr(kind agent.ErrorKind) error {
	return &agent.Error{Kind: kind, Endpoint: "fake", Model: "m"}
}
