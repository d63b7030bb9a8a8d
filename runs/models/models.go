// Package models builds the model endpoints a campaign spec names
// (models[]) into agent Models: the adapter of each kind (OpenAI-compatible,
// Ollama, langchaingo providers, script, hipify) wrapped in the spec's retry
// policy, and the pool of a campaign's solvers.
package models

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tmc/langchaingo/llms"
	lcanthropic "github.com/tmc/langchaingo/llms/anthropic"
	lccohere "github.com/tmc/langchaingo/llms/cohere"
	lcgoogleai "github.com/tmc/langchaingo/llms/googleai"
	lcmistral "github.com/tmc/langchaingo/llms/mistral"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/agent/hipify"
	"github.com/kiln-dev/kiln/agent/langchain"
	"github.com/kiln-dev/kiln/agent/ollama"
	"github.com/kiln-dev/kiln/agent/openai"
	"github.com/kiln-dev/kiln/agent/script"
	"github.com/kiln-dev/kiln/runs/spec"
)

// Build turns one spec endpoint into a Model with retries. getenv reads
// the API key variable the spec names.
func Build(ctx context.Context, m spec.Model, sp *spec.Spec, getenv func(string) string, hc *http.Client) (agent.Model, error) {
	key := ""
	if m.APIKeyEnv != "" {
		key = getenv(m.APIKeyEnv)
		if key == "" && m.Kind != spec.KindOpenAI {
			return nil, fmt.Errorf("models[%s].api_key_env: environment variable %s is empty", m.Name, m.APIKeyEnv)
		}
	}
	var (
		base agent.Model
		err  error
	)
	switch m.Kind {
	case spec.KindOpenAI:
		base, err = openai.New(openai.Config{Name: m.Name, BaseURL: m.BaseURL, APIKey: key, Model: m.Model,
			Timeout: m.Timeout.D(), HTTPClient: hc})
	case spec.KindOllama:
		cfg := ollama.Config{Name: m.Name, BaseURL: m.BaseURL, Model: m.Model, NumCtx: m.NumCtx,
			Timeout: m.Timeout.D(), HTTPClient: hc}
		if m.KeepAlive != nil {
			cfg.KeepAlive = m.KeepAlive.D()
		}
		if m.Think != nil {
			cfg.Think = fmt.Sprint(*m.Think)
		}
		base, err = ollama.New(cfg)
	case spec.KindScript:
		base, err = script.Load(m.Script, script.Config{Latency: m.Latency.D()})
	case spec.KindHipify:
		base = hipify.New(m.Name)
	case spec.KindLangchain:
		var llm llms.Model
		llm, err = langchainLLM(ctx, m, key, hc)
		if err == nil {
			base = langchain.New(llm, m.Name, langchain.Options{SplitAssistantParts: m.Provider == "anthropic"})
		}
	default:
		err = fmt.Errorf("unknown kind %q", m.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	if m.Kind == spec.KindScript || m.Kind == spec.KindHipify {
		return base, nil // nothing transient to retry
	}
	pol := agent.RetryPolicy{MaxAttempts: sp.Retry.MaxAttempts, BaseDelay: sp.Retry.BaseDelay.D(), MaxDelay: sp.Retry.MaxDelay.D()}
	return agent.Retry(base, pol, m.Name, nil), nil
}

// langchainLLM is the langchaingo model of m's provider.
func langchainLLM(ctx context.Context, m spec.Model, key string, hc *http.Client) (llms.Model, error) {
	switch m.Provider {
	case "anthropic":
		opts := []lcanthropic.Option{lcanthropic.WithToken(key), lcanthropic.WithModel(m.Model)}
		if m.BaseURL != "" {
			opts = append(opts, lcanthropic.WithBaseURL(m.BaseURL))
		}
		if hc != nil {
			opts = append(opts, lcanthropic.WithHTTPClient(hc))
		}
		return lcanthropic.New(opts...)
	case "googleai":
		opts := []lcgoogleai.Option{lcgoogleai.WithAPIKey(key), lcgoogleai.WithDefaultModel(m.Model)}
		if hc != nil {
			opts = append(opts, lcgoogleai.WithHTTPClient(hc))
		}
		return lcgoogleai.New(ctx, opts...)
	case "mistral":
		opts := []lcmistral.Option{lcmistral.WithAPIKey(key), lcmistral.WithModel(m.Model), lcmistral.WithTimeout(m.Timeout.D())}
		if m.BaseURL != "" {
			opts = append(opts, lcmistral.WithEndpoint(m.BaseURL))
		}
		return lcmistral.New(opts...)
	case "cohere":
		opts := []lccohere.Option{lccohere.WithToken(key), lccohere.WithModel(m.Model)}
		if m.BaseURL != "" {
			opts = append(opts, lccohere.WithBaseURL(m.BaseURL))
		}
		return lccohere.New(opts...)
	case "openai":
		opts := []lcopenai.Option{lcopenai.WithToken(key), lcopenai.WithModel(m.Model)}
		if m.BaseURL != "" {
			opts = append(opts, lcopenai.WithBaseURL(m.BaseURL))
		}
		if hc != nil {
			opts = append(opts, lcopenai.WithHTTPClient(hc))
		}
		return lcopenai.New(opts...)
	}
	return nil, fmt.Errorf("provider %q is not wired (use one of %v)", m.Provider, spec.LangchainProviders())
}

// OllamaWarnings names the models of kind openai whose base_url is an
// Ollama server (ollama.Detect, at most two seconds each): its
// OpenAI-compatible endpoint cuts a prompt longer than the model's context
// window without an error, so a long task or repair turn silently loses
// its beginning. kind ollama sets num_ctx and fails loudly instead.
func OllamaWarnings(ctx context.Context, sp *spec.Spec, hc *http.Client) []string {
	var out []string
	for _, m := range sp.Models {
		if m.Kind != spec.KindOpenAI || m.BaseURL == "" {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		v, err := ollama.Detect(dctx, m.BaseURL, hc)
		cancel()
		if err != nil {
			continue
		}
		out = append(out, fmt.Sprintf("models[%s]: %s is an Ollama server (%s): its OpenAI-compatible endpoint silently "+
			"cuts prompts longer than the model's context window; use kind: ollama with num_ctx (kiln then sets the "+
			"context and a prompt that does not fit fails with an error)", m.Name, m.BaseURL, v))
	}
	return out
}

// Pool builds every endpoint of sp into one pool.
func Pool(ctx context.Context, sp *spec.Spec, getenv func(string) string, hc *http.Client) (agent.Model, error) {
	var eps []agent.Endpoint
	for _, m := range sp.Models {
		mm, err := Build(ctx, m, sp, getenv, hc)
		if err != nil {
			return nil, err
		}
		eps = append(eps, agent.Endpoint{Name: m.Name, Model: mm, Concurrency: m.Concurrency})
	}
	return agent.NewPool(eps, agent.PoolConfig{})
}
