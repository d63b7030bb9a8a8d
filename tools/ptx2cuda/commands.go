package ptx2cuda

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

// rollCommand is `kiln ptx roll F.ptx` (or --file F.ptx): Rolled-PTX on
// stdout.
func rollCommand() kit.Command {
	return kit.Command{Verb: "ptx roll", Summary: "print the Rolled-PTX of a PTX file (F.ptx or --file F.ptx)",
		Arg: "file", Text: true,
		Flags: func(fs *flag.FlagSet) func(context.Context, kit.Host, io.Writer, io.Writer) error {
			file := fs.String("file", "", "the PTX file (or give it as the argument)")
			return func(_ context.Context, _ kit.Host, stdout, _ io.Writer) error {
				if *file == "" {
					return kit.BadInput("want a PTX file: kiln ptx roll F.ptx (or --file F.ptx)")
				}
				b, err := readFlagFile("--file", *file)
				if err != nil {
					return err
				}
				_, err = io.WriteString(stdout, rollptx.Roll(string(b)))
				return err
			}
		}}
}

// unrollCommand is `kiln ptx unroll F.rptx` (or --file F.rptx): plain PTX
// on stdout.
func unrollCommand() kit.Command {
	return kit.Command{Verb: "ptx unroll", Summary: "expand a Rolled-PTX file back into PTX (F.rptx or --file F.rptx)",
		Arg: "file", Text: true,
		Flags: func(fs *flag.FlagSet) func(context.Context, kit.Host, io.Writer, io.Writer) error {
			file := fs.String("file", "", "the Rolled-PTX file (or give it as the argument)")
			return func(_ context.Context, _ kit.Host, stdout, _ io.Writer) error {
				if *file == "" {
					return kit.BadInput("want a Rolled-PTX file: kiln ptx unroll F.rptx (or --file F.rptx)")
				}
				b, err := readFlagFile("--file", *file)
				if err != nil {
					return err
				}
				out, err := rollptx.Unroll(string(b))
				if err != nil {
					return kit.BadInput("%s: %v", *file, err)
				}
				_, err = io.WriteString(stdout, out)
				return err
			}
		}}
}

// prepareCommand is `kiln ptx prepare --dir DIR`: the PTX of every item
// variant of a corpus folder, written beside its kernel.cu; or `kiln ptx
// prepare --from-campaign NAME -o DIR`: a corpus folder of program items
// made from a campaign's verified cuda-synth records (records.go), or of
// torch items from a torch2cuda campaign's (torchitem.go,
// torchverify.go).
func prepareCommand() kit.Command {
	return kit.Command{Verb: "ptx prepare", Summary: "compile a ptx2cuda corpus folder's kernels to <variant>.ptx (--dir DIR [--check]), " +
		"or make one of program tasks from a campaign's verified cuda-synth records, or of torch program tasks from a torch2cuda campaign's " +
		"(--from-campaign NAME -o DIR [--variants base,cicc_o1] [--check]; torch records need python3 with a CUDA build of torch, nvcc and a GPU: " +
		"their PTX is compiled with PyTorch's headers and every kernel is checked by the torch2cuda judge)",
		Flags: func(fs *flag.FlagSet) func(context.Context, kit.Host, io.Writer, io.Writer) error {
			dir := fs.String("dir", "", "the corpus folder: one folder per item with kernel.cu and meta.json")
			check := fs.Bool("check", false, "also build every task's reference harness (program items: the original program and the one with the kernel emptied; "+
				"torch items are always checked: the module with the kernel's own definition must pass the judge, the one with the kernel emptied must not)")
			from := fs.String("from-campaign", "", "make program items of this campaign's verified cuda-synth records, or torch items of its "+
				"verified torch2cuda records (name or id, in --data)")
			out := fs.String("o", "", "with --from-campaign: the corpus folder to write (made if missing; items of the same record and kernel are rewritten)")
			variants := fs.String("variants", "base", "with --from-campaign: the variants of each kernel, comma-separated: base, cicc_o0, cicc_o1, fastmath")
			return func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
				switch {
				case *from != "" && *dir != "":
					return kit.BadInput("--dir and --from-campaign exclude each other (write to a new folder with -o)")
				case *from != "" && *out == "":
					return kit.BadInput("--from-campaign needs -o DIR, the folder to write")
				case *from != "":
					return prepareFromCampaign(ctx, h, *from, *out, strings.Split(*variants, ","), *check, stdout, stderr)
				case *out != "":
					return kit.BadInput("-o goes with --from-campaign (--dir writes the PTX into the folder it names)")
				case *dir == "":
					return kit.BadInput("--dir or --from-campaign is required")
				}
				items, err := LoadCorpus(os.DirFS(*dir), ".", *dir, false)
				if err != nil {
					return kit.UsageError{Err: err}
				}
				tl, err := open(ctx, h, sandboxes.Limits{})
				if err != nil {
					return err
				}
				l := tl.(*Lane)
				for _, it := range items {
					ptx, err := l.PreparePTX(ctx, it)
					if err != nil {
						return err
					}
					for _, v := range it.Meta.Variants {
						p := filepath.Join(*dir, it.ID, v.Name+".ptx")
						old, _ := os.ReadFile(p)
						state := "unchanged"
						if !bytes.Equal(old, []byte(ptx[v.Name])) {
							if err := os.WriteFile(p, []byte(ptx[v.Name]), 0o644); err != nil {
								return err
							}
							state = "written"
						}
						fmt.Fprintf(stdout, "%s: %d lines, %s\n", p, strings.Count(ptx[v.Name], "\n"), state)
					}
					if *check {
						it.PTX = ptx
						if err := l.CheckReference(ctx, it); err != nil {
							return err
						}
						fmt.Fprintf(stderr, "%s: every variant's reference builds\n", it.ID)
					}
				}
				return nil
			}
		}}
}

