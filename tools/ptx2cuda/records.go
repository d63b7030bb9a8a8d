package ptx2cuda

// Program tasks from verified records: `kiln ptx prepare --from-campaign
// NAME -o DIR` turns the verified cuda-synth records of a campaign into a
// corpus folder of program items, one per kernel a task can be made of.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// RecordLanes are the lanes whose verified records items are made from:
// cuda-synth, whose answers are whole CUDA programs (program items), and
// torch2cuda, whose answers are Python modules building CUDA sources
// (torch items).
var RecordLanes = []string{cudasynth.LaneName, torch2cuda.LaneName}

// RecordVariants are the variants `kiln ptx prepare --from-campaign` can
// make of each kernel (--variants), by name: the nvcc flags of each.
func RecordVariants() map[string][]string {
	return map[string][]string{
		"base":     nil,
		"cicc_o0":  {"-Xcicc", "-O0"},
		"cicc_o1":  {"-Xcicc", "-O1"},
		"fastmath": {"--use_fast_math"},
	}
}

// Skip is a kernel, or a whole record (Kernel ""), that no task was made
// of, and why (Reason: one of the Skip* constants).
type Skip struct {
	Record, Kernel string
	Reason, Detail string
}

func (s Skip) String() string {
	what := s.Record
	if s.Kernel != "" {
		what += " kernel " + s.Kernel
	}
	return fmt.Sprintf("%s: %s: %s", what, s.Reason, s.Detail)
}

// RecordItem is a program item made from a record, with the output the
// record's run printed (nil when the record keeps none).
type RecordItem struct {
	Item
	Expected []byte
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string, n int) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "_"), "_")
	if len(s) > n {
		s = strings.Trim(s[:n], "_")
	}
	return s
}

// recordKeyRE strips a task key's round and sample ("r0/" and "#0").
var recordKeyRE = regexp.MustCompile(`^r[0-9]+/|#[0-9]+$`)

// RecordItemID names the item of kernel in record r: the task key and the
// kernel made [a-z0-9_] and a hash of the campaign, task and kernel, so
// that items of several campaigns can share a folder.
func RecordItemID(r kit.Record, kernel string) string {
	sum := sha256.Sum256([]byte(r.CampaignID + "\x00" + r.TaskID + "\x00" + kernel))
	parts := []string{}
	if s := slug(recordKeyRE.ReplaceAllString(r.Key, ""), 40); s != "" {
		parts = append(parts, s)
	}
	if s := slug(kernel, 30); s != "" {
		parts = append(parts, s)
	}
	parts = append(parts, hex.EncodeToString(sum[:3]))
	return strings.Join(parts, "_")
}

// RecordItems makes program items of the verified records of set (of
// lane cuda-synth): one per kernel of each record's program that a task
// can be made of (ProgramKernels), with the variants named, category the
// record's first, and the record's provenance in Meta.Source. outputs
// holds what each record's program printed in its verifying run, by
// record key (absent: unknown); a program that printed nothing is skipped
// whole (SkipNoOutput). The kernels' PTX is not made here (PreparePTX).
func RecordItems(set kit.RecordSet, outputs map[string][]byte, variants []string) ([]RecordItem, []Skip, error) {
	vs, err := recordVariants(variants)
	if err != nil {
		return nil, nil, err
	}
	var items []RecordItem
	var skips []Skip
	for _, r := range set.Records {
		if !slices.Contains(RecordLanes, r.Lane) {
			return nil, nil, fmt.Errorf("record %s is of lane %s; program items are made of records of %s", r.Key, r.Lane, strings.Join(RecordLanes, ", "))
		}
		out, known := outputs[r.Key]
		if known && len(bytes.TrimSpace(out)) == 0 {
			skips = append(skips, Skip{Record: r.Key, Reason: SkipNoOutput, Detail: "the program printed nothing in its verifying run: there is no output to compare"})
			continue
		}
		names, why := ProgramKernels(r.Answer)
		if len(names) == 0 {
			skips = append(skips, Skip{Record: r.Key, Reason: SkipNoKernel, Detail: "kiln finds no __global__ function definition in the program"})
			continue
		}
		category := "program"
		if len(r.Categories) > 0 {
			category = r.Categories[0]
		}
		for i, name := range names {
			var se *SkipError
			if errors.As(why[i], &se) {
				skips = append(skips, Skip{Record: r.Key, Kernel: name, Reason: se.Reason, Detail: se.Detail})
				continue
			}
			def, err := programKernelSource(r.Answer, name)
			if err != nil {
				return nil, nil, err
			}
			m := Meta{Category: category, Kernel: name, Harness: HarnessProgram, Variants: slices.Clone(vs),
				Description: fmt.Sprintf("kernel %s of the verified %s program %s of campaign %s", name, r.Lane, r.Key, r.Campaign),
				Source: &ItemSource{Campaign: r.Campaign, CampaignID: r.CampaignID, Lane: r.Lane, Task: r.TaskID, TaskKey: r.Key,
					Attempt: r.AttemptID, Verdict: r.VerdictID, Categories: slices.Clone(r.Categories)}}
			it := Item{ID: RecordItemID(r, name), Set: "from-campaign " + r.Campaign, Meta: m, Kernel: def, Program: r.Answer}
			if err := it.check(); err != nil {
				return nil, nil, fmt.Errorf("record %s kernel %s: %w", r.Key, name, err)
			}
			items = append(items, RecordItem{Item: it, Expected: out})
		}
	}
	return items, skips, nil
}

