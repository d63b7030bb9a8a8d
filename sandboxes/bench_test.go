package sandboxes

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkSandboxRun is one run of true(1) in a box, every layer on (as
// the host allows): the fixed cost of a sandboxed compile or run step.
func BenchmarkSandboxRun(b *testing.B) {
	box, err := testRunner.Open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer box.Close()
	for b.Loop() {
		res, err := box.Run(context.Background(), Spec{Argv: []string{"true"}})
		if err != nil || !res.OK() {
			b.Fatal(err, res.Describe())
		}
	}
}

// BenchmarkBareExec is the same program by a bare fork+exec, the baseline.
func BenchmarkBareExec(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := exec.Command(path).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenRunClose adds a box's life (scratch tmpfs mount and
// unmount) to one run: the cost of a one-step verification.
func BenchmarkOpenRunClose(b *testing.B) {
	for b.Loop() {
		box, err := testRunner.Open(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		res, err := box.Run(context.Background(), Spec{Argv: []string{"true"}})
		if err != nil || !res.OK() {
			b.Fatal(err, res.Describe())
		}
		if err := box.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
