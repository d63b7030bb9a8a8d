//go:build long

package ptx2cuda

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// TestTorchPTX: a torch item's PTX is made with the flags this host's
// torch gives a CUDA extension (asked in the sandbox) and holds the one
// kernel. Debian's CPU build of torch has no CUDA headers, so the module
// here is gelu's with its torch CUDA parts (stream, guard) left out. Long
// tier: one compile with PyTorch's headers takes a minute of CPU (on a
// loaded 2-core host it can outlast the sandbox's limit); TestTorchTaskPending
// and cmd/kiln's TestTorchRecordsIntoPTX run torch tasks in the default tier.
func TestTorchPTX(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testing.Short() {
		t.Skip("-short: a compile with PyTorch's headers takes a minute")
	}
	l := lane(t)
	if _, ok := testRegistry.Get(toolchain.Torch); !ok {
		t.Skip("no python3 with torch here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tb, err := l.torchBuildFlags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	flags := strings.Join(tb.flags, " ")
	if !strings.Contains(flags, "-isystem ") || !strings.Contains(flags, "torch/include") || !strings.Contains(flags, "-D__CUDA_NO_HALF_OPERATORS__") {
		t.Fatalf("flags %q", flags)
	}
	set := torchRecords(t, nil, "level1/026_gelu")
	a := set.Records[0].Answer
	for _, cut := range []string{"#include <ATen/cuda/CUDAContext.h>\n", "#include <c10/cuda/CUDAGuard.h>\n",
		"const at::cuda::OptionalCUDAGuard guard(device_of(x));", ", at::cuda::getCurrentCUDAStream()", "C10_CUDA_KERNEL_LAUNCH_CHECK();"} {
		if !strings.Contains(a, cut) {
			t.Fatalf("the gelu answer has no %q", cut)
		}
		a = strings.Replace(a, cut, "", 1)
	}
	if _, err := os.Stat(filepath.Join(strings.Fields(flags[strings.Index(flags, "-isystem"):])[1], "torch", "extension.h")); err != nil {
		t.Skipf("no torch headers: %v", err)
	}
	set.Records[0].Answer = a
	items, _, err := TorchItems(set, []string{"base"})
	if err != nil || len(items) != 1 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	ptx, err := l.PreparePTX(ctx, items[0].Item)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ptx["base"], ".visible .entry _Z11gelu_kernelPKfPfxff(") || strings.Count(ptx["base"], ".entry") != 1 {
		t.Errorf("PTX:\n%.2000s", ptx["base"])
	}
}
