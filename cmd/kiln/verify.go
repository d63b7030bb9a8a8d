package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/c2x86"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// cmdVerify judges one answer by hand: exit 0 pass, 1 fail, 2 bad input.
func cmdVerify(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return badInput("usage: kiln verify c2x86 --function F.c --driver D.c --candidate C.s [--json]")
	}
	lane := args[0]
	switch lane {
	case c2x86.LaneName:
		return verifyC2X86(ctx, args[1:], e)
	case cudasynth.LaneName:
		return verifyCUDA(ctx, args[1:], e)
	}
	return badInput("unknown lane %q (have %s)", lane, strings.Join(lanes, ", "))
}

func verifyC2X86(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("verify c2x86", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	fn := fs.String("function", "", "C file with the function(s) under test (required)")
	driver := fs.String("driver", "", "C file with main() calling the function and printing results (required)")
	cand := fs.String("candidate", "", "the candidate x86-64 assembly (a .s file, or a model reply with a fenced block) (required)")
	name := fs.String("name", "", "the function's name (optional, recorded only)")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	for flagName, v := range map[string]string{"--function": *fn, "--driver": *driver, "--candidate": *cand} {
		if v == "" {
			return badInput("%s is required", flagName)
		}
	}
	if fs.NArg() > 0 {
		return badInput("unexpected arguments: %v", fs.Args())
	}
	item, err := c2x86.ItemFromFiles(*fn, *driver, *name)
	if err != nil {
		return usageError{err}
	}
	raw, err := os.ReadFile(*cand)
	if err != nil {
		return badInput("--candidate: %v", err)
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	l, err := w.lane(specForLane(c2x86.LaneName))
	if err != nil {
		return err
	}
	answer := string(raw)
	if strings.Contains(answer, "```") {
		if a, ok := l.Extract(answer); ok {
			answer = a
		} else {
			answer = ""
		}
	}
	v, err := l.Verify(ctx, item, answer)
	if err != nil {
		if errors.Is(err, c2x86.ErrBadItem) {
			return usageError{err}
		}
		return err
	}
	if *asJSON {
		if err := writeJSON(e.stdout, verdictJSON(v)); err != nil {
			return err
		}
	} else {
		printVerdict(e, v)
	}
	if !v.Pass {
		return verdictFailed{}
	}
	return nil
}

// verifyCUDA runs the cuda-synth stages on one program: exit 0 when every
// stage that can run here passes (stages that need a GPU are reported as
// skipped), 1 on a failure, 2 on bad input.
func verifyCUDA(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("verify cuda-synth", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	src := fs.String("source", "", "the CUDA program (.cu, or a model reply with a fenced block) (required)")
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if *src == "" {
		return badInput("--source is required")
	}
	if fs.NArg() > 0 {
		return badInput("unexpected arguments: %v", fs.Args())
	}
	item, err := cudasynth.ItemFromFile(*src)
	if err != nil {
		return badInput("--source: %v", err)
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	l, err := w.cudaLane(ctx)
	if err != nil {
		return err
	}
	answer := item.Files[cudasynth.SourceFile]
	if strings.Contains(answer, "```") {
		if a, ok := l.Extract(answer); ok {
			answer = a
		} else {
			answer = ""
		}
	}
	item.Files[cudasynth.SourceFile] = answer
	v, err := l.Verify(ctx, item, answer)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(e.stdout, verdictJSON(v)); err != nil {
			return err
		}
	} else {
		printVerdict(e, v)
	}
	if !v.Pass {
		return verdictFailed{}
	}
	return nil
}

// verifyDataDir keeps kiln verify's caches out of the way when no data
// folder exists: it never creates a run database.
func verifyDataDir(data string) string {
	if _, err := os.Stat(data); err == nil {
		return data
	}
	return os.TempDir() + "/kiln-verify"
}

type verdictOut struct {
	Pass         bool               `json:"pass"`
	Class        string             `json:"class"`
	Stage        string             `json:"stage"`
	Stages       []tools.Stage      `json:"stages"`
	Diagnostic   string             `json:"diagnostic,omitempty"`
	Measurements map[string]float64 `json:"measurements,omitempty"`
}

func verdictJSON(v tools.Verdict) verdictOut {
	class := string(v.Class)
	if v.Pass {
		class = "pass"
	}
	return verdictOut{Pass: v.Pass, Class: class, Stage: v.Stage, Stages: v.Stages,
		Diagnostic: v.Diagnostic, Measurements: v.Measurements}
}

func printVerdict(e env, v tools.Verdict) {
	for _, s := range v.Stages {
		mark := "ok"
		switch {
		case s.Skipped:
			mark = "skipped"
		case !s.OK:
			mark = "FAIL"
		}
		fmt.Fprintf(e.stdout, "  %-18s %-7s %s\n", s.Name, mark, firstLine(s.Detail))
	}
	if v.Pass {
		fmt.Fprintln(e.stdout, "PASS")
		return
	}
	fmt.Fprintf(e.stdout, "FAIL %s at %s\n", v.Class, v.Stage)
	if v.Diagnostic != "" {
		fmt.Fprintln(e.stdout, v.Diagnostic)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
