package persona

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// DefaultWeightKey is the key of [Options.Weights] that sets the weight of
// the categories the map does not list (1 when absent too).
const DefaultWeightKey = "*"

// ErrExhausted is returned (wrapped in [*ExhaustedError]) by
// [Library.Sample] when fewer distinct prompts than requested exist.
var ErrExhausted = errors.New("prompt space exhausted")

// ErrBadOptions is wrapped by errors about [Options].
var ErrBadOptions = errors.New("bad sample options")

// ExhaustedError says how many distinct prompts were left for a request.
type ExhaustedError struct {
	Requested int
	Available int // distinct, non-excluded prompts of the eligible templates
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("persona: sample: %v: %d prompts requested, %d available", ErrExhausted, e.Requested, e.Available)
}
func (e *ExhaustedError) Unwrap() error { return ErrExhausted }

// Task is one instantiated persona template.
type Task struct {
	Key        string            // hex SHA-256 of Prompt: the identity of the prompt
	Category   string            // the template's category
	TemplateID string            // "<category>/<name>"
	Bindings   map[string]string // placeholder -> value
	Prompt     string            // the rendered template
}

// PromptKey returns the key of a prompt text, as in [Task.Key].
func PromptKey(prompt string) string {
	sum := sha256.Sum256([]byte(prompt))
	return hex.EncodeToString(sum[:])
}

// Options shape [Library.Sample]. The zero value samples every category
// with equal weight.
type Options struct {
	// Categories, when not empty, restricts sampling to these categories.
	Categories []string
	// Templates, when not empty, restricts sampling to these template IDs
	// (combined with Categories when both are set).
	Templates []string
	// Weights are relative category weights. A category not in the map
	// gets Weights[DefaultWeightKey], or 1 when that is absent too; weight
	// 0 leaves a category out. Weights must be finite and >= 0.
	Weights map[string]float64
	// Exclude, when set, reports whether a prompt key ([Task.Key]) was
	// already used, for example by an earlier round of the campaign; such
	// prompts are skipped as if they did not exist.
	Exclude func(key string) bool
	// AllowFewer makes Sample return all the distinct prompts left, without
	// an error, when fewer than n exist; otherwise it fails with an
	// [*ExhaustedError].
	AllowFewer bool
}

// Sample instantiates n distinct persona tasks, reproducibly: the same
// library, n, seed and options give the same list.
//
// Balance: n is split over the eligible categories in proportion to their
// weights (largest remainder, ties broken by the seed), and each
// category's share equally over its templates in the same way. Each
// template draws its bindings uniformly without replacement from its
// combinations (the product of its pools), in an order fixed by the seed
// and the template ID, so adding templates elsewhere does not change a
// template's own sequence. A share a template cannot fill (it ran out of
// distinct prompts) goes to the other templates of its category, and what
// a category cannot fill goes to the other categories by weight.
//
// Uniqueness: no two tasks of one call have the same prompt text, and no
// task's key is excluded by opts.Exclude. When the eligible templates hold
// fewer than n such prompts, Sample returns an [*ExhaustedError] (wrapping
// [ErrExhausted]), or, with opts.AllowFewer, all that exist. The result is
// shuffled; n <= 0 gives an empty list.
func (l *Library) Sample(n int, seed int64, opts Options) ([]Task, error) {
	groups, err := l.eligible(opts)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return []Task{}, nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x70657273_6f6e6131)) // "persona1"
	s := &sampler{seed: seed, exclude: opts.Exclude, seen: map[string]bool{}}
	for _, g := range groups {
		for i := range g.templates {
			g.streams = append(g.streams, s.newStream(&g.templates[i]))
		}
	}

	var out []Task
	active := groups
	for len(out) < n && len(active) > 0 {
		weights := make([]float64, len(active))
		for i, g := range active {
			weights[i] = g.weight
		}
		quotas := apportion(n-len(out), weights, rng)
		var still []*group
		for i, g := range active {
			got := s.drawCategory(g, quotas[i], rng)
			out = append(out, got...)
			if len(got) == quotas[i] {
				still = append(still, g)
			}
		}
		active = still
	}
	if len(out) < n && !opts.AllowFewer {
		return nil, &ExhaustedError{Requested: n, Available: len(out)}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// group is one eligible category.
type group struct {
	name      string
	weight    float64
	templates []Template
	streams   []*stream
}

// eligible returns the categories to sample, sorted by name, with their
// templates, after Categories, Templates and Weights.
func (l *Library) eligible(opts Options) ([]*group, error) {
	for k, w := range opts.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("persona: sample: %w: weight of %q is %v: want a finite value >= 0", ErrBadOptions, k, w)
		}
		if k != DefaultWeightKey && !slices.Contains(l.categories, k) {
			return nil, fmt.Errorf("persona: sample: %w: weight for unknown category %q", ErrBadOptions, k)
		}
	}
	for _, c := range opts.Categories {
		if !slices.Contains(l.categories, c) {
			return nil, fmt.Errorf("persona: sample: %w: unknown category %q", ErrBadOptions, c)
		}
	}
	for _, id := range opts.Templates {
		if _, ok := l.byID[id]; !ok {
			return nil, fmt.Errorf("persona: sample: %w: unknown template %q", ErrBadOptions, id)
		}
	}
	var groups []*group
	for _, c := range l.categories {
		if len(opts.Categories) > 0 && !slices.Contains(opts.Categories, c) {
			continue
		}
		w, ok := opts.Weights[c]
		if !ok {
			w, ok = opts.Weights[DefaultWeightKey]
			if !ok {
				w = 1
			}
		}
		if w == 0 {
			continue
		}
		g := &group{name: c, weight: w}
		for _, t := range l.templates {
			if t.Category == c && (len(opts.Templates) == 0 || slices.Contains(opts.Templates, t.ID)) {
				g.templates = append(g.templates, t)
			}
		}
		if len(g.templates) > 0 {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("persona: sample: %w: no template is eligible", ErrBadOptions)
	}
	return groups, nil
}

