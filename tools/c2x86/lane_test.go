package c2x86

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

var corpusFlag = flag.String("c2x86.corpus", "sample", `corpus items to check with gcc -O0/-O2 answers: "sample", "all" or "none"`)

var (
	testLane     *Lane
	testCacheDir string
	testRunner   *sandboxes.Runner
)

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kiln-c2x86-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o711); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	testRunner, err = sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(dir, "boxes"), UIDBase: 2_100_200_000})
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 1
	}
	testCacheDir = filepath.Join(dir, "cache")
	testLane, err = New(Config{
		Sandbox:   testRunner,
		CacheDir:  testCacheDir,
		RunLimits: sandboxes.Limits{Wall: time.Second},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lane:", err)
		return 1
	}
	return m.Run()
}

// testItems are functions covering float constants, switches with many
// cases, recursion, strings, structs and libm calls.
var testItems = map[string]struct{ function, driver, name string }{
	"floats": {
		name: "cost_split",
		function: `float cost_split(void)
{
    float cost_a = 6.0, cost_b = 0.125, cash = 50.0, num_a = 4.0;
    float temp = cost_a * num_a;
    temp = cash - temp;
    return temp / cost_b;
}
double thirds(double x) { return x * (1.0 / 3.0) + 2.5e-3 - x / 7.0; }
`,
		driver: `#include <stdio.h>
float cost_split(void);
double thirds(double x);
int main(void) {
    printf("%a %.9g\n", (double)cost_split(), cost_split());
    for (int i = -3; i <= 3; i++) printf("%a\n", thirds(i * 1.5));
    return 0;
}
`,
	},
	"single": {
		name: "cost_split",
		function: `float cost_split(void)
{
    float cost_a = 6.0, cost_b = 0.125, cash = 50.0, num_a = 4.0;
    return (cash - cost_a * num_a) / cost_b;
}
`,
		driver: `#include <stdio.h>
float cost_split(void);
int main(void) { printf("%a\n", (double)cost_split()); return 0; }
`,
	},
	"switch": {
		name: "color_char_to_attr",
		function: `int color_char_to_attr(char c)
{
    switch (c) {
    case 'd': return 0;
    case 'w': return 1;
    case 's': return 2;
    case 'o': return 3;
    case 'r': return 4;
    case 'g': return 5;
    case 'b': return 6;
    case 'u': return 7;
    case 'D': return 8;
    case 'W': return 9;
    case 'v': return 10;
    case 'y': return 11;
    case 'R': return 12;
    case 'G': return 13;
    case 'B': return 14;
    default: return -1;
    }
}
`,
		driver: `#include <stdio.h>
int color_char_to_attr(char c);
int main(void) {
    for (int c = 'A'; c <= 'z'; c++) printf("%c=%d\n", c, color_char_to_attr((char)c));
    return 0;
}
`,
	},
	"recursion": {
		name: "fib",
		function: `int fib(int n) { if (n < 2) return n; return fib(n - 1) + fib(n - 2); }
long ack(long m, long n) {
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}
`,
		driver: `#include <stdio.h>
int fib(int n);
long ack(long m, long n);
int main(void) {
    for (int i = 0; i <= 20; i++) printf("fib(%d)=%d\n", i, fib(i));
    for (long m = 0; m <= 2; m++) for (long n = 0; n <= 3; n++) printf("ack(%ld,%ld)=%ld\n", m, n, ack(m, n));
    return 0;
}
`,
	},
	"strings": {
		name: "count_vowels",
		function: `#include <string.h>
#include <ctype.h>
int count_vowels(const char *s)
{
    int n = 0;
    for (; *s; s++)
        if (strchr("aeiouAEIOU", *s)) n++;
    return n;
}
void reverse(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) { char t = s[i]; s[i] = s[n - 1 - i]; s[n - 1 - i] = t; }
}
void upcase(char *s) { for (; *s; s++) *s = (char)toupper((unsigned char)*s); }
`,
		driver: `#include <stdio.h>
#include <string.h>
int count_vowels(const char *s);
void reverse(char *s);
void upcase(char *s);
int main(void) {
    const char *words[] = {"", "a", "hello", "Assembly Language", "rhythm", "AEIOUaeiou xyz"};
    for (int i = 0; i < 6; i++) {
        char buf[64];
        strcpy(buf, words[i]);
        reverse(buf);
        printf("%d [%s]", count_vowels(words[i]), buf);
        upcase(buf);
        printf(" [%s]\n", buf);
    }
    return 0;
}
`,
	},
	"structs": {
		name: "scale",
		function: `struct point { int x; int y; double w; };
struct point scale(struct point p, int k) { p.x *= k; p.y -= k; p.w *= 0.5 * k; return p; }
long sum_points(const struct point *ps, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++) s += ps[i].x * 3 + ps[i].y + (long)ps[i].w;
    return s;
}
struct big { long a[5]; };
struct big make_big(long seed) { struct big b; for (int i = 0; i < 5; i++) b.a[i] = seed * (i + 1) - i; return b; }
`,
		driver: `#include <stdio.h>
struct point { int x; int y; double w; };
struct big { long a[5]; };
struct point scale(struct point p, int k);
long sum_points(const struct point *ps, int n);
struct big make_big(long seed);
int main(void) {
    struct point ps[4] = {{1, 2, 3.5}, {-4, 5, 0.25}, {7, -8, 10.0}, {0, 0, -2.0}};
    for (int i = 0; i < 4; i++) {
        struct point q = scale(ps[i], i + 2);
        printf("%d %d %g\n", q.x, q.y, q.w);
    }
    printf("%ld\n", sum_points(ps, 4));
    struct big b = make_big(11);
    for (int i = 0; i < 5; i++) printf("%ld ", b.a[i]);
    printf("\n");
    return 0;
}
`,
	},
	"math": {
		name: "hyp",
		function: `#include <math.h>
double hyp(double a, double b) { return sqrt(a * a + b * b) + sin(a) * pow(fabs(b), 1.5); }
float softplus(float x) { return logf(1.0f + expf(x)); }
`,
		driver: `#include <stdio.h>
double hyp(double a, double b);
float softplus(float x);
int main(void) {
    for (int i = -2; i <= 2; i++) printf("%.12g %.6g\n", hyp(i * 1.25, 3.0 - i), (double)softplus(i * 0.75f));
    return 0;
}
`,
	},
}