// readFlagFile reads a file a flag names; errors are the user's.
func readFlagFile(flagName, path string) ([]byte, error) {
	if path == "" {
		return nil, kit.BadInput("%s is required", flagName)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, kit.BadInput("%s: %v", flagName, err)
	}
	return b, nil
}

// PreparePTX compiles every variant of it to PTX in the sandbox (nvcc -ptx
// -arch=compute_90 with the variant's flags; cached), by variant name,
// normalised (NormalizePTX).
// A kernel that does not compile is an error naming the item and variant.
// A program item's PTX is its kernel's alone (the program with every
// other kernel's definition made a declaration): one .entry, else a
// *SkipError (SkipPTX).
func (l *Lane) PreparePTX(ctx context.Context, it Item) (map[string]string, error) {
	out := map[string]string{}
	if it.Meta.Harness == HarnessTriton {
		// The PTX is what Triton made; there is no source to compile.
		if it.PTX[TritonVariant] == "" {
			return nil, fmt.Errorf("ptx2cuda prepare %s: a Triton item keeps the PTX it was harvested with (%s.ptx), and it is missing", it.ID, TritonVariant)
		}
		out[TritonVariant] = it.PTX[TritonVariant]
		return out, nil
	}
	src, err := it.ptxSource()
	if err != nil {
		return nil, fmt.Errorf("ptx2cuda prepare %s: %w", it.ID, err)
	}
	for _, v := range it.Meta.Variants {
		j := l.ptxJob(src, v.Flags)
		if it.isTorch() {
			if j, err = l.torchPTXJob(ctx, src, append(slices.Clone(it.Meta.Torch.flags()), v.Flags...)); err != nil {
				return nil, fmt.Errorf("ptx2cuda prepare %s: %w", TaskID(it.ID, v.Name), err)
			}
		}
		res, err := l.builds.Run(ctx, j)
		if err != nil {
			return nil, fmt.Errorf("ptx2cuda prepare %s: %w", TaskID(it.ID, v.Name), err)
		}
		ptx, ok := res.Entry.Files[FilePTX]
		if !res.OK() || !ok {
			return nil, fmt.Errorf("ptx2cuda prepare %s: %w: %s", TaskID(it.ID, v.Name), tools.ErrBadItem,
				res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines)))
		}
		if !strings.Contains(string(ptx), ".entry") {
			return nil, fmt.Errorf("ptx2cuda prepare %s: %w: the PTX has no .entry", TaskID(it.ID, v.Name), tools.ErrBadItem)
		}
		if it.isProgram() || it.isTorch() {
			if err := it.checkProgramPTX(string(ptx)); err != nil {
				return nil, fmt.Errorf("ptx2cuda prepare %s: %w", TaskID(it.ID, v.Name), err)
			}
		}
		out[v.Name] = NormalizePTX(string(ptx))
	}
	return out, nil
}

// internalRE finds the per-compile hash nvcc puts in the names of
// internal-linkage functions it does not inline (-Xcicc -O0, -O1:
// _ZN39_INTERNAL_786f47d6_9_kernel_cu_059b6fbd16__shfl_down_sync...).
var internalRE = regexp.MustCompile(`_INTERNAL_[0-9a-f]{8}_`)

// NormalizePTX makes nvcc's PTX reproducible: the hash in internal names,
// which differs from one compile of the same file to the next, becomes
// 00000000 (the same length, so the mangled names stay well formed).
func NormalizePTX(ptx string) string {
	return internalRE.ReplaceAllString(ptx, "_INTERNAL_00000000_")
}

