package refinement

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/runs"
)

// Candidate is one task the synthesiser proposed.
type Candidate struct {
	Lane string `json:"lane"`
	// Index is the block's number in the reply (1-based, as written).
	Index       int    `json:"index"`
	Category    string `json:"category,omitempty"`
	Function    string `json:"function,omitempty"` // c2x86: the function under test
	Description string `json:"description,omitempty"`
	// Files are the task's files (c2x86: function.c and driver.c).
	Files map[string]string `json:"files,omitempty"`
	// Prompt is the task statement of prompt-only lanes (cuda-synth).
	Prompt string `json:"prompt,omitempty"`
	// Hash is the normalised source hash (SourceHash) used for dedupe.
	Hash string `json:"hash"`
}

// Task turns the candidate into a task of round with key (IDs, campaign
// and state are the store's business). Its categories are categories plus
// the candidate's own, sorted and distinct. Meta records the function, the
// description, the origin ("resynthesis") and the source hash.
func (c Candidate) Task(round int, key string, categories ...string) runs.Task {
	cats := append(append([]string(nil), categories...), c.Category)
	sort.Strings(cats)
	var uniq []string
	for _, x := range cats {
		if x != "" && (len(uniq) == 0 || uniq[len(uniq)-1] != x) {
			uniq = append(uniq, x)
		}
	}
	meta := map[string]string{"origin": "resynthesis", "source_hash": c.Hash}
	if c.Function != "" {
		meta["function"] = c.Function
	}
	if c.Description != "" {
		meta["description"] = c.Description
	}
	files := make(map[string]string, len(c.Files))
	for k, v := range c.Files {
		files[k] = v
	}
	return runs.Task{Round: round, Key: key, Lane: c.Lane, Files: files, Meta: meta, Categories: uniq, Prompt: c.Prompt}
}

// ErrRejected marks a block of a synthesiser reply that gave no candidate.
var ErrRejected = errors.New("refinement: candidate rejected")

// BlockError says why block Index of a reply was rejected (Index 0: the
// reply as a whole). It matches ErrRejected with errors.Is.
type BlockError struct {
	Index  int
	Reason string
}

func (e *BlockError) Error() string {
	if e.Index == 0 {
		return "synthesised reply: " + e.Reason
	}
	return fmt.Sprintf("synthesised task %d: %s", e.Index, e.Reason)
}

// Is makes errors.Is(err, ErrRejected) true.
func (e *BlockError) Is(target error) bool { return target == ErrRejected }

// Limits on synthesised files.
const (
	maxSynthFileBytes   = 32 << 10
	maxSynthFuncLines   = 200
	minSynthPromptBytes = 40
	maxSynthPromptBytes = 6000
)

var (
	taskHeaderRE = regexp.MustCompile(`(?mi)^[ \t]*(?:#{1,4}[ \t]*|\*\*[ \t]*)TASK[ \t]+(\d+)\b[^\n]*$`)
	fieldRE      = regexp.MustCompile(`(?i)^[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(category|function|description|title)(?:\*\*)?[ \t]*:[ \t]*(.*?)[ \t]*$`)
	identRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	labelRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	localIncRE   = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)
	staticRE     = regexp.MustCompile(`\bstatic\b`)
	// taskTagRE is the "(task <id>)" line cmd/kiln appends to cuda-synth
	// corpus prompts (so that a replay script can tell them apart).
	taskTagRE = regexp.MustCompile(`\s*\(task [^()\s]+\)\s*$`)
)

// fenced is one code block of a reply.
type fenced struct {
	info string // the words after the opening fence, lower case
	body string
}

// splitBlock reads the fields and code blocks of one TASK block. Field
// lines inside code blocks are not fields.
func splitBlock(text string) (fields map[string]string, blocks []fenced, unclosed bool) {
	fields = map[string]string{}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		t := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			ch := t[0]
			n := 0
			for n < len(t) && t[n] == ch {
				n++
			}
			info := strings.ToLower(strings.TrimSpace(t[n:]))
			var body []string
			closed := false
			for i++; i < len(lines); i++ {
				c := strings.TrimSpace(lines[i])
				if len(c) >= n && strings.Trim(c, string(ch)) == "" {
					closed = true
					break
				}
				body = append(body, lines[i])
			}
			if !closed {
				unclosed = true
			}
			blocks = append(blocks, fenced{info: info, body: strings.Join(body, "\n")})
			continue
		}
		if m := fieldRE.FindStringSubmatch(line); m != nil {
			k := strings.ToLower(m[1])
			if _, dup := fields[k]; !dup {
				fields[k] = strings.Trim(m[2], "`* ")
			}
		}
	}
	return fields, blocks, unclosed
}

// ParseSynthesized reads a synthesiser's reply in the lane's format (see
// the templates under data/) into candidates, with one *BlockError per
// rejected block. The reply's text before the first TASK header (the
// analysis) is ignored. Checks are static (no compiler): required blocks
// and fields, the function defined where it belongs, no I/O or
// nondeterminism in the function, sizes. Compile checks belong to a
// Validator (see Screen).
func ParseSynthesized(lane, reply string) ([]Candidate, []error) {
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
		c, reason := parseBlock(lane, idx, reply[h[1]:end])
		if reason != "" {
			errs = append(errs, &BlockError{Index: idx, Reason: reason})
			continue
		}
		cands = append(cands, c)
	}
	return cands, errs
}