func item(t *testing.T, name string) tools.Item {
	t.Helper()
	ti, ok := testItems[name]
	if !ok {
		t.Fatalf("no test item %q", name)
	}
	return tools.Item{Lane: LaneName, Files: map[string]string{"function.c": ti.function, "driver.c": ti.driver},
		Meta: map[string]string{"function": ti.name}}
}

// gccAsm compiles function.c of it with GCC (outside the sandbox: test
// fixture) at opt.
func gccAsm(t *testing.T, it tools.Item, opt string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range it.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("gcc", opt, "-S", "-o", "-", filepath.Join(dir, "function.c")).Output()
	if err != nil {
		t.Fatalf("gcc %s: %v", opt, err)
	}
	return string(out)
}

func verify(t *testing.T, it tools.Item, asm string) tools.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	v, err := testLane.Verify(ctx, it, asm)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	return v
}

func stageNames(v tools.Verdict) string {
	var names []string
	for _, s := range v.Stages {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

func TestGCCAssemblyPasses(t *testing.T) {
	t.Parallel()
	names := make([]string, 0, len(testItems))
	for n := range testItems {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run(name+opt, func(t *testing.T) {
				t.Parallel()
				it := item(t, name)
				v := verify(t, it, gccAsm(t, it, opt))
				if !v.Pass || v.Class != tools.ClassNone {
					t.Fatalf("%s %s: class %s at %s: %s", name, opt, v.Class, v.Stage, v.Diagnostic)
				}
				if got := stageNames(v); got != "extract,convert,assemble,link,run,compare" {
					t.Errorf("stages %s", got)
				}
				if len(v.Artifacts["stdout"]) == 0 || v.Measurements["run_ms"] <= 0 {
					t.Errorf("missing artifacts or measurements: %v", v.Measurements)
				}
			})
		}
	}
}

// TestMutationsFail changes behaviour in GCC's assembly and expects
// wrong_output.
func TestMutationsFail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		item, opt string
		re        string // first match is replaced
		repl      string
	}{
		{"floats", "-O0", `\.long\t1086324736`, ".long\t1086324737"}, // 6.0f + 1 ulp
		{"recursion", "-O0", `cmpl\t\$1, `, "cmpl\t$2, "},            // n < 2 -> n < 3
		{"math", "-O0", `addsd\t`, "subsd\t"},                        // a*a + b*b -> a*a - b*b
		{"switch", "-O0", `movl\t\$5, %eax`, "movl\t$6, %eax"},       // case 'g'
		{"strings", "-O0", `addl\t\$1, -`, "addl\t$2, -"},            // n++ -> n += 2
		{"structs", "-O0", `imull\t`, "addl\t"},                      // p.x *= k -> p.x += k
	}
	for _, tt := range tests {
		t.Run(tt.item, func(t *testing.T) {
			t.Parallel()
			it := item(t, tt.item)
			asm := gccAsm(t, it, tt.opt)
			re := regexp.MustCompile(tt.re)
			loc := re.FindStringIndex(asm)
			if loc == nil {
				t.Fatalf("pattern %q not in %s assembly:\n%s", tt.re, tt.opt, asm)
			}
			mutated := asm[:loc[0]] + tt.repl + asm[loc[1]:]
			if mutated == asm {
				t.Fatal("mutation changed nothing")
			}
			v := verify(t, it, mutated)
			if v.Pass || v.Class != tools.ClassWrongOutput || v.Stage != "compare" {
				t.Fatalf("class %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
			}
			if !strings.Contains(v.Diagnostic, "expected") || !strings.Contains(v.Diagnostic, "got") {
				t.Errorf("diagnostic lacks a diff: %s", v.Diagnostic)
			}
		})
	}
}

