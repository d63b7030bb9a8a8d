package torch2cuda

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
)

// problemsFS holds the starter corpus: problems/level{1,2,3}/NNN_name.py,
// KernelBench's format, written for this project.
//
//go:embed problems
var problemsFS embed.FS

// Families are the op families a problem is labelled with.
var Families = []string{"matmul", "conv", "norm", "reduction", "activation", "pooling", "loss", "elementwise", "fusion", "network"}

// Problem is one KernelBench-format problem: a Python file defining
// class Model(nn.Module), get_inputs() and get_init_inputs().
type Problem struct {
	// ID is the file's path under the corpus root without ".py"
	// ("level1/001_square_matmul").
	ID string
	// Level is "level1", "level2", "level3" (KernelBench's folders), or
	// "custom" for a file outside a level folder.
	Level string
	// Family is the op family: the file's "# family: X" line, else
	// inferred from the file name and level.
	Family      string
	Description string
	Source      string
}

var (
	familyRE = regexp.MustCompile(`(?m)^#\s*family:\s*([a-z_]+)\s*$`)
	docRE    = regexp.MustCompile(`(?s)^\s*(?:#[^\n]*\n\s*)*(?:"""|''')(.*?)(?:"""|''')`)
	levelRE  = regexp.MustCompile(`^level(\d+)$`)
)

// maxProblemBytes bounds one problem file.
const maxProblemBytes = 256 << 10

// LoadProblems reads a corpus of problems from fsys under root: every .py
// file in root/levelN/ folders (a KernelBench checkout's KernelBench/
// folder, or the starter corpus), or directly in root (level "custom").
// Files must define Model, get_inputs and get_init_inputs; errors name the
// file. Problems come sorted by ID.
func LoadProblems(fsys fs.FS, root string) ([]Problem, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &prompts.CorpusError{Path: root, Err: err}
	}
	var out []Problem
	var errs []error
	add := func(dir, level string) {
		files, err := fs.ReadDir(fsys, dir)
		if err != nil {
			errs = append(errs, &prompts.CorpusError{Path: dir, Err: err})
			return
		}
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".py") || strings.HasPrefix(f.Name(), "_") || strings.HasPrefix(f.Name(), ".") {
				continue
			}
			p, err := loadProblem(fsys, path.Join(dir, f.Name()), level)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, p)
		}
	}
	add(root, "custom")
	for _, e := range entries {
		if e.IsDir() && levelRE.MatchString(e.Name()) {
			add(path.Join(root, e.Name()), e.Name())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &prompts.CorpusError{Path: root, Err: fmt.Errorf("%w: no level*/ folder or .py file with a Model", prompts.ErrEmptyCorpus)}
	}
	for i := range out {
		rel := strings.TrimPrefix(strings.TrimPrefix(out[i].ID, root), "/")
		out[i].ID = rel
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func loadProblem(fsys fs.FS, file, level string) (Problem, error) {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return Problem{}, &prompts.CorpusError{Path: file, Err: err}
	}
	if len(b) > maxProblemBytes {
		return Problem{}, &prompts.CorpusError{Path: file, Err: fmt.Errorf("%d bytes (at most %d)", len(b), maxProblemBytes)}
	}
	src := string(b)
	for _, want := range []string{"class Model", "def get_inputs", "def get_init_inputs"} {
		if !strings.Contains(src, want) {
			return Problem{}, &prompts.CorpusError{Path: file, Err: fmt.Errorf("%w: no %q (a KernelBench problem defines class Model, get_inputs and get_init_inputs)", prompts.ErrBadMeta, want)}
		}
	}
	p := Problem{ID: strings.TrimSuffix(file, ".py"), Level: level, Source: src}
	if m := familyRE.FindStringSubmatch(src); m != nil {
		p.Family = m[1]
		if !isFamily(p.Family) {
			return Problem{}, &prompts.CorpusError{Path: file, Err: fmt.Errorf("%w: family %q (known: %s)", prompts.ErrUnknownCategory, p.Family, strings.Join(Families, ", "))}
		}
	} else {
		p.Family = InferFamily(path.Base(file), level)
	}
	if m := docRE.FindStringSubmatch(src); m != nil {
		p.Description = strings.Join(strings.Fields(m[1]), " ")
	}
	return p, nil
}

func isFamily(f string) bool {
	for _, x := range Families {
		if x == f {
			return true
		}
	}
	return false
}

// familyWords map words of a lower-case file name to a family, in order:
// the first match wins (a conv_transpose is conv, a batch_norm is norm).
// Short words must stand between separators (_ . digits or the ends).
var familyWords = []struct{ family, re string }{
	{"loss", `loss|entropy|mse|hinge|kl_?div|huber|smooth_?l1|margin`},
	{"norm", `norm`},
	{"conv", `conv`},
	{"pooling", `pool`},
	{"matmul", `matmul|gemm|bmm|matvec|matrix|linear|einsum|(?:^|[_\d.])(?:mm|dot|mv)(?:$|[_\d.])`},
	{"activation", `relu|gelu|sigmoid|tanh|softmax|softplus|softsign|selu|swish|mish|hardtanh|hardsigmoid|silu|(?:^|[_\d.])elu(?:$|[_\d.])`},
	{"reduction", `sum|mean|argmax|argmin|cumprod|reduc|logsumexp|(?:^|[_\d.])(?:max|min|prod|std|var)(?:$|[_\d.])`},
}

var familyREs = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(familyWords))
	for i, w := range familyWords {
		out[i] = regexp.MustCompile(w.re)
	}
	return out
}()

// InferFamily labels a problem without a "# family:" line: level 2 is
// fusion and level 3 network (KernelBench's levels), else the first
// family whose words appear in the file name, else elementwise.
func InferFamily(file, level string) string {
	switch level {
	case "level2":
		return "fusion"
	case "level3":
		return "network"
	}
	name := strings.ToLower(strings.TrimSuffix(file, ".py"))
	for i, re := range familyREs {
		if re.MatchString(name) {
			return familyWords[i].family
		}
	}
	return "elementwise"
}

// LoadBuiltinProblems reads the embedded starter corpus.
func LoadBuiltinProblems() ([]Problem, error) { return LoadProblems(problemsFS, "problems") }
