package main

import (
	"context"
	"flag"
	"strings"

	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// laneVerbs returns the verbs of the lanes' own commands (the first word
// of kit.Command.Verb: "bench" for "bench compile"), each dispatching to
// the command its next word names.
func laneVerbs() map[string]func(context.Context, []string, env) error {
	out := map[string]func(context.Context, []string, env) error{}
	for _, k := range lanes.Kits() {
		for _, c := range k.Commands {
			first, _, _ := strings.Cut(c.Verb, " ")
			out[first] = func(ctx context.Context, args []string, e env) error { return cmdLane(ctx, first, args, e) }
		}
	}
	return out
}

// cmdLane runs the lane command "verb args[0]" with the rest as its flags.
func cmdLane(ctx context.Context, verb string, args []string, e env) error {
	var known []string
	for _, k := range lanes.Kits() {
		for _, c := range k.Commands {
			if first, _, _ := strings.Cut(c.Verb, " "); first == verb {
				known = append(known, "kiln "+c.Verb)
				if len(args) > 0 && c.Verb == verb+" "+args[0] {
					return runLaneCommand(ctx, c, args[1:], e)
				}
			}
		}
	}
	return badInput("%s: want %s", verb, strings.Join(known, " or "))
}

// runLaneCommand parses c's flags (with the common ones) and runs it on
// this host, with kiln verify's data folder rule (no run database made).
func runLaneCommand(ctx context.Context, c kit.Command, args []string, e env) error {
	fs := flag.NewFlagSet(c.Verb, flag.ContinueOnError)
	var com common
	com.register(fs, e)
	run := c.Flags(fs)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badInput("unexpected arguments: %v", fs.Args())
	}
	log, err := com.logger(e)
	if err != nil {
		return err
	}
	w := com.wiring(e, log, verifyDataDir(com.data))
	w.recordData = com.data // records come from the data folder named, never a scratch one
	defer w.close()
	return run(ctx, w.host(), e.stdout, e.stderr)
}
