package c2x86

// Tests of the lane's prompts (tools/c2x86/prompts; moved from package
// prompts, which no longer knows any lane). The golden files are
// testdata/c2x86_*.golden.

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/prompts"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current templates")

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
		t.Fatalf("%v (run go test ./tools/c2x86 -run TestGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (rerun with -update if intended):\n--- got ---\n%s", name, p, got)
	}
}

func TestGoldenC2X86(t *testing.T) {
	t.Parallel()
	lib, err := promptLibrary()
	if err != nil {
		t.Fatal(err)
	}
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var seed prompts.CorpusItem
	for _, it := range items {
		if it.ID == "flt_001_cost_split" {
			seed = it
		}
	}
	if seed.ID == "" {
		t.Fatal("flt_001_cost_split missing from corpus")
	}
	longDiag := "answer.s:12: Error: no such instruction: `movz %al,%eax'\n" + strings.Repeat("x", 5000)
	tests := []struct {
		name  string
		which string
		data  any
	}{
		{"c2x86_system", prompts.PromptSystem, nil},
		{"c2x86_system_tools", prompts.PromptSystem, prompts.SystemData{Tools: []string{"assemble", "run_tests"}}},
		{"c2x86_user", prompts.PromptUser, prompts.UserData{Function: seed.Function, Source: seed.Files["function.c"]}},
		{"c2x86_repair_wrong_output", prompts.PromptRepair, prompts.RepairData{Class: "wrong_output",
			Diagnostic: "output differs at line 1:\n  want: 1568\n  got:  0"}},
		{"c2x86_repair_assemble_error", prompts.PromptRepair, &prompts.RepairData{Class: "assemble_error", Diagnostic: longDiag}},
		{"c2x86_repair_no_answer", prompts.PromptRepair, prompts.RepairData{Class: "no_answer"}},
		{"c2x86_repair_other", prompts.PromptRepair, prompts.RepairData{Class: "internal_error", Diagnostic: "disk full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := lib.Render(LaneName, tt.which, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, got)
		})
	}
}

// TestSystemPromptContent pins the seed paper's requirements, independent
// of wording changes that the golden files would also catch.
func TestSystemPromptContent(t *testing.T) {
	t.Parallel()
	lib, err := promptLibrary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := lib.Render(LaneName, prompts.PromptSystem, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AT&T", "System V AMD64", "-fno-jump-tables", "```asm", ".double 0.1",
		".double 1.0/3.0", ".float 6.0", "IEEE-754"} {
		if !strings.Contains(got, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(got, "Tools") {
		t.Error("system prompt without tools mentions tools")
	}
	user, err := lib.Render(LaneName, prompts.PromptUser, prompts.UserData{Function: "f", Source: "int f(void) { return 1; }\n\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(user, "```c\nint f(void) { return 1; }\n```") || !strings.Contains(user, "`f`") {
		t.Errorf("user prompt:\n%s", user)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	lib, err := promptLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if !lib.Has(LaneName, prompts.PromptRepair) || lib.Has(LaneName, "nope") {
		t.Error("Has")
	}
	if got := lib.Prompts(); len(got) < 3 || got[0] != "c2x86/repair" {
		t.Errorf("Prompts = %v", got)
	}
	tests := []struct {
		name, lane, which string
		data              any
		wantErr           error
		wantText          string
	}{
		{"unknown lane", "cuda-synth", prompts.PromptUser, prompts.UserData{Function: "f", Source: "x"}, prompts.ErrUnknownPrompt, "cuda-synth/user"},
		{"unknown prompt", LaneName, "resynth", nil, prompts.ErrUnknownPrompt, "c2x86/resynth"},
		{"user without source", LaneName, prompts.PromptUser, prompts.UserData{Function: "f"}, nil, "needs Function and Source"},
		{"nil user pointer", LaneName, prompts.PromptUser, (*prompts.UserData)(nil), nil, "nil user data"},
		{"empty repair", LaneName, prompts.PromptRepair, prompts.RepairData{}, nil, "needs a Diagnostic or a Class"},
		{"wrong data type", LaneName, prompts.PromptUser, map[string]string{"Function": "f"}, nil, "Source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := lib.Render(tt.lane, tt.which, tt.data)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q lacks %q", err, tt.wantText)
			}
		})
	}
}