// recordVariants resolves --variants (names of RecordVariants; repeats
// dropped).
func recordVariants(variants []string) ([]Variant, error) {
	menu := RecordVariants()
	var vs []Variant
	for _, name := range variants {
		name = strings.TrimSpace(name)
		if slices.ContainsFunc(vs, func(v Variant) bool { return v.Name == name }) {
			continue
		}
		flags, ok := menu[name]
		if !ok {
			known := make([]string, 0, len(menu))
			for k := range menu {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("variant %q: want one of %s", name, strings.Join(known, ", "))
		}
		vs = append(vs, Variant{Name: name, Flags: flags})
	}
	if len(vs) == 0 {
		return nil, errors.New("no variant")
	}
	return vs, nil
}

// preparePrograms makes each item's PTX (PreparePTX), concurrently; a
// kernel whose PTX cannot be made alone, or whose prompt would be over
// MaxProgramPrompt, is skipped. A variant whose PTX equals an earlier
// variant's is dropped (it would be the same task). With check, the
// original program and the one with the kernel emptied are built too (a
// failure skips the kernel). Items keep their order.
func (l *Lane) preparePrograms(ctx context.Context, items []RecordItem, check bool, stderr io.Writer) ([]RecordItem, []Skip, error) {
	type result struct {
		skip *Skip
		err  error
	}
	res := make([]result, len(items))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(l.cfg.Parallel)
	for i := range items {
		g.Go(func() error {
			it := &items[i].Item
			sk := func(reason, detail string) {
				res[i].skip = &Skip{Record: it.Meta.Source.TaskKey, Kernel: it.Meta.Kernel, Reason: reason, Detail: detail}
			}
			ptx, err := l.PreparePTX(gctx, *it)
			var se *SkipError
			switch {
			case errors.As(err, &se):
				sk(se.Reason, se.Detail)
				return nil
			case errors.Is(err, tools.ErrBadItem):
				sk(SkipPTX, "its PTX does not compile alone: "+buildjob.FirstLines(err.Error(), 3))
				return nil
			case err != nil:
				return err
			}
			var kept []Variant
			for _, v := range it.Meta.Variants {
				if slices.ContainsFunc(kept, func(k Variant) bool { return ptx[k.Name] == ptx[v.Name] }) {
					fmt.Fprintf(stderr, "%s: variant %s has the PTX of an earlier variant: dropped\n", it.ID, v.Name)
					delete(ptx, v.Name)
					continue
				}
				kept = append(kept, v)
				if n := len(rollptx.Roll(ptx[v.Name])) + len(parsedContext(it)); n > MaxProgramPrompt {
					sk(SkipTooLarge, fmt.Sprintf("variant %s: %d bytes of Rolled-PTX and program context (at most %d)", v.Name, n, MaxProgramPrompt))
					return nil
				}
			}
			it.Meta.Variants, it.PTX = kept, ptx
			if check && it.isTorch() {
				err := l.checkTorch(gctx, it)
				switch {
				case errors.As(err, &se):
					sk(se.Reason, se.Detail)
				case errors.Is(err, tools.ErrBadItem):
					sk(SkipJudge, buildjob.FirstLines(err.Error(), 3))
				case err != nil:
					return err
				}
			} else if check {
				if err := l.CheckReference(gctx, *it); err != nil {
					if !errors.Is(err, tools.ErrBadItem) {
						return err
					}
					sk(SkipBuild, buildjob.FirstLines(err.Error(), 3))
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var out []RecordItem
	var skips []Skip
	for i, r := range res {
		if r.skip != nil {
			skips = append(skips, *r.skip)
			continue
		}
		out = append(out, items[i])
	}
	return out, skips, nil
}

// parsedContext is the program context a task of it shows.
func parsedContext(it *Item) string {
	p := parseProgram(it.Program)
	k, err := p.kernel(it.Meta.Kernel)
	if err != nil {
		return ""
	}
	return p.context(k)
}

// WriteProgramItem writes a program item's folder under dir: program.cu,
// meta.json, one <variant>.ptx per variant and expected_stdout.txt (when
// known); a torch item's answer.py, reference.py and kernel.cu (the
// kernel's definition, for people: loading derives it from answer.py) in
// place of program.cu. It reports whether any file changed.
func WriteProgramItem(dir string, it RecordItem) (bool, error) {
	// The fields of Meta a program item has (no params, sizes or launch).
	m := struct {
		Harness     string      `json:"harness"`
		Category    string      `json:"category"`
		Kernel      string      `json:"kernel"`
		Description string      `json:"description,omitempty"`
		Source      *ItemSource `json:"source,omitempty"`
		Variants    []Variant   `json:"variants"`
		Torch       *TorchMeta  `json:"torch,omitempty"`
	}{it.Meta.Harness, it.Meta.Category, it.Meta.Kernel, it.Meta.Description, it.Meta.Source, it.Meta.Variants, it.Meta.Torch}
	meta, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return false, err
	}
	files := map[string][]byte{MetaFile: append(meta, '\n')}
	if it.isTorch() {
		// kernel.cu is for people and scripts: loading derives the
		// kernel from answer.py.
		files[FileTorchAnswer], files[FileTorchReference], files[FileKernel] = []byte(it.TorchAnswer), []byte(it.TorchReference), []byte(it.Kernel)
	} else {
		files[FileProgram] = []byte(it.Program)
	}
	for _, v := range it.Meta.Variants {
		files[v.Name+".ptx"] = []byte(it.PTX[v.Name])
	}
	if it.Expected != nil {
		files[FileExpectedStdout] = it.Expected
	}
	folder := filepath.Join(dir, it.ID)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return false, err
	}
	changed := false
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(folder, n)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[n]) {
			continue
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

// prepareFromCampaign is `kiln ptx prepare --from-campaign NAME -o DIR`.
func prepareFromCampaign(ctx context.Context, h kit.Host, campaign, dir string, variants []string, check bool, stdout, stderr io.Writer) error {
	if h.Records == nil {
		return kit.BadInput("--from-campaign: this command has no run database to read records from")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return kit.BadInput("-o %s: not a folder", dir)
	}
	set, err := h.Records.VerifiedRecords(ctx, campaign)
	if err != nil {
		return kit.BadInput("--from-campaign: %v", err)
	}
	if err := set.Check("--from-campaign", LaneName, RecordLanes); err != nil {
		return kit.UsageError{Err: err}
	}
	var items []RecordItem
	var skips []Skip
	if set.Lane == torch2cuda.LaneName {
		if items, err = prepareTorchRecords(ctx, h, set, variants, &skips, stderr); err != nil {
			return err
		}
	} else {
		outputs := map[string][]byte{}
		for _, r := range set.Records {
			hash, ok := r.Artifacts[cudasynth.ArtifactOutputCUDA]
			if !ok {
				continue
			}
			b, err := h.Records.Artifact(ctx, hash)
			if err != nil {
				return fmt.Errorf("record %s: %s: %w", r.Key, cudasynth.ArtifactOutputCUDA, err)
			}
			outputs[r.Key] = b
		}
		if items, skips, err = RecordItems(set, outputs, variants); err != nil {
			return kit.BadInput("--variants: %v", err)
		}
		tl, err := open(ctx, h, sandboxes.Limits{})
		if err != nil {
			return err
		}
		l := tl.(*Lane)
		defer l.Close()
		var more []Skip
		if items, more, err = l.preparePrograms(ctx, items, check, stderr); err != nil {
			return err
		}
		skips = append(skips, more...)
	}
	for _, s := range skips {
		fmt.Fprintf(stderr, "skipped %s\n", s)
	}
	tasks := 0
	for _, it := range items {
		changed, err := WriteProgramItem(dir, it)
		if err != nil {
			return err
		}
		state := "unchanged"
		if changed {
			state = "written"
		}
		var names []string
		for _, v := range it.Meta.Variants {
			names = append(names, v.Name)
		}
		tasks += len(names)
		fmt.Fprintf(stdout, "%s: kernel %s of %s, variants %s, %s\n", filepath.Join(dir, it.ID), it.Meta.Kernel, it.Meta.Source.TaskKey,
			strings.Join(names, " "), state)
	}
	summary := fmt.Sprintf("%d kernels (%d tasks) from %d verified records of campaign %s (%s); skipped: %s",
		len(items), tasks, len(set.Records), set.Campaign, set.CampaignID, skipSummary(skips))
	if len(items) == 0 {
		return fmt.Errorf("ptx prepare --from-campaign: no kernel could be prepared: %s", summary)
	}
	fmt.Fprintf(stdout, "prepared %s\n", summary)
	return nil
}

// skipSummary counts skips by reason ("2 template, 1 not_launched"; "none").
func skipSummary(skips []Skip) string {
	n := map[string]int{}
	for _, s := range skips {
		n[s.Reason]++
	}
	if len(n) == 0 {
		return "none"
	}
	reasons := make([]string, 0, len(n))
	for r := range n {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	var parts []string
	for _, r := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n[r], r))
	}
	return strings.Join(parts, ", ")
}
