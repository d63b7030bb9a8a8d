package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/report"
)

// Measures are the answer-level measurements an evaluation report
// summarises when a lane records them.
func Measures() []string {
	return []string{"latency_ratio", "nae_max", "opcode_similarity", "speedup"}
}

// Run is one model's evaluation campaign of one spec (kiln eval).
type Run struct {
	Spec  string // spec file
	Model string
	Camp  runs.Campaign
}

// Reusable finds the newest campaign named name whose stored spec is
// derived; reuse is false when there is none (or fresh).
func Reusable(ctx context.Context, st *runs.Store, name string, derived []byte, fresh bool) (runs.Campaign, bool, error) {
	if fresh {
		return runs.Campaign{}, false, nil
	}
	camp, err := st.Campaign(ctx, name)
	if err != nil {
		return runs.Campaign{}, false, nil //nolint:nilerr // none yet
	}
	if !bytes.Equal(camp.Spec, derived) {
		return runs.Campaign{}, false, nil // the spec changed: a new evaluation
	}
	return camp, true, nil
}

var nameBad = regexp.MustCompile(`[^a-z0-9._-]+`)

// CampaignName is <spec name>.eval.<model>, lower-cased and cut to the
// 64 bytes a campaign name may have.
func CampaignName(specName, model string) string {
	m := nameBad.ReplaceAllString(strings.ToLower(model), "-")
	name := specName + ".eval." + m
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// ParseKs reads a comma-separated list of the ks of pass@k.
func ParseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q: want positive integers", f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// Collect builds the report of the evaluation campaigns from their stored
// results; ks above every task's samples say nothing and are left out
// (pass@1 stays).
func Collect(ctx context.Context, st *runs.Store, evals []Run, ks []int) (*Report, error) {
	var samples []Sample
	maxN := 0
	for _, ev := range evals {
		perTask := map[string]int{}
		err := st.EachResult(ctx, ev.Camp.ID, -1, func(r runs.Result) error {
			s, err := FromResult(ev.Model, r)
			if err != nil {
				return err
			}
			perTask[s.Task]++
			samples = append(samples, s)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", ev.Model, err)
		}
		for _, n := range perTask {
			maxN = max(maxN, n)
		}
	}
	ks = slices.DeleteFunc(slices.Clone(ks), func(k int) bool { return k > maxN && k != 1 })
	return Build(samples, Options{K: ks, Measures: Measures()})
}

// Markdown is kiln eval's report: the campaigns evaluated, then the report.
func Markdown(evals []Run, rep *Report) ([]byte, error) {
	var md bytes.Buffer
	fmt.Fprintf(&md, "# kiln eval\n\n")
	for _, ev := range evals {
		fmt.Fprintf(&md, "- model `%s`: campaign %s (%s, %s), spec %s\n", ev.Model, ev.Camp.ID, ev.Camp.Name, ev.Camp.Lane, ev.Spec)
	}
	md.WriteString("\n")
	if err := rep.WriteMarkdown(&md); err != nil {
		return nil, err
	}
	return md.Bytes(), nil
}

// FolderFiles are the files WriteFolder writes.
func FolderFiles() []string { return []string{"report.md", "report.json", "passk.svg"} }

// WriteFolder writes the report into the folder dir, which exists:
// report.md (md), report.json and passk.svg, each atomically.
func WriteFolder(dir string, md []byte, rep *Report) error {
	files := map[string]func(io.Writer) error{
		"report.md": func(w io.Writer) error { _, err := w.Write(md); return err },
		"report.json": func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		},
		"passk.svg": rep.WriteSVG,
	}
	for _, name := range FolderFiles() {
		if err := report.WriteFileAtomic(filepath.Join(dir, name), files[name]); err != nil {
			return err
		}
	}
	return nil
}
