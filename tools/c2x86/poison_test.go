package c2x86

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

func TestParamClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		src      string
		int, vec int
		off      string // substring of the reason; "" = shim on
	}{
		{src: "long f(const char *s) {", int: 1},
		{src: "int f(void) {"},
		{src: "int f() {"},
		{src: "double f(double x, int n, float y) {", int: 1, vec: 2},
		{src: "static unsigned long long f(unsigned a, long b, short c, char d, _Bool e, size_t g) {", int: 6},
		{src: "int f(int a[], int n, enum mode m) {", int: 3},
		{src: "/* f(struct s x) { */ int f(const int *restrict p, uint8_t q) {", int: 2},
		{src: "struct seginfo f(const struct segment *s) {", int: 2},                      // sret: the hidden pointer in rdi
		{src: "#include <math.h>\nstruct polar\nf(double x, double y) {", int: 1, vec: 2}, // maybe sret
		{src: "static inline unsigned long f(double x) {", vec: 1},
		{src: "struct pt *f(int a) {", int: 1},
		{src: "int g(void);\nstruct big f(int a, int b, int c, int d, int e, int g) {", off: "stack"},
		{src: "int f(int a, int b, int c, int d, int e, int g, int h) {", off: "stack"},
		{src: "int f(struct point p) {", off: "not classified"},
		{src: "int f(long double x) {", off: "long double"},
		{src: "int f(int n, ...) {", off: "variadic"},
		{src: "int f(myint n) {", off: "not classified"},
		{src: "int g(int n) {", off: "not found"},
	}
	for _, c := range cases {
		p := paramClasses(c.src, "f")
		if c.off != "" {
			if !strings.Contains(p.Off, c.off) {
				t.Errorf("%s: off %q, want it to say %q", c.src, p.Off, c.off)
			}
			continue
		}
		if p.Off != "" || p.IntArgs != c.int || p.VecArgs != c.vec {
			t.Errorf("%s: %+v, want %d integer and %d vector arguments", c.src, p, c.int, c.vec)
		}
	}
}

// TestPoisonShimCatchesUndefinedRegister: clang -O2's duration_seconds
// with the instruction that sets edx dropped reads the caller's rdx (the
// driver leaves envp or a C-library value there, which moves with ASLR).
// The peer suite once saw this mutant pass; with the shim it must fail
// every time, and the intact answer must pass every time.
func TestPoisonShimCatchesUndefinedRegister(t *testing.T) {
	t.Parallel()
	item := tools.Item{Lane: LaneName, Meta: map[string]string{"function": "duration_seconds"}, Files: map[string]string{
		"function.c": `long duration_seconds(const char *s)
{
    long n = 0;
    int digits = 0;
    while (*s >= '0' && *s <= '9') {
        n = n * 10 + (*s++ - '0');
        digits++;
    }
    if (digits == 0 || s[0] != 's' || s[1] != '\0')
        return -1;
    return n;
}
`,
		"driver.c": `#include <stdio.h>
long duration_seconds(const char *s);
int main(void)
{
    const char *v[] = {"90s", "7s", "0s", "12", "x"};
    for (int i = 0; i < 5; i++)
        printf("%s -> %ld\n", v[i], duration_seconds(v[i]));
    return 0;
}
`}}
	// The shape clang -O2 gives the loop head: edx = c - '0', then the
	// unsigned compare with 9.
	good := `	.text
	.globl	duration_seconds
	.type	duration_seconds, @function
duration_seconds:
	movzbl	(%rdi), %ecx
	leal	-48(%rcx), %edx
	cmpb	$9, %dl
	ja	.Lbad
	xorl	%eax, %eax
.Lloop:
	movzbl	(%rdi), %ecx
	leal	-48(%rcx), %edx
	cmpb	$9, %dl
	ja	.Lend
	leaq	(%rax,%rax,4), %rax
	leaq	-48(%rcx,%rax,2), %rax
	incq	%rdi
	jmp	.Lloop
.Lend:
	cmpb	$115, %cl
	jne	.Lbad
	cmpb	$0, 1(%rdi)
	jne	.Lbad
	ret
.Lbad:
	movq	$-1, %rax
	ret
	.size	duration_seconds, .-duration_seconds
	.section	.note.GNU-stack,"",@progbits
`
	broken := strings.Replace(good, "\tmovzbl\t(%rdi), %ecx\n\tleal\t-48(%rcx), %edx\n\tcmpb\t$9, %dl\n\tja\t.Lbad", "\tmovzbl\t(%rdi), %ecx\n\tcmpb\t$9, %dl\n\tja\t.Lbad", 1)
	if broken == good {
		t.Fatal("the broken twin equals the answer")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ref, err := testLane.Reference(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref.Poison, "unused argument registers") || !strings.Contains(ref.Poison, "1 integer, 0 vector") {
		t.Errorf("reference poison: %q", ref.Poison)
	}
	// The callee sees the pattern: an answer returning rdx prints it.
	leak := "\t.text\n\t.globl\tduration_seconds\nduration_seconds:\n\tmovq\t%rdx, %rax\n\tret\n"
	if v := verify(t, item, leak); v.Pass || !strings.Contains(string(v.Artifacts["stdout"]), "90s -> -6510615555426900571\n") {
		t.Errorf("an answer returning rdx: pass %v, stdout %q; want the poison pattern 0xa5a5a5a5a5a5a5a5", v.Pass, v.Artifacts["stdout"])
	}
	for i := 0; i < 3; i++ {
		if v := verify(t, item, good); !v.Pass {
			t.Fatalf("run %d: the intact answer fails: %s at %s: %s", i, v.Class, v.Stage, v.Diagnostic)
		}
		if v := verify(t, item, broken); v.Pass || v.Class != tools.ClassWrongOutput {
			t.Fatalf("run %d: the answer that reads rdx before writing it: pass %v class %s, want wrong_output", i, v.Pass, v.Class)
		}
	}
}

// TestPoisonCoversCorpus: the shim is on for (nearly) every corpus item;
// the items it cannot classify are named.
func TestPoisonCoversCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var off []string
	for _, it := range items {
		if p := paramClasses(it.Files["function.c"], it.Function); p.Off != "" {
			off = append(off, it.ID+": "+p.Off)
		}
	}
	t.Logf("shim off for %d of %d items: %s", len(off), len(items), strings.Join(off, "; "))
	if len(off)*20 > len(items) {
		t.Errorf("the shim is off for %d of %d items (more than 5%%)", len(off), len(items))
	}
}

