package prompts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// The corpus tests use a lane of their own, shaped like c2x86 (the lane
// kits test their real corpora and specs: tools/<lane>/corpus_test.go).
const (
	testLane = "testlane"

	catIntArith     = "int_arith"
	catFloatConst   = "float_const"
	catLoop         = "loop"
	catSwitchFew    = "switch_few"
	catSwitchMany   = "switch_many"
	catStruct       = "struct"
	catArrayPointer = "array_pointer"
	catString       = "string"
	catRecursion    = "recursion"
	catBitops       = "bitops"
	catMathCall     = "math_call"
	catMixed        = "mixed"
)

// testSpec is the corpus spec of testLane.
func testSpec() CorpusSpec {
	return CorpusSpec{Lane: testLane, Files: []string{"function.c", "driver.c"}, SourceFile: "function.c",
		Categories: []string{catIntArith, catFloatConst, catLoop, catSwitchFew, catSwitchMany, catStruct,
			catArrayPointer, catString, catRecursion, catBitops, catMathCall, catMixed}}
}

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

	items, err := LoadCorpus(m, "root", testSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID != "a_item" || items[1].ID != "b_item" {
		t.Fatalf("items = %+v", items)
	}
	a := items[0]
	if a.Function != "add1" || a.Lane != testLane || a.Description != "two cats" ||
		!reflect.DeepEqual(a.Categories, []string{"loop", "bitops"}) {
		t.Errorf("item a = %+v", a)
	}
	wantFiles := map[string]string{"function.c": goodFunc, "driver.c": goodDriver, "function.h": "int add1(int x);\n"}
	if !reflect.DeepEqual(a.Files, wantFiles) {
		t.Errorf("files = %v", a.Files)
	}
	if !a.HasCategory(catBitops) || a.HasCategory(catString) {
		t.Error("HasCategory")
	}
	if got := CategoryCounts(items); got["int_arith"] != 1 || got["loop"] != 1 || got["bitops"] != 1 {
		t.Errorf("counts = %v", got)
	}
}