type sampler struct {
	seed    int64
	exclude func(string) bool
	seen    map[string]bool // prompts issued in this call
}

// drawCategory draws up to quota tasks from g's templates, split equally,
// moving the share of an exhausted template to the others.
func (s *sampler) drawCategory(g *group, quota int, rng *rand.Rand) []Task {
	var out []Task
	for len(out) < quota {
		var live []int
		for i, st := range g.streams {
			if !st.done() {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			break
		}
		shares := apportion(quota-len(out), slices.Repeat([]float64{1}, len(live)), rng)
		for k, i := range live {
			out = append(out, s.drawTemplate(g.streams[i], shares[k])...)
		}
	}
	return out
}

// drawTemplate draws up to k new tasks from st.
func (s *sampler) drawTemplate(st *stream, k int) []Task {
	var out []Task
	for len(out) < k {
		idx, ok := st.next()
		if !ok {
			break
		}
		t := st.tmpl
		b := make(map[string]string, len(t.Placeholders))
		rest := idx
		for _, p := range t.Placeholders {
			pool := t.pools[p]
			b[p] = pool[rest%int64(len(pool))]
			rest /= int64(len(pool))
		}
		prompt := render(t.Text, b)
		if s.seen[prompt] {
			continue
		}
		key := PromptKey(prompt)
		if s.exclude != nil && s.exclude(key) {
			continue
		}
		s.seen[prompt] = true
		out = append(out, Task{Key: key, Category: t.Category, TemplateID: t.ID, Bindings: b, Prompt: prompt})
	}
	return out
}

// stream yields the combination indices [0, size) of one template in a
// random order without repetition: a lazy Fisher-Yates shuffle that keeps
// only the displaced entries, so memory grows with the draws, not the size.
type stream struct {
	tmpl *Template
	size int64
	pos  int64
	swap map[int64]int64
	rng  *rand.Rand
}

func (s *sampler) newStream(t *Template) *stream {
	h := fnv.New64a()
	h.Write([]byte(t.ID))
	return &stream{
		tmpl: t,
		size: t.Combinations(),
		swap: map[int64]int64{},
		rng:  rand.New(rand.NewPCG(uint64(s.seed), h.Sum64())),
	}
}

func (st *stream) done() bool { return st.pos >= st.size }

func (st *stream) next() (int64, bool) {
	if st.done() {
		return 0, false
	}
	j := st.pos + st.rng.Int64N(st.size-st.pos)
	vj, ok := st.swap[j]
	if !ok {
		vj = j
	}
	vi, ok := st.swap[st.pos]
	if !ok {
		vi = st.pos
	}
	st.swap[j] = vi
	delete(st.swap, st.pos)
	st.pos++
	return vj, true
}

// apportion splits total over weights (largest remainder): every share is
// the floor or ceiling of total*w/W, ties on the remainder broken by rng.
func apportion(total int, weights []float64, rng *rand.Rand) []int {
	out := make([]int, len(weights))
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	if total <= 0 || sum <= 0 {
		return out
	}
	type rem struct {
		i    int
		frac float64
		tie  uint64
	}
	rems := make([]rem, len(weights))
	given := 0
	for i, w := range weights {
		exact := float64(total) * w / sum
		fl := math.Floor(exact)
		out[i] = int(fl)
		given += out[i]
		rems[i] = rem{i: i, frac: exact - fl, tie: rng.Uint64()}
	}
	for given > total { // only after float rounding: take from the smallest remainders
		k := 0
		for j := range rems {
			if out[j] > 0 && (out[k] == 0 || rems[j].frac < rems[k].frac) {
				k = j
			}
		}
		out[k]--
		given--
	}
	sort.Slice(rems, func(a, b int) bool {
		if rems[a].frac != rems[b].frac {
			return rems[a].frac > rems[b].frac
		}
		return rems[a].tie < rems[b].tie
	})
	for k := 0; given < total; k = (k + 1) % len(rems) {
		out[rems[k].i]++
		given++
	}
	return out
}
