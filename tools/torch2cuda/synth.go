package torch2cuda

// The lane's resynthesis format: a refinement round asks the synthesiser
// for new KernelBench-format problems of the families a model fails, each
// to a brief of persona variables drawn from synth/pools.json (operators,
// fusion depth, shapes, dtype, layout, reduction, edge sizes), seeded by
// the request so that no two prompts are the same. A reply's TASK block is
// one problem file; its static checks are here (parseSynthBlock), its
// checks in the sandbox in synthcheck.go.

import (
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

//go:embed synth
var synthFS embed.FS

// Brief keys: the persona variables of one synthesised problem (pools.json).
var briefKeys = []string{"operators", "fusion_depth", "shapes", "dtypes", "layouts", "reductions", "edge_sizes"}

// synthPools are synth/pools.json: operators per family, and the pools of
// the other brief variables.
type synthPools struct {
	Operators map[string][]string `json:"operators"`
	Pools     map[string][]string `json:"-"`
}

func loadPools() (synthPools, error) {
	raw, err := fs.ReadFile(synthFS, "synth/pools.json")
	if err != nil {
		return synthPools{}, fmt.Errorf("torch2cuda synth: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return synthPools{}, fmt.Errorf("torch2cuda synth: pools.json: %w", err)
	}
	p := synthPools{Pools: map[string][]string{}}
	if err := json.Unmarshal(all["operators"], &p.Operators); err != nil {
		return synthPools{}, fmt.Errorf("torch2cuda synth: pools.json operators: %w", err)
	}
	for _, f := range Families {
		if len(p.Operators[f]) == 0 {
			return synthPools{}, fmt.Errorf("torch2cuda synth: pools.json: no operators of family %s", f)
		}
	}
	for _, k := range briefKeys[1:] {
		var pool []string
		if err := json.Unmarshal(all[k], &pool); err != nil || len(pool) == 0 {
			return synthPools{}, fmt.Errorf("torch2cuda synth: pools.json: pool %s missing or empty", k)
		}
		p.Pools[k] = pool
	}
	return p, nil
}

// synthFormat is the lane's refinement.SynthFormat.
func synthFormat() (*refinement.SynthFormat, error) {
	tmpl, cats, err := refinement.SynthTemplates(synthFS, "synth")
	if err != nil {
		return nil, err
	}
	pools, err := loadPools()
	if err != nil {
		return nil, err
	}
	return &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock, Vary: pools.briefs,
		ExampleFile: func(n string) bool { return n == ReferenceFile }, FilesOnly: true}, nil
}

// requestSeed is the seed of a request's briefs: a hash of everything the
// request says (category, examples, names to avoid, K). A later round
// shows other failing tasks (their keys name the round) and avoids the
// problems made since, so its prompt differs.
func requestSeed(req refinement.SynthRequest) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00", req.Lane, req.Category, req.K)
	for _, e := range req.Examples {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", e.TaskKey, e.Label, e.Answer)
	}
	for _, a := range req.Avoid {
		fmt.Fprintf(h, "%s\x00", a)
	}
	return h.Sum64()
}

// briefs draws req.K distinct briefs, seeded by the request: the
// operators of the category's family (a level draws over its families, a
// feature over the operators that show it: featureOps),
// the fusion depth the family allows, and one value of every other pool.
func (p synthPools) briefs(req refinement.SynthRequest) []map[string]string {
	seed := requestSeed(req)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fams := briefFamilies(req.Category)
	fops, ffams := p.featureOps(req.Category)
	seen := map[string]bool{}
	var out []map[string]string
	for tries := 0; len(out) < req.K && tries < 50*req.K; tries++ {
		fam := fams[r.IntN(len(fams))]
		op := ""
		if len(fops) > 0 {
			k := r.IntN(len(fops))
			fam, op = ffams[k], fops[k]
		} else {
			op = pick(r, p.Operators[fam])
		}
		b := map[string]string{"family": fam, "operators": op}
		depths := p.Pools["fusion_depth"]
		switch fam {
		case "fusion":
			b["fusion_depth"] = depths[1+r.IntN(len(depths)-1)]
		case "network":
			b["fusion_depth"] = depths[len(depths)-1]
		default:
			b["fusion_depth"] = depths[0]
		}
		for _, k := range briefKeys[2:] {
			b[k] = pick(r, p.Pools[k])
		}
		key := strings.Join([]string{b["operators"], b["fusion_depth"], b["shapes"], b["dtypes"], b["layouts"], b["reductions"], b["edge_sizes"]}, "|")
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, b)
	}
	return out
}

