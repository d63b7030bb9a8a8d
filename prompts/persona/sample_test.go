package persona

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func countBy(tasks []Task, f func(Task) string) map[string]int {
	m := map[string]int{}
	for _, t := range tasks {
		m[f(t)]++
	}
	return m
}

func TestSampleDeterministic(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	a, err := l.Sample(300, 42, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Sample(300, 42, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different lists")
	}
	// A freshly loaded library gives the same list too.
	l2 := builtinLib(t)
	c, err := l2.Sample(300, 42, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Fatal("same seed, reloaded library: different lists")
	}
	d, err := l.Sample(300, 43, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, d) {
		t.Fatal("different seeds gave the same list")
	}
}

func TestSampleTasksAreConsistent(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tasks, err := l.Sample(3000, 7, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 3000 {
		t.Fatalf("%d tasks", len(tasks))
	}
	prompts, keys := map[string]bool{}, map[string]bool{}
	for _, task := range tasks {
		if prompts[task.Prompt] || keys[task.Key] {
			t.Fatalf("duplicate prompt %q", task.Prompt)
		}
		prompts[task.Prompt], keys[task.Key] = true, true
		if task.Key != PromptKey(task.Prompt) {
			t.Fatalf("key of %q is %s", task.Prompt, task.Key)
		}
		tp, ok := l.Template(task.TemplateID)
		if !ok || tp.Category != task.Category {
			t.Fatalf("task labels %s / %s do not match a template", task.Category, task.TemplateID)
		}
		if len(task.Bindings) != len(tp.Placeholders) {
			t.Fatalf("%s: bindings %v for placeholders %v", tp.ID, task.Bindings, tp.Placeholders)
		}
		for ph, v := range task.Bindings {
			if !containsStr(tp.Pool(ph), v) {
				t.Fatalf("%s: {%s} = %q is not in its pool", tp.ID, ph, v)
			}
		}
		again, err := tp.Render(task.Bindings)
		if err != nil || again != task.Prompt {
			t.Fatalf("re-render of %s = %q, %v; want %q", tp.ID, again, err, task.Prompt)
		}
	}
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestSampleBalanced(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tasks, err := l.Sample(1000, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for c, n := range countBy(tasks, func(t Task) string { return t.Category }) {
		if n != 100 {
			t.Errorf("category %s: %d tasks, want 100", c, n)
		}
	}
	for id, n := range countBy(tasks, func(t Task) string { return t.TemplateID }) {
		if n != 20 {
			t.Errorf("template %s: %d tasks, want 20", id, n)
		}
	}
	// A count that does not divide evenly: every category gets 3 or 4.
	tasks, err = l.Sample(37, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byCat := countBy(tasks, func(t Task) string { return t.Category })
	if len(byCat) != 10 {
		t.Errorf("37 tasks cover %d categories, want 10", len(byCat))
	}
	for c, n := range byCat {
		if n != 3 && n != 4 {
			t.Errorf("category %s: %d of 37 tasks, want 3 or 4", c, n)
		}
	}
}

func TestSampleWeightsAndFilters(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tests := []struct {
		name string
		n    int
		opts Options
		want map[string]int // tasks per category
	}{
		{"weights", 120, Options{Weights: map[string]float64{"machine_learning": 3}},
			map[string]int{"machine_learning": 30, "basic_operations": 10, "cryptography_security": 10, "data_structures": 10,
				"graph_algorithms": 10, "image_signal_processing": 10, "optimization_algorithms": 10,
				"scientific_computing": 10, "simulation": 10, "sparse_operations": 10}},
		{"default weight zero", 40, Options{Weights: map[string]float64{"*": 0, "simulation": 1, "graph_algorithms": 3}},
			map[string]int{"simulation": 10, "graph_algorithms": 30}},
		{"category filter", 50, Options{Categories: []string{"data_structures", "cryptography_security"}},
			map[string]int{"data_structures": 25, "cryptography_security": 25}},
		{"filter and weights", 40, Options{Categories: []string{"data_structures", "simulation"}, Weights: map[string]float64{"simulation": 0}},
			map[string]int{"data_structures": 40}},
		{"template filter", 30, Options{Templates: []string{"simulation/05", "machine_learning/03"}},
			map[string]int{"simulation": 15, "machine_learning": 15}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tasks, err := l.Sample(tc.n, 11, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := countBy(tasks, func(t Task) string { return t.Category }); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("per category %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSampleExhaustion(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	fft, _ := l.Template("sparse_operations/01") // only {optimization}
	space := int(fft.Combinations())
	only := Options{Templates: []string{fft.ID}}

	_, err := l.Sample(space+5, 1, only)
	var ee *ExhaustedError
	if !errors.As(err, &ee) || !errors.Is(err, ErrExhausted) || ee.Requested != space+5 || ee.Available != space {
		t.Fatalf("err = %v, want ExhaustedError{%d, %d}", err, space+5, space)
	}
	only.AllowFewer = true
	tasks, err := l.Sample(space+5, 1, only)
	if err != nil || len(tasks) != space {
		t.Fatalf("AllowFewer: %d tasks, %v; want %d", len(tasks), err, space)
	}

	// A template that runs out hands its share to the others of its category.
	two := Options{Templates: []string{"sparse_operations/01", "sparse_operations/02"}}
	tasks, err = l.Sample(100, 1, two)
	if err != nil {
		t.Fatal(err)
	}
	byT := countBy(tasks, func(t Task) string { return t.TemplateID })
	if byT["sparse_operations/01"] != space || byT["sparse_operations/02"] != 100-space {
		t.Errorf("per template %v, want %d + %d", byT, space, 100-space)
	}

	// A category that runs out hands its share to the other categories.
	cross := Options{Templates: []string{"sparse_operations/01", "data_structures/01", "simulation/01"}}
	tasks, err = l.Sample(90, 1, cross)
	if err != nil {
		t.Fatal(err)
	}
	byC := countBy(tasks, func(t Task) string { return t.Category })
	rest := 90 - space
	if byC["sparse_operations"] != space || math.Abs(float64(byC["data_structures"]-byC["simulation"])) > 1 ||
		byC["data_structures"]+byC["simulation"] != rest {
		t.Errorf("per category %v, want %d sparse and the rest split evenly", byC, space)
	}
}

func TestSampleExclude(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	first, err := l.Sample(500, 5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, task := range first {
		used[task.Key] = true
	}
	// A later round with the same seed must avoid everything issued before.
	second, err := l.Sample(500, 5, Options{Exclude: func(k string) bool { return used[k] }})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range second {
		if used[task.Key] {
			t.Fatalf("prompt issued twice: %q", task.Prompt)
		}
	}
	// Exclusions shrink the space.
	fft, _ := l.Template("cryptography_security/01")
	all, err := l.Sample(int(fft.Combinations()), 1, Options{Templates: []string{fft.ID}})
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for _, task := range all[:10] {
		gone[task.Key] = true
	}
	_, err = l.Sample(len(all)-9, 2, Options{Templates: []string{fft.ID}, Exclude: func(k string) bool { return gone[k] }})
	var ee *ExhaustedError
	if !errors.As(err, &ee) || ee.Available != len(all)-10 {
		t.Errorf("err = %v, want %d available", err, len(all)-10)
	}
}

func TestSampleDuplicateTextAcrossTemplates(t *testing.T) {
	t.Parallel()
	m := goodFS()
	m["templates/other/01.txt"] = m["templates/cat/01.txt"] // same text, other category
	l, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := l.Sample(12, 1, Options{AllowFewer: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 6 {
		t.Errorf("%d tasks, want the 6 distinct prompts", len(tasks))
	}
}

func TestSampleBadOptions(t *testing.T) {
	t.Parallel()
	l := builtinLib(t)
	tests := []struct {
		name string
		opts Options
	}{
		{"negative weight", Options{Weights: map[string]float64{"simulation": -1}}},
		{"NaN weight", Options{Weights: map[string]float64{"*": math.NaN()}}},
		{"unknown weighted category", Options{Weights: map[string]float64{"astrology": 1}}},
		{"unknown category", Options{Categories: []string{"astrology"}}},
		{"unknown template", Options{Templates: []string{"simulation/99"}}},
		{"everything weighted out", Options{Weights: map[string]float64{"*": 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := l.Sample(5, 1, tc.opts); !errors.Is(err, ErrBadOptions) {
				t.Errorf("err = %v, want ErrBadOptions", err)
			}
		})
	}
	if tasks, err := l.Sample(0, 1, Options{}); err != nil || len(tasks) != 0 {
		t.Errorf("n = 0: %v, %v", tasks, err)
	}
}
