package sass2rdna

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
	"github.com/kiln-dev/kiln/tools/kit"
)

// The builtin sets: tasks.corpus "builtin" (the cuda-synth starter corpus)
// and "bench" (CASS-Bench-style programs, package tools/cassbench).
const (
	SetBuiltin = "builtin"
	SetBench   = "bench"
)

// preparedDir is where a user folder keeps its prepared SASS (a name the
// corpus loaders skip).
const preparedDir = "_sass2rdna"

//go:embed sass prompts corpus
var laneFS embed.FS

// Item is one program of a sass2rdna set.
type Item struct {
	ID          string
	Set         string // "builtin", "bench" or the folder
	Category    string
	Domain      string
	Description string
	// CUDA is program.cu; HIP is reference.hip, or the translation of
	// program.cu when the set has none.
	CUDA, HIP string
	// SASS is the prepared, normalised sm_90 SASS; Kernels the HIP kernel
	// names the answer must define. Empty until prepared.
	SASS    string
	Kernels []string
}

// meta is the part of a corpus item's meta.json the lane reads (other
// fields are ignored, so cuda-synth and CASS-Bench metadata both do).
type meta struct {
	Category        string `json:"category"`
	Domain          string `json:"domain"`
	Description     string `json:"description"`
	ExpectTranslate *bool  `json:"expect_translate"`
}

// LoadPrograms reads a program set in the cuda-synth corpus layout: one
// folder per item (names starting with "." or "_" are skipped) holding
// program.cu, and optionally meta.json (category, domain, description,
// expect_translate), reference.hip (the HIP program; else hipify's
// translation of program.cu) and expected_stdout.txt (not read). Items
// without reference.hip that hipify cannot translate, or whose meta says
// expect_translate false, are left out: their HIP reference cannot be
// built. Items come sorted by ID without SASS; errors name the file.
func LoadPrograms(fsys fs.FS, root, set string) ([]Item, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	var items []Item
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		dir := path.Join(root, e.Name())
		cu, err := fs.ReadFile(fsys, path.Join(dir, FileCUDA))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path.Join(dir, FileCUDA), err))
			continue
		}
		var m meta
		if b, err := fs.ReadFile(fsys, path.Join(dir, prompts.MetaFile)); err == nil {
			if err := json.Unmarshal(b, &m); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path.Join(dir, prompts.MetaFile), err))
				continue
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		it := Item{ID: e.Name(), Set: set, Category: m.Category, Domain: m.Domain, Description: m.Description, CUDA: string(cu)}
		if it.Category == "" {
			it.Category = "uncategorised"
		}
		if hip, err := fs.ReadFile(fsys, path.Join(dir, "reference.hip")); err == nil {
			it.HIP = string(hip)
		} else if m.ExpectTranslate != nil && !*m.ExpectTranslate {
			continue
		} else if it.HIP, err = translate(it.CUDA); err != nil {
			continue
		}
		items = append(items, it)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items, nil
}

// translate is hipify's translation, an error when it is incomplete.
func translate(cu string) (string, error) {
	tr, err := hipify.Translate(cu)
	if err != nil {
		return "", err
	}
	if !tr.OK() {
		return "", fmt.Errorf("hipify: %d untranslatable construct(s)", len(tr.Unsupported))
	}
	return tr.HIP, nil
}

// BuiltinItems returns the translatable programs of the cuda-synth starter
// corpus (expect_translate true), without SASS.
func BuiltinItems() ([]Item, error) {
	corpus, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		return nil, err
	}
	var items []Item
	for _, c := range corpus {
		if !c.ExpectTranslate {
			continue
		}
		hip, err := translate(c.Program)
		if err != nil {
			return nil, fmt.Errorf("cuda-synth corpus %s: %w", c.ID, err)
		}
		items = append(items, Item{ID: c.ID, Set: SetBuiltin, Category: c.Category, Domain: c.Domain,
			Description: c.Description, CUDA: c.Program, HIP: hip})
	}
	return items, nil
}