func TestFailureClasses(t *testing.T) {
	t.Parallel()
	const header = "\t.text\n\t.globl cost_split\n\t.type cost_split, @function\ncost_split:\n"
	tests := []struct {
		name, asm string
		class     tools.FailureClass
		stage     string
		has       []string
		hasNot    []string
	}{
		{"empty", "  \n", tools.ClassNoAnswer, "extract", nil, nil},
		{"garbage", "\t.text\nthis is not assembly\n\tmovl %eax\n", tools.ClassAssembleError, "assemble",
			[]string{"answer.s:2: Error:", "| this is not assembly", "answer.s:3:"}, nil},
		{"bad float expr", header + "\tret\n.LC0:\n\t.float 6.0 +\n", tools.ClassAssembleError, "convert",
			[]string{"answer.s:7: Error: .float 6.0 +"}, nil},
		{"incbin rejected", header + "\tret\n\t.section .rodata\n\t.incbin \"/etc/passwd\"\n", tools.ClassAssembleError, "convert",
			[]string{".incbin is not allowed"}, []string{"root:"}},
		{"undefined symbol", "\t.text\n\t.globl other\nother:\n\tret\n", tools.ClassLinkError, "link",
			[]string{"undefined reference to `cost_split'"}, nil},
		{"duplicate main", header + "\tret\n\t.globl main\nmain:\n\tret\n", tools.ClassLinkError, "link",
			[]string{"multiple definition of `main'"}, nil},
		{"infinite loop", header + "1:\tjmp 1b\n", tools.ClassTimeout, "run", []string{"timed out"}, nil},
		{"jmp dot", header + "\tjmp .\n", tools.ClassTimeout, "run", []string{"timed out"}, nil},
		{"segfault", header + "\txorl %eax, %eax\n\tmovl (%rax), %eax\n\tret\n", tools.ClassCrash, "run",
			[]string{"SIGSEGV"}, nil},
		{"abort", header + "\tsubq $8, %rsp\n\tcall abort@PLT\n", tools.ClassCrash, "run", []string{"SIGABRT"}, nil},
		{"exit code", header + "\tmovl $7, %edi\n\tcall exit@PLT\n", tools.ClassWrongOutput, "compare",
			[]string{"exit status 7, expected 0"}, nil},
		{"output flood", header + "\tsubq $8, %rsp\n1:\tmovl $65, %edi\n\tcall putchar@PLT\n\tjmp 1b\n",
			tools.ClassResourceLimit, "run", []string{"output size limit"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verify(t, item(t, "single"), tt.asm)
			if v.Pass || v.Class != tt.class || v.Stage != tt.stage {
				t.Fatalf("class %q at %q, want %q at %q: %s", v.Class, v.Stage, tt.class, tt.stage, v.Diagnostic)
			}
			for _, h := range tt.has {
				if !strings.Contains(v.Diagnostic, h) {
					t.Errorf("diagnostic lacks %q:\n%s", h, v.Diagnostic)
				}
			}
			for _, h := range tt.hasNot {
				if strings.Contains(v.Diagnostic, h) || strings.Contains(string(v.Artifacts["stdout"]), h) {
					t.Errorf("verdict leaks %q", h)
				}
			}
		})
	}
}

