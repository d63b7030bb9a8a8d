package prompts

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

const (
	goodFunc   = "int add1(int x)\n{\n    return x + 1;\n}\n"
	goodDriver = "#include <stdio.h>\nint add1(int x);\nint main(void){printf(\"%d\\n\", add1(1));return 0;}\n"
	goodMeta   = `{"function": "add1", "categories": ["int_arith"], "description": "adds one"}`
)

func goodItem(m fstest.MapFS, dir string) {
	m[dir+"/function.c"] = file(goodFunc)
	m[dir+"/driver.c"] = file(goodDriver)
	m[dir+"/meta.json"] = file(goodMeta)
}

func TestLoadCorpusOK(t *testing.T) {
	t.Parallel()
	m := fstest.MapFS{}
	goodItem(m, "root/b_item")
	goodItem(m, "root/a_item")
	m["root/a_item/function.h"] = file("int add1(int x);\n")
	m["root/a_item/meta.json"] = file(`{"function": "add1", "categories": ["loop", "bitops"], "description": "  two cats  "}`)
	m["root/README.md"] = file("# not an item\n")
	goodItem(m, "root/.hidden")
	m["root/_drafts/notes.txt"] = file("skipped\n")

	items, err := LoadCorpus(m, "root", LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "a_item" || items[1].ID != "b_item" {
		t.Fatalf("items = %+v", items)
	}
	a := items[0]
	if a.Function != "add1" || a.Lane != LaneC2X86 || a.Description != "two cats" ||
		!reflect.DeepEqual(a.Categories, []string{"loop", "bitops"}) {
		t.Errorf("item a = %+v", a)
	}
	wantFiles := map[string]string{"function.c": goodFunc, "driver.c": goodDriver, "function.h": "int add1(int x);\n"}
	if !reflect.DeepEqual(a.Files, wantFiles) {
		t.Errorf("files = %v", a.Files)
	}
	if !a.HasCategory(CatBitops) || a.HasCategory(CatString) {
		t.Error("HasCategory")
	}
	if got := CategoryCounts(items); got["int_arith"] != 1 || got["loop"] != 1 || got["bitops"] != 1 {
		t.Errorf("counts = %v", got)
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		mutate   func(m fstest.MapFS)
		lane     string
		wantErr  error
		wantPath string // substring of the error that names the file
		wantText string
	}{
		{"missing meta", func(m fstest.MapFS) { delete(m, "c/x/meta.json") }, LaneC2X86, ErrMissingFile, "c/x/meta.json", ""},
		{"missing function.c", func(m fstest.MapFS) { delete(m, "c/x/function.c") }, LaneC2X86, ErrMissingFile, "c/x/function.c", ""},
		{"missing driver.c", func(m fstest.MapFS) { delete(m, "c/x/driver.c") }, LaneC2X86, ErrMissingFile, "c/x/driver.c", ""},
		{"blank driver.c", func(m fstest.MapFS) { m["c/x/driver.c"] = file(" \n") }, LaneC2X86, ErrMissingFile, "c/x/driver.c", ""},
		{"bad json", func(m fstest.MapFS) { m["c/x/meta.json"] = file(`{"function": "add1",`) }, LaneC2X86, ErrBadMeta, "c/x/meta.json", ""},
		{"unknown field", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categores": ["loop"], "categories": ["loop"]}`)
		}, LaneC2X86, ErrBadMeta, "c/x/meta.json", "categores"},
		{"trailing data", func(m fstest.MapFS) { m["c/x/meta.json"] = file(goodMeta + "{}") }, LaneC2X86, ErrBadMeta, "c/x/meta.json", "trailing"},
		{"unknown category", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": ["loop", "vectorize"]}`)
		}, LaneC2X86, ErrUnknownCategory, "c/x/meta.json", `"vectorize"`},
		{"empty categories", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": []}`)
		}, LaneC2X86, ErrNoCategories, "c/x/meta.json", ""},
		{"absent categories", func(m fstest.MapFS) { m["c/x/meta.json"] = file(`{"function": "add1"}`) }, LaneC2X86, ErrNoCategories, "c/x/meta.json", ""},
		{"duplicate category", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": ["loop", "loop"]}`)
		}, LaneC2X86, ErrBadMeta, "c/x/meta.json", "twice"},
		{"function not an identifier", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add 1", "categories": ["loop"]}`)
		}, LaneC2X86, ErrBadMeta, "c/x/meta.json", "identifier"},
		{"function not defined", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add2", "categories": ["loop"]}`)
		}, LaneC2X86, ErrBadMeta, "c/x/meta.json", `"add2" not found in function.c`},
		{"bad id", func(m fstest.MapFS) { goodItem(m, "c/bad id") }, LaneC2X86, nil, "c/bad id", "bad item id"},
		{"unknown lane", func(m fstest.MapFS) {}, "cobol2x86", ErrUnknownLane, "", "cobol2x86"},
		{"empty corpus", func(m fstest.MapFS) {
			for k := range m {
				delete(m, k)
			}
			m["c/README.md"] = file("x")
		}, LaneC2X86, ErrEmptyCorpus, "c", ""},
		{"missing root", func(m fstest.MapFS) {
			for k := range m {
				delete(m, k)
			}
			m["other/x"] = file("x")
		}, LaneC2X86, fs.ErrNotExist, "c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := fstest.MapFS{}
			goodItem(m, "c/x")
			goodItem(m, "c/y")
			tt.mutate(m)
			items, err := LoadCorpus(m, "c", tt.lane)
			if err == nil {
				t.Fatalf("no error; items %v", items)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v is not %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantPath) || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q: want it to name %q and say %q", err, tt.wantPath, tt.wantText)
			}
			var ce *CorpusError
			if tt.wantPath != "" && (!errors.As(err, &ce) || ce.Path != tt.wantPath) {
				t.Errorf("error %v: want *CorpusError with path %q", err, tt.wantPath)
			}
		})
	}
}

