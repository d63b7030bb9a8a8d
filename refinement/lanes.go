package refinement

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/kiln-dev/kiln/runs"
)

// LaneRules is what one lane gives refinement: its taxonomy rules and
// suspicion check, its construct features, what identifies one of its
// tasks, and its resynthesis format. Refinement itself knows no lane: each
// lane kit (tools/<lane>) declares its LaneRules, and NewLanes puts them
// together.
type LaneRules struct {
	Lane string
	// Rules are the lane's taxonomy rules, walked before the generic ones.
	Rules []Rule
	// Suspect flags answers that sidestep the task; nil flags none.
	Suspect SuspectFunc
	// Features detects construct features; nil: the lane has none. Its
	// Lane field is ignored (Lane above names it).
	Features *FeatureTable
	// Identity says which parts of a task identify it (for dedupe).
	Identity Identity
	// Synth is the lane's resynthesis format; nil: no synthesis.
	Synth *SynthFormat
}

// Identity says which parts of a task identify it: two tasks with the
// same normalised identity are the same task (Lanes.SourceHash). The zero
// value takes every file and the prompt.
type Identity struct {
	// Files selects the files that count, by name; nil: every file.
	Files func(name string) bool
	// NoPrompt leaves the prompt out (a lane whose prompt is rendered
	// from its files).
	NoPrompt bool
	// Prompt rewrites the prompt before it is hashed (case and layout are
	// dropped after it); nil keeps it.
	Prompt func(string) string
	// File rewrites a file that counts before it is hashed (comments and
	// layout are dropped after it), to leave out what does not make two
	// tasks differ; nil keeps it.
	File func(name, body string) string
	// Near, when set, makes near duplicates duplicates too: it turns an
	// identity file (after File) into tokens, and Screen drops a
	// candidate whose tokens' MinHash signature (runs/curate, its default
	// parameters) is near an existing task's or an earlier candidate's.
	// nil: only exact duplicates of the normalised identity are dropped.
	Near func(name, body string) []string
}

// SynthFormat is a lane's resynthesis format: the prompt templates the
// synthesiser gets, and how a TASK block of its reply becomes a candidate.
type SynthFormat struct {
	// Templates holds synth_system.tmpl and synth_user.tmpl, rendered with
	// a SynthRequest.
	Templates fs.FS
	// Categories describes the lane's categories for the prompt; a
	// category without one takes its feature's doc.
	Categories map[string]string
	// Parse reads one block into c (its Files, Prompt and Function; Lane,
	// Index, Category and Description are set) and returns why the block
	// gives no task ("" when it does). Static checks only: compiling
	// belongs to the lane's Validator.
	Parse func(c *Candidate, b Block) string
	// ExampleFile selects the task files shown in a failing example; nil
	// shows none.
	ExampleFile func(name string) bool
	// FilesOnly drops the prompt from an example that shows files (a lane
	// whose prompt is rendered from them).
	FilesOnly bool
	// Vary, when set, gives the request's Briefs: one set of persona
	// variables per task asked for (the lane's own pools: operators,
	// shapes, dtypes, ...), which the templates show as each task's
	// brief. It must be deterministic for the request, and should draw
	// different briefs for different requests, so that no prompt repeats.
	Vary func(req SynthRequest) []map[string]string
}

// SynthTemplates reads a lane's resynthesis folder dir in fsys: the
// templates (synth_system.tmpl, synth_user.tmpl) and categories.json
// ({"category": "description"}), for a SynthFormat.
func SynthTemplates(fsys fs.FS, dir string) (fs.FS, map[string]string, error) {
	tmpl, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, nil, err
	}
	raw, err := fs.ReadFile(tmpl, "categories.json")
	if err != nil {
		return nil, nil, fmt.Errorf("refinement: %w", err)
	}
	var cats map[string]string
	if err := json.Unmarshal(raw, &cats); err != nil {
		return nil, nil, fmt.Errorf("refinement: %s/categories.json: %w", dir, err)
	}
	return tmpl, cats, nil
}

// Lanes is refinement's view of every registered lane: the taxonomy, the
// featurizer, the resynthesis prompts and parsers, and task identities.
// It is immutable and safe for concurrent use.
type Lanes struct {
	Taxonomy *Taxonomy
	Features *Featurizer
	book     *PromptBook
	rules    map[string]LaneRules
}

// NewLanes compiles the lanes' rules. A lane given twice is an error.
func NewLanes(rs ...LaneRules) (*Lanes, error) {
	l := &Lanes{rules: map[string]LaneRules{}}
	var tables []LaneTable
	var feats []FeatureTable
	for _, r := range rs {
		if r.Lane == "" {
			return nil, fmt.Errorf("refinement: lane rules without a lane name")
		}
		if _, dup := l.rules[r.Lane]; dup {
			return nil, fmt.Errorf("refinement: lane %q given twice", r.Lane)
		}
		l.rules[r.Lane] = r
		tables = append(tables, LaneTable{Lane: r.Lane, Rules: r.Rules, Suspect: r.Suspect})
		if r.Features != nil {
			ft := *r.Features
			ft.Lane = r.Lane
			feats = append(feats, ft)
		}
	}
	var err error
	if l.Taxonomy, err = NewTaxonomy(tables...); err != nil {
		return nil, err
	}
	if l.Features, err = NewFeaturizer(feats...); err != nil {
		return nil, err
	}
	if l.book, err = newPromptBook(rs, l.Features); err != nil {
		return nil, err
	}
	return l, nil
}

