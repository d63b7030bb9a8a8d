package sass2rdna

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Kit is the sass2rdna lane kit (CASS's assembly translation): the sm_90
// SASS of a CUDA program's kernels in, gfx1100 RDNA3 assembly out,
// assembled, linked and checked on a CPU host, run on an AMD host.
func Kit() kit.Kit {
	return kit.Kit{
		Name:            LaneName,
		Summary:         "SASS (sm_90) -> RDNA3 (gfx1100) assembly: llvm-mc, code object and descriptor checks; AMD run pending",
		Toolchains:      []string{toolchain.LLVMMC, toolchain.HIPCC},
		ProbeToolchains: true,
		Capability:      kit.CapabilityAMD,
		Open:            open,
		Source:          source,
		System: func(_ kit.Tasks, toolNames []string) (string, error) {
			lib, err := promptLibrary()
			if err != nil {
				return "", err
			}
			return lib.Render(LaneName, prompts.PromptSystem, prompts.SystemData{Tools: toolNames})
		},
		Repair: func(v tools.Verdict) (string, error) {
			lib, err := promptLibrary()
			if err != nil {
				return "", err
			}
			return lib.Render(LaneName, prompts.PromptRepair, prompts.RepairData{Diagnostic: v.Diagnostic, Class: string(v.Class)})
		},
		Rules:     RefinementRules,
		Validator: validator,
		Domain: func(kit.Tasks) (func(runs.Task, string) string, error) {
			return func(t runs.Task, _ string) string { return t.Meta["domain"] }, nil
		},
		Normalise: curate.NormaliseAsm,
		Bench:     Bench,
		Verify: &kit.VerifyCommand{
			Usage: "--candidate C.s (--cuda P.cu | --hip P.hip) [--kernels K1,K2] [--json]",
			Flags: verifyFlags,
		},
		Commands: []kit.Command{prepareCommand()},
		Example:  example,
	}
}

// open builds the lane with the host's sandbox and toolchains, and a
// compile cache in the data folder (shared with cuda-synth's).
func open(ctx context.Context, h kit.Host, _ sandboxes.Limits) (tools.Lane, error) {
	return openLane(ctx, h)
}

func openLane(ctx context.Context, h kit.Host) (*Lane, error) {
	reg, err := h.Toolchains(ctx, true)
	if err != nil {
		return nil, err
	}
	r, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	return New(Config{Sandbox: r, Toolchains: reg, CacheDir: filepath.Join(h.DataDir, "compile-cache"), Logger: h.Log})
}

// verifyFlags are kiln verify sass2rdna's flags.
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	cand := fs.String("candidate", "", "the RDNA3 assembly (a .s file, or a model reply with a fenced block) (required)")
	cu := fs.String("cuda", "", "the CUDA program the SASS came from (translated to HIP unless --hip is given)")
	hip := fs.String("hip", "", "the HIP program: hipcc's build of it is the reference, and its host code runs the answer")
	kernels := fs.String("kernels", "", "the kernels the answer must define, comma-separated (default: the reference's)")
	return func() (tools.Item, string, error) {
		if *cand == "" {
			return tools.Item{}, "", kit.BadInput("--candidate is required")
		}
		if *cu == "" && *hip == "" {
			return tools.Item{}, "", kit.BadInput("--cuda or --hip is required")
		}
		item := tools.Item{Lane: LaneName, Files: map[string]string{}, Meta: map[string]string{}}
		for flagName, f := range map[string]struct{ path, file string }{"--cuda": {*cu, FileCUDA}, "--hip": {*hip, FileHIP}} {
			if f.path == "" {
				continue
			}
			b, err := os.ReadFile(f.path)
			if err != nil {
				return tools.Item{}, "", kit.BadInput("%s: %v", flagName, err)
			}
			item.Files[f.file] = string(b)
		}
		if *kernels != "" {
			item.Meta[MetaKernels] = strings.Join(strings.FieldsFunc(*kernels, func(r rune) bool { return r == ',' || r == ' ' }), " ")
		}
		raw, err := os.ReadFile(*cand)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--candidate: %v", err)
		}
		return item, string(raw), nil
	}
}