// TestSymbolicConstantsPass: hand-written assembly whose constants are
// written as the seed paper's model writes them.
func TestSymbolicConstantsPass(t *testing.T) {
	t.Parallel()
	asm := `	.text
	.globl	cost_split
	.type	cost_split, @function
cost_split:
	movss	.LC0(%rip), %xmm0    // 6.0
	mulss	.LC3(%rip), %xmm0    // * 4.0
	movss	.LC2(%rip), %xmm1
	subss	%xmm0, %xmm1
	divss	.LC1(%rip), %xmm1
	movaps	%xmm1, %xmm0
	ret
	.globl	thirds
	.type	thirds, @function
thirds:
	movapd	%xmm0, %xmm1
	mulsd	.LD0(%rip), %xmm0
	addsd	.LD1(%rip), %xmm0
	divsd	.LD2(%rip), %xmm1
	subsd	%xmm1, %xmm0
	ret
	.section .rodata
	.align 8
.LD0:	.double 1.0/3.0
.LD1:	.double 2.5e-3
.LD2:	.double 7
.LC0:	.float 6.0
.LC1:	.long 1040187392 ; 0.125
.LC2:	.float 100.0/2
.LC3:	.float 4.0f
	.section .note.GNU-stack,"",@progbits
`
	v := verify(t, item(t, "floats"), asm)
	if !v.Pass {
		t.Fatalf("class %s at %s: %s\nconverted:\n%s", v.Class, v.Stage, v.Diagnostic, v.Artifacts["converted.s"])
	}
	if v.Measurements["converted_constants"] != 6 || len(v.Artifacts["converted.s"]) == 0 {
		t.Errorf("converted %v constants", v.Measurements["converted_constants"])
	}
}

func TestReferenceCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	it := item(t, "recursion")
	var wg sync.WaitGroup
	refs := make([]*Reference, 4)
	for i := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := testLane.Reference(ctx, it)
			if err != nil {
				t.Error(err)
			}
			refs[i] = r
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, r := range refs[1:] {
		if r != refs[0] {
			t.Fatal("concurrent Reference calls computed separate references")
		}
	}
	ref := refs[0]
	if !strings.Contains(ref.Asm, "fib:") || strings.Contains(ref.Asm, ".L4-") || !strings.Contains(string(ref.Output), "fib(20)=6765") {
		t.Fatalf("reference: asm/output unexpected:\n%s\n%s", ref.Asm, ref.Output)
	}
	if !strings.Contains(ref.Toolchain, "gcc") {
		t.Errorf("toolchain %q", ref.Toolchain)
	}
	// A fresh lane over the same cache dir loads it from disk.
	l2, err := New(Config{Sandbox: testRunner, CacheDir: testCacheDir})
	if err != nil {
		t.Fatal(err)
	}
	l2.toolchain = ref.Toolchain
	disk := l2.diskGet(ref.Key)
	if disk == nil || disk.Asm != ref.Asm || string(disk.Output) != string(ref.Output) || string(disk.DriverObject) != string(ref.DriverObject) {
		t.Fatal("reference not found intact in the disk cache")
	}
	// A different driver is a different key.
	it2 := it
	it2.Files = map[string]string{"function.c": it.Files["function.c"], "driver.c": it.Files["driver.c"] + "\n"}
	if testLane.cacheKey(it2, ref.Toolchain) == ref.Key {
		t.Fatal("cache key ignores the driver")
	}
}