func parseBlock(lane string, idx int, text string) (Candidate, string) {
	fields, blocks, unclosed := splitBlock(text)
	c := Candidate{Lane: lane, Index: idx, Category: strings.ToLower(fields["category"]), Description: fields["description"]}
	if c.Description == "" {
		c.Description = fields["title"]
	}
	if c.Category != "" && !labelRE.MatchString(c.Category) {
		return c, fmt.Sprintf("category %q is not a label (lower case letters, digits, _ . -)", c.Category)
	}
	if unclosed {
		return c, "a code block is not closed (reply cut off?)"
	}
	var reason string
	switch lane {
	case LaneC2X86:
		reason = parseC2X86Block(&c, fields, blocks)
	case LaneCUDASynth:
		reason = parseCUDABlock(&c, blocks)
	default:
		return c, fmt.Sprintf("no synthesis format for lane %q", lane)
	}
	if reason != "" {
		return c, reason
	}
	c.Hash = SourceHash(lane, c.Files, c.Prompt)
	return c, ""
}

// Calls a synthesised function.c must not make: output, input, clocks,
// hidden state, leaving the program.
var functionDeny = map[string]bool{
	"printf": true, "fprintf": true, "puts": true, "putchar": true, "fputs": true, "fwrite": true, "write": true,
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "read": true, "fopen": true, "open": true,
	"rand": true, "srand": true, "random": true, "time": true, "clock": true, "gettimeofday": true,
	"clock_gettime": true, "getenv": true, "system": true, "exit": true, "abort": true, "_exit": true,
}

// Calls a synthesised driver.c must not make: input, clocks, environment.
var driverDeny = map[string]bool{
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "read": true, "fopen": true, "open": true,
	"time": true, "clock": true, "gettimeofday": true, "clock_gettime": true, "getenv": true, "system": true,
}

func parseC2X86Block(c *Candidate, fields map[string]string, blocks []fenced) string {
	var fn, drv *fenced
	var untagged []*fenced
	for i := range blocks {
		b := &blocks[i]
		switch {
		case strings.Contains(b.info, "function"):
			if fn == nil {
				fn = b
			}
		case strings.Contains(b.info, "driver") || strings.Contains(b.info, "main"):
			if drv == nil {
				drv = b
			}
		case b.info == "" || b.info == "c":
			untagged = append(untagged, b)
		}
	}
	for _, b := range untagged {
		if fn == nil {
			fn = b
		} else if drv == nil {
			drv = b
		}
	}
	if fn == nil {
		return "no function.c code block"
	}
	if drv == nil {
		return "no driver.c code block"
	}
	if len(fn.body) > maxSynthFileBytes || len(drv.body) > maxSynthFileBytes {
		return fmt.Sprintf("a file is over %d bytes", maxSynthFileBytes)
	}
	if n := strings.Count(fn.body, "\n") + 1; n > maxSynthFuncLines {
		return fmt.Sprintf("function.c has %d lines (at most %d)", n, maxSynthFuncLines)
	}
	fsrc, dsrc := lexC(fn.body, false), lexC(drv.body, false)
	defined := map[string]bool{}
	var nonStatic []string
	for _, f := range fsrc.functions() {
		defined[f.Name] = true
		if !staticRE.MatchString(f.Prefix) {
			nonStatic = append(nonStatic, f.Name)
		}
	}
	name := fields["function"]
	if i := strings.IndexAny(name, "( "); i > 0 {
		name = name[:i] // "foo(int x)" or "foo (...)"
	}
	if name == "" && len(nonStatic) == 1 {
		name = nonStatic[0]
	}
	switch {
	case name == "":
		return "no function: line and no single function to infer it from"
	case !identRE.MatchString(name):
		return fmt.Sprintf("function %q is not a C identifier", name)
	case name == "main":
		return "the function under test cannot be main"
	case !defined[name]:
		return fmt.Sprintf("function.c does not define %s", name)
	case defined["main"]:
		return "function.c defines main"
	}
	c.Function = name
	for _, f := range dsrc.functions() {
		if f.Name == name {
			return fmt.Sprintf("driver.c defines %s itself (it must only declare it)", name)
		}
	}
	dfuncs := map[string]bool{}
	for _, f := range dsrc.functions() {
		dfuncs[f.Name] = true
	}
	if !dfuncs["main"] {
		return "driver.c does not define main"
	}
	if !calledNames(dsrc.code)[name] {
		return fmt.Sprintf("driver.c never calls %s", name)
	}
	if bad := denied(calledNames(fsrc.code), functionDeny); bad != "" {
		return fmt.Sprintf("function.c calls %s (no I/O, randomness, clocks or exits in the function)", bad)
	}
	if bad := denied(calledNames(dsrc.code), driverDeny); bad != "" {
		return fmt.Sprintf("driver.c calls %s (its output must not depend on input, time or environment)", bad)
	}
	if localIncRE.MatchString(fn.body) || localIncRE.MatchString(drv.body) {
		return `a file includes a local header ("..."): only standard headers exist`
	}
	c.Files = map[string]string{"function.c": strings.TrimSpace(fn.body) + "\n", "driver.c": strings.TrimSpace(drv.body) + "\n"}
	return ""
}