// TestPoisonShimSret: functions returning a struct in memory take a hidden
// pointer in rdi; the shim must count it (the peer suite once saw the
// reference program crash when it poisoned the last real argument), and
// the shim is checked against the reference's own output.
func TestPoisonShimSret(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"struct_013_line_midpoint": "(2 integer, 0 vector arguments)",
		"math_011_polar_cartesian": "(1 integer, 2 vector arguments)", "struct_018_sret_stats": "integer"}
	for _, it := range items {
		suffix, ok := want[it.ID]
		if !ok {
			continue
		}
		delete(want, it.ID)
		item := tools.Item{Lane: LaneName, Files: it.Files, Meta: map[string]string{"function": it.Function}}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		ref, err := testLane.Reference(ctx, item)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", it.ID, err)
		}
		if !strings.HasPrefix(ref.Poison, "unused argument registers") || !strings.Contains(ref.Poison, suffix) {
			t.Errorf("%s: poison %q, want it on with %q", it.ID, ref.Poison, suffix)
		}
		if v := verify(t, item, gccAsm(t, item, "-O2")); !v.Pass {
			t.Errorf("%s: gcc -O2: %s at %s: %s", it.ID, v.Class, v.Stage, v.Diagnostic)
		}
	}
	if len(want) > 0 {
		t.Errorf("items not in the corpus: %v", want)
	}
}

// TestPoisonShimCheckedOnReference: a parameter list the classifier reads
// wrong (here from a string literal that looks like the definition) makes
// the shim poison a real argument; the reference's output changes, so the
// shim is dropped and the plain driver kept.
func TestPoisonShimCheckedOnReference(t *testing.T) {
	t.Parallel()
	item := tools.Item{Lane: LaneName, Meta: map[string]string{"function": "add2"}, Files: map[string]string{
		"function.c": "static const char *usage = \"add2(int a) {\";\nint add2(int a, int b) { return a * 10 + b + (usage[0] == 'a'); }\n",
		"driver.c":   "#include <stdio.h>\nint add2(int a, int b);\nint main(void) { printf(\"%d %d\\n\", add2(1, 2), add2(3, 4)); return 0; }\n",
	}}
	if p := paramClasses(item.Files["function.c"], "add2"); p.Off != "" || p.IntArgs != 1 {
		t.Fatalf("the classifier reads %+v: the test needs it misled to 1 integer argument", p)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ref, err := testLane.Reference(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Poison != "no register poisoning (the shim changes the reference's output)" || string(ref.Output) != "13 35\n" {
		t.Errorf("poison %q, output %q", ref.Poison, ref.Output)
	}
	if v := verify(t, item, gccAsm(t, item, "-O1")); !v.Pass {
		t.Errorf("gcc -O1: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
	}
}
