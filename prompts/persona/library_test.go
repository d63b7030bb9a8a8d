package persona

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// anyBrace matches a leftover placeholder-like group after rendering.
var anyBrace = regexp.MustCompile(`\{[^{}]*\}`)

func builtinLib(t *testing.T) *Library {
	t.Helper()
	l, err := LoadBuiltin()
	if err != nil {
		t.Fatalf("LoadBuiltin: %v", err)
	}
	return l
}

// The ten category folders of CASS appendix A.8.1, five templates each.
var wantCategories = []string{
	"basic_operations", "cryptography_security", "data_structures", "graph_algorithms",
	"image_signal_processing", "machine_learning", "optimization_algorithms",
	"scientific_computing", "simulation", "sparse_operations",
}

func TestBuiltinShape(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	if got := l.Categories(); !slices.Equal(got, wantCategories) {
		t.Fatalf("categories = %v, want %v", got, wantCategories)
	}
	if n := len(l.Templates()); n != 50 {
		t.Fatalf("%d templates, want 50", n)
	}
	for _, c := range wantCategories {
		ts := l.CategoryTemplates(c)
		var names []string
		for _, tp := range ts {
			names = append(names, tp.Name)
		}
		if !slices.Equal(names, []string{"01", "02", "03", "04", "05"}) {
			t.Errorf("%s: templates %v, want 01..05", c, names)
		}
	}
	if l.SystemPrompt() == "" {
		t.Error("no system prompt")
	}
	if l.Classifier() == nil {
		t.Error("no classifier")
	}
}

func TestBuiltinPools(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	for _, tp := range l.Templates() {
		if len(tp.Placeholders) == 0 {
			t.Errorf("%s: no placeholders", tp.ID)
		}
		for _, p := range tp.Placeholders {
			if len(tp.Pool(p)) == 0 {
				t.Errorf("%s: {%s} has no pool", tp.ID, p)
			}
			if !tp.HasLocalPool(p) && len(l.Pool(p)) == 0 {
				t.Errorf("%s: {%s} has neither a local nor a global pool", tp.ID, p)
			}
		}
	}
	for _, name := range l.PoolNames() {
		if n := len(l.Pool(name)); n < 5 {
			t.Errorf("pool %s has %d values, want >= 5", name, n)
		}
	}
	// Every example value of Table 5 is in its pool.
	table5 := map[string][]string{
		"size":                   {"64", "1024", "16384"},
		"dimension":              {"1", "3", "6"},
		"optimization":           {"memory coalescing", "shared memory usage", "warp-level programming"},
		"operation":              {"sum", "histogram", "L2 norm"},
		"algorithm":              {"matrix multiplication", "radix sort", "BFS"},
		"radius":                 {"1", "5", "13"},
		"graph_format":           {"adjacency matrix", "CSR", "edge list"},
		"md_algorithm":           {"Verlet integration", "leapfrog", "Runge-Kutta"},
		"linear_solver":          {"conjugate gradient", "Jacobi", "multigrid"},
		"numerical_method":       {"finite difference", "spectral", "Crank-Nicolson"},
		"factorization_method":   {"SVD", "LU", "eigenvalue decomposition"},
		"conv_layer_count":       {"2", "6", "12"},
		"neuron_count":           {"64", "512", "2048"},
		"sparse_format":          {"CSR", "ELL", "HYB"},
		"nbody_algorithm":        {"Barnes-Hut", "brute force", "particle mesh"},
		"filter_type":            {"Gaussian", "Sobel", "Gabor"},
		"filter_size":            {"3", "7", "15"},
		"resolution":             {"720p", "1080p", "4K"},
		"segmentation_algorithm": {"watershed", "region growing", "U-Net"},
		"signal_transform":       {"FFT", "wavelet", "Hilbert"},
		"optimization_algorithm": {"Adam", "simulated annealing", "particle swarm"},
		"crypto_algorithm":       {"AES", "RSA", "Argon2"},
		"cracking_method":        {"brute force", "dictionary attack", "rainbow table"},
		"hash_algorithm":         {"SHA-256", "BLAKE3", "Bcrypt"},
		"data_structure":         {"binary tree", "hash table", "bloom filter"},
		"collision_strategy":     {"linear probing", "cuckoo hashing", "separate chaining"},
	}
	for name, vals := range table5 {
		pool := l.Pool(name)
		for _, v := range vals {
			if !slices.Contains(pool, v) {
				t.Errorf("pool %s lacks Table 5 value %q", name, v)
			}
		}
	}
	// The further placeholders the templates use have pools too.
	for _, name := range []string{"method", "community_algorithm", "layer_count"} {
		if len(l.Pool(name)) < 5 {
			t.Errorf("pool %s: %v, want >= 5 values", name, l.Pool(name))
		}
	}
}

