package refinement

import (
	"strings"
	"testing"
)

func TestNewFeaturizerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    []FeatureTable
		want string
	}{
		{"both", []FeatureTable{{Lane: "x", Rules: []FeatureRule{{Name: "a", Pattern: "a", Detect: func(*Source) bool { return true }}}}}, "exactly one"},
		{"neither", []FeatureTable{{Lane: "x", Rules: []FeatureRule{{Name: "a"}}}}, "exactly one"},
		{"bad regexp", []FeatureTable{{Lane: "x", Rules: []FeatureRule{{Name: "a", Pattern: "["}}}}, "missing closing ]"},
		{"twice", []FeatureTable{{Lane: "x"}, {Lane: "x"}}, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewFeaturizer(tt.t...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNormalizeSource(t *testing.T) {
	t.Parallel()
	a := "int  f(int x)\n{\n    /* doubles */\n    return x*2; // done\n}\n"
	b := "int f(int x){return x * 2;}"
	if normalizeSource(a) != normalizeSource(b) {
		t.Fatalf("%q != %q", normalizeSource(a), normalizeSource(b))
	}
	if got := normalizeSource(`const char *s = "a  b // c";`); got != `const char*s="a  b // c";` {
		t.Fatalf("literal changed: %q", got)
	}
	if normalizeSource("int f(int x){return x+1;}") == normalizeSource("int f(int x){return x+2;}") {
		t.Fatal("different code normalised alike")
	}
}
