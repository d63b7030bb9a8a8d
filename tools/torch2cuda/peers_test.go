package torch2cuda

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

// peer is one entry of peers/manifest.json: an answer written in the
// style of models and KernelBench (not ours), the stream the judge must
// find for it, and its behaviour-changing twin with the classes it may
// get. Paths are relative to this folder.
type peer struct {
	Name       string   `json:"name"`
	Problem    string   `json:"problem"`
	Answer     string   `json:"answer"`
	Stream     string   `json:"stream"`
	Twin       string   `json:"twin"`
	TwinExpect []string `json:"twin_expect"`
	Styles     []string `json:"styles"`
}

// peerStyles are the styles a peer may claim, each with what shows it in
// the answer; every one must be claimed by some peer.
var peerStyles = map[string]*regexp.Regexp{
	"default_stream":      regexp.MustCompile(`<<<\s*[^,<>]+,\s*[^,<>]+>>>`),
	"current_stream":      regexp.MustCompile(`getCurrentCUDAStream\(\)`),
	"several_kernels":     regexp.MustCompile(`(?s)__global__.*__global__`),
	"cublas":              regexp.MustCompile(`cublasSgemm|cublasGemmEx`),
	"cudnn":               regexp.MustCompile(`self\.conv\(x\)`),
	"dispatch":            regexp.MustCompile(`AT_DISPATCH_FLOATING_TYPES`),
	"half":                regexp.MustCompile(`__half2?\b`),
	"bfloat16":            regexp.MustCompile(`__nv_bfloat16`),
	"contiguous":          regexp.MustCompile(`\.contiguous\(\)`),
	"torch_check":         regexp.MustCompile(`TORCH_CHECK\(`),
	"zeros_like":          regexp.MustCompile(`torch::zeros_like\(`),
	"item":                regexp.MustCompile(`\.item<float>\(\)`),
	"load_inline_options": regexp.MustCompile(`(?s)verbose=True,\s*extra_cflags=\[""\],\s*extra_ldflags=\[""\]`),
	"build_alias":         regexp.MustCompile(`from torch\.utils\.cpp_extension import load_inline as build\b`),
	"module_alias":        regexp.MustCompile(`import torch\.utils\.cpp_extension as \w+`),
}

func loadPeers(t *testing.T) []peer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("peers", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ps []peer
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatalf("peers/manifest.json: %v", err)
	}
	return ps
}

func readPeerFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(rel))
	if err != nil {
		t.Fatalf("peers/manifest.json names %s: %v", rel, err)
	}
	return string(b)
}

// TestPeersManifest: every peer's files exist, its claimed styles show in
// its answer, every style is claimed, and each twin is the answer with
// marked changes.
func TestPeersManifest(t *testing.T) {
	t.Parallel()
	ps := loadPeers(t)
	if len(ps) < 8 {
		t.Fatalf("%d peers, want at least 8", len(ps))
	}
	claimed := map[string]bool{}
	names := map[string]bool{}
	for _, p := range ps {
		if names[p.Name] {
			t.Errorf("%s: listed twice", p.Name)
		}
		names[p.Name] = true
		ref := readPeerFile(t, p.Problem)
		for _, want := range []string{"class Model", "def get_inputs", "def get_init_inputs"} {
			if !strings.Contains(ref, want) {
				t.Errorf("%s: problem %s has no %q", p.Name, p.Problem, want)
			}
		}
		ans, twin := readPeerFile(t, p.Answer), readPeerFile(t, p.Twin)
		if p.Stream != StreamCurrent && p.Stream != StreamLegacyDefault {
			t.Errorf("%s: stream %q, want %s or %s (a pass)", p.Name, p.Stream, StreamCurrent, StreamLegacyDefault)
		}
		if len(p.TwinExpect) == 0 || slices.Contains(p.TwinExpect, "") || slices.Contains(p.TwinExpect, "pass") {
			t.Errorf("%s: twin_expect %q must list failure classes only", p.Name, p.TwinExpect)
		}
		for _, s := range p.Styles {
			re, ok := peerStyles[s]
			switch {
			case !ok:
				t.Errorf("%s: unknown style %q", p.Name, s)
			case !re.MatchString(ans):
				t.Errorf("%s: claims style %s, which its answer does not show (%s)", p.Name, s, re)
			}
			claimed[s] = true
		}
		if !strings.HasPrefix(twin, `"""BROKEN`) || !strings.Contains(twin, "// BROKEN") || twin == ans {
			t.Errorf("%s: the twin must start with a BROKEN docstring and mark its changed lines", p.Name)
		}
	}
	for s := range peerStyles {
		if !claimed[s] {
			t.Errorf("style %s: no peer shows it", s)
		}
	}
}

// TestPeersStatic: the CPU part of the peer suite: every answer and twin
// is extracted from a model-style reply, passes the syntax-tree static
// check in the sandbox and the refinement taxonomy's Go check, and is
// pending (not failed) on a host without a GPU.
func TestPeersStatic(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	for _, p := range loadPeers(t) {
		for _, f := range []struct{ kind, path string }{{"answer", p.Answer}, {"twin", p.Twin}} {
			t.Run(p.Name+"/"+f.kind, func(t *testing.T) {
				t.Parallel()
				// A deadline of its own, from when it runs: parallel
				// subtests wait for a slot, and on a loaded host one shared
				// deadline ran out before the last ones started.
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				src := readPeerFile(t, f.path)
				reply := "Here is the optimized version. The kernel fuses the work:\n\n```cpp\n__global__ void sketch() {}\n```\n\n" +
					"Full module:\n\n```python\n" + src + "```\n\nThis should be faster than the PyTorch version."
				got, ok := ExtractAnswer(reply)
				if !ok || got != strings.TrimSpace(src)+"\n" {
					t.Fatalf("extracted %v: %.200q", ok, got)
				}
				facts, err := l.staticCheck(ctx, got)
				if err != nil {
					t.Fatal(err)
				}
				if facts.SyntaxError != nil {
					t.Fatalf("syntax error: %s", *facts.SyntaxError)
				}
				if why := facts.suspicion(true); why != "" {
					t.Errorf("static check rejects it: %s", why)
				}
				if why := staticSuspicion(got); why != "" {
					t.Errorf("the taxonomy's check flags it: %s", why)
				}
				if testRegistry.GPU().Present {
					return
				}
				v, err := l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: readPeerFile(t, p.Problem)}}, got)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(tools.PendingStages(v), []string{StageJudge}) || len(v.Suspicion) > 0 {
					t.Errorf("verdict on a CPU host: pass %v class %q pending %v: %s", v.Pass, v.Class, tools.PendingStages(v), v.Diagnostic)
				}
			})
		}
	}
}

// TestBrokenSetStatic runs broken/check_syntax.py (python3's standard
// library only): the broken set's manifest and candidates are well formed.
func TestBrokenSetStatic(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command(py, filepath.Join("broken", "check_syntax.py"), "--quiet").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " passed, 0 failed") {
		t.Fatalf("check_syntax.py: %v\n%s", err, out)
	}
	t.Log(lastLines(string(out), 1))
}
