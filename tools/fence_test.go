package tools

import "testing"

func TestFences(t *testing.T) {
	t.Parallel()
	text := "intro\n```asm\nmovl $1, %eax\n```\n  ~~~~ {.cuda} extra\n__global__ void k() {}\n~~~~\n```inline`tick\n```c\nint x;"
	got := Fences(text)
	want := []Fence{{"asm", "movl $1, %eax"}, {"cuda", "__global__ void k() {}"}, {"c", "int x;"}}
	if len(got) != len(want) {
		t.Fatalf("got %d fences %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fence %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