func pick(r *rand.Rand, pool []string) string { return pool[r.IntN(len(pool))] }

// briefFamilies are the families a category's briefs draw from: the
// family itself, or a level's families (level1: single operators).
func briefFamilies(category string) []string {
	switch category {
	case "level2":
		return []string{"fusion"}
	case "level3":
		return []string{"network"}
	}
	if isFamily(category) {
		return []string{category}
	}
	var single []string
	for _, f := range Families {
		if f != "fusion" && f != "network" {
			single = append(single, f)
		}
	}
	return single
}

var (
	snakeRE      = regexp.MustCompile(`^[a-z][a-z0-9_]{1,63}$`)
	loadInlineRE = regexp.MustCompile(`\bload_inline\b|\bcpp_extension\b`)
	topDefRE     = map[string]*regexp.Regexp{
		"class Model":         regexp.MustCompile(`(?m)^class\s+Model\s*\(`),
		"def get_inputs":      regexp.MustCompile(`(?m)^def\s+get_inputs\s*\(`),
		"def get_init_inputs": regexp.MustCompile(`(?m)^def\s+get_init_inputs\s*\(`),
	}
)

// parseSynthBlock reads one synthesised problem: a python code block that
// defines class Model, get_inputs and get_init_inputs at the top level,
// and no ModelNew or extension build (that is an answer, not a problem).
// Its family is its "# family:" line, else the targeted category's when
// that is a family; the line is added when missing. Static checks only:
// the syntax tree and the runs are the validator's (synthcheck.go).
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	var code *refinement.Fenced
	for i := range b.Code {
		f := &b.Code[i]
		if f.Info == "" || strings.HasPrefix(f.Info, "python") || strings.HasPrefix(f.Info, "py") {
			code = f
			break
		}
	}
	if code == nil {
		return "no python code block"
	}
	src := strings.TrimSpace(code.Body) + "\n"
	if len(src) > refinement.MaxSynthFileBytes {
		return fmt.Sprintf("the problem is over %d bytes", refinement.MaxSynthFileBytes)
	}
	for what, re := range topDefRE {
		if !re.MatchString(src) {
			return fmt.Sprintf("no top-level %q (a KernelBench problem defines class Model, get_inputs and get_init_inputs)", what)
		}
	}
	if modelNewRE.MatchString(src) || loadInlineRE.MatchString(src) {
		return "the block defines ModelNew or builds an extension: that is an answer, not a problem"
	}
	fam := ""
	if m := familyRE.FindStringSubmatch(src); m != nil {
		if fam = m[1]; !isFamily(fam) {
			return fmt.Sprintf("family %q (known: %s)", fam, strings.Join(Families, ", "))
		}
	} else if isFamily(c.Category) {
		fam = c.Category
		src = "# family: " + fam + "\n" + src
	} else {
		return "no \"# family: <family>\" line"
	}
	name := strings.Trim(b.Fields["function"], "`'\" ")
	if name == "" {
		name = fam
	}
	if !snakeRE.MatchString(name) {
		return fmt.Sprintf("function %q is not a snake_case problem name", name)
	}
	c.Function = name
	c.Files = map[string]string{ReferenceFile: src}
	return ""
}

