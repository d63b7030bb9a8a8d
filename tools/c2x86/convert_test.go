package c2x86

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFloat32Bits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want uint32
	}{
		// The seed paper's case study.
		{"6.0", 1086324736},
		{"0.125", 1040187392},
		{"50.0", 1112014848},
		{"4.0", 1082130432},
		{"1.0", 0x3f800000},
		{"6", 1086324736},
		{"6.0f", 1086324736},
		{"6.F", 1086324736},
		{"0f6.0", 1086324736},
		{"+6.0", 1086324736},
		{"-2.5e-3", math.Float32bits(-2.5e-3)},
		{"1E2", math.Float32bits(100)},
		{".5", 0x3f000000},
		{"0x1.8p1", math.Float32bits(3)},
		{"0x10", math.Float32bits(16)},
		{"1.0/3.0", math.Float32bits(float32(1.0 / 3.0))},
		{"(1 + 2) * 3", math.Float32bits(9)},
		{"-(2 - 0.5) / 2", math.Float32bits(-0.75)},
		{"100.0/2", math.Float32bits(50)},
		{"0.1", math.Float32bits(0.1)},
		{"inf", 0x7f800000},
		{"-Infinity", 0xff800000},
		{"nan", 0x7fc00000},
		{"-nan", 0xffc00000},
		{"1/0", 0x7f800000},
		{"1e40", 0x7f800000}, // overflows float32
		{"1e999", 0x7f800000},
		{"-0.0", 0x80000000},
	}
	for _, tt := range tests {
		got, err := Float32Bits(tt.expr)
		if err != nil || got != tt.want {
			t.Errorf("Float32Bits(%q) = %#x, %v; want %#x (%d)", tt.expr, got, err, tt.want, tt.want)
		}
	}
}

func TestFloat64Bits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want uint64
	}{
		{"1.0", 0x3ff0000000000000},
		{"6.0", 0x4018000000000000},
		{"1.0/3.0", 0x3fd5555555555555},
		{"0.1", 0x3fb999999999999a},
		{"0d1.5", 0x3ff8000000000000},
		{"-0.0", 0x8000000000000000},
		{"1e300*1e300", 0x7ff0000000000000},
		{"4.9e-324", 1},
		{"0x1p-1074", 1},
		{"nan", 0x7ff8000000000000},
		{"2.5e-3", math.Float64bits(2.5e-3)},
	}
	for _, tt := range tests {
		got, err := Float64Bits(tt.expr)
		if err != nil || got != tt.want {
			t.Errorf("Float64Bits(%q) = %#x, %v; want %#x", tt.expr, got, err, tt.want)
		}
	}
}

func TestEvalConstantErrors(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"", " ", "1.0/", "abc", "(1", "1)", "1.2.3", "0x1.8", "1e", "1 2", "M_PI", "0x", "--"} {
		if v, err := EvalConstant(expr); err == nil {
			t.Errorf("EvalConstant(%q) = %v, want an error", expr, v)
		}
	}
}

func TestConvertFloats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		constants      int
	}{
		{"float", ".LC0:\n\t.float 6.0\n", ".LC0:\n\t.long 1086324736\n", 1},
		{"label on line", ".LC1: .float 0.125", ".LC1: .long 1040187392", 1},
		{"double expr", "\t.double 1.0/3.0", "\t.long 1431655765, 1070945621", 1},
		{"double neg nan", "\t.double -nan", "\t.long 0, -524288", 1},
		{"list and hash comment", "\t.float 1.0, 2.0 # one, two", "\t.long 1065353216, 1073741824 # one, two", 2},
		{"upper case", "\t.FLOAT 2.0", "\t.long 1073741824", 1},
		{"single", "\t.single 1", "\t.long 1065353216", 1},
		{"semicolon note after long", "\t.long 1086324736 ; 6.0", "\t.long 1086324736 # 6.0", 0},
		{"semicolon note after float", ".LC1: .float 0.125 ; 0.125", ".LC1: .long 1040187392 # 0.125", 1},
		{"semicolon word note", "\t.long 5 ; float six", "\t.long 5 # float six", 0},
		{"semicolon number note after insn", "\tmovss .LC0(%rip), %xmm0 ; 6.0", "\tmovss .LC0(%rip), %xmm0 # 6.0", 0},
		{"two statements kept", "\tmovl $1, %eax; ret", "\tmovl $1, %eax; ret", 0},
		{"two data statements kept", "\t.long 5; .long 6", "\t.long 5; .long 6", 0},
		{"data then insn kept", "\t.long 5; movl $1, %eax", "\t.long 5; movl $1, %eax", 0},
		{"data then float", "\t.long 5; .float 1.0", "\t.long 5; .long 1065353216", 1},
		{"slash slash comment", "\tmovl $1, %eax // set eax", "\tmovl $1, %eax # set eax", 0},
		{"leading slash comment kept", "// .float bad\n/ x", "// .float bad\n/ x", 0},
		{"string untouched", "\t.ascii \"a;b .float 1 # //\"", "\t.ascii \"a;b .float 1 # //\"", 0},
		{"char constant", "\tmovb $'#, %al", "\tmovb $'#, %al", 0},
		{"hash comment untouched", "# .float bad", "# .float bad", 0},
		{"block comment", "/* start\n.float bad\n*/ .float 2.0", "/* start\n.float bad\n*/ .long 1073741824", 1},
		{"inline block comment", "\t.float /* six */ 6.0", "\t.long 1086324736", 1},
		{"empty float", "\t.float", "\t.float", 0},
		{"integer directives alone", "\t.long 6\n\t.quad 1, 2\n\t.long .L2-.L4", "\t.long 6\n\t.quad 1, 2\n\t.long .L2-.L4", 0},
	}
	for _, tt := range tests {
		got, st, err := ConvertFloats("answer.s", tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got != tt.want || st.Constants != tt.constants {
			t.Errorf("%s:\n got %q (%d constants)\nwant %q (%d)", tt.name, got, st.Constants, tt.want, tt.constants)
		}
		if strings.Count(got, "\n") != strings.Count(tt.in, "\n") {
			t.Errorf("%s: line count changed", tt.name)
		}
	}
}

func TestConvertFloatsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		has      []string
	}{
		{"incbin", "\t.text\n\t.incbin \"/etc/passwd\"", []string{"answer.s:2: Error:", ".incbin is not allowed"}},
		{"include", "\t.INCLUDE \"x.s\"", []string{"answer.s:1:", "not allowed"}},
		{"bad expr", "\t.text\n\n\t.float 1.0/x", []string{"answer.s:3: Error: .float 1.0/x:", "unknown name \"x\""}},
		{"bad double", "\t.double 1.0,", []string{"answer.s:1:", "missing value"}},
		{"several", "\t.float a\n\t.double b", []string{"answer.s:1:", "answer.s:2:"}},
	}
	for _, tt := range tests {
		_, _, err := ConvertFloats("answer.s", tt.in)
		var ce *ConvertError
		if !errors.As(err, &ce) {
			t.Errorf("%s: err = %v, want *ConvertError", tt.name, err)
			continue
		}
		for _, h := range tt.has {
			if !strings.Contains(err.Error(), h) {
				t.Errorf("%s: %q lacks %q", tt.name, err.Error(), h)
			}
		}
	}
}

// TestConvertMatchesGCC checks the converter against GCC's encoding of the
// same literals in C (float f[] = {lit, ...}; double d[] = {lit, ...}),
// which is what the reference assembly holds. (GNU as's own .float differs
// on ties: 16777217 and 2^53+1.)
func TestConvertMatchesGCC(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	literals := []string{"6.0", "0.125", "50.0", "4.0", "3.14159265358979", "1e-3", "-2.5e-3", "1e38",
		"1.17549435e-38", "0.1", "16777217", "3.4028235e38", "1e-45", "123456.789", "2.718281828459045",
		"-0.0", "9007199254740993", "0.3", "1.0/3.0", "2.0/3.0", "1.0/7.0", "(1.5+2.25)*4", "0x1.8p3",
		"-1e-40", "1e-310", "4.9e-324", "1.7976931348623157e308"}
	var c, asm strings.Builder
	c.WriteString("float f[] = {")
	for _, lit := range literals {
		c.WriteString(lit + ", ")
		asm.WriteString("\t.float " + lit + "\n")
	}
	c.WriteString("};\ndouble d[] = {")
	for _, lit := range literals {
		c.WriteString(lit + ", ")
		asm.WriteString("\t.double " + lit + "\n")
	}
	c.WriteString("};\n")
	dir := t.TempDir()
	cfile := filepath.Join(dir, "lits.c")
	if err := os.WriteFile(cfile, []byte(c.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("gcc", "-w", "-S", "-o", "-", cfile).CombinedOutput()
	if err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	conv, _, err := ConvertFloats("t.s", asm.String())
	if err != nil {
		t.Fatal(err)
	}
	words := func(s string) []string {
		var w []string
		for _, line := range strings.Split(s, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), ".long"); ok {
				for _, x := range strings.Split(v, ",") {
					w = append(w, strings.TrimSpace(x))
				}
			}
		}
		return w
	}
	g, o := words(string(out)), words(conv)
	if len(g) != 3*len(literals) || strings.Join(g, " ") != strings.Join(o, " ") {
		t.Fatalf("converter disagrees with GCC:\ngcc  %v\nours %v", g, o)
	}
}
