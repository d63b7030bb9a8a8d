// Package ollamatest runs a real Ollama server for tests: the ollama
// binary built from the Go module kiln depends on (see Binary and
// setup.sh's ollama step), serving a tiny model written here.
//
// The model is a llama-architecture GGUF of about 2 MB whose weights are
// not random but chosen: one-hot token embeddings, layers that add
// nothing, and an output matrix that maps each token to one successor. It
// is a deterministic next-token table run by Ollama's real inference
// path (tokenizer, template, runner, sampler, streaming). After the
// template's "<|assistant|>" it writes ReplyText; after
// "<|assistant_tools|>" (the template picks it when tools are sent and
// the last message is not a tool result) it writes a tool call of the
// "compile" tool in the template's <tool_call> format, which the server
// parses into tool_calls.
package ollamatest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ollama/ollama/fs/ggml"
)

// ReplyText is the model's answer to a plain chat turn; ReplyTokens is
// its length in tokens. The server's eval_count of a complete answer is
// one more: it counts the end-of-generation token it sampled.
const (
	ReplyText   = "Hello from kiln's tiny model."
	ReplyTokens = 5
)

// PromptTokens is the server's prompt_eval_count for messages rendered by
// Template: the tokenizer has no merges, so each byte of text is one token,
// plus one control token per message and one for the assistant's turn.
func PromptTokens(texts ...string) int {
	n := 1
	for _, t := range texts {
		n += len(t) + 2 // <|role|> and <|end|>
	}
	return n
}

// ToolName and ToolArguments are the tool call the model makes when a
// tool is offered.
const (
	ToolName      = "compile"
	ToolArguments = `{"code": "int main(void) { return 0; }"}`
)

// Template is the Modelfile TEMPLATE: a chat format with tool calls in
// <tool_call> tags (from which the server learns how to parse them).
const Template = `{{- $last := "" }}{{- range .Messages }}<|{{ .Role }}|>{{ .Content }}
{{- if .ToolCalls }}<tool_call>{{ range .ToolCalls }}{"name": "{{ .Function.Name }}", "arguments": {{ .Function.Arguments }}}{{ end }}</tool_call>{{ end }}<|end|>
{{- $last = .Role }}{{ end }}
{{- if and .Tools (ne $last "tool") }}<|assistant_tools|>{{ else }}<|assistant|>{{ end }}`

// Token types of the GGUF vocabulary.
const (
	tokenNormal  = 1
	tokenControl = 3
)

var controlTokens = []string{"<|bos|>", "<|eos|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>", "<|end|>", "<|assistant_tools|>"}

// The chains the model writes, as text pieces (one token each).
var (
	replyChain = []string{"Hello", " from", " kiln's", " tiny", " model."}
	toolChain  = []string{"<tool_call>", `{"name": "compile", "arguments": `, `{"code": "int main(void) `, `{ return 0; }"}}`, "</tool_call>"}
)

// byteRune is GPT-2's printable form of a byte, which byte-level BPE
// vocabularies use.
func byteRune(b byte) rune {
	r := rune(b)
	switch {
	case r == 0xad:
		return 0x143
	case r <= 0x20:
		return r + 0x100
	case r >= 0x7f && r <= 0xa0:
		return r + 0xa2
	}
	return r
}

func piece(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRune(s[i]))
	}
	return b.String()
}

// vocab returns the tokens, their types and each token's successor.
func vocab() (tokens []string, types []int32, next []int) {
	id := map[string]int{}
	add := func(s string, typ int32) {
		id[s] = len(tokens)
		tokens, types = append(tokens, s), append(types, typ)
	}
	for _, s := range controlTokens {
		add(s, tokenControl)
	}
	for b := 0; b < 256; b++ {
		add(piece(string([]byte{byte(b)})), tokenNormal)
	}
	for _, p := range append(append([]string{}, replyChain...), toolChain...) {
		add(piece(p), tokenNormal)
	}
	eos := id["<|eos|>"]
	next = make([]int, len(tokens))
	for i := range next {
		next[i] = eos
	}
	link := func(start string, pieces []string) {
		prev := id[start]
		for _, p := range pieces {
			next[prev] = id[piece(p)]
			prev = id[piece(p)]
		}
		next[prev] = eos
	}
	link("<|assistant|>", replyChain)
	link("<|assistant_tools|>", toolChain)
	return tokens, types, next
}