// synthProblem is the problem of an accepted candidate: its id names the
// problem and its source hash, its level follows its family (fusion:
// level2, network: level3, else level1) so that reports group it with the
// corpus.
func synthProblem(c refinement.Candidate) (Problem, error) {
	src := c.Files[ReferenceFile]
	m := familyRE.FindStringSubmatch(src)
	if m == nil || !isFamily(m[1]) {
		return Problem{}, fmt.Errorf("torch2cuda: synthesised problem %d: no family line", c.Index)
	}
	level := "level1"
	switch m[1] {
	case "fusion":
		level = "level2"
	case "network":
		level = "level3"
	}
	h := c.Hash
	if len(h) > 10 {
		h = h[:10]
	}
	p := Problem{ID: "synth/" + c.Function + "_" + h, Level: level, Family: m[1], Source: src, Description: c.Description}
	return p, nil
}

// fromCandidate turns an accepted candidate into round's tasks, spt of
// them.
func fromCandidate(spt int) func(round int, c refinement.Candidate) ([]runs.Task, error) {
	return func(round int, c refinement.Candidate) ([]runs.Task, error) {
		p, err := synthProblem(c)
		if err != nil {
			return nil, err
		}
		var out []runs.Task
		for k := 0; k < max(spt, 1); k++ {
			t := c.Task(round, fmt.Sprintf("r%d/%s#%d", round, p.ID, k), p.Family, p.Level)
			t.Prompt = taskPrompt(p)
			t.Meta["problem"], t.Meta["level"], t.Meta["family"] = p.ID, p.Level, p.Family
			out = append(out, t)
		}
		return out, nil
	}
}

// benchmarkTasks reads the Python problems of benchmark folders (a
// KernelBench checkout or its KernelBench/ folder, or any folder of .py
// files defining class Model) as tasks keyed "benchmark/<folder>/<path>",
// so that refinement drops synthesised problems that duplicate one
// (exactly or nearly: Identity.Near). They have no category and are never
// drawn.
func benchmarkTasks(dirs []string) ([]runs.Task, error) {
	var out []runs.Task
	for _, dir := range dirs {
		n := 0
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if p != dir && strings.HasPrefix(e.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".py") || !e.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil || len(b) > maxProblemBytes || !topDefRE["class Model"].Match(b) {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out = append(out, runs.Task{Key: "benchmark/" + path.Join(filepath.Base(dir), filepath.ToSlash(rel)), Lane: LaneName,
				Files: map[string]string{ReferenceFile: string(b)}, Meta: map[string]string{"origin": "benchmark"}})
			n++
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("curation.benchmarks: %s: %w", dir, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("curation.benchmarks: %s: no .py file with a class Model", dir)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// pyKeep are the Python words problemTokens keeps as they are.
var pyKeep = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("False None True and as assert break class continue def del elif else for from " +
		"if import in is lambda not or pass return while with yield self super range len min max sum abs int float " +
		"torch nn F math") {
		m[w] = true
	}
	return m
}()

// problemTokens turns a problem's source into tokens for near-duplicate
// detection: comments, strings (docstrings) and layout go; attribute
// names (torch.relu, nn.Conv2d, x.sum), keywords and the torch module
// names stay, other identifiers become "ID"; numbers and punctuation
// stay. Two problems that differ in the operators they call differ; a
// renamed copy does not.
func problemTokens(_ string, src string) []string {
	var out []string
	attr := false
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = skipPyString(src, i)
			attr = false
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			w := src[i:j]
			if !attr && !pyKeep[w] {
				w = "ID"
			}
			out = append(out, w)
			i, attr = j, false
		case c >= '0' && c <= '9':
			j := i + 1
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_' || src[j] == 'e' || src[j] == 'x') {
				j++
			}
			out = append(out, src[i:j])
			i = j
		default:
			out = append(out, src[i:i+1])
			attr = c == '.'
			i++
		}
	}
	return out
}

// skipPyString returns the index after the string literal at i (single,
// double or triple quoted).
func skipPyString(s string, i int) int {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], q+q+q) {
		if end := strings.Index(s[i+3:], q+q+q); end >= 0 {
			return i + 3 + end + 3
		}
		return len(s)
	}
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case q[0], '\n':
			return j + 1
		}
	}
	return len(s)
}
