package c2x86

import "testing"

func TestExtractAsm(t *testing.T) {
	t.Parallel()
	asmA := "\t.globl f\nf:\n\tmovl $1, %eax\n\tret"
	asmB := "\t.globl g\ng:\n\txorl %eax, %eax\n\tret"
	tests := []struct {
		name, text, want string
		ok               bool
	}{
		{"asm fence", "Here:\n```asm\n" + asmA + "\n```\nDone.", asmA + "\n", true},
		{"last asm block wins", "```asm\n" + asmA + "\n```\nfixed:\n```asm\n" + asmB + "\n```", asmB + "\n", true},
		{"labelled beats bare", "```asm\n" + asmA + "\n```\n```\n" + asmB + "\n```", asmA + "\n", true},
		{"c then asm", "```c\nint f(void) { return 1; }\n```\n```x86asm\n" + asmA + "\n```", asmA + "\n", true},
		{"asm then c", "```gas\n" + asmA + "\n```\n```c\nint main(void) { return 0; }\n```", asmA + "\n", true},
		{"s label", "```s\n" + asmA + "\n```", asmA + "\n", true},
		{"assembly label", "```assembly\n" + asmA + "\n```", asmA + "\n", true},
		{"tilde fence", "~~~asm\n" + asmA + "\n~~~", asmA + "\n", true},
		{"bare asm fence", "```\n" + asmA + "\n```", asmA + "\n", true},
		{"intel bare fence", "```\nf:\n    mov eax, 1\n    ret\n```", "f:\n    mov eax, 1\n    ret\n", true},
		{"bare c fence", "```\nint f(void) {\n  return 1;\n}\n```", "", false},
		{"no fence", "f:\n\tmovl $1, %eax\n\tret\n", "", false},
		{"empty fence", "```asm\n```", "", false},
		{"unterminated last fence", "```asm\n" + asmA, asmA + "\n", true},
		{"think ignored", "<think>\n```asm\n" + asmB + "\n```\n</think>\n```asm\n" + asmA + "\n```", asmA + "\n", true},
		{"only think", "<think>\n```asm\n" + asmB + "\n```\n</think>\nI could not do it.", "", false},
		{"unterminated think", "```asm\n" + asmA + "\n```\n<think>\n```asm\n" + asmB + "\n```", asmA + "\n", true},
		{"longer fence holds backticks", "````asm\n" + asmA + "\n```\n````", asmA + "\n```\n", true},
	}
	for _, tt := range tests {
		got, ok := ExtractAsm(tt.text)
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
