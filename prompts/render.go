package prompts

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"text/template"
	"unicode/utf8"
)

// Prompt names within a lane.
const (
	PromptSystem = "system" // data: SystemData (or nil)
	PromptUser   = "user"   // data: UserData
	PromptRepair = "repair" // data: RepairData
)

// ErrUnknownPrompt is returned by Render for a lane or prompt name that the
// library does not hold.
var ErrUnknownPrompt = errors.New("unknown prompt")

// SystemData is the data of a system prompt.
type SystemData struct {
	// Tools names the tools the model may call during the attempt (for
	// c2x86: "assemble", "run_tests"); empty when it has none.
	Tools []string
}

// UserData is the data of a c2x86 user prompt.
type UserData struct {
	Function string // name of the function under test
	Source   string // the text of function.c
}

// RepairData is the data of a repair turn after a failed verification.
type RepairData struct {
	Diagnostic string // the verifier's short diagnostic text
	Class      string // the failure class (tools.FailureClass as a string)
}

// Library holds parsed prompt templates by lane and name.
type Library struct {
	tmpls map[string]*template.Template // "lane/name"
}

// NewLibrary parses every root/<lane>/<name>.tmpl in fsys. Templates run
// with missingkey=error and these functions: truncate N s (cut s to at most
// N bytes on a rune boundary, marking the cut), trim s, join sep list.
func NewLibrary(fsys fs.FS, root string) (*Library, error) {
	lanes, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("prompts: library: %w", err)
	}
	l := &Library{tmpls: map[string]*template.Template{}}
	for _, ld := range lanes {
		if !ld.IsDir() {
			continue
		}
		if err := l.add(ld.Name(), fsys, path.Join(root, ld.Name())); err != nil {
			return nil, err
		}
	}
	if len(l.tmpls) == 0 {
		return nil, fmt.Errorf("prompts: library: no templates under %s", root)
	}
	return l, nil
}

// NewLaneLibrary parses every dir/<name>.tmpl in fsys as a prompt of lane
// (a lane kit's own prompts), like NewLibrary.
func NewLaneLibrary(lane string, fsys fs.FS, dir string) (*Library, error) {
	l := &Library{tmpls: map[string]*template.Template{}}
	if err := l.add(lane, fsys, dir); err != nil {
		return nil, err
	}
	if len(l.tmpls) == 0 {
		return nil, fmt.Errorf("prompts: library: no templates under %s", dir)
	}
	return l, nil
}

// add parses dir/*.tmpl as lane's prompts.
func (l *Library) add(lane string, fsys fs.FS, dir string) error {
	files, err := fs.Glob(fsys, path.Join(dir, "*.tmpl"))
	if err != nil {
		return fmt.Errorf("prompts: library: %w", err)
	}
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return fmt.Errorf("prompts: library: %w", err)
		}
		name := strings.TrimSuffix(path.Base(f), ".tmpl")
		t, err := template.New(lane + "/" + name).Option("missingkey=error").Funcs(templateFuncs()).Parse(string(b))
		if err != nil {
			return fmt.Errorf("prompts: library: %s: %w", f, err)
		}
		l.tmpls[lane+"/"+name] = t
	}
	return nil
}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"truncate": truncate,
		"trim":     strings.TrimSpace,
		"join":     func(sep string, xs []string) string { return strings.Join(xs, sep) },
	}
}

// truncate cuts s to at most n bytes on a rune boundary and marks the cut.
func truncate(n int, s string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... %d more bytes cut]", len(s)-cut)
}

// Prompts lists the "lane/name" keys the library holds, sorted.
func (l *Library) Prompts() []string {
	out := make([]string, 0, len(l.tmpls))
	for k := range l.tmpls {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the library holds prompt name of lane.
func (l *Library) Has(lane, name string) bool {
	_, ok := l.tmpls[lane+"/"+name]
	return ok
}

// Render executes prompt name of lane with data. A nil data for the system
// prompt means SystemData{}. UserData needs a Function and a Source;
// RepairData needs a Diagnostic or a Class.
func (l *Library) Render(lane, name string, data any) (string, error) {
	t, ok := l.tmpls[lane+"/"+name]
	if !ok {
		return "", fmt.Errorf("prompts: render %s/%s: %w", lane, name, ErrUnknownPrompt)
	}
	if data == nil && name == PromptSystem {
		data = SystemData{}
	}
	if err := checkData(data); err != nil {
		return "", fmt.Errorf("prompts: render %s/%s: %w", lane, name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompts: render %s/%s: %w", lane, name, err)
	}
	return b.String(), nil
}

func checkData(data any) error {
	switch d := data.(type) {
	case UserData:
		if d.Function == "" || strings.TrimSpace(d.Source) == "" {
			return errors.New("user data needs Function and Source")
		}
	case *UserData:
		if d == nil {
			return errors.New("nil user data")
		}
		return checkData(*d)
	case RepairData:
		if d.Diagnostic == "" && d.Class == "" {
			return errors.New("repair data needs a Diagnostic or a Class")
		}
	case *RepairData:
		if d == nil {
			return errors.New("nil repair data")
		}
		return checkData(*d)
	}
	return nil
}