// CheckReference builds every variant's reference harness (the compile a
// task's Verify makes of kernel.cu).
func (l *Lane) CheckReference(ctx context.Context, it Item) error {
	if it.isProgram() {
		return l.checkProgramReference(ctx, it)
	}
	for _, v := range it.Meta.Variants {
		h, err := it.Harness(v.Name)
		if err != nil {
			return fmt.Errorf("ptx2cuda check %s: %w: %w", it.ID, tools.ErrBadItem, err)
		}
		ref := it.Kernel
		if h.Reference == ReferencePTX {
			ref = it.PTX[v.Name]
		}
		res, err := l.builds.Run(ctx, l.referenceJob(h, ref))
		if err != nil {
			return fmt.Errorf("ptx2cuda check %s: %w", TaskID(it.ID, v.Name), err)
		}
		if !res.OK() {
			return fmt.Errorf("ptx2cuda check %s: %w: the reference does not build: %s", TaskID(it.ID, v.Name), tools.ErrBadItem,
				res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines)))
		}
	}
	return nil
}

// ItemFromDir builds the task of one variant of a corpus item folder
// (kernel.cu and meta.json, or a program item's program.cu and meta.json;
// no PTX needed): what `kiln verify ptx2cuda` verifies against. variant ""
// takes the first.
func ItemFromDir(dir, variant string) (tools.Item, error) {
	dir = filepath.Clean(dir)
	it, err := loadItem(os.DirFS(filepath.Dir(dir)), filepath.Base(dir), filepath.Base(dir), filepath.Dir(dir), false)
	if err != nil {
		return tools.Item{}, err
	}
	if variant == "" {
		variant = it.Meta.Variants[0].Name
	}
	if it.isTorch() {
		ts, err := it.TorchSpec(variant)
		if err != nil {
			return tools.Item{}, &CorpusError{Path: filepath.Join(dir, MetaFile), Err: err}
		}
		spec, err := json.MarshalIndent(ts, "", "  ")
		if err != nil {
			return tools.Item{}, err
		}
		return tools.Item{Lane: LaneName, Files: map[string]string{FileKernel: it.Kernel, FileTorchAnswer: it.TorchAnswer,
			FileTorchReference: it.TorchReference, FileTorchSpec: string(spec) + "\n"},
			Meta: map[string]string{"item": it.ID, "variant": variant, "kernel": ts.Kernel, "harness": HarnessTorch}}, nil
	}
	if it.isProgram() {
		ps, err := it.ProgramSpec(variant)
		if err != nil {
			return tools.Item{}, &CorpusError{Path: filepath.Join(dir, MetaFile), Err: err}
		}
		spec, err := json.MarshalIndent(ps, "", "  ")
		if err != nil {
			return tools.Item{}, err
		}
		return tools.Item{Lane: LaneName, Files: map[string]string{FileKernel: it.Kernel, FileProgram: it.Program, FileProgramSpec: string(spec) + "\n"},
			Meta: map[string]string{"item": it.ID, "variant": variant, "kernel": ps.Kernel, "harness": HarnessProgram}}, nil
	}
	h, err := it.Harness(variant)
	if err != nil {
		return tools.Item{}, &CorpusError{Path: filepath.Join(dir, MetaFile), Err: err}
	}
	spec, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return tools.Item{}, err
	}
	files := map[string]string{FileKernel: it.Kernel, FileHarness: string(spec) + "\n"}
	if h.Reference == ReferencePTX {
		files = map[string]string{FilePTX: it.PTX[variant], FileHarness: string(spec) + "\n"}
	}
	return tools.Item{Lane: LaneName, Files: files,
		Meta: map[string]string{"item": it.ID, "variant": variant, "kernel": h.Kernel}}, nil
}

// verifyFlags are kiln verify ptx2cuda's flags.
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	dir := fs.String("item", "", "the corpus item folder (kernel.cu and meta.json) (required)")
	variant := fs.String("variant", "", "the variant (default: the item's first)")
	answer := fs.String("answer", "", "the decompiled kernel (.cu, or a model reply with a fenced block) (required)")
	return func() (tools.Item, string, error) {
		if *dir == "" || *answer == "" {
			return tools.Item{}, "", kit.BadInput("--item and --answer are required")
		}
		item, err := ItemFromDir(*dir, *variant)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--item: %v", err)
		}
		b, err := readFlagFile("--answer", *answer)
		if err != nil {
			return tools.Item{}, "", err
		}
		return item, string(b), nil
	}
}
