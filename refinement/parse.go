package refinement

import (
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
	// Hash is the normalised source hash (Lanes.SourceHash) used for dedupe.
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

// Limits on synthesised tasks, for the lanes' parsers.
const (
	MaxSynthFileBytes   = 32 << 10
	MaxSynthFuncLines   = 200
	MinSynthPromptBytes = 40
	MaxSynthPromptBytes = 6000
)

var (
	taskHeaderRE = regexp.MustCompile(`(?mi)^[ \t]*(?:#{1,4}[ \t]*|\*\*[ \t]*)TASK[ \t]+(\d+)\b[^\n]*$`)
	fieldRE      = regexp.MustCompile(`(?i)^[ \t]*(?:[-*][ \t]*)?(?:\*\*)?(category|function|description|title)(?:\*\*)?[ \t]*:[ \t]*(.*?)[ \t]*$`)
	labelRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
)

// Block is one TASK block of a synthesiser's reply, as a lane's
// SynthFormat.Parse reads it.
type Block struct {
	// Fields are the block's "name: value" lines outside code: category,
	// function, description, title (names lower case).
	Fields map[string]string
	// Code are its fenced code blocks, in order.
	Code []Fenced
	// Unclosed is set when a code block is not closed.
	Unclosed bool
}

// Fenced is one code block of a reply.
type Fenced struct {
	Info string // the words after the opening fence, lower case
	Body string
}

// splitBlock reads the fields and code blocks of one TASK block. Field
// lines inside code blocks are not fields.
func splitBlock(text string) Block {
	fields := map[string]string{}
	var blocks []Fenced
	unclosed := false
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
			blocks = append(blocks, Fenced{Info: info, Body: strings.Join(body, "\n")})
			continue
		}
		if m := fieldRE.FindStringSubmatch(line); m != nil {
			k := strings.ToLower(m[1])
			if _, dup := fields[k]; !dup {
				fields[k] = strings.Trim(m[2], "`* ")
			}
		}
	}
	return Block{Fields: fields, Code: blocks, Unclosed: unclosed}
}
