// Command kiln runs generate-test-refine campaigns on GPU and low-level code:
// it renders tasks, asks language models to solve them, verifies every
// answer by compiling and running it in a sandbox, and keeps everything in a
// crash-safe store.
//
//	kiln demo                 a real campaign with no model server (a replay of recorded answers)
//	kiln run SPEC             run a campaign in the foreground
//	kiln resume RUN           continue a stopped or crashed campaign
//	kiln serve                HTTP API: submit, list, show, cancel, stream progress
//	kiln status [RUN]         campaigns and their counts
//	kiln report RUN           per-category table of a campaign, and per round for refinement
//	kiln refine RUN           refinement rounds on a finished campaign (--plan: show the next round)
//	kiln export RUN           JSONL samples for fine-tuning
//	kiln eval SPEC...         pass@k of each model on a fixed task set (benchmarks)
//	kiln rescore RUN          judge stored answers again with the current verifiers
//	kiln gc                   remove blobs no stored record refers to (--dry-run)
//	kiln doctor               toolchains and sandbox layers found on this host
//	kiln selftest             hostile programs against this host's sandbox
//	kiln verify LANE ...      judge one answer by hand
//	kiln worker --nats URL    run jobs (pending GPU stages) for a daemon over NATS JetStream
//	kiln nats-node            one node of a NATS JetStream cluster for the scale-out queue
//
// Every verb that uses a data folder takes --data DIR (default $KILN_DATA,
// else ./kiln-data; kiln demo: ./kiln-demo).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// exit codes
const (
	exitOK       = 0
	exitFail     = 1 // the work ran and failed (a verdict, a failed campaign)
	exitBadInput = 2 // bad flags, spec or files
	exitPending  = 3 // kiln verify: stages this host cannot run (no GPU): not a pass yet
	exitTask     = 4 // kiln verify: the task's own reference failed (a task fault)
)

// usageError marks errors caused by the command line or input files.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badInput(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	// A sandbox trampoline re-executes this binary; it never returns from here.
	sandboxes.MaybeRunInit()
	ctx, cancel := context.WithCancel(context.Background())
	soft := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	softVerb := len(os.Args) > 1 && (os.Args[1] == "demo" || os.Args[1] == "run" || os.Args[1] == "resume" || os.Args[1] == "serve" || os.Args[1] == "refine" || os.Args[1] == "worker")
	go func() {
		<-sigs
		close(soft)
		if softVerb {
			fmt.Fprintf(os.Stderr, "kiln: stopping: finishing in-flight work for up to %s (signal again to abort)\n", stopGrace)
			select {
			case <-sigs:
			case <-time.After(stopGrace):
			}
		}
		cancel()
	}()
	code := run(ctx, os.Args[1:], env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, soft: soft,
	})
	cancel()
	os.Exit(code)
}

// stopGrace is how long a soft stop waits for in-flight attempts before
// cancelling them (their tasks go back to the queue, nothing is judged).
const stopGrace = 30 * time.Second

// env is what a verb may touch of the process: the command is testable with
// buffers and a map for the environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// soft is closed by the first SIGINT/SIGTERM: finish in-flight work,
	// start nothing new. ctx is cancelled after the grace period or a
	// second signal.
	soft <-chan struct{}
}

const usage = `usage: kiln <verb> [flags] [args]

verbs:
  demo                a real campaign in a minute, no model server: report, chart, dataset (--data DIR)
  run SPEC            run a campaign in the foreground
  resume RUN          continue a stopped or crashed campaign
  serve               HTTP API (loopback by default; a token is required elsewhere)
  status [RUN]        campaigns and their counts
  report RUN          per-category table, per-round refinement report (--json, --svg FILE)
  refine RUN          refinement rounds from a finished run (--rounds N, --categories a,b; --plan)
  export RUN          JSONL samples for fine-tuning (-o FILE, --all)
  eval SPEC...        pass@k of each model on a fixed task set, no refinement (-o DIR, --samples N, --k 1,5)
  rescore RUN         judge stored answers again with the current verifiers
  gc                  remove blobs no record refers to (--dry-run, --min-age D, --json)
  doctor              toolchains, targets and sandbox layers found on this host (--json)
  selftest            hostile programs against this host's sandbox: all must be contained
  worker              run jobs for a daemon over NATS (--nats URL, --capabilities gpu,...; --nkey/--creds FILE, --nats-ca FILE)
  nats-node           one node of a NATS JetStream cluster for the queue (--store DIR, --name, --listen, --cluster, --routes a,b,c)
%s
Run "kiln <verb> -h" for a verb's flags.
`

// usageText is usage with the lanes' verbs (lanes.Usage).
func usageText() string { return fmt.Sprintf(usage, lanes.Usage()) }

func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usageText())
		return exitBadInput
	}
	verbs := map[string]func(context.Context, []string, env) error{
		"demo":      cmdDemo,
		"run":       cmdRun,
		"resume":    cmdResume,
		"serve":     cmdServe,
		"status":    cmdStatus,
		"report":    cmdReport,
		"refine":    cmdRefine,
		"export":    cmdExport,
		"eval":      cmdEval,
		"rescore":   cmdRescore,
		"gc":        cmdGC,
		"doctor":    cmdDoctor,
		"selftest":  cmdSelftest,
		"verify":    cmdVerify,
		"worker":    cmdWorker,
		"nats-node": cmdNATSNode,
	}
	for v, f := range laneVerbs() {
		if _, taken := verbs[v]; !taken {
			verbs[v] = f
		}
	}
	verb, ok := verbs[args[0]]
	if !ok {
		if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			fmt.Fprint(e.stdout, usageText())
			return exitOK
		}
		fmt.Fprintf(e.stderr, "kiln: unknown verb %q\n\n%s", args[0], usageText())
		return exitBadInput
	}
	err := verb(ctx, args[1:], e)
	var ue usageError
	var kue kit.UsageError
	var ve verdictFailed
	var vp verdictPending
	var vt verdictTaskFault
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK // -h: the flags were printed; nothing failed
	case errors.As(err, &ve):
		return exitFail
	case errors.As(err, &vp):
		return exitPending
	case errors.As(err, &vt):
		return exitTask
	case errors.As(err, &ue), errors.As(err, &kue):
		fmt.Fprintf(e.stderr, "kiln %s: %v\n", args[0], err)
		return exitBadInput
	default:
		fmt.Fprintf(e.stderr, "kiln %s: %v\n", args[0], err)
		return exitFail
	}
}

// verdictFailed is returned by verbs whose output already says what failed
// (kiln verify): exit 1 with nothing more printed.
type verdictFailed struct{}

func (verdictFailed) Error() string { return "failed" }
