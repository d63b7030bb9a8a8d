package ptx2cuda

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
)

// fakeRecords is a kit.RecordReader over fixed record sets (the store's
// reader is cmd/kiln's, run end to end in cmd/kiln's tests).
type fakeRecords struct {
	sets  map[string]kit.RecordSet
	blobs map[string][]byte
}

func (f fakeRecords) VerifiedRecords(_ context.Context, campaign string) (kit.RecordSet, error) {
	s, ok := f.sets[campaign]
	if !ok {
		return kit.RecordSet{}, fmt.Errorf("no campaign %q", campaign)
	}
	return s, nil
}

func (f fakeRecords) Artifact(_ context.Context, hash string) ([]byte, error) {
	b, ok := f.blobs[hash]
	if !ok {
		return nil, errors.New("no blob " + hash)
	}
	return b, nil
}

// corpusRecords makes verified cuda-synth records of corpus programs, each
// with the corpus's expected output as its run's output.
func corpusRecords(t *testing.T, ids ...string) (kit.RecordSet, map[string][]byte) {
	t.Helper()
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	set := kit.RecordSet{Campaign: "synth", CampaignID: "c0ffee00-0000-4000-8000-000000000001", Lane: cudasynth.LaneName}
	blobs := map[string][]byte{}
	for i, id := range ids {
		for _, it := range items {
			if it.ID != id {
				continue
			}
			out, err := os.ReadFile(filepath.Join("..", "cudasynth", "corpus", id, "expected_stdout.txt"))
			if err != nil {
				t.Fatal(err)
			}
			hash := fmt.Sprintf("%064x", i+1)
			blobs[hash] = out
			set.Records = append(set.Records, kit.Record{Key: "r0/" + id + "#0", Campaign: set.Campaign, CampaignID: set.CampaignID,
				Lane: set.Lane, TaskID: fmt.Sprintf("task-%d", i), AttemptID: fmt.Sprintf("attempt-%d", i), VerdictID: fmt.Sprintf("verdict-%d", i),
				Revision: 1, Categories: []string{it.Category, "extra"}, Answer: it.Program, Stage: "run",
				Artifacts: map[string]string{cudasynth.ArtifactOutputCUDA: hash}})
		}
	}
	if len(set.Records) != len(ids) {
		t.Fatalf("%d of %d corpus programs found", len(set.Records), len(ids))
	}
	return set, blobs
}

// TestRecordItems: which kernels of which records become items, with
// their provenance, IDs and skip reasons, without compiling.
func TestRecordItems(t *testing.T) {
	t.Parallel()
	set, blobs := corpusRecords(t, "basic_02_stencil1d_radius5", "sci_03_conjugate_gradient_csr")
	set.Records = append(set.Records,
		kit.Record{Key: "r0/silent#0", Lane: cudasynth.LaneName, Answer: programFixture},
		kit.Record{Key: "r0/host#0", Lane: cudasynth.LaneName, Answer: "#include <cstdio>\nint main() { printf(\"1\\n\"); }\n"})
	outputs := map[string][]byte{"r0/silent#0": []byte("\n")}
	for _, r := range set.Records[:2] {
		outputs[r.Key] = blobs[r.Artifacts[cudasynth.ArtifactOutputCUDA]]
	}
	items, skips, err := RecordItems(set, outputs, []string{"base", " cicc_o1", "base"})
	if err != nil {
		t.Fatal(err)
	}
	var kernels []string
	for _, it := range items {
		kernels = append(kernels, it.Meta.Kernel)
		s := it.Meta.Source
		if !nameRE.MatchString(it.ID) || !strings.Contains(it.ID, strings.ToLower(it.Meta.Kernel)) || it.Meta.Harness != HarnessProgram ||
			len(it.Meta.Variants) != 2 || s == nil || s.Campaign != "synth" || s.TaskKey == "" || s.Attempt == "" || len(it.Expected) == 0 {
			t.Errorf("item %s: %+v", it.ID, it.Meta)
		}
		if it.Meta.Category != "basic_operations" && it.Meta.Category != "scientific_computing" {
			t.Errorf("item %s: category %q", it.ID, it.Meta.Category)
		}
	}
	if got := strings.Join(kernels, " "); got != "stencil1D spmvCsr axpy updateDirection" {
		t.Errorf("kernels %q", got)
	}
	var reasons []string
	for _, s := range skips {
		reasons = append(reasons, s.Record+"/"+s.Kernel+":"+s.Reason)
	}
	if got := strings.Join(reasons, " "); got != "r0/sci_03_conjugate_gradient_csr#0/dotPartial:template r0/sci_03_conjugate_gradient_csr#0/dotFinal:template "+
		"r0/silent#0/:no_output r0/host#0/:no_kernel" {
		t.Errorf("skips %q", got)
	}
	again, _, _ := RecordItems(set, outputs, []string{"base", "cicc_o1"})
	for i := range again {
		if again[i].ID != items[i].ID {
			t.Errorf("item IDs change between reads: %s, %s", items[i].ID, again[i].ID)
		}
	}
	if _, _, err := RecordItems(set, outputs, []string{"o9"}); err == nil || !strings.Contains(err.Error(), "base, cicc_o0, cicc_o1, fastmath") {
		t.Errorf("unknown variant: %v", err)
	}
	other := set
	other.Records = []kit.Record{{Key: "r0/x#0", Lane: "cuda2hip", Answer: programFixture}}
	if _, _, err := RecordItems(other, nil, []string{"base"}); err == nil {
		t.Error("a cuda2hip record was taken")
	}
}

