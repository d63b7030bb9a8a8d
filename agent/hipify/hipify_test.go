package hipify

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/hipify"
)

const saxpy = `#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    float *x, *y;
    cudaMalloc(&x, 1024 * sizeof(float));
    cudaMalloc(&y, 1024 * sizeof(float));
    saxpy<<<4, 256>>>(1024, 2.0f, x, y);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
`

const ptx = `__global__ void k(unsigned *out) {
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    out[threadIdx.x] = r;
}
int main() { return 0; }
`

func user(s string) agent.Message { return agent.Message{Role: agent.RoleUser, Content: s} }

func prompt(lang, src string) string {
	return "Translate this CUDA program into HIP.\n\n```" + lang + "\n" + src + "```\n\nAnswer in one ```hip block.\n"
}

func TestChat(t *testing.T) {
	t.Parallel()
	want, err := hipify.Translate(saxpy)
	if err != nil || !want.OK() {
		t.Fatal(err, want.Unsupported)
	}
	for _, tc := range []struct {
		name string
		msgs []agent.Message
		hip  bool   // a ```hip block with the translation
		says string // the plain sentence contains this
	}{
		{"cuda block", []agent.Message{{Role: agent.RoleSystem, Content: "sys"}, user(prompt("cuda", saxpy))}, true, ""},
		{"cpp block", []agent.Message{user(prompt("cpp", saxpy))}, true, ""},
		{"repair turn", []agent.Message{user(prompt("cuda", saxpy)), {Role: agent.RoleAssistant, Content: "```hip\nx\n```"},
			user("Your HIP program did not pass verification.\n\n```text\nerror\n```")}, true, ""},
		{"unsupported", []agent.Message{user(prompt("cuda", ptx))}, false, "cannot translate this program to HIP: line 3: asm"},
		{"no program", []agent.Message{user("Write a HIP program.")}, false, "no CUDA program"},
		{"only a system message", []agent.Message{{Role: agent.RoleSystem, Content: prompt("cuda", saxpy)}}, false, "no CUDA program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := New("baseline")
			resp, err := m.Chat(context.Background(), agent.Request{Messages: tc.msgs})
			if err != nil {
				t.Fatal(err)
			}
			msg := resp.Message
			if msg.Role != agent.RoleAssistant || len(msg.ToolCalls) != 0 || resp.FinishReason != "stop" || resp.Model != "hipify:baseline" {
				t.Errorf("response %+v", resp)
			}
			u := resp.Usage
			if u.PromptTokens != 0 || u.CompletionTokens != 0 || u.ReasoningTokens != 0 || u.Calls != 1 ||
				u.PromptSource != agent.CountServer || u.CompletionSource != agent.CountServer || u.ReasoningSource != agent.CountServer {
				t.Errorf("usage %+v", u)
			}
			fs := tools.Fences(msg.Content)
			if tc.hip {
				if len(fs) != 1 || fs[0].Lang != "hip" || fs[0].Body+"\n" != want.HIP {
					t.Errorf("reply is not the translation in one hip block:\n%s", msg.Content)
				}
				return
			}
			if len(fs) != 0 || strings.Contains(msg.Content, "`") || !strings.Contains(msg.Content, tc.says) {
				t.Errorf("reply is not a plain sentence saying %q:\n%s", tc.says, msg.Content)
			}
		})
	}
}

// TestDeterministic: the same request gives the same reply, from many
// goroutines at once.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	m := New("b")
	req := agent.Request{Messages: []agent.Message{user(prompt("cuda", saxpy))}}
	first, err := m.Chat(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := m.Chat(context.Background(), req)
			if err != nil || r.Message.Content != first.Message.Content {
				t.Errorf("a second reply differs (%v)", err)
			}
		}()
	}
	wg.Wait()
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New("b").Chat(ctx, agent.Request{Messages: []agent.Message{user(prompt("cuda", saxpy))}}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled call: %v", err)
	}
}