func TestLaneTables(t *testing.T) {
	t.Parallel()
	cats, err := Categories(LaneC2X86)
	if err != nil || len(cats) != 12 || cats[0] != CatIntArith {
		t.Fatalf("categories = %v, %v", cats, err)
	}
	cats[0] = "changed" // a copy: the lane table stays intact
	if again, _ := Categories(LaneC2X86); again[0] != CatIntArith {
		t.Error("Categories returned shared state")
	}
	files, err := RequiredFiles(LaneC2X86)
	if err != nil || !reflect.DeepEqual(files, []string{"function.c", "driver.c"}) {
		t.Errorf("files = %v, %v", files, err)
	}
	if _, err := Categories("nope"); !errors.Is(err, ErrUnknownLane) {
		t.Errorf("unknown lane: %v", err)
	}
	if _, _, err := BuiltinCorpus("nope"); !errors.Is(err, ErrUnknownLane) {
		t.Errorf("BuiltinCorpus unknown lane: %v", err)
	}
}

// TestBuiltinCorpus checks the size and category mix of the starter corpus
// and that its README's table matches the real counts.
func TestBuiltinCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus(LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) < 220 {
		t.Errorf("%d items, want at least 220", len(items))
	}
	seenFn := map[string]string{}
	for _, it := range items {
		if n := len(it.Categories); n < 1 || n > 3 {
			t.Errorf("%s: %d categories, want 1 to 3", it.ID, n)
		}
		if it.Description == "" || strings.Contains(it.Description, "\n") {
			t.Errorf("%s: description must be one non-empty line", it.ID)
		}
		if len(it.Files) != 2 {
			t.Errorf("%s: files %v, want function.c and driver.c only", it.ID, keys(it.Files))
		}
		if strings.Contains(it.Files["function.c"], "main(") {
			t.Errorf("%s: function.c defines main", it.ID)
		}
		if !strings.Contains(it.Files["driver.c"], "int main(void)") {
			t.Errorf("%s: driver.c has no main", it.ID)
		}
		if prev, dup := seenFn[it.Function]; dup {
			t.Errorf("%s and %s test the same function name %q", prev, it.ID, it.Function)
		}
		seenFn[it.Function] = it.ID
	}
	counts := CategoryCounts(items)
	cats, _ := Categories(LaneC2X86)
	for _, c := range cats {
		if c != CatMixed && counts[c] < 15 {
			t.Errorf("category %s has %d items, want at least 15", c, counts[c])
		}
	}

	// The README's table: "| `cat` | count |" rows and a "**N items**" total.
	readme, err := fs.ReadFile(Builtin(), "corpus/c2x86/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d+) \\|")
	rows := rowRE.FindAllStringSubmatch(string(readme), -1)
	if len(rows) != len(cats) {
		t.Errorf("README lists %d categories, want %d", len(rows), len(cats))
	}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		if counts[r[1]] != n {
			t.Errorf("README says %s has %d items, corpus has %d", r[1], n, counts[r[1]])
		}
	}
	if total := regexp.MustCompile(`\*\*(\d+) items\*\*`).FindStringSubmatch(string(readme)); total == nil || total[1] != strconv.Itoa(len(items)) {
		t.Errorf("README total %v, corpus has %d items", total, len(items))
	}
}

// TestBuiltinCorpusDirFS loads the same corpus from disk through os.DirFS,
// the way a user points a campaign at a folder.
func TestBuiltinCorpusDirFS(t *testing.T) {
	t.Parallel()
	embedded, err := LoadBuiltinCorpus(LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := LoadCorpus(os.DirFS("corpus/c2x86"), ".", LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(embedded, disk) {
		t.Error("embedded and on-disk corpus differ")
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
