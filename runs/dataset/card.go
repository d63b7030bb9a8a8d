package dataset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/runs/curate"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// infoName is the dataset's key in dataset_info.json.
func infoName(name string) string {
	return "kiln_" + strings.Trim(unsafeName.ReplaceAllString(name, "_"), "_")
}

// datasetInfo writes LLaMA-Factory's dataset_info.json: one entry per
// split, with the columns and tags of the format.
func datasetInfo(opt Options, validation bool) ([]byte, error) {
	entry := func(file string) map[string]any {
		e := map[string]any{"file_name": file}
		switch opt.Format {
		case Messages:
			e["formatting"] = "sharegpt"
			e["columns"] = map[string]string{"messages": "messages"}
			e["tags"] = map[string]string{"role_tag": "role", "content_tag": "content", "user_tag": "user",
				"assistant_tag": "assistant", "system_tag": "system", "observation_tag": "tool"}
		case ShareGPT:
			e["formatting"] = "sharegpt"
			e["columns"] = map[string]string{"messages": "conversations", "system": "system"}
		case Alpaca:
			e["formatting"] = "alpaca"
			e["columns"] = map[string]string{"prompt": "instruction", "query": "input", "response": "output", "system": "system"}
		}
		return e
	}
	name := infoName(opt.Name)
	info := map[string]any{name: entry("train.jsonl")}
	if validation {
		info[name+"_validation"] = entry("validation.jsonl")
	}
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// card writes the dataset card (README.md): the Hugging Face front matter
// naming the splits, then what is in the dataset and how it was curated.
func card(sum *Summary, opt Options, validation bool) []byte {
	var b strings.Builder
	cardFront(&b, sum, opt, validation)
	cardRecords(&b, opt, validation)
	cardCuration(&b, sum, opt)
	cardContamination(&b, sum, opt)
	cardCounts(&b, sum)
	return []byte(b.String())
}

// cardFront writes the front matter, the title and the splits.
func cardFront(b *strings.Builder, sum *Summary, opt Options, validation bool) {
	b.WriteString("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: train.jsonl\n")
	if validation {
		b.WriteString("  - split: validation\n    path: validation.jsonl\n")
	}
	b.WriteString("tags:\n- kiln\n- code\n---\n\n")
	fmt.Fprintf(b, "# %s\n\n", opt.Name)
	fmt.Fprintf(b, "Exported by kiln from campaign `%s` (%s), format `%s`. Every sample was verified by execution", sum.Campaign, sum.CampaignID, sum.Format)
	if opt.Pending {
		b.WriteString(", except pending ones (passed every stage that ran, stages left for a GPU host), which were asked for")
	}
	b.WriteString(".\n\n")
	fmt.Fprintf(b, "| split | samples |\n|---|---:|\n| train | %d |\n", sum.Train)
	if validation {
		fmt.Fprintf(b, "| validation | %d |\n", sum.Validation)
	}
	fmt.Fprintf(b, "\nThe split is by task (a hash of the task key), never by sample: every sample of a task is in the same split (validation fraction %g).\n\n", opt.Validation)
}

// cardRecords says what a record holds in the export's format.
func cardRecords(b *strings.Builder, opt Options, validation bool) {
	b.WriteString("## Records\n\n")
	switch opt.Format {
	case Messages:
		b.WriteString("`messages`: system, user and assistant turns in the OpenAI chat layout (TRL `SFTTrainer`, ms-swift, Axolotl `chat_template`).")
		switch opt.Think {
		case ThinkField:
			b.WriteString(" The reasoning is in the assistant turn's `reasoning_content`.")
		case ThinkTags:
			b.WriteString(" The reasoning is in the assistant turn's content, inside `<think>...</think>` before the answer.")
		}
	case ShareGPT:
		b.WriteString("`conversations` in LLaMA-Factory's sharegpt layout (`human`, `gpt`, `function_call`, `observation`) with `system`.")
		if opt.Think != ThinkNone {
			b.WriteString(" The reasoning is inside `<think>...</think>` before the answer.")
		}
	case Alpaca:
		b.WriteString("`instruction`, `input`, `output`, `system`.")
		if opt.Think != ThinkNone {
			b.WriteString(" The reasoning is inside `<think>...</think>` before the answer.")
		}
	case Raw:
		b.WriteString("kiln's own records (schema `kiln.sample/v1`) with a `curation` section: full provenance.")
	}
	if opt.Trajectories {
		b.WriteString(" Trajectories: every turn is kept, tool calls and tool results included.")
	}
	b.WriteString(" Each record also has `id`, `lane`, `task`, `round`, `categories`, `model`, `difficulty` and, where measured, `speedup`.\n\n")
	if opt.Format != Raw {
		fmt.Fprintf(b, "For LLaMA-Factory, `dataset_info.json` names the splits `%s`", infoName(opt.Name))
		if validation {
			fmt.Fprintf(b, " and `%s_validation`", infoName(opt.Name))
		}
		b.WriteString(".\n\n")
	}
}

// cardCuration says what was read, left out, deduplicated and selected.
func cardCuration(b *strings.Builder, sum *Summary, opt Options) {
	b.WriteString("## Curation\n\n")
	fmt.Fprintf(b, "- Results read: %d; eligible (verified%s): %d; written: %d.\n", sum.Results, map[bool]string{true: " or pending", false: ""}[opt.Pending], sum.Eligible, sum.Written)
	fmt.Fprintf(b, "- Left out: %s.\n", countList(sum.Excluded))
	if opt.Dedup {
		p := opt.Params
		fmt.Fprintf(b, "- Near-duplicates: MinHash over normalised code (%d-token shingles, %d permutations, LSH %d bands x %d rows, Jaccard >= %g), exact duplicates first; the kept sample of a cluster is the best (verified, fastest, shortest reasoning), earlier rounds first.\n",
			p.Shingle, p.Perms, p.Bands, p.Rows, p.Threshold)
	} else {
		b.WriteString("- Near-duplicates: not removed.\n")
	}
	fmt.Fprintf(b, "- Selection: `%s`", opt.Selection.Policy)
	if opt.Selection.Policy == "concur" {
		fmt.Fprintf(b, " (keep speedup > %g, single-operator share %g)", opt.Selection.KeepSpeedup, opt.Selection.SingleShare)
	}
	if opt.Selection.MinSpeedup > 0 {
		fmt.Fprintf(b, "; only samples with speedup >= %g", opt.Selection.MinSpeedup)
	}
	if opt.Selection.Stream != curate.StreamAny {
		fmt.Fprintf(b, "; stream policy `%s` (kernels on the current stream)", opt.Selection.Stream)
	}
	fmt.Fprintf(b, "; kept by reason: %s.\n", countList(sum.Selected))
	fmt.Fprintf(b, "- Difficulty: by each task's average reasoning length, easy < %g <= medium <= %g < hard tokens (ConCuR section 4.4).\n\n", opt.Tiers.Easy, opt.Tiers.Hard)
}

// cardContamination lists the benchmarks checked and what matched them.
func cardContamination(b *strings.Builder, sum *Summary, opt Options) {
	b.WriteString("## Contamination\n\n")
	if len(sum.Benchmarks) == 0 {
		b.WriteString("No benchmark folder was given: the samples were not checked against any benchmark.\n\n")
	} else {
		for _, bf := range sum.Benchmarks {
			fmt.Fprintf(b, "- `%s`: %d documents\n", bf.Folder, bf.Files)
		}
		fmt.Fprintf(b, "\n%d samples matched a benchmark document (task input or answer, exact or near-duplicate); ", sum.Contaminated)
		if opt.KeepContaminated {
			fmt.Fprintf(b, "they are kept and flagged (%d).\n\n", sum.Flagged)
		} else {
			b.WriteString("they are left out.\n\n")
		}
	}
}

// cardCounts tabulates the samples by lane, category, model, round and
// difficulty, and lists the toolchains.
func cardCounts(b *strings.Builder, sum *Summary) {
	section := func(title string, m map[string]int) {
		fmt.Fprintf(b, "## %s\n\n| | samples |\n|---|---:|\n", title)
		for _, k := range sortedKeys(m) {
			fmt.Fprintf(b, "| %s | %d |\n", mdCell(k), m[k])
		}
		b.WriteString("\n")
	}
	section("By lane", sum.ByLane)
	section("By category", sum.ByCategory)
	section("By model", sum.ByModel)
	section("By round", sum.ByRound)
	section("By difficulty", sum.ByDifficulty)
	b.WriteString("## Toolchains\n\n")
	if len(sum.Toolchains) == 0 {
		b.WriteString("None recorded.\n")
	}
	for _, k := range sortedKeys(sum.Toolchains) {
		fmt.Fprintf(b, "- %s: %s\n", k, strings.Join(sum.Toolchains[k], "; "))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func mdCell(s string) string {
	if s == "" {
		return "(none)"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
