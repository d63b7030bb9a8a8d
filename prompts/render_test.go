package prompts

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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
		t.Fatalf("%v (run go test ./prompts -run TestGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (rerun with -update if intended):\n--- got ---\n%s", name, p, got)
	}
}

func TestGoldenC2X86(t *testing.T) {
	t.Parallel()
	lib, err := BuiltinLibrary()
	if err != nil {
		t.Fatal(err)
	}
	items, err := LoadBuiltinCorpus(LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	var seed CorpusItem
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
		{"c2x86_system", PromptSystem, nil},
		{"c2x86_system_tools", PromptSystem, SystemData{Tools: []string{"assemble", "run_tests"}}},
		{"c2x86_user", PromptUser, UserData{Function: seed.Function, Source: seed.Files["function.c"]}},
		{"c2x86_repair_wrong_output", PromptRepair, RepairData{Class: "wrong_output",
			Diagnostic: "output differs at line 1:\n  want: 1568\n  got:  0"}},
		{"c2x86_repair_assemble_error", PromptRepair, &RepairData{Class: "assemble_error", Diagnostic: longDiag}},
		{"c2x86_repair_no_answer", PromptRepair, RepairData{Class: "no_answer"}},
		{"c2x86_repair_other", PromptRepair, RepairData{Class: "internal_error", Diagnostic: "disk full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := lib.Render(LaneC2X86, tt.which, tt.data)
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
	got, err := Render(LaneC2X86, PromptSystem, nil)
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
	user, err := Render(LaneC2X86, PromptUser, UserData{Function: "f", Source: "int f(void) { return 1; }\n\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(user, "```c\nint f(void) { return 1; }\n```") || !strings.Contains(user, "`f`") {
		t.Errorf("user prompt:\n%s", user)
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	lib, err := BuiltinLibrary()
	if err != nil {
		t.Fatal(err)
	}
	if !lib.Has(LaneC2X86, PromptRepair) || lib.Has(LaneC2X86, "nope") {
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
		{"unknown lane", "cuda-synth", PromptUser, UserData{Function: "f", Source: "x"}, ErrUnknownPrompt, "cuda-synth/user"},
		{"unknown prompt", LaneC2X86, "resynth", nil, ErrUnknownPrompt, "c2x86/resynth"},
		{"user without source", LaneC2X86, PromptUser, UserData{Function: "f"}, nil, "needs Function and Source"},
		{"nil user pointer", LaneC2X86, PromptUser, (*UserData)(nil), nil, "nil user data"},
		{"empty repair", LaneC2X86, PromptRepair, RepairData{}, nil, "needs a Diagnostic or a Class"},
		{"wrong data type", LaneC2X86, PromptUser, map[string]string{"Function": "f"}, nil, "Source"},
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

// TestNewLibraryFromFS: a user template folder replaces the builtin one;
// parse errors name the file.
func TestNewLibraryFromFS(t *testing.T) {
	t.Parallel()
	m := fstest.MapFS{
		"tmpl/c2x86/user.tmpl": file("Translate {{.Function}}:\n{{truncate 2 .Source}}"),
		"tmpl/notes.txt":       file("ignored"),
	}
	lib, err := NewLibrary(m, "tmpl")
	if err != nil {
		t.Fatal(err)
	}
	got, err := lib.Render(LaneC2X86, PromptUser, UserData{Function: "f", Source: "héllo world"})
	if err != nil {
		t.Fatal(err)
	}
	// Byte 2 is inside "é": the cut backs off to the rune boundary.
	if want := "Translate f:\nh\n[... 11 more bytes cut]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	m["tmpl/c2x86/repair.tmpl"] = file("{{if .Class}")
	if _, err := NewLibrary(m, "tmpl"); err == nil || !strings.Contains(err.Error(), "tmpl/c2x86/repair.tmpl") {
		t.Errorf("parse error: %v", err)
	}
	if _, err := NewLibrary(fstest.MapFS{"tmpl/x.txt": file("")}, "tmpl"); err == nil {
		t.Error("empty library accepted")
	}
	if _, err := NewLibrary(m, "missing"); err == nil {
		t.Error("missing root accepted")
	}
}