// SetItems returns the programs of tasks.corpus (builtin, bench or a
// folder) with their prepared SASS: the builtin sets' is embedded in the
// lane (sass/<set>/), a folder's lies in its _sass2rdna folder (`kiln
// sass2rdna prepare --dir DIR`). A program without prepared SASS is an error
// naming the file and the command that writes it.
func SetItems(corpus string) ([]Item, error) {
	var (
		items    []Item
		err      error
		prepared fs.FS
		where    string
		hint     = "regenerate with `go test ./tools/sass2rdna -run TestPreparedSASS -regenerate`"
	)
	switch corpus {
	case "", SetBuiltin:
		items, err = BuiltinItems()
		prepared, where = mustSub(laneFS, "sass/"+SetBuiltin), "tools/sass2rdna/sass/builtin"
	case SetBench:
		var (
			bfs  fs.FS
			root string
		)
		if bfs, root, err = Bench(); err == nil {
			items, err = LoadPrograms(bfs, root, SetBench)
		}
		prepared, where = mustSub(laneFS, "sass/"+SetBench), "tools/sass2rdna/sass/bench"
	default:
		items, err = LoadPrograms(os.DirFS(corpus), ".", corpus)
		prepared, where = os.DirFS(filepath.Join(corpus, preparedDir)), filepath.Join(corpus, preparedDir)
		hint = "run `kiln sass2rdna prepare --dir " + corpus + "`"
	}
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no program with a HIP translation", corpus)
	}
	var errs []error
	for i := range items {
		if err := readPrepared(prepared, &items[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w (%s)", where, items[i].ID, err, hint))
		}
	}
	return items, errors.Join(errs...)
}

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant of this package
	}
	return s
}

// readPrepared fills it's SASS (<id>.sass.gz or <id>.sass) and kernels
// (<id>.kernels).
func readPrepared(fsys fs.FS, it *Item) error {
	sass, err := readSASS(fsys, it.ID)
	if err != nil {
		return err
	}
	k, err := fs.ReadFile(fsys, it.ID+".kernels")
	if err != nil {
		return err
	}
	it.SASS, it.Kernels = sass, strings.Fields(string(k))
	if strings.TrimSpace(sass) == "" || len(it.Kernels) == 0 {
		return errors.New("empty SASS or kernel list")
	}
	return nil
}

func readSASS(fsys fs.FS, id string) (string, error) {
	b, err := fs.ReadFile(fsys, id+".sass.gz")
	if errors.Is(err, fs.ErrNotExist) {
		b, err = fs.ReadFile(fsys, id+".sass")
		return string(b), err
	}
	if err != nil {
		return "", err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("%s.sass.gz: %w", id, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, 64<<20))
	if err != nil {
		return "", fmt.Errorf("%s.sass.gz: %w", id, err)
	}
	return string(out), nil
}

// promptLibrary holds the lane's prompts (prompts/*.tmpl).
func promptLibrary() (*prompts.Library, error) {
	return prompts.NewLaneLibrary(LaneName, laneFS, "prompts")
}

// taskData is the data of the task prompt (prompts/task.tmpl).
type taskData struct {
	ID      string
	Kernels []string
	CUDA    string
	SASS    string
}

// taskPrompt renders an item's task prompt. It ends with "(task <id>)"
// so that a replay script can answer each task.
func taskPrompt(lib *prompts.Library, it Item) (string, error) {
	p, err := lib.Render(LaneName, "task", taskData{ID: it.ID, Kernels: it.Kernels, CUDA: strings.TrimSpace(it.CUDA), SASS: strings.TrimSpace(it.SASS)})
	if err != nil {
		return "", fmt.Errorf("task %s: %w", it.ID, err)
	}
	return p, nil
}