func TestSwitchNormalisedReference(t *testing.T) {
	t.Parallel()
	ref, err := testLane.Reference(context.Background(), item(t, "switch"))
	if err != nil {
		t.Fatal(err)
	}
	// -fno-jump-tables: compare-and-branch chains, no table of label
	// differences.
	if regexp.MustCompile(`\.long\t\.L\d+-\.L\d+`).MatchString(ref.Asm) || !strings.Contains(ref.Asm, "cmpl\t$") {
		t.Fatalf("reference assembly has a jump table:\n%s", ref.Asm)
	}
}

func TestBadItems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		function, drv string
		has           string
	}{
		{"missing driver", "int f(void){return 1;}", "", "driver.c missing"},
		{"function does not compile", "int f(void){return 1}", "int main(void){return 0;}", "compile function.c"},
		{"driver does not compile", "int f(void){return 1;}", "int main(void){return x;}", "compile driver.c"},
		{"nondeterministic driver", "int f(void){return 1;}",
			"#include <stdio.h>\nint main(void){int x; printf(\"%p\\n\", (void*)&x); return 0;}", "differs between two runs"},
		{"reference crashes", "int f(int *p){return *p;}",
			"int f(int*);\nint main(void){return f(0);}", "reference program killed by signal SIGSEGV"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			it := tools.Item{Lane: LaneName, Files: map[string]string{"function.c": tt.function, "driver.c": tt.drv}}
			_, err := testLane.Verify(context.Background(), it, "\tret\n")
			if !errors.Is(err, ErrBadItem) || !strings.Contains(err.Error(), tt.has) {
				t.Fatalf("err = %v, want ErrBadItem with %q", err, tt.has)
			}
		})
	}
}

func TestModelTools(t *testing.T) {
	t.Parallel()
	it := item(t, "recursion")
	reg, err := tools.NewRegistry(testLane.Tools(it)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range reg.List() {
		var schema map[string]any
		if err := json.Unmarshal(tl.Schema(), &schema); err != nil || schema["type"] != "object" {
			t.Errorf("%s: bad schema %s: %v", tl.Name(), tl.Schema(), err)
		}
		if !strings.Contains(tl.Description(), "fib") {
			t.Errorf("%s: description does not name the function: %s", tl.Name(), tl.Description())
		}
	}
	good := gccAsm(t, it, "-O1")
	args := func(asm string) json.RawMessage {
		b, _ := json.Marshal(map[string]string{"asm": asm})
		return b
	}
	asmTool, _ := reg.Get("assemble")
	runTool, _ := reg.Get("run_tests")
	tests := []struct {
		tool tools.Tool
		args json.RawMessage
		has  string
	}{
		{asmTool, args(good), "ok"},
		{asmTool, args("```asm\n" + good + "```"), "ok"},
		{asmTool, args("\tmovl %eax\n"), "answer.s:1: Error:"},
		{asmTool, args("\t.float 1/x\n"), "answer.s:1: Error: .float 1/x"},
		{asmTool, json.RawMessage(`{"code": 1}`), "error:"},
		{runTool, args(good), "PASS"},
		{runTool, args(strings.Replace(good, "\t.globl\tfib\n", "", 1)), "FAIL (link_error at stage link)"},
	}
	for i, tt := range tests {
		out, err := tt.tool.Call(context.Background(), tt.args)
		if err != nil {
			t.Errorf("%d %s: %v", i, tt.tool.Name(), err)
			continue
		}
		if !strings.HasPrefix(out, tt.has) && !strings.Contains(out, tt.has) {
			t.Errorf("%d %s: %q lacks %q", i, tt.tool.Name(), out, tt.has)
		}
	}
}

func TestItemFromDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"function.c": "int f(void){return 1;}", "driver.c": "int main(void){return 0;}",
		"function.h": "int f(void);", "meta.json": `{"function": "f", "categories": ["int_arith", "loop"]}`,
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	it, err := ItemFromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if it.Lane != LaneName || it.Meta["function"] != "f" || it.Meta["categories"] != "int_arith,loop" ||
		it.Files["function.h"] != "int f(void);" || len(it.Files) != 3 {
		t.Fatalf("item %+v", it)
	}
	if _, err := ItemFromDir(t.TempDir()); err == nil {
		t.Fatal("empty dir: no error")
	}
}

