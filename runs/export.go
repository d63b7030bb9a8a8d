package runs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// SampleSchema names the version of the Sample record layout.
const SampleSchema = "kiln.sample/v1"

// ExportOptions selects what Export writes.
type ExportOptions struct {
	// All includes failing and pending results too; by default only
	// passing ones, complete. Task faults (the task's reference failed,
	// OutcomeTaskFault) are never exported: they hold no judged answer.
	All bool
	// Pending includes pending results (passed every stage that ran, stages
	// left for another host) with the passing ones.
	Pending bool
	// Round restricts the export to one round; nil means all rounds.
	Round *int
	// Transcripts includes each attempt's full transcript (large).
	Transcripts bool
	// Texts puts the content of every text artifact (sources, PTX, SASS,
	// RDNA3, host assembly, outputs...) in Sample.ArtifactText, so that the
	// export stands alone without the blob store. Binary artifacts
	// (executables) and texts over MaxArtifactText stay hashes only.
	Texts bool
}

// MaxArtifactText bounds one artifact inlined by ExportOptions.Texts.
const MaxArtifactText = 4 << 20

// Sample is one exported record: a judged answer with full provenance. See
// the package doc for the field meanings.
type Sample struct {
	Schema     string            `json:"schema"`
	ID         string            `json:"id"`
	Campaign   SampleCampaign    `json:"campaign"`
	Lane       string            `json:"lane"`
	Round      int               `json:"round"`
	TaskID     string            `json:"task_id"`
	TaskKey    string            `json:"task_key"`
	Categories []string          `json:"categories"`
	Meta       map[string]string `json:"meta"`
	Files      map[string]string `json:"files"`
	Prompt     string            `json:"prompt,omitempty"`
	Answer     string            `json:"answer"`
	// Pass: verified, every stage ran and passed. Pending: every stage
	// that ran passed, some are left for another host (Pass and
	// verdict.pass are then false).
	Pass      bool              `json:"pass"`
	Pending   bool              `json:"pending"`
	Verdict   SampleVerdict     `json:"verdict"`
	Attempt   SampleAttempt     `json:"attempt"`
	Usage     SampleUsage       `json:"usage"`
	Model     string            `json:"model"`
	Endpoint  string            `json:"endpoint"`
	Toolchain map[string]string `json:"toolchain"`
	Policy    string            `json:"policy"`
	Artifacts map[string]string `json:"artifacts"`
	// ArtifactText holds the text artifacts' content (ExportOptions.Texts).
	ArtifactText map[string]string  `json:"artifact_text,omitempty"`
	Measurements map[string]float64 `json:"measurements"`
	CreatedAt    time.Time          `json:"created_at"`
	Transcript   json.RawMessage    `json:"transcript,omitempty"`
}

// SampleCampaign identifies the campaign a sample came from.
type SampleCampaign struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SampleVerdict is the verdict revision a sample carries.
type SampleVerdict struct {
	ID       string `json:"id"`
	Revision int    `json:"revision"`
	// Pass is a complete pass, as Sample.Pass (false while pending).
	Pass bool `json:"pass"`
	// Pending: passed every stage that ran, with stages left for another
	// host; not a verified sample yet.
	Pending    bool            `json:"pending"`
	Class      string          `json:"class"`
	Stage      string          `json:"stage"`
	Stages     json.RawMessage `json:"stages"`
	Diagnostic string          `json:"diagnostic,omitempty"`
	// Labels are the verdict's stored labels; absent for verdicts written
	// before labels were stored.
	Labels *VerdictLabels `json:"labels,omitempty"`
}

