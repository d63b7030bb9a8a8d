package prompts

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// The c2x86 lane's own prompts (golden files, content, errors against the
// real templates) are tested in tools/c2x86/prompts_test.go.

// testTemplates is a small lane prompt folder, shaped like a lane kit's.
func testTemplates() fstest.MapFS {
	return fstest.MapFS{
		"prompts/system.tmpl": file("You translate.{{if .Tools}} Tools: {{join \", \" .Tools}}.{{end}}"),
		"prompts/user.tmpl":   file("Translate `{{.Function}}`:\n```c\n{{trim .Source}}\n```\n"),
		"prompts/repair.tmpl": file("{{if .Class}}[{{.Class}}] {{end}}{{truncate 40 .Diagnostic}}"),
		"prompts/notes.txt":   file("ignored"),
	}
}

func TestNewLaneLibrary(t *testing.T) {
	t.Parallel()
	lib, err := NewLaneLibrary(testLane, testTemplates(), "prompts")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(lib.Prompts(), ","), "testlane/repair,testlane/system,testlane/user"; got != want {
		t.Errorf("Prompts = %s, want %s", got, want)
	}
	if !lib.Has(testLane, PromptRepair) || lib.Has(testLane, "notes") || lib.Has("other", PromptRepair) {
		t.Error("Has")
	}
	sys, err := lib.Render(testLane, PromptSystem, nil)
	if err != nil || sys != "You translate." {
		t.Errorf("system = %q, %v", sys, err)
	}
	sys, err = lib.Render(testLane, PromptSystem, SystemData{Tools: []string{"assemble", "run_tests"}})
	if err != nil || sys != "You translate. Tools: assemble, run_tests." {
		t.Errorf("system with tools = %q, %v", sys, err)
	}
	user, err := lib.Render(testLane, PromptUser, &UserData{Function: "f", Source: "int f(void) { return 1; }\n\n"})
	if err != nil || user != "Translate `f`:\n```c\nint f(void) { return 1; }\n```\n" {
		t.Errorf("user = %q, %v", user, err)
	}
	rep, err := lib.Render(testLane, PromptRepair, RepairData{Class: "wrong_output", Diagnostic: strings.Repeat("x", 50)})
	if want := "[wrong_output] " + strings.Repeat("x", 40) + "\n[... 10 more bytes cut]"; err != nil || rep != want {
		t.Errorf("repair = %q, %v; want %q", rep, err, want)
	}

	m := testTemplates()
	m["prompts/repair.tmpl"] = file("{{if .Class}")
	if _, err := NewLaneLibrary(testLane, m, "prompts"); err == nil || !strings.Contains(err.Error(), "prompts/repair.tmpl") {
		t.Errorf("parse error: %v", err)
	}
	if _, err := NewLaneLibrary(testLane, fstest.MapFS{"prompts/x.txt": file("")}, "prompts"); err == nil {
		t.Error("empty library accepted")
	}
	if _, err := NewLaneLibrary(testLane, testTemplates(), "missing"); err == nil {
		t.Error("missing folder accepted")
	}
}

func TestRenderErrors(t *testing.T) {
	t.Parallel()
	lib, err := NewLaneLibrary(testLane, testTemplates(), "prompts")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, lane, which string
		data              any
		wantErr           error
		wantText          string
	}{
		{"unknown lane", "cuda-synth", PromptUser, UserData{Function: "f", Source: "x"}, ErrUnknownPrompt, "cuda-synth/user"},
		{"unknown prompt", testLane, "resynth", nil, ErrUnknownPrompt, "testlane/resynth"},
		{"user without source", testLane, PromptUser, UserData{Function: "f"}, nil, "needs Function and Source"},
		{"user blank source", testLane, PromptUser, UserData{Function: "f", Source: " \n"}, nil, "needs Function and Source"},
		{"user without function", testLane, PromptUser, UserData{Source: "x"}, nil, "needs Function and Source"},
		{"nil user pointer", testLane, PromptUser, (*UserData)(nil), nil, "nil user data"},
		{"empty repair", testLane, PromptRepair, RepairData{}, nil, "needs a Diagnostic or a Class"},
		{"nil repair pointer", testLane, PromptRepair, (*RepairData)(nil), nil, "nil repair data"},
		{"wrong data type", testLane, PromptUser, map[string]string{"Function": "f"}, nil, "Source"},
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
	got, err := lib.Render("c2x86", PromptUser, UserData{Function: "f", Source: "héllo world"})
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