// TestRenderEveryPrompt renders the whole prompt space of the builtin
// library (a few tens of thousands of prompts) and checks that nothing is
// left unsubstituted.
func TestRenderEveryPrompt(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	var total int64
	for _, tp := range l.Templates() {
		total += tp.Combinations()
	}
	tasks, err := l.Sample(int(total), 1, Options{})
	if err != nil {
		t.Fatalf("Sample(all %d): %v", total, err)
	}
	if int64(len(tasks)) != total {
		t.Fatalf("%d tasks, want %d", len(tasks), total)
	}
	for _, task := range tasks {
		if m := anyBrace.FindString(task.Prompt); m != "" {
			t.Fatalf("%s: leftover %s in %q", task.TemplateID, m, task.Prompt)
		}
	}
	t.Logf("builtin prompt space: %d distinct prompts", total)
}

func TestTemplateRender(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tp, ok := l.Template("image_signal_processing/05")
	if !ok {
		t.Fatal("no image_signal_processing/05")
	}
	if !slices.Equal(tp.Placeholders, []string{"filter_type", "filter_size", "optimization"}) {
		t.Fatalf("placeholders = %v", tp.Placeholders)
	}
	got, err := tp.Render(map[string]string{"filter_type": "Sobel", "filter_size": "3", "optimization": "memory coalescing", "unused": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Implement a CUDA kernel for image filtering using Sobel filter of size 3x3. Optimize for memory coalescing."
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, err := tp.Render(map[string]string{"filter_type": "Sobel"}); err == nil {
		t.Error("Render with missing bindings: no error")
	}
}

func TestLocalPools(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	fft, _ := l.Template("basic_operations/01")
	if !fft.HasLocalPool("size") || !slices.Equal(fft.Pool("size"), []string{"1", "2", "3"}) {
		t.Errorf("basic_operations/01 {size} = %v (local %v), want dimensions 1..3", fft.Pool("size"), fft.HasLocalPool("size"))
	}
	if fft.HasLocalPool("optimization") {
		t.Error("basic_operations/01 {optimization} should use the global pool")
	}
	red, _ := l.Template("basic_operations/03")
	if !slices.Equal(red.Pool("size"), l.Pool("size")) {
		t.Error("basic_operations/03 {size} should use the global pool")
	}
}

// userTemplate is a minimal valid user library piece.
func goodFS() fstest.MapFS {
	return fstest.MapFS{
		"templates/cat/01.txt": {Data: []byte("Write {thing} with {n} items.\n")},
		"pools/thing.txt":      {Data: []byte("# comment\nalpha\n\n  beta  \ngamma\n")},
		"pools/n.txt":          {Data: []byte("1\n2\n")},
	}
}

func TestLoadUserFS(t *testing.T) {
	t.Parallel()
	l, err := Load(goodFS())
	if err != nil {
		t.Fatal(err)
	}
	tp, ok := l.Template("cat/01")
	if !ok || tp.Text != "Write {thing} with {n} items." || tp.Category != "cat" || tp.Path != "templates/cat/01.txt" {
		t.Fatalf("template = %+v", tp)
	}
	if got := l.Pool("thing"); !slices.Equal(got, []string{"alpha", "beta", "gamma"}) {
		t.Errorf("pool thing = %q", got)
	}
	if tp.Combinations() != 6 {
		t.Errorf("combinations = %d, want 6", tp.Combinations())
	}
	if l.SystemPrompt() != "" || l.Classifier() != nil {
		t.Error("optional parts present without their files")
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	with := func(extra fstest.MapFS, drop ...string) fstest.MapFS {
		m := goodFS()
		for _, d := range drop {
			delete(m, d)
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	tests := []struct {
		name string
		fsys fstest.MapFS
		want error
		path string
	}{
		{"placeholder without pool", with(fstest.MapFS{"templates/cat/02.txt": file("Do {widget}.")}), ErrNoPool, "templates/cat/02.txt"},
		{"empty pool", with(fstest.MapFS{"pools/n.txt": file("# only a comment\n\n")}), ErrEmptyPool, "pools/n.txt"},
		{"empty template", with(fstest.MapFS{"templates/cat/02.txt": file(" \n\n")}), ErrEmptyTemplate, "templates/cat/02.txt"},
		{"template outside category", with(fstest.MapFS{"templates/loose.txt": file("Do {n}.")}), ErrOutsideCategory, "templates/loose.txt"},
		{"malformed placeholder", with(fstest.MapFS{"templates/cat/02.txt": file("Optimize for { optimization}.")}), ErrBadPlaceholder, "templates/cat/02.txt"},
		{"capital placeholder", with(fstest.MapFS{"templates/cat/02.txt": file("Optimize for {Size}.")}), ErrBadPlaceholder, "templates/cat/02.txt"},
		{"duplicate pool value", with(fstest.MapFS{"pools/n.txt": file("1\n2\n1\n")}), ErrDuplicateValue, "pools/n.txt"},
		{"placeholder in pool value", with(fstest.MapFS{"pools/n.txt": file("1\n{n}\n")}), ErrBadValue, "pools/n.txt"},
		{"orphan local pools", with(fstest.MapFS{"templates/cat/09.pools/n.txt": file("5\n")}), ErrOrphanPool, "templates/cat/09.pools"},
		{"unused local pool", with(fstest.MapFS{"templates/cat/01.pools/size.txt": file("5\n")}), ErrUnusedLocalPool, "templates/cat/01.pools/size.txt"},
		{"empty local pool", with(fstest.MapFS{"templates/cat/01.pools/n.txt": file("#\n")}), ErrEmptyPool, "templates/cat/01.pools/n.txt"},
		{"bad category name", with(fstest.MapFS{"templates/My Cat/01.txt": file("x")}), ErrBadName, "templates/My Cat"},
		{"bad pool name", with(fstest.MapFS{"pools/Size.txt": file("1\n")}), ErrBadName, "pools/Size.txt"},
		{"stray file in category", with(fstest.MapFS{"templates/cat/notes.md": file("x")}), ErrUnexpectedFile, "templates/cat/notes.md"},
		{"empty system prompt", with(fstest.MapFS{"system.txt": file("\n")}), ErrEmptySystemPrompt, "system.txt"},
		{"bad domains", with(fstest.MapFS{"domains.json": file(`{"default":"x","domains":[]}`)}), ErrBadDomains, "domains.json"},
		{"no templates", fstest.MapFS{"pools/n.txt": file("1\n")}, ErrNoTemplates, "templates"},
		{"empty templates folder", fstest.MapFS{"templates/cat/.keep": file("")}, ErrNoTemplates, "templates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := Load(tc.fsys)
			if err == nil {
				t.Fatalf("Load succeeded: %d templates", len(l.Templates()))
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %q does not wrap %q", err, tc.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != tc.path {
				t.Fatalf("error %q: want a FileError for %s", err, tc.path)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
		})
	}
}

func TestLoadReportsAllErrors(t *testing.T) {
	t.Parallel()
	m := goodFS()
	m["templates/cat/02.txt"] = &fstest.MapFile{Data: []byte("Do {widget}.")}
	m["pools/n.txt"] = &fstest.MapFile{Data: []byte("")}
	_, err := Load(m)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"templates/cat/02.txt", "pools/n.txt"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if !errors.Is(err, ErrNoPool) || !errors.Is(err, ErrEmptyPool) {
		t.Errorf("error %q: want both ErrNoPool and ErrEmptyPool", err)
	}
}

func TestLoadWithUserFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A new category using a new pool and a builtin one, a new template in a
	// builtin category, and a replaced builtin pool.
	write("templates/quantum/01.txt", "Write a CUDA kernel simulating {qubits} qubits. Optimize for {optimization}.")
	write("pools/qubits.txt", "4\n8\n12\n16\n20\n")
	write("templates/graph_algorithms/06.txt", "Implement {algorithm} on a graph with {size} nodes.")
	write("pools/size.txt", "7\n77\n")

	l, err := LoadWithUser(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Templates()); n != 52 {
		t.Errorf("%d templates, want 52", n)
	}
	if !slices.Contains(l.Categories(), "quantum") {
		t.Errorf("categories %v lack quantum", l.Categories())
	}
	if got := l.Pool("size"); !slices.Equal(got, []string{"7", "77"}) {
		t.Errorf("size pool = %v, want the user's", got)
	}
	q, _ := l.Template("quantum/01")
	if len(q.Pool("optimization")) == 0 {
		t.Error("user template cannot use a builtin pool")
	}
	g, _ := l.Template("graph_algorithms/06")
	if g.HasLocalPool("algorithm") || !slices.Contains(g.Pool("algorithm"), "radix sort") {
		t.Errorf("graph_algorithms/06 {algorithm} = %v, want the global pool", g.Pool("algorithm"))
	}
	tasks, err := l.Sample(20, 3, Options{Categories: []string{"quantum"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.Category != "quantum" || task.TemplateID != "quantum/01" {
			t.Errorf("task %+v", task)
		}
	}

	// A broken user folder is reported with the user's file named.
	write("templates/quantum/02.txt", "Simulate {gates}.")
	if _, err := LoadWithUser(os.DirFS(dir)); !errors.Is(err, ErrNoPool) || !strings.Contains(err.Error(), "templates/quantum/02.txt") {
		t.Errorf("broken user folder: err = %v", err)
	}
}

func TestOverlayFS(t *testing.T) {
	t.Parallel()
	base := fstest.MapFS{
		"a/x.txt": {Data: []byte("base x")},
		"a/y.txt": {Data: []byte("base y")},
		"b.txt":   {Data: []byte("base b")},
	}
	top := fstest.MapFS{
		"a/y.txt":   {Data: []byte("top y")},
		"a/z/w.txt": {Data: []byte("top w")},
		"c.txt":     {Data: []byte("top c")},
	}
	o := Overlay(base, nil, top)
	if err := fstest.TestFS(o, "a/x.txt", "a/y.txt", "a/z/w.txt", "b.txt", "c.txt"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a/x.txt": "base x", "a/y.txt": "top y", "c.txt": "top c"} {
		b, err := fs.ReadFile(o, name)
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := fs.ReadFile(o, "nope.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}