// TestCorpus verifies GCC's own -O0 and -O2 assembly for items of the
// prompts corpus: a sample by default, all with -c2x86.corpus=all.
func TestCorpus(t *testing.T) {
	t.Parallel()
	if *corpusFlag == "none" {
		t.Skip("-c2x86.corpus=none")
	}
	all, _ := filepath.Glob("corpus/*")
	var dirs []string
	for _, d := range all {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		t.Skip("no corpus")
	}
	sort.Strings(dirs)
	if *corpusFlag != "all" {
		// One item per category prefix (flt, int, ptr, ...).
		seen := map[string]bool{}
		var sample []string
		for _, d := range dirs {
			cat, _, _ := strings.Cut(filepath.Base(d), "_")
			if !seen[cat] {
				seen[cat] = true
				sample = append(sample, d)
			}
		}
		dirs = sample
	}
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) {
			t.Parallel()
			it, err := ItemFromDir(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, opt := range []string{"-O0", "-O2"} {
				v := verify(t, it, gccAsm(t, it, opt))
				if !v.Pass {
					t.Errorf("%s: class %s at %s: %s", opt, v.Class, v.Stage, v.Diagnostic)
				}
			}
		})
	}
}

// BenchmarkVerify measures one verification with a cached reference.
func BenchmarkVerify(b *testing.B) {
	it := tools.Item{Lane: LaneName, Files: map[string]string{"function.c": testItems["recursion"].function,
		"driver.c": testItems["recursion"].driver}}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "function.c"), []byte(it.Files["function.c"]), 0o644)
	asm, err := exec.Command("gcc", "-O2", "-S", "-o", "-", filepath.Join(dir, "function.c")).Output()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := testLane.Reference(ctx, it); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		v, err := testLane.Verify(ctx, it, string(asm))
		if err != nil || !v.Pass {
			b.Fatal(err, v.Diagnostic)
		}
	}
}

// TestItemFromFilesNamesEveryMissingFile: both missing files are named, the
// same way on every call (the files used to be read in map order).
func TestItemFromFilesNamesEveryMissingFile(t *testing.T) {
	dir := t.TempDir()
	fn := filepath.Join(dir, "present.c")
	if err := os.WriteFile(fn, []byte("int f(void){return 1;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		_, err := ItemFromFiles("/nonexistent-fn.c", "/nonexistent-drv.c", "f")
		if err == nil || !strings.Contains(err.Error(), "/nonexistent-fn.c") || !strings.Contains(err.Error(), "/nonexistent-drv.c") {
			t.Fatalf("both files missing: %v", err)
		}
		if !strings.Contains(err.Error(), "function.c:") || !strings.Contains(err.Error(), "driver.c:") {
			t.Fatalf("error does not say which input: %v", err)
		}
	}
	_, err := ItemFromFiles(fn, "/nonexistent-drv.c", "f")
	if err == nil || !strings.Contains(err.Error(), "driver.c") || strings.Contains(err.Error(), "present.c") {
		t.Fatalf("driver missing: %v", err)
	}
	it, err := ItemFromFiles(fn, fn, "f")
	if err != nil || it.Files["function.c"] == "" || it.Files["driver.c"] == "" {
		t.Fatalf("both present: %v %+v", err, it.Files)
	}
}
