package sass2rdna

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
)

// SASS compiles a CUDA program for sm_90 and returns the SASS a task shows:
// nvcc -cubin -gencode arch=compute_90,code=sm_90, cuobjdump -sass, the
// sm_90 device module only, normalised as CASS did (NormalizeAsm). Both
// run in the sandbox, cached. A program nvcc rejects is an error wrapping
// tools.ErrBadItem; a missing tool wraps toolchain.ErrUnavailable.
func (l *Lane) SASS(ctx context.Context, cuda string) (string, error) {
	for _, t := range []string{toolchain.NVCC, toolchain.CUObjdump} {
		if err := l.cfg.Toolchains.Require(t); err != nil {
			return "", fmt.Errorf("sass: %w", err)
		}
	}
	res, err := l.jobs.Run(ctx, buildjob.Job{Name: "cubin-sm90", Steps: []buildjob.Step{{Tool: toolchain.NVCC,
		Args: []string{"-cubin", "-gencode", "arch=compute_90,code=sm_90", "-o", "program.cubin", FileCUDA}}},
		Inputs: map[string][]byte{FileCUDA: []byte(cuda)}, Outputs: []string{"program.cubin"}})
	if err != nil {
		return "", fmt.Errorf("sass: %w", err)
	}
	if !res.OK() {
		return "", fmt.Errorf("%w: sass: nvcc: %s", tools.ErrBadItem, diagnostic(res, l.cfg.DiagnosticLines))
	}
	res, err = l.jobs.Run(ctx, buildjob.Job{Name: "sass-sm90", Steps: []buildjob.Step{{Tool: toolchain.CUObjdump, Args: []string{"-sass", "program.cubin"}}},
		Inputs: map[string][]byte{"program.cubin": res.Entry.Files["program.cubin"]}})
	if err != nil {
		return "", fmt.Errorf("sass: %w", err)
	}
	if !res.OK() {
		return "", fmt.Errorf("sass: cuobjdump: %s", diagnostic(res, l.cfg.DiagnosticLines))
	}
	text, ok := cudasynth.SplitSASS(string(res.Entry.Stdout))[toolchain.TargetSM90]
	if !ok {
		return "", fmt.Errorf("%w: sass: cuobjdump printed no sm_90 function (no kernel?)", tools.ErrBadItem)
	}
	return cudasynth.NormalizeAsm(cudasynth.DialectSASS, text), nil
}

// Prepare fills an item's SASS (Lane.SASS of its CUDA program) and its
// kernels (those of hipcc's gfx1100 build of its HIP program).
func (l *Lane) Prepare(ctx context.Context, it *Item) error {
	sass, err := l.SASS(ctx, it.CUDA)
	if err != nil {
		return fmt.Errorf("%s: %w", it.ID, err)
	}
	ref, err := l.Reference(ctx, tools.Item{Lane: LaneName, Files: map[string]string{FileCUDA: it.CUDA, FileHIP: it.HIP}})
	if err != nil {
		return fmt.Errorf("%s: %w", it.ID, err)
	}
	it.SASS, it.Kernels = sass, ref.Kernels
	return nil
}

// PrepareAll prepares items (in parallel, bounded by the lane) and writes
// each one's files into dir (WritePrepared). progress, when set, gets a
// line per item.
func (l *Lane) PrepareAll(ctx context.Context, items []Item, dir string, progress io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(l.cfg.Parallel, 1))
	for i := range items {
		it := &items[i]
		g.Go(func() error {
			if err := l.Prepare(gctx, it); err != nil {
				return err
			}
			if err := WritePrepared(dir, *it); err != nil {
				return err
			}
			if progress != nil {
				mu.Lock()
				fmt.Fprintf(progress, "%s: %d kernel(s), %d bytes of SASS\n", it.ID, len(it.Kernels), len(it.SASS))
				mu.Unlock()
			}
			return nil
		})
	}
	return g.Wait()
}

// gzipText compresses text deterministically (no name, no time).
func gzipText(text string) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write([]byte(text)); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WritePrepared writes an item's <id>.sass.gz and <id>.kernels into dir
// (temp file and rename each).
func WritePrepared(dir string, it Item) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	z, err := gzipText(it.SASS)
	if err != nil {
		return fmt.Errorf("%s: %w", it.ID, err)
	}
	for name, b := range map[string][]byte{it.ID + ".sass.gz": z, it.ID + ".kernels": []byte(strings.Join(it.Kernels, "\n") + "\n")} {
		if err := writeFileAtomic(filepath.Join(dir, name), b); err != nil {
			return fmt.Errorf("%s: %w", it.ID, err)
		}
	}
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// prepareCommand is `kiln sass2rdna prepare --dir DIR`: it writes the
// SASS and kernel lists a folder of programs needs as a task source. (Lane
// commands take flags only: kiln refuses positional arguments to them.)
func prepareCommand() kit.Command {
	return kit.Command{
		Verb:    "sass2rdna prepare",
		Summary: "compile a folder of CUDA programs (cuda-synth corpus layout) to the sm_90 SASS and kernel lists its sass2rdna tasks show",
		Flags: func(fs *flag.FlagSet) func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
			dirFlag := fs.String("dir", "", "the folder of programs, DIR/<id>/program.cu (required)")
			out := fs.String("out", "", "where to write <id>.sass.gz and <id>.kernels (default DIR/"+preparedDir+", where tasks.corpus: DIR reads them)")
			return func(ctx context.Context, h kit.Host, stdout, stderr io.Writer) error {
				dir := *dirFlag
				if dir == "" {
					return kit.BadInput("--dir is required: the folder of programs (DIR/<id>/program.cu)")
				}
				items, err := LoadPrograms(os.DirFS(dir), ".", dir)
				if err != nil {
					return kit.BadInput("--dir: %v", err)
				}
				if len(items) == 0 {
					return kit.BadInput("--dir %s: no program with a HIP translation (program.cu that hipify translates, or reference.hip)", dir)
				}
				dst := *out
				if dst == "" {
					dst = filepath.Join(dir, preparedDir)
				}
				l, err := openLane(ctx, h)
				if err != nil {
					return err
				}
				if err := l.PrepareAll(ctx, items, dst, stderr); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "prepared %d program(s) in %s\n", len(items), dst)
				return nil
			}
		},
	}
}
