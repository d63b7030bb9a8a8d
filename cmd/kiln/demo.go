package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
)

// demoAnswers are the replay's model answers: x86-64 assembly we wrote for
// six functions of the c2x86 built-in corpus. The .wrong.s and .repair.s
// files are answers that fail (the lane, not the replay, finds out).
//
//go:embed demo/*.s
var demoAnswers embed.FS

// demoTurn is one recorded model turn: the answer to the first message
// (task prompt, repair request or tool result) its regexp matches.
type demoTurn struct {
	match     string // Go regexp over the message answered
	say       string // the text before the assembly block
	reasoning string
	asm       string // file under demo/
	tool      string // when set: call this tool with the assembly instead of answering
}

// demoReplay is the demo's model, most specific matches first: repair
// requests (they quote the failure), the tool result, then the task prompts
// (they name the function in backticks).
var demoReplay = []demoTurn{
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

// demoSpec is the demo campaign: six functions of the built-in c2x86
// corpus (the seed picks them), the replay as its model, one repair turn.
const demoSpec = `# kiln demo: a c2x86 campaign (C -> x86-64 assembly) over six functions of the
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

// demoScript renders the replay as a script model's JSONL.
func demoScript() ([]byte, error) {
	var b strings.Builder
	b.WriteString("# kiln demo replay: recorded model answers (see kiln demo -h)\n")
	for _, t := range demoReplay {
		asm, err := demoAnswers.ReadFile("demo/" + t.asm)
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

// cmdDemo runs a real campaign without a model server: kiln run on the demo
// spec and its replay, then kiln report (with the SVG chart) and kiln export
// (a trainer-ready dataset folder), and prints how to open the dashboard.
func cmdDemo(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: kiln demo [--data DIR] [--serve [--addr HOST:PORT]]\n\n"+
			"Runs a c2x86 campaign over six built-in corpus functions with a replay of recorded model answers\n"+
			"(right ones, wrong ones, a repair turn, a tool call): no model server needed. Every answer is verified\n"+
			"in the sandbox. Writes the spec, the replay, the run database, report.svg and dataset/ to DIR.\n\n")
		fs.PrintDefaults()
	}
	var c common
	c.register(fs, e)
	dataFlag := fs.Lookup("data")
	dataFlag.Usage = "folder for the demo: spec, replay, run database, chart and dataset (created; a rerun adds a fresh campaign)"
	dataFlag.DefValue = "kiln-demo"
	c.data = dataFlag.DefValue
	fs.Lookup("log-level").DefValue = "warn"
	c.logLevel = "warn"
	serve := fs.Bool("serve", false, "after the demo, serve the dashboard on it (kiln serve) until interrupted")
	addr := fs.String("addr", demoAddr, "with --serve: the dashboard's listen address (loopback)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return badInput("unexpected arguments %q (the folder is --data DIR)", fs.Args())
	}
	id, err := runDemo(ctx, &c, *addr, e)
	if err != nil || !*serve {
		return err
	}
	fmt.Fprintf(e.stdout, "serving the dashboard at http://%s/campaigns/%s (Ctrl-C stops)\n", *addr, id)
	return cmdServe(ctx, append(c.passFlags(), "--addr", *addr), e)
}

// runDemo writes the spec and the replay into the demo folder, runs the
// campaign, the report and the export, prints where everything is, and
// returns the campaign's id.
func runDemo(ctx context.Context, c *common, addr string, e env) (string, error) {
	dir := c.data
	rerun, err := demoFolder(dir)
	if err != nil {
		return "", err
	}
	script, err := demoScript()
	if err != nil {
		return "", err
	}
	specPath := filepath.Join(dir, "demo.yaml")
	for name, body := range map[string][]byte{"demo.yaml": []byte(demoSpec), "answers.jsonl": script} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return "", fmt.Errorf("demo: %w", err)
		}
	}
	if rerun {
		fmt.Fprintf(e.stdout, "kiln demo: %s holds an earlier demo; this run adds a fresh campaign beside it\n", dir)
	}
	fmt.Fprintf(e.stdout, "kiln demo: 6 C functions of the built-in c2x86 corpus, answered by a replay of recorded model answers\n"+
		"(no model server); every answer is assembled, linked and run in the sandbox and compared with gcc -O0.\n\n")
	pass := c.passFlags()
	fmt.Fprintf(e.stdout, "$ kiln run --data %s %s\n", dir, specPath)
	if err := cmdRun(ctx, append(pass, specPath), e); err != nil {
		var pe *sandboxes.PolicyError
		if errors.As(err, &pe) {
			return "", demoPolicyError(pe)
		}
		return "", fmt.Errorf("demo campaign: %w", err)
	}
	id, err := demoCampaign(ctx, dir, e.stdout)
	if err != nil {
		return "", err
	}
	// The campaign is the newest named demo: the printed commands use
	// the name, the steps the id.
	svg := filepath.Join(dir, "report.svg")
	fmt.Fprintf(e.stdout, "\n$ kiln report --data %s --svg %s demo\n", dir, svg)
	if err := cmdReport(ctx, append(pass, "--svg", svg, id), e); err != nil {
		return "", fmt.Errorf("demo report: %w", err)
	}
	ds := filepath.Join(dir, "dataset") + string(filepath.Separator)
	fmt.Fprintf(e.stdout, "\n$ kiln export --data %s --format messages --trajectories -o %s demo\n", dir, ds)
	if err := cmdExport(ctx, append(pass, "--format", "messages", "--trajectories", "-o", ds, id), e); err != nil {
		return "", fmt.Errorf("demo export: %w", err)
	}
	url := "http://" + addr + "/campaigns/" + id
	serveCmd := "kiln serve --data " + dir
	if addr != demoAddr {
		serveCmd += " --addr " + addr
	}
	fmt.Fprintf(e.stdout, "\nspec and replay: %s, %s\nchart:           %s\ndataset:         %s (%s)\n"+
		"dashboard:       %s, then open %s\n",
		specPath, filepath.Join(dir, "answers.jsonl"), svg, ds, strings.Join(fileNames(ds), ", "), serveCmd, url)
	return id, nil
}

// demoPolicyError says which sandbox layers this host lacks (not root,
// usually) and how to run the demo anyway.
func demoPolicyError(pe *sandboxes.PolicyError) error {
	names := make([]string, len(pe.Missing))
	for i, m := range pe.Missing {
		names[i] = string(m.Layer)
	}
	list := strings.Join(names, ",")
	return badInput("this host's sandbox lacks the layers %s (kiln doctor says why; as root they are usually there). "+
		"Run kiln demo as root, or with --allow-missing-layers %s: the demo runs only the answers shipped in kiln, "+
		"and its verdicts record the lowered policy", list, list)
}

// demoAddr is kiln serve's default listen address.
const demoAddr = "127.0.0.1:7878"

// fileNames lists the plain files in dir.
func fileNames(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

// passFlags are the flags a demo step passes on to the verbs it runs.
func (c *common) passFlags() []string {
	args := []string{"--data", c.data, "--log-level", c.logLevel}
	if c.cgroupParent != "" {
		args = append(args, "--cgroup-parent", c.cgroupParent)
	}
	if len(c.allowMissing) > 0 {
		names := make([]string, len(c.allowMissing))
		for i, l := range c.allowMissing {
			names[i] = string(l)
		}
		args = append(args, "--allow-missing-layers", strings.Join(names, ","))
	}
	return args
}

// demoFolder makes dir, or accepts an earlier demo's (rerun true). Any other
// non-empty folder is refused: the demo writes files there.
func demoFolder(dir string) (rerun bool, err error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("demo: %w", err)
		}
		return false, nil
	case err != nil:
		return false, badInput("--data %s: %v", dir, err)
	case len(ents) == 0:
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "demo.yaml")); err != nil {
		return false, badInput("--data %s: the folder exists and holds no earlier demo; name a new or empty folder", dir)
	}
	return true, nil
}

// demoCampaign is the id of the newest campaign named demo in dir; it
// prints a line per task of it: the verdict, repair turns and tool calls.
func demoCampaign(ctx context.Context, dir string, w io.Writer) (string, error) {
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