// Model dimensions: one-hot embeddings need embd >= the vocabulary.
const (
	heads   = 4
	headDim = 72
	embd    = heads * headDim // 288
	ffn     = 32
	blocks  = 1
	ctxLen  = 32768
	peak    = 4 // output weight of a token's successor (logit ~ peak*sqrt(embd))
)

func f32(n int, set func(buf []float32)) *bytes.Reader {
	buf := make([]float32, n)
	if set != nil {
		set(buf)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, buf)
	return bytes.NewReader(b.Bytes())
}

func tensor(name string, shape []uint64, set func([]float32)) *ggml.Tensor {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return &ggml.Tensor{Name: name, Kind: 0, Shape: shape, WriterTo: f32(n, set)}
}

// WriteModel writes the tiny model's GGUF and a Modelfile naming it into
// dir and returns the Modelfile's path.
func WriteModel(dir string) (string, error) {
	tokens, types, next := vocab()
	v := len(tokens)
	if v > embd {
		return "", fmt.Errorf("ollamatest: %d tokens need an embedding of at least that size (%d)", v, embd)
	}
	ones := func(b []float32) {
		for i := range b {
			b[i] = 1
		}
	}
	ts := []*ggml.Tensor{
		// Token i is the unit vector e_i.
		tensor("token_embd.weight", []uint64{embd, uint64(v)}, func(b []float32) {
			for i := 0; i < v; i++ {
				b[i*embd+i] = 1
			}
		}),
		tensor("output_norm.weight", []uint64{embd}, ones),
		// Row j scores token j: it reads the coordinate of j's predecessor.
		tensor("output.weight", []uint64{embd, uint64(v)}, func(b []float32) {
			for i, j := range next {
				b[j*embd+i] = peak
			}
		}),
	}
	for l := 0; l < blocks; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor(p+"attn_norm.weight", []uint64{embd}, ones),
			tensor(p+"attn_q.weight", []uint64{embd, embd}, nil),
			tensor(p+"attn_k.weight", []uint64{embd, embd}, nil),
			tensor(p+"attn_v.weight", []uint64{embd, embd}, nil),
			tensor(p+"attn_output.weight", []uint64{embd, embd}, nil),
			tensor(p+"ffn_norm.weight", []uint64{embd}, ones),
			tensor(p+"ffn_gate.weight", []uint64{embd, ffn}, nil),
			tensor(p+"ffn_up.weight", []uint64{embd, ffn}, nil),
			tensor(p+"ffn_down.weight", []uint64{ffn, embd}, nil),
		)
	}
	kv := ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "kiln-tiny",
		"general.file_type":                      uint32(0),
		"llama.block_count":                      uint32(blocks),
		"llama.context_length":                   uint32(ctxLen),
		"llama.embedding_length":                 uint32(embd),
		"llama.feed_forward_length":              uint32(ffn),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(heads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(headDim),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(v),
		"tokenizer.ggml.model":                   "gpt2",
		"tokenizer.ggml.pre":                     "default",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.merges":                  []string{piece(" ") + " " + piece(" ")},
		"tokenizer.ggml.bos_token_id":            uint32(0),
		"tokenizer.ggml.eos_token_id":            uint32(1),
		"tokenizer.ggml.add_bos_token":           false,
	}
	gguf := filepath.Join(dir, "kiln-tiny.gguf")
	f, err := os.Create(gguf)
	if err != nil {
		return "", fmt.Errorf("ollamatest: %w", err)
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		f.Close()
		return "", fmt.Errorf("ollamatest: write %s: %w", gguf, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("ollamatest: %w", err)
	}
	mf := filepath.Join(dir, "Modelfile")
	body := fmt.Sprintf("FROM %s\nTEMPLATE \"\"\"%s\"\"\"\nPARAMETER stop <|end|>\nPARAMETER temperature 0\n", gguf, Template)
	if err := os.WriteFile(mf, []byte(body), 0o644); err != nil {
		return "", fmt.Errorf("ollamatest: %w", err)
	}
	return mf, nil
}