// task builds one task of round from an item.
func task(round int, key, prompt string, it Item, extra map[string]string) runs.Task {
	meta := map[string]string{"item": it.ID, "set": it.Set, MetaKernels: strings.Join(it.Kernels, " ")}
	if it.Domain != "" {
		meta["domain"] = it.Domain
	}
	for k, v := range extra {
		meta[k] = v
	}
	return runs.Task{Round: round, Key: key, Lane: LaneName, Categories: []string{it.Category}, Prompt: prompt, Meta: meta,
		Files: map[string]string{FileCUDA: it.CUDA, FileHIP: it.HIP}}
}

// source reads a campaign's tasks: the programs of tasks.corpus (builtin,
// bench or a folder), filtered by tasks.categories, tasks.limit of them
// (a seeded shuffle), samples_per_task tasks each. Refinement rounds
// resample the set with the categories re-weighted; a synthesised task is
// a CUDA program whose SASS the model asks the sass_sm90 tool for.
func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus (builtin, bench or a folder), not templates", LaneName)
	}
	items, err := SetItems(t.Corpus)
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if cats := t.Categories; len(cats) > 0 {
		items = slices.DeleteFunc(items, func(it Item) bool { return !slices.Contains(cats, it.Category) })
		if len(items) == 0 {
			return nil, fmt.Errorf("tasks.categories: no program of %s left", strings.Join(cats, ", "))
		}
	}
	lib, err := promptLibrary()
	if err != nil {
		return nil, err
	}
	spt := max(t.SamplesPerTask, 1)
	ts := &kit.TaskSet{}
	byID := map[string]Item{}
	promptOf := map[string]string{}
	pool := make([]prompts.CorpusItem, 0, len(items))
	for _, it := range items {
		p, err := taskPrompt(lib, it)
		if err != nil {
			return nil, err
		}
		byID[it.ID], promptOf[it.ID] = it, p
		pool = append(pool, prompts.CorpusItem{ID: it.ID, Categories: []string{it.Category}})
		if !slices.Contains(ts.Known, it.Category) {
			ts.Known = append(ts.Known, it.Category)
		}
		ts.Corpus = append(ts.Corpus, task(0, "corpus/"+it.ID, p, it, nil))
	}
	sort.Strings(ts.Known)
	round0 := items
	if n := t.Limit; n > 0 && n < len(items) {
		picked, err := prompts.Sample(pool, n, t.Seed, nil)
		if err != nil {
			return nil, fmt.Errorf("tasks.limit: %w", err)
		}
		round0 = nil
		for _, p := range picked {
			round0 = append(round0, byID[p.ID])
		}
	}
	for _, it := range round0 {
		for k := 0; k < spt; k++ {
			ts.Round0 = append(ts.Round0, task(0, fmt.Sprintf("r0/%s#%d", it.ID, k), promptOf[it.ID], it, nil))
		}
	}
	size := len(round0) * spt
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		seen := map[string]int{}
		var out []runs.Task
		for _, p := range prompts.Resample(pool, size, t.Seed+int64(round), weights) {
			it := byID[p.ID]
			k := seen[it.ID]
			seen[it.ID]++
			out = append(out, task(round, fmt.Sprintf("r%d/%s#%d", round, it.ID, k), promptOf[it.ID], it, map[string]string{"origin": "resample"}))
		}
		return out, nil
	}
	ts.FromCandidate = func(round int, c refinement.Candidate) ([]runs.Task, error) {
		cu := c.Files[FileCUDA]
		if strings.TrimSpace(cu) == "" {
			return nil, errors.New("no program.cu")
		}
		hip, err := translate(cu)
		if err != nil {
			return nil, err
		}
		it := Item{ID: fmt.Sprintf("synth-%s", c.Hash[:10]), Set: "synthesised", Category: c.Category, CUDA: cu, HIP: hip}
		p, err := taskPrompt(lib, it)
		if err != nil {
			return nil, err
		}
		var out []runs.Task
		for k := 0; k < spt; k++ {
			task := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k))
			task.Prompt = p
			task.Files[FileHIP] = hip
			task.Meta["item"], task.Meta["synth_category"] = it.ID, c.Category
			out = append(out, task)
		}
		return out, nil
	}
	return ts, nil
}