func denied(calls, deny map[string]bool) string {
	var bad []string
	for name := range calls {
		if deny[name] {
			bad = append(bad, name)
		}
	}
	sort.Strings(bad)
	return strings.Join(bad, ", ")
}

// ReferenceFile names a synthesised cuda-synth task's reference program
// in the task's files: the synthesiser's own solution, compiled to show
// the task can be done. It is not the program.cu the lane judges when an
// answer is blank, and it is not read for construct features (those come
// from the answer, as for every cuda-synth task) nor shown in examples.
const ReferenceFile = "reference.cu"

// Calls a synthesised reference program must not make: its output must
// not depend on input, the environment or the machine.
var referenceDeny = map[string]bool{
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "fread": true, "read": true, "fopen": true,
	"open": true, "getenv": true, "system": true, "popen": true,
}

// cudaProgramInfo reports whether a block's info string names CUDA (or
// C++) source or the reference file.
func cudaProgramInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		switch w {
		case "cuda", "cu", "c++", "cpp", "cxx", "cc", ReferenceFile, "reference":
			return true
		}
	}
	return false
}

// parseCUDABlock reads a cuda-synth task: the statement (a ```text
// block) and the reference program (a ```cuda block).
func parseCUDABlock(c *Candidate, blocks []fenced) string {
	var text, prog *fenced
	for i := range blocks {
		b := &blocks[i]
		switch {
		case cudaProgramInfo(b.info):
			if prog == nil {
				prog = b
			}
		case b.info == "" || b.info == "text" || b.info == "txt" || b.info == "markdown" || b.info == "md":
			if text == nil {
				text = b
			}
		}
	}
	if text == nil {
		return "no ```text block with the task statement"
	}
	p := strings.TrimSpace(text.body)
	switch {
	case len(p) < minSynthPromptBytes:
		return fmt.Sprintf("the task statement has %d bytes (at least %d)", len(p), minSynthPromptBytes)
	case len(p) > maxSynthPromptBytes:
		return fmt.Sprintf("the task statement has %d bytes (at most %d)", len(p), maxSynthPromptBytes)
	}
	c.Prompt = p
	if prog == nil {
		return "no ```cuda block with the reference program"
	}
	ref := strings.TrimSpace(prog.body)
	if len(ref) > maxSynthFileBytes {
		return fmt.Sprintf("the reference program has %d bytes (at most %d)", len(ref), maxSynthFileBytes)
	}
	src := lexC(ref, false)
	defined := map[string]bool{}
	for _, f := range src.functions() {
		defined[f.Name] = true
	}
	switch {
	case !globalFnRE.MatchString(src.code):
		return "the reference program defines no __global__ kernel"
	case !kernelLaunchRE.MatchString(src.code):
		return "the reference program launches no kernel"
	case !defined["main"]:
		return "the reference program does not define main"
	}
	if bad := denied(calledNames(src.code), referenceDeny); bad != "" {
		return fmt.Sprintf("the reference program calls %s (its output must not depend on input or the environment)", bad)
	}
	if localIncRE.MatchString(ref) {
		return `the reference program includes a local header ("..."): it must be one file`
	}
	c.Files = map[string]string{ReferenceFile: ref + "\n"}
	return ""
}

// SourceHash is the normalised hash of a task's source for dedupe: files
// lose comments and layout (literals and identifiers are kept), prompts
// lose case and layout. For c2x86 only function.c counts (the same
// function with another driver is the same task); for cuda-synth only the
// prompt (the task is its statement: the same statement with another
// reference program, or a corpus prompt with its "(task id)" tag, is the
// same task); other lanes hash every file, sorted by name, and the prompt.
func SourceHash(lane string, files map[string]string, prompt string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", lane)
	names := make([]string, 0, len(files))
	for n := range files {
		if (lane != LaneC2X86 || n == "function.c") && lane != LaneCUDASynth {
			names = append(names, n)
		}
	}
	if lane == LaneCUDASynth {
		prompt = taskTagRE.ReplaceAllString(prompt, "")
	}
	sort.Strings(names)
	for _, n := range names {
		norm := normalizeSource(files[n])
		fmt.Fprintf(h, "%s\x00%d\x00%s", n, len(norm), norm)
	}
	// A c2x86 task's prompt is rendered from its function.c: hashing it
	// would make a task with a prompt differ from the same candidate.
	if p := strings.Join(strings.Fields(strings.ToLower(prompt)), " "); p != "" && lane != LaneC2X86 {
		fmt.Fprintf(h, "prompt\x00%d\x00%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TaskHash is SourceHash of an existing task.
func TaskHash(t runs.Task) string { return SourceHash(t.Lane, t.Files, t.Prompt) }
