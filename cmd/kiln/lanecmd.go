package main

import (
	"context"
	"flag"
	"log/slog"
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

// runLaneCommand parses c's flags (with the common ones, unless c only
// transforms text) and runs it on this host, with kiln verify's data folder
// rule (no run database made). c.Arg takes one positional argument.
func runLaneCommand(ctx context.Context, c kit.Command, args []string, e env) error {
	fs := flag.NewFlagSet(c.Verb, flag.ContinueOnError)
	var com common
	if !c.Text {
		com.register(fs, e)
	}
	run := c.Flags(fs)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if err := positionalArg(fs, c.Arg); err != nil {
		return err
	}
	if c.Text {
		return run(ctx, kit.Host{Log: slog.New(slog.NewTextHandler(e.stderr, nil))}, e.stdout, e.stderr)
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

// positionalArg puts the one positional argument into the flag name (when
// name is set and the flag was not given too); any other argument is an
// error.
func positionalArg(fs *flag.FlagSet, name string) error {
	if fs.NArg() == 0 {
		return nil
	}
	if name == "" || fs.NArg() > 1 {
		return badInput("unexpected arguments: %v", fs.Args())
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	if given {
		return badInput("--%s %s and the argument %s: give the file once", name, fs.Lookup(name).Value, fs.Arg(0))
	}
	return fs.Set(name, fs.Arg(0))
}
