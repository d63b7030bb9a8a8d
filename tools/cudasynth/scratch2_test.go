package cudasynth

import (
	"context"
	"fmt"
	"testing"

	"github.com/kiln-dev/kiln/sandboxes"
)

func TestScratchBox(t *testing.T) {
	box, err := testRunner.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	res, err := box.Run(context.Background(), sandboxes.Spec{Argv: []string{"sh", "-c", "echo '__global__ void k(){}' > k.cu; /usr/bin/nvcc --dryrun -c k.cu 2>&1 | head -5; ls -la /etc/nvcc.profile"}, Limits: DefaultBuildLimits()})
	fmt.Println(string(res.Stdout), string(res.Stderr), err)
}
