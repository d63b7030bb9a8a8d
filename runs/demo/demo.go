// Package demo is kiln demo's campaign: a c2x86 spec over six functions
// of the built-in corpus and a replay of recorded model answers (x86-64
// assembly we wrote, right and wrong; see README.md), so that a first run
// needs no model server. Every answer is verified by the lane for real.
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/runs"
)

// ErrFolder marks a --data folder the demo may not write into.
var ErrFolder = errors.New("demo folder")

// answers are the replay's model answers: x86-64 assembly we wrote for
// six functions of the c2x86 built-in corpus. The .wrong.s and .repair.s
// files are answers that fail (the lane, not the replay, finds out).
//
//go:embed answers/*.s
var answers embed.FS

// turn is one recorded model turn: the answer to the first message
// (task prompt, repair request or tool result) its regexp matches.
type turn struct {
	match     string // Go regexp over the message answered
	say       string // the text before the assembly block
	reasoning string
	asm       string // file under answers/
	tool      string // when set: call this tool with the assembly instead of answering
}

// replay is the demo's model, most specific matches first: repair
// requests (they quote the failure), the tool result, then the task prompts
// (they name the function in backticks).
var replay = []turn{
	{match: `got +"\|5 - -5\| = 18446744073709551606"`, asm: "abs_diff_i64.s",
		reasoning: "5 - -5 came out huge: the compare treated the int64_t operands as unsigned.",
		say:       "The operands are signed, so `a >= b` is `jge`, not `jae`:"},
	{match: `got +"F\(1, 0\.5\) = 0\.0025"`, asm: "drag_force.repair.s",
		reasoning: "Only the rolling term survived: rho was emitted with .float but read with movsd.",
		say:       "rho is a double constant now; cd is kept as a float and widened:"},
	{match: `idivl\s+\$9`, asm: "digital_root.repair.s",
		reasoning: "idiv has no immediate form; load 9 into a register. The two early returns can share one branch.",
		say:       "idiv takes its divisor in a register:"},
	{match: `^PASS: the program's output matches the reference`, asm: "parity64.s",
		reasoning: "run_tests passed on the draft.", say: "The tests pass. Final answer:"},
	{match: "`gcd_u`", asm: "gcd_u.s",
		reasoning: "Euclid's loop with divl; a and b fit in registers.", say: "Here is the translation:"},
	{match: "`poly_eval`", asm: "poly_eval.s",
		reasoning: "Keep Horner's order of operations exactly; the constants go in .rodata as .double.",
		say:       "Horner's rule, constants written symbolically:"},
	{match: "`parity64`", asm: "parity64.s", tool: "run_tests",
		reasoning: "The 0x6996 lookup is easy to get backwards; run the tests on a draft first.",
		say:       "Let me check a draft with the tests."},
	{match: "`abs_diff_i64`", asm: "abs_diff_i64.wrong.s",
		reasoning: "Compare a and b, subtract the smaller from the larger.", say: "Here is the translation:"},
	{match: "`drag_force`", asm: "drag_force.wrong.s",
		reasoning: "Multiply left to right as C does, then add the rolling term.", say: "Here is the translation:"},
	{match: "`digital_root`", asm: "digital_root.wrong.s",
		reasoning: "1 + (n - 1) % 9 after the two early returns.", say: "Here is the translation:"},
}

// Spec is the demo campaign: six functions of the built-in c2x86
// corpus (the seed picks them), the replay as its model, one repair turn.
const Spec = `# kiln demo: a c2x86 campaign (C -> x86-64 assembly) over six functions of the
# built-in corpus. The model is a replay of recorded answers (answers.jsonl,
# kind: script), so no model server is needed; every answer is verified for
# real: converted, assembled, linked with the test driver and run in the
# sandbox, its output compared with gcc -O0's.
name: demo
lane: c2x86
tasks: {corpus: builtin, categories: [int_arith, bitops, float_const], limit: 6, seed: 112}
models:
  - {name: replay, kind: script, script: answers.jsonl}
concurrency: 2
agent: {repair_turns: 1, max_tool_calls: 2}
`

// Script renders the replay as a script model's JSONL.
func Script() ([]byte, error) {
	var b strings.Builder
	b.WriteString("# kiln demo replay: recorded model answers (see kiln demo -h)\n")
	for _, t := range replay {
		asm, err := answers.ReadFile("answers/" + t.asm)
		if err != nil {
			return nil, fmt.Errorf("demo replay: %w", err)
		}
		rule := map[string]any{"match": t.match, "reasoning": t.reasoning}
		if t.tool != "" {
			args, err := json.Marshal(map[string]string{"asm": string(asm)})
			if err != nil {
				return nil, fmt.Errorf("demo replay: %w", err)
			}
			rule["response"] = t.say
			rule["tool_calls"] = []map[string]any{{"name": t.tool, "arguments": json.RawMessage(args)}}
		} else {
			rule["response"] = t.say + "\n\n```asm\n" + string(asm) + "```\n"
		}
		line, err := json.Marshal(rule)
		if err != nil {
			return nil, fmt.Errorf("demo replay: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}

// FileNames lists the plain files in dir.
func FileNames(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

// Folder makes dir, or accepts an earlier demo's (rerun true). Any other
// non-empty folder is refused: the demo writes files there.
func Folder(dir string) (rerun bool, err error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("demo: %w", err)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: --data %s: %v", ErrFolder, dir, err)
	case len(ents) == 0:
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "demo.yaml")); err != nil {
		return false, fmt.Errorf("%w: --data %s: the folder exists and holds no earlier demo; name a new or empty folder", ErrFolder, dir)
	}
	return true, nil
}

// Campaign is the id of the newest campaign named demo in dir; it
// prints a line per task of it: the verdict, repair turns and tool calls.
func Campaign(ctx context.Context, dir string, w io.Writer) (string, error) {
	st, err := runs.Open(ctx, dir, nil)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	defer st.Close()
	camp, err := st.Campaign(ctx, "demo")
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	if camp.State != runs.CampaignDone {
		return "", fmt.Errorf("demo campaign %s is %s, not done (kiln resume --data %s %s finishes it)", camp.ID, camp.State, dir, camp.ID)
	}
	res, err := st.Results(ctx, camp.ID, -1)
	if err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	sort.Slice(res, func(i, j int) bool { return res[i].Task.Key < res[j].Task.Key })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTASK\tVERDICT\tREPAIR TURNS\tTOOL CALLS")
	for _, r := range res {
		verdict := "pass"
		if !r.Verdict.Pass {
			verdict = "fail: " + string(r.Verdict.Class)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.Task.Meta["item"], verdict, r.Attempt.RepairTurns, r.Attempt.ToolCalls)
	}
	return camp.ID, tw.Flush()
}

// Answer is one of the replay's answer files (answers/NAME).
func Answer(name string) ([]byte, error) { return answers.ReadFile("answers/" + name) }