// TestLoadCorpusSpec: the spec, not the package, decides the lane, the
// required files, the source file and the categories.
func TestLoadCorpusSpec(t *testing.T) {
	t.Parallel()
	spec := CorpusSpec{Lane: "other", Files: []string{"kernel.cu"}, SourceFile: "kernel.cu", Categories: []string{"reduce"}}
	m := fstest.MapFS{
		"c/k1/kernel.cu": file("__global__ void sum(float *x) {}\n"),
		"c/k1/meta.json": file(`{"function": "sum", "categories": ["reduce"]}`),
	}
	items, err := LoadCorpus(m, "c", spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Lane != "other" || items[0].Function != "sum" ||
		!reflect.DeepEqual(items[0].Files, map[string]string{"kernel.cu": "__global__ void sum(float *x) {}\n"}) {
		t.Errorf("items = %+v", items)
	}
	// The test lane's c2x86-like item does not fit this spec.
	goodItem(m, "c/x")
	if _, err := LoadCorpus(m, "c", spec); !errors.Is(err, ErrMissingFile) || !strings.Contains(err.Error(), "c/x/kernel.cu") {
		t.Errorf("c2x86-like item under a kernel.cu spec: %v", err)
	}
	// A category of the test lane is unknown to this spec.
	m = fstest.MapFS{
		"c/k1/kernel.cu": file("__global__ void sum(float *x) {}\n"),
		"c/k1/meta.json": file(`{"function": "sum", "categories": ["loop"]}`),
	}
	if _, err := LoadCorpus(m, "c", spec); !errors.Is(err, ErrUnknownCategory) {
		t.Errorf("category of another spec: %v", err)
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	t.Parallel()
	c2x86 := testSpec()
	tests := []struct {
		name     string
		mutate   func(m fstest.MapFS)
		spec     CorpusSpec
		wantErr  error
		wantPath string // substring of the error that names the file
		wantText string
	}{
		{"missing meta", func(m fstest.MapFS) { delete(m, "c/x/meta.json") }, c2x86, ErrMissingFile, "c/x/meta.json", ""},
		{"missing function.c", func(m fstest.MapFS) { delete(m, "c/x/function.c") }, c2x86, ErrMissingFile, "c/x/function.c", ""},
		{"missing driver.c", func(m fstest.MapFS) { delete(m, "c/x/driver.c") }, c2x86, ErrMissingFile, "c/x/driver.c", ""},
		{"blank driver.c", func(m fstest.MapFS) { m["c/x/driver.c"] = file(" \n") }, c2x86, ErrMissingFile, "c/x/driver.c", ""},
		{"bad json", func(m fstest.MapFS) { m["c/x/meta.json"] = file(`{"function": "add1",`) }, c2x86, ErrBadMeta, "c/x/meta.json", ""},
		{"unknown field", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categores": ["loop"], "categories": ["loop"]}`)
		}, c2x86, ErrBadMeta, "c/x/meta.json", "categores"},
		{"trailing data", func(m fstest.MapFS) { m["c/x/meta.json"] = file(goodMeta + "{}") }, c2x86, ErrBadMeta, "c/x/meta.json", "trailing"},
		{"unknown category", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": ["loop", "vectorize"]}`)
		}, c2x86, ErrUnknownCategory, "c/x/meta.json", `"vectorize"`},
		{"empty categories", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": []}`)
		}, c2x86, ErrNoCategories, "c/x/meta.json", ""},
		{"absent categories", func(m fstest.MapFS) { m["c/x/meta.json"] = file(`{"function": "add1"}`) }, c2x86, ErrNoCategories, "c/x/meta.json", ""},
		{"duplicate category", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add1", "categories": ["loop", "loop"]}`)
		}, c2x86, ErrBadMeta, "c/x/meta.json", "twice"},
		{"function not an identifier", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add 1", "categories": ["loop"]}`)
		}, c2x86, ErrBadMeta, "c/x/meta.json", "identifier"},
		{"function not defined", func(m fstest.MapFS) {
			m["c/x/meta.json"] = file(`{"function": "add2", "categories": ["loop"]}`)
		}, c2x86, ErrBadMeta, "c/x/meta.json", `"add2" not found in function.c`},
		{"bad id", func(m fstest.MapFS) { goodItem(m, "c/bad id") }, c2x86, nil, "c/bad id", "bad item id"},
		// prompts knows no lane: what was "unknown lane" is now a spec
		// without a lane, a source file or categories.
		{"spec without lane", func(m fstest.MapFS) {}, CorpusSpec{Files: c2x86.Files, SourceFile: c2x86.SourceFile, Categories: c2x86.Categories},
			nil, "", "corpus spec needs a lane"},
		{"spec without source file", func(m fstest.MapFS) {}, CorpusSpec{Lane: testLane, Files: c2x86.Files, Categories: c2x86.Categories},
			nil, "", "corpus spec needs a lane, a source file"},
		{"spec without categories", func(m fstest.MapFS) {}, CorpusSpec{Lane: testLane, Files: c2x86.Files, SourceFile: c2x86.SourceFile},
			nil, "", "and categories"},
		{"zero spec", func(m fstest.MapFS) {}, CorpusSpec{}, nil, "", "corpus spec needs"},
		{"empty corpus", func(m fstest.MapFS) {
			for k := range m {
				delete(m, k)
			}
			m["c/README.md"] = file("x")
		}, c2x86, ErrEmptyCorpus, "c", ""},
		{"missing root", func(m fstest.MapFS) {
			for k := range m {
				delete(m, k)
			}
			m["other/x"] = file("x")
		}, c2x86, fs.ErrNotExist, "c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := fstest.MapFS{}
			goodItem(m, "c/x")
			goodItem(m, "c/y")
			tt.mutate(m)
			items, err := LoadCorpus(m, "c", tt.spec)
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

// TestLoadCorpusDirFS loads the same corpus from an in-memory file system
// and from disk through os.DirFS, the way a user points a campaign at a
// folder.
func TestLoadCorpusDirFS(t *testing.T) {
	t.Parallel()
	m := fstest.MapFS{}
	goodItem(m, "b_item")
	goodItem(m, "a_item")
	m["a_item/function.h"] = file("int add1(int x);\n")
	m["a_item/meta.json"] = file(`{"function": "add1", "categories": ["loop", "bitops"], "description": "two cats"}`)
	m["README.md"] = file("# not an item\n")
	m["_drafts/notes.txt"] = file("skipped\n")
	dir := t.TempDir()
	for name, f := range m {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mem, err := LoadCorpus(m, ".", testSpec())
	if err != nil {
		t.Fatal(err)
	}
	disk, err := LoadCorpus(os.DirFS(dir), ".", testSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(disk) != 2 || !reflect.DeepEqual(mem, disk) {
		t.Errorf("in-memory and on-disk corpus differ:\n%+v\n%+v", mem, disk)
	}
}
