package persona

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", p, got, want)
	}
}

func TestGoldenRenders(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tests := []struct {
		name, id string
		b        map[string]string
	}{
		{"render_basic_operations_05", "basic_operations/05", map[string]string{"size": "1024", "optimization": "shared memory usage"}},
		{"render_machine_learning_05", "machine_learning/05", map[string]string{"layer_count": "3", "neuron_count": "512", "optimization": "register usage"}},
		{"render_graph_algorithms_02", "graph_algorithms/02", map[string]string{"size": "4096", "community_algorithm": "Louvain"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tp, ok := l.Template(tc.id)
			if !ok {
				t.Fatalf("no template %s", tc.id)
			}
			got, err := tp.Render(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, got+"\n")
		})
	}
}

// TestGoldenSample pins the sampling algorithm: a change here changes
// which prompts every seeded campaign gets.
func TestGoldenSample(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tasks, err := l.Sample(20, 2024, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, task := range tasks {
		keys := make([]string, 0, len(task.Bindings))
		for k := range task.Bindings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var bs []string
		for _, k := range keys {
			bs = append(bs, k+"="+task.Bindings[k])
		}
		fmt.Fprintf(&sb, "%s | %s | %s\n  %s\n", task.TemplateID, task.Category, strings.Join(bs, "; "), task.Prompt)
	}
	golden(t, "sample_seed2024_n20", sb.String())
}

func TestGoldenSystemPrompt(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	s := l.SystemPrompt()
	for _, want := range []string{"```cuda", "CUDA 11.8", "-Os", "main()", "__global__", "no files", "command-line", "fixed seed", "checksum", "exactly one fenced code block"} {
		if !strings.Contains(s, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	golden(t, "system_prompt", s+"\n")
}