// SampleAttempt describes the attempt that produced the answer.
type SampleAttempt struct {
	ID          string    `json:"id"`
	Number      int       `json:"number"`
	Turns       int       `json:"turns"`
	ToolCalls   int       `json:"tool_calls"`
	RepairTurns int       `json:"repair_turns"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
}

// SampleUsage is the attempt's cost.
type SampleUsage struct {
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	ReasoningTokens  int    `json:"reasoning_tokens"`
	PromptSource     string `json:"prompt_source"`
	CompletionSource string `json:"completion_source"`
	ReasoningSource  string `json:"reasoning_source"`
	LatencyMS        int64  `json:"latency_ms"`
	TTFTMS           int64  `json:"ttft_ms"`
	Calls            int    `json:"calls"`
}

// NewSample builds the export record of a result.
func NewSample(c Campaign, r Result, transcript bool) Sample {
	t, a, v := r.Task, r.Attempt, r.Verdict
	pending := v.Outcome() == OutcomePending // parses the stages: once per sample
	s := Sample{
		Schema:       SampleSchema,
		ID:           a.ID,
		Campaign:     SampleCampaign{ID: c.ID, Name: c.Name},
		Lane:         t.Lane,
		Round:        t.Round,
		TaskID:       t.ID,
		TaskKey:      t.Key,
		Categories:   orEmpty(t.Categories),
		Meta:         nonNilMap(t.Meta),
		Files:        nonNilMap(t.Files),
		Prompt:       t.Prompt,
		Answer:       a.Answer,
		Pass:         v.Pass && !pending,
		Pending:      pending,
		Verdict:      SampleVerdict{ID: v.ID, Revision: v.Revision, Pass: v.Pass && !pending, Pending: pending, Class: v.Class, Stage: v.Stage, Stages: jsonOrNull(v.Stages), Diagnostic: v.Diagnostic, Labels: v.Labels},
		Attempt:      SampleAttempt{ID: a.ID, Number: a.Number, Turns: a.Turns, ToolCalls: a.ToolCalls, RepairTurns: a.RepairTurns, StartedAt: a.StartedAt, FinishedAt: a.FinishedAt},
		Usage:        SampleUsage(a.Usage),
		Model:        a.Model,
		Endpoint:     a.Endpoint,
		Toolchain:    nonNilMap(v.Toolchain),
		Policy:       v.Policy,
		Artifacts:    nonNilMap(v.Artifacts),
		Measurements: v.Measurements,
		CreatedAt:    v.CreatedAt,
	}
	if s.Measurements == nil {
		s.Measurements = map[string]float64{}
	}
	if transcript && len(a.Transcript) > 0 {
		s.Transcript = json.RawMessage(a.Transcript)
	}
	return s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func jsonOrNull(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return json.RawMessage(b)
}

// Export writes the campaign's results as JSON Lines, one Sample per line,
// in claim order: passing results only unless opt.All, never task faults.
// It returns how many records were written.
func (s *Store) Export(ctx context.Context, campaignID string, w io.Writer, opt ExportOptions) (int, error) {
	c, err := s.Campaign(ctx, campaignID)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	round := -1
	if opt.Round != nil {
		round = *opt.Round
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err = s.eachResult(ctx, c.ID, round, func(r Result) error {
		switch r.Verdict.Outcome() {
		case OutcomeTaskFault:
			return nil
		case OutcomeFail:
			if !opt.All {
				return nil
			}
		case OutcomePending:
			if !opt.All && !opt.Pending {
				return nil
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		sample := NewSample(c, r, opt.Transcripts)
		if opt.Texts {
			texts, err := s.ArtifactTexts(r.Verdict.Artifacts)
			if err != nil {
				return fmt.Errorf("task %s: %w", r.Task.Key, err)
			}
			sample.ArtifactText = texts
		}
		if err := enc.Encode(sample); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// ArtifactTexts reads the text artifacts among arts (name -> hash): valid
// UTF-8 without NUL bytes, at most MaxArtifactText long.
func (s *Store) ArtifactTexts(arts map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for name, h := range arts {
		b, err := s.blobs.Get(h)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: %w", name, err)
		}
		if len(b) > MaxArtifactText || bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			continue
		}
		out[name] = string(b)
	}
	return out, nil
}