// TestPrepareFromCampaign: kiln ptx prepare --from-campaign writes a
// corpus folder of program items whose PTX holds the kernel alone (for
// programs with several kernels, template ones and asm helpers among
// them; an asm helper's kernel is over the prompt bound), reports what it skipped, rewrites nothing the second time, and
// the folder is a ptx2cuda corpus whose tasks verify. Bad flags and
// campaigns are the user's errors.
func TestPrepareFromCampaign(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: run and compare would run")
	}
	set, blobs := corpusRecords(t, "basic_02_stencil1d_radius5", "sci_03_conjugate_gradient_csr", "crypto_03_mining_ptx_rotate")
	pending := kit.RecordSet{Campaign: "pending", CampaignID: "p", Lane: cudasynth.LaneName, Pending: 2, Failed: 1}
	hip := kit.RecordSet{Campaign: "hip", CampaignID: "h", Lane: "cuda2hip", Records: set.Records}
	host := testHost
	host.Records = fakeRecords{sets: map[string]kit.RecordSet{"synth": set, "pending": pending, "hip": hip}, blobs: blobs}
	run := func(h kit.Host, args ...string) (string, string, error) {
		c := prepareCommand()
		fs := flag.NewFlagSet(c.Verb, flag.ContinueOnError)
		f := c.Flags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		var out, errb strings.Builder
		err := f(ctx, h, &out, &errb)
		return out.String(), errb.String(), err
	}
	dir := filepath.Join(t.TempDir(), "programs")
	out, errs, err := run(host, "--from-campaign", "synth", "-o", dir, "--variants", "base,cicc_o0")
	if err != nil {
		t.Fatalf("prepare: %v\n%s\n%s", err, out, errs)
	}
	// crypto_03's kernel (SHA-256, unrolled) is over the prompt bound.
	if strings.Count(out, "written") != 4 || !strings.Contains(out, "prepared 4 kernels (8 tasks)") || !strings.Contains(out, "from 3 verified records of campaign synth") ||
		!strings.Contains(out, "skipped: 2 template, 1 too_large") {
		t.Errorf("stdout:\n%s", out)
	}
	if strings.Count(errs, ": template: ") != 2 || !strings.Contains(errs, "dotPartial is a template kernel") ||
		!strings.Contains(errs, "kernel mine: too_large: variant base:") {
		t.Errorf("stderr:\n%s", errs)
	}
	items, err := LoadCorpus(os.DirFS(dir), ".", dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, v := range it.Meta.Variants {
			if e := cudasynth.KernelsPTX(it.PTX[v.Name]); len(e) != 1 || cudasynth.KernelBase(e[0]) != it.Meta.Kernel {
				t.Errorf("%s/%s: PTX entries %v", it.ID, v.Name, e)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, it.ID, FileExpectedStdout)); err != nil || len(b) == 0 {
			t.Errorf("%s: expected output %v", it.ID, err)
		}
	}
	ts, err := source(kit.Tasks{Corpus: dir, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != 8 {
		t.Fatalf("%d tasks", len(ts.Round0))
	}
	var stencil *tools.Item
	for _, task := range ts.Round0 {
		if task.Files[FileProgram] == "" || task.Meta["source_campaign"] != "synth" || task.Meta["harness"] != HarnessProgram ||
			!strings.Contains(task.Prompt, "(task "+task.Meta["item"]+"/"+task.Meta["variant"]+")") {
			t.Errorf("task %s: meta %v", task.Key, task.Meta)
		}
		if task.Meta["kernel"] == "stencil1D" && task.Meta["variant"] == "base" {
			stencil = &tools.Item{Lane: LaneName, Files: task.Files, Meta: task.Meta}
		}
	}
	if stencil == nil {
		t.Fatal("no stencil1D/base task")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	v, err := lane(t).Verify(ctx, *stencil, stencil.Files[FileKernel])
	if err != nil || !v.Pass || strings.Join(tools.PendingStages(v), ",") != "run,compare" {
		t.Errorf("the stencil kernel against its own task: %+v %v", v, err)
	}
	wrong := strings.Replace(stencil.Files[FileKernel], "out[g] = acc;", "out[g] = acc + 1.0f;", 1)
	if v, err := lane(t).Verify(ctx, *stencil, wrong); err != nil || !v.Pass {
		// Wrong only in what it computes: it compiles, and only a GPU run
		// tells (pending here).
		t.Errorf("a wrong stencil kernel: %+v %v", v, err)
	}

	// kiln verify ptx2cuda --item takes a program item folder.
	for _, it := range items {
		if it.Meta.Kernel != "stencil1D" {
			continue
		}
		item, err := ItemFromDir(filepath.Join(dir, it.ID), "cicc_o0")
		if err != nil || item.Files[FileProgram] != it.Program || !strings.Contains(item.Files[FileProgramSpec], `"-O0"`) {
			t.Fatalf("ItemFromDir: %v %v", item.Meta, err)
		}
		if v, err := lane(t).Verify(ctx, item, it.Kernel); err != nil || !v.Pass || len(tools.PendingStages(v)) != 2 {
			t.Errorf("kiln verify of a program item: %+v %v", v, err)
		}
	}

	out, _, err = run(host, "--from-campaign", "synth", "-o", dir, "--variants", "base,cicc_o0")
	if err != nil || strings.Count(out, "unchanged") != 4 {
		t.Errorf("prepare again: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--from-campaign", "synth"}, "needs -o"},
		{[]string{"--from-campaign", "synth", "-o", dir, "--dir", dir}, "exclude each other"},
		{[]string{"-o", dir}, "-o goes with --from-campaign"},
		{[]string{"--from-campaign", "nope", "-o", dir}, `no campaign "nope"`},
		{[]string{"--from-campaign", "pending", "-o", dir}, "has no verified record: 2 pending"},
		{[]string{"--from-campaign", "hip", "-o", dir}, "is of lane cuda2hip; lane ptx2cuda takes records of cuda-synth"},
		{[]string{"--from-campaign", "synth", "-o", dir, "--variants", "o3"}, `variant "o3"`},
	} {
		_, _, err := run(host, c.args...)
		var ue kit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %T %v, want a usage error with %q", c.args, err, err, c.want)
		}
	}
	if _, _, err := run(testHost, "--from-campaign", "synth", "-o", dir); err == nil || !strings.Contains(err.Error(), "no run database") {
		t.Errorf("without a record reader: %v", err)
	}
}