// genericLanes has no lane tables: the generic taxonomy only.
var genericLanes = sync.OnceValue(func() *Lanes {
	l, err := NewLanes()
	if err != nil {
		panic("refinement: generic tables: " + err.Error()) // the generic table is tested
	}
	return l
})

// Generic returns the Lanes of no lane: the generic, class-level taxonomy,
// no features, no synthesis. It is what a nil *Lanes means.
func Generic() *Lanes { return genericLanes() }

func (l *Lanes) orGeneric() *Lanes {
	if l == nil {
		return Generic()
	}
	return l
}

// Names returns the lanes, sorted.
func (l *Lanes) Names() []string {
	out := make([]string, 0, len(l.rules))
	for n := range l.rules {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Labeler returns a labeler over the lanes' tables.
func (l *Lanes) Labeler() Labeler {
	l = l.orGeneric()
	return Labeler{Taxonomy: l.Taxonomy, Featurizer: l.Features}
}

// BuildSynthPrompt renders req with its lane's templates.
func (l *Lanes) BuildSynthPrompt(req SynthRequest) (SynthPrompt, error) {
	return l.orGeneric().book.Build(req)
}

// Book returns the resynthesis prompt book.
func (l *Lanes) Book() *PromptBook { return l.orGeneric().book }

// SourceHash is the normalised hash of a task's identity for dedupe:
// files lose comments and layout (literals and identifiers are kept),
// prompts lose case and layout; which files and whether the prompt count
// is the lane's Identity (every file and the prompt for a lane without
// rules).
func (l *Lanes) SourceHash(lane string, files map[string]string, prompt string) string {
	id := l.orGeneric().rules[lane].Identity
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", lane)
	names := make([]string, 0, len(files))
	for n := range files {
		if id.Files == nil || id.Files(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		body := files[n]
		if id.File != nil {
			body = id.File(n, body)
		}
		norm := normalizeSource(body)
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(norm), norm)
	}
	if id.NoPrompt {
		prompt = ""
	} else if id.Prompt != nil {
		prompt = id.Prompt(prompt)
	}
	if p := strings.Join(strings.Fields(strings.ToLower(prompt)), " "); p != "" {
		fmt.Fprintf(h, "prompt\x00%d\x00%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NearTokens returns the tokens of a task's identity files for
// near-duplicate detection (Identity.Near), files in name order; nil when
// the lane has no Near.
func (l *Lanes) NearTokens(lane string, files map[string]string) []string {
	id := l.orGeneric().rules[lane].Identity
	if id.Near == nil {
		return nil
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if id.Files == nil || id.Files(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		body := files[n]
		if id.File != nil {
			body = id.File(n, body)
		}
		out = append(out, id.Near(n, body)...)
	}
	return out
}

// TaskHash is SourceHash of an existing task.
func (l *Lanes) TaskHash(t runs.Task) string { return l.SourceHash(t.Lane, t.Files, t.Prompt) }

// exampleFile reports whether a task file of lane is shown in an example.
func (l *Lanes) exampleFile(lane, name string) bool {
	s := l.orGeneric().rules[lane].Synth
	return s != nil && s.ExampleFile != nil && s.ExampleFile(name)
}

// filesOnly reports whether lane's examples that show files omit the prompt.
func (l *Lanes) filesOnly(lane string) bool {
	s := l.orGeneric().rules[lane].Synth
	return s != nil && s.FilesOnly
}

// ParseSynthesized reads a synthesiser's reply in lane's format into
// candidates, with one *BlockError per rejected block. The reply's text
// before the first TASK header (the analysis) is ignored. Checks are
// static (the lane's SynthFormat.Parse); compile checks belong to a
// Validator (see Screen).
func (l *Lanes) ParseSynthesized(lane, reply string) ([]Candidate, []error) {
	l = l.orGeneric()
	heads := taskHeaderRE.FindAllStringSubmatchIndex(reply, -1)
	if len(heads) == 0 {
		return nil, []error{&BlockError{Reason: "no \"### TASK n\" blocks found"}}
	}
	var cands []Candidate
	var errs []error
	seenIndex := map[int]bool{}
	for k, h := range heads {
		end := len(reply)
		if k+1 < len(heads) {
			end = heads[k+1][0]
		}
		var idx int
		fmt.Sscanf(reply[h[2]:h[3]], "%d", &idx)
		if idx <= 0 || seenIndex[idx] {
			idx = k + 1 // renumber broken or repeated numbers by position
		}
		seenIndex[idx] = true
		c, reason := l.parseBlock(lane, idx, reply[h[1]:end])
		if reason != "" {
			errs = append(errs, &BlockError{Index: idx, Reason: reason})
			continue
		}
		cands = append(cands, c)
	}
	return cands, errs
}

func (l *Lanes) parseBlock(lane string, idx int, text string) (Candidate, string) {
	b := splitBlock(text)
	c := Candidate{Lane: lane, Index: idx, Category: strings.ToLower(b.Fields["category"]), Description: b.Fields["description"]}
	if c.Description == "" {
		c.Description = b.Fields["title"]
	}
	if c.Category != "" && !labelRE.MatchString(c.Category) {
		return c, fmt.Sprintf("category %q is not a label (lower case letters, digits, _ . -)", c.Category)
	}
	if b.Unclosed {
		return c, "a code block is not closed (reply cut off?)"
	}
	s := l.rules[lane].Synth
	if s == nil || s.Parse == nil {
		return c, fmt.Sprintf("no synthesis format for lane %q", lane)
	}
	if reason := s.Parse(&c, b); reason != "" {
		return c, reason
	}
	c.Hash = l.SourceHash(lane, c.Files, c.Prompt)
	return c, ""
}
