package models

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs/spec"
)

// TestOllamaWarnings: an openai endpoint that is an Ollama server (it
// answers GET /api/version) is named; an OpenAI-compatible server that is
// not (vLLM answers 404), an unreachable one, and kind ollama are not.
func TestOllamaWarnings(t *testing.T) {
	t.Parallel()
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/version" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":"0.17.4"}`))
	}))
	defer ollama.Close()
	vllm := httptest.NewServer(http.NotFoundHandler())
	defer vllm.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	sp := &spec.Spec{Models: []spec.Model{
		{Name: "via-v1", Kind: spec.KindOpenAI, BaseURL: ollama.URL + "/v1"},
		{Name: "vllm", Kind: spec.KindOpenAI, BaseURL: vllm.URL + "/v1"},
		{Name: "down", Kind: spec.KindOpenAI, BaseURL: gone.URL + "/v1"},
		{Name: "native", Kind: spec.KindOllama, BaseURL: ollama.URL},
	}}
	got := OllamaWarnings(context.Background(), sp, nil)
	if len(got) != 1 || !strings.HasPrefix(got[0], "models[via-v1]: "+ollama.URL+"/v1 is an Ollama server (0.17.4)") ||
		!strings.Contains(got[0], "kind: ollama") {
		t.Fatalf("warnings %q, want one for via-v1", got)
	}
}
