package web

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
)

// rateWindow is the window of the current throughput (attempts per minute).
const rateWindow = 10 * time.Minute

// campaignRow is one line of the campaigns list.
type campaignRow struct {
	api.CampaignInfo
	Done, Total          int
	Pass, Fail, Pending  int
	TaskFaults           int
	Percent              float64
	PerMinute            float64 // tasks judged per minute (last 10 minutes while running, else overall)
	ETA                  string
	Running              bool
	StateClass           string
	TokensText, RateText string
}

type listPage struct {
	Title     string
	Campaigns []campaignRow
	Now       time.Time
}

func (h *Handler) listData(ctx context.Context) (listPage, error) {
	infos, err := h.cfg.Service.List(ctx)
	if err != nil {
		return listPage{}, err
	}
	now := h.cfg.Now()
	p := listPage{Title: "campaigns", Now: now}
	for _, in := range infos {
		row := campaignRow{CampaignInfo: in, Done: in.Counts["done"], Total: in.Counts["tasks"],
			Pass: in.Counts["pass"], Fail: in.Counts["fail"], Pending: in.Counts["pending"], TaskFaults: in.Counts["task_faults"],
			Running:    in.State == string(runs.CampaignRunning) || in.State == string(runs.CampaignQueued),
			StateClass: "state-" + in.State, TokensText: humanInt(in.Tokens)}
		if row.Total > 0 {
			row.Percent = 100 * float64(row.Done) / float64(row.Total)
		}
		sp, err := h.cfg.Store.JudgedSpan(ctx, in.ID, now.Add(-rateWindow))
		if err != nil {
			return listPage{}, err
		}
		row.PerMinute, row.ETA = throughput(sp, row.Running, row.Total-row.Done, now)
		row.RateText = fmt.Sprintf("%.1f/min", row.PerMinute)
		p.Campaigns = append(p.Campaigns, row)
	}
	return p, nil
}

// throughput gives tasks judged per minute (over the last rateWindow
// while running, else from the first to the last judged task) and, for a
// running campaign, the time left for left more tasks at that rate.
func throughput(sp runs.Span, running bool, left int, now time.Time) (float64, string) {
	var perMin float64
	switch {
	case running && sp.Since > 0:
		win := rateWindow
		if !sp.First.IsZero() && now.Sub(sp.First) < win {
			win = now.Sub(sp.First)
		}
		perMin = float64(sp.Since) / math.Max(win.Minutes(), 1.0/60)
	case sp.Judged > 1 && sp.Last.After(sp.First):
		perMin = float64(sp.Judged-1) / math.Max(sp.Last.Sub(sp.First).Minutes(), 1.0/60)
	}
	if !running {
		return perMin, ""
	}
	if left <= 0 {
		return perMin, "finishing"
	}
	if perMin <= 0 {
		return perMin, "unknown"
	}
	return perMin, humanDuration(time.Duration(float64(left) / perMin * float64(time.Minute)))
}

type campaignPage struct {
	Title                                      string
	C                                          runs.Campaign
	Info                                       api.CampaignInfo
	Row                                        campaignRow
	Running                                    bool
	Stats                                      statsPage
	Spec                                       string
	CanResume, CanRefine, CanCancel, CanExport bool
}

func (h *Handler) campaignData(ctx context.Context, c runs.Campaign) (campaignPage, error) {
	st, err := h.statsData(ctx, c)
	if err != nil {
		return campaignPage{}, err
	}
	running := c.State == runs.CampaignRunning || c.State == runs.CampaignQueued
	return campaignPage{Title: c.Name, C: c, Info: st.Row.CampaignInfo, Row: st.Row, Running: running, Stats: st,
		Spec:      maskSecrets(string(c.Spec)),
		CanCancel: running,
		CanResume: h.cfg.Resume != nil && c.State == runs.CampaignFailed,
		CanRefine: h.cfg.Refine != nil && !running,
		CanExport: h.cfg.Export != nil}, nil
}

// categoryRow is one category's line and bar.
// categoryRow is one category's figures; N is its judged tasks (pass and
// fail), the rate's denominator: no rate when 0.
type categoryRow struct {
	Category                      string
	Pass, Fail, Pending, N        int
	TaskFaults                    int
	Rate, Low, High               float64
	BarX, BarW, LowX, HighX, RowY float64
}

type roundRow struct {
	Round, Tasks, Pass, Fail, Pending, Judged int
	TaskFaults                                int
	Rate                                      float64
	Lift                                      string // pass-rate change from the round before
	Targets                                   []string
	Stop                                      string
	SynthTasks, DrawnTasks                    int
}

type statsPage struct {
	C          runs.Campaign
	Row        campaignRow
	Categories []categoryRow
	ChartH     int
	Classes    []runs.ClassCount
	Rounds     []roundRow
	Faults     []runs.ClassCount
	Timeline   timelineChart
}

func (h *Handler) statsData(ctx context.Context, c runs.Campaign) (statsPage, error) {
	st := h.cfg.Store
	p := statsPage{C: c}
	now := h.cfg.Now()
	// One pass over the campaign's tasks gives its counts (the same
	// numbers as the API's), the rounds, the categories and the span.
	// The timeline's bucket width comes from the campaign's own times, so
	// that its scan runs beside the overview's (the store reads on several
	// connections).
	end := c.UpdatedAt
	if c.State == runs.CampaignRunning || c.State == runs.CampaignQueued || end.Before(c.CreatedAt) {
		end = now
	}
	width := bucketWidth(end.Sub(c.CreatedAt))
	var (
		ov      runs.Overview
		buckets []runs.Bucket
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ov, err = st.Overview(gctx, c.ID, now.Add(-rateWindow)); return err })
	g.Go(func() (err error) { buckets, err = st.Timeline(gctx, c.ID, width); return err })
	if err := g.Wait(); err != nil {
		return p, err
	}
	tallies := ov.Rounds
	row := campaignRow{CampaignInfo: api.CampaignInfo{ID: c.ID, Name: c.Name, Lane: c.Lane, State: string(c.State),
		Round: c.Round, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt},
		Running: c.State == runs.CampaignRunning || c.State == runs.CampaignQueued, StateClass: "state-" + string(c.State)}
	for _, t := range tallies {
		row.Total += t.Tasks
		row.Done += t.Done
		row.Pass += t.Pass
		row.Fail += t.Fail
		row.Pending += t.Pending
		row.TaskFaults += t.TaskFaults
		row.Tokens += t.PromptTokens + t.CompletionTokens
	}
	if c.State == runs.CampaignFailed {
		row.Error = c.Note
	}
	row.TokensText = humanInt(row.Tokens)
	if row.Total > 0 {
		row.Percent = 100 * float64(row.Done) / float64(row.Total)
	}
	sp := ov.Span
	row.PerMinute, row.ETA = throughput(sp, row.Running, row.Total-row.Done, now)
	row.RateText = fmt.Sprintf("%.1f/min", row.PerMinute)
	p.Row = row

	for i, ct := range ov.Categories {
		n := ct.Judged()
		r := categoryRow{Category: ct.Category, Pass: ct.Pass, Fail: ct.Fail, Pending: ct.Pending, TaskFaults: ct.TaskFaults, N: n}
		if n > 0 {
			r.Rate = float64(ct.Pass) / float64(n)
		}
		r.Low, r.High = refinement.Wilson(ct.Pass, n, 1.96)
		r.RowY = float64(i * 22)
		r.BarX, r.BarW = chartX0, r.Rate*chartW
		r.LowX, r.HighX = chartX0+r.Low*chartW, chartX0+r.High*chartW
		p.Categories = append(p.Categories, r)
	}
	p.ChartH = len(p.Categories)*22 + 24
	p.Classes = ov.Classes
	faults, err := st.Faults(ctx, c.ID)
	if err != nil {
		return p, err
	}
	for class, n := range faults {
		p.Faults = append(p.Faults, runs.ClassCount{Class: class, N: n})
	}
	sort.Slice(p.Faults, func(i, j int) bool { return p.Faults[i].N > p.Faults[j].N })
	if p.Rounds, err = h.rounds(ctx, c, tallies); err != nil {
		return p, err
	}
	p.Timeline = makeTimeline(buckets, width)
	return p, nil
}

// rounds joins the rounds' tallies with the decisions stored for them.
func (h *Handler) rounds(ctx context.Context, c runs.Campaign, tallies []runs.RoundTally) ([]roundRow, error) {
	recs, err := h.cfg.Store.Rounds(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	decided := map[int]engine.RoundRecord{}
	for _, r := range recs {
		if d, err := engine.DecodeRoundRecord(r.Record); err == nil {
			decided[r.Round] = d
		}
	}
	var out []roundRow
	for i, t := range tallies {
		row := roundRow{Round: t.Round, Tasks: t.Tasks, Pass: t.Pass, Fail: t.Fail, Pending: t.Pending, TaskFaults: t.TaskFaults,
			Judged: t.Judged()}
		if n := t.Judged(); n > 0 {
			row.Rate = float64(t.Pass) / float64(n)
		}
		if i > 0 && tallies[i-1].Judged() > 0 && t.Judged() > 0 {
			row.Lift = fmt.Sprintf("%+.1f pt", 100*(row.Rate-out[i-1].Rate))
		}
		if d, ok := decided[t.Round]; ok {
			for _, ch := range d.Choices {
				row.Targets = append(row.Targets, ch.Category)
			}
			row.Stop, row.SynthTasks, row.DrawnTasks = d.Stop, d.SynthTasks, d.DrawnTasks
		}
		out = append(out, row)
	}
	return out, nil
}

// The category chart's geometry (SVG user units).
const (
	chartX0 = 190.0
	chartW  = 360.0
)

// timelineChart is the throughput and token chart: bars of attempts per
// bucket and a line of tokens.
type timelineChart struct {
	Bars      []timelineBar
	TokenLine string // SVG polyline points
	Width     string // bucket width, human
	MaxAtt    int
	MaxTokens string
	From, To  string
	Empty     bool
}

type timelineBar struct {
	X, Y, W, H float64
	Title      string
}

const (
	tlW = 560.0
	tlH = 120.0
)

// bucketWidth picks a round bucket width giving at most about 60 buckets.
func bucketWidth(span time.Duration) time.Duration {
	for _, w := range []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute,
		5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour} {
		if span/w <= 60 {
			return w
		}
	}
	return 7 * 24 * time.Hour
}

func makeTimeline(bs []runs.Bucket, width time.Duration) timelineChart {
	ch := timelineChart{Width: humanDuration(width), Empty: len(bs) == 0}
	if len(bs) == 0 {
		return ch
	}
	first, last := bs[0].Start, bs[len(bs)-1].Start
	n := int(last.Sub(first)/width) + 1
	var maxTok int64
	for _, b := range bs {
		ch.MaxAtt = max(ch.MaxAtt, b.Judged)
		maxTok = max(maxTok, b.Tokens)
	}
	bw := tlW / float64(n)
	var pts []string
	for _, b := range bs {
		i := float64(b.Start.Sub(first) / width)
		hgt := tlH * float64(b.Judged) / float64(max(ch.MaxAtt, 1))
		ch.Bars = append(ch.Bars, timelineBar{X: i * bw, Y: tlH - hgt, W: math.Max(bw-1, 1), H: hgt,
			Title: fmt.Sprintf("%s: %d judged, %s tokens", b.Start.Format("15:04:05"), b.Judged, humanInt(b.Tokens))})
		y := tlH - tlH*float64(b.Tokens)/float64(max(maxTok, 1))
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", i*bw+bw/2, y))
	}
	ch.TokenLine = strings.Join(pts, " ")
	ch.MaxTokens = humanInt(maxTok)
	ch.From, ch.To = first.Format("2006-01-02 15:04"), last.Add(width).Format("15:04")
	return ch
}

type verdictsPage struct {
	Title   string
	C       runs.Campaign
	F       runs.VerdictFilter
	Rows    []runs.VerdictRow
	Next    string // URL of the next page, "" on the last
	First   string // URL of the first page
	Options struct {
		Categories, Classes, Models []string
		Rounds                      []int
	}
	RoundText string
	After     int64
}

func (h *Handler) verdictsData(ctx context.Context, c runs.Campaign, f runs.VerdictFilter, after int64) (verdictsPage, error) {
	st := h.cfg.Store
	p := verdictsPage{Title: "verdicts of " + c.Name, C: c, F: f, After: after}
	// The page and the filter's choices (from aggregates, not from the
	// rows) are read side by side.
	var (
		rows    []runs.VerdictRow
		classes []runs.ClassCount
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { rows, err = st.BrowseVerdicts(gctx, c.ID, f, after, PageSize+1); return err })
	g.Go(func() (err error) { p.Options.Categories, err = st.CampaignCategories(gctx, c.ID); return err })
	g.Go(func() (err error) { classes, err = st.FailureClasses(gctx, c.ID); return err })
	g.Go(func() (err error) { p.Options.Models, err = st.CampaignModels(gctx, c.ID); return err })
	if err := g.Wait(); err != nil {
		return p, err
	}
	q := filterQuery(f)
	p.First = "/campaigns/" + c.ID + "/verdicts" + q
	if len(rows) > PageSize {
		rows = rows[:PageSize]
		sep := "?"
		if q != "" {
			sep = "&"
		}
		p.Next = fmt.Sprintf("%s%safter=%d", p.First, sep, rows[len(rows)-1].Seq)
	}
	p.Rows = rows
	if f.Round >= 0 {
		p.RoundText = fmt.Sprint(f.Round)
	}
	for _, cl := range classes {
		p.Options.Classes = append(p.Options.Classes, cl.Class)
	}
	for r := 0; r <= c.Round; r++ {
		p.Options.Rounds = append(p.Options.Rounds, r)
	}
	return p, nil
}

// filterQuery is f as a query string ("" or "?...").
func filterQuery(f runs.VerdictFilter) string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+urlEscape(v))
		}
	}
	add("category", f.Category)
	add("class", f.Class)
	add("model", f.Model)
	add("outcome", f.Outcome)
	if f.Round >= 0 {
		add("round", fmt.Sprint(f.Round))
	}
	if len(parts) == 0 {
		return ""
	}
	return "?" + strings.Join(parts, "&")
}

// ---- the sample page ----

type message struct {
	Role       string
	Content    template.HTML
	Reasoning  string
	ToolCalls  []toolCall
	ToolCallID string
	Name       string
}

type toolCall struct {
	ID, Name, Arguments string
}

type stageRow struct {
	Name     string
	OK       bool
	Skipped  bool
	Detail   string
	Duration string
}

type artifactView struct {
	Name   string
	Size   int
	Binary bool
	Code   template.HTML
	URL    string
}

type diffView struct {
	Want, Got string
	Lines     []diffLine
	Truncated bool
}

type verdictView struct {
	runs.Verdict
	Pending      bool
	StageRows    []stageRow
	Measurements []measurement
	Artifacts    []artifactView
	Diffs        []diffView
}

type measurement struct {
	Name  string
	Value string
}

type attemptPage struct {
	Title    string
	C        runs.Campaign
	Task     runs.Task
	A        runs.Attempt
	Others   []runs.Attempt
	Prompt   template.HTML
	Messages []message
	Answer   template.HTML
	Verdicts []verdictView
	Checks   int
	Files    []artifactView
	// TranscriptError says why a stored transcript could not be read.
	TranscriptError string
}

// transcript is the stored transcript (agent.Attempt's JSON): only what
// the page shows.
type transcript struct {
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Reasoning string `json:"reasoning"`
		ToolCalls []struct {
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
	} `json:"messages"`
	Checks []json.RawMessage `json:"checks"`
}

func (h *Handler) attemptData(ctx context.Context, id string) (attemptPage, error) {
	st := h.cfg.Store
	a, err := st.Attempt(ctx, id)
	if err != nil {
		return attemptPage{}, err
	}
	t, err := st.Task(ctx, a.TaskID)
	if err != nil {
		return attemptPage{}, err
	}
	c, err := st.Campaign(ctx, t.CampaignID)
	if err != nil {
		return attemptPage{}, err
	}
	p := attemptPage{Title: t.Key, C: c, Task: t, A: a}
	if others, err := st.Attempts(ctx, t.ID); err == nil {
		for _, o := range others {
			if o.ID != a.ID {
				p.Others = append(p.Others, o)
			}
		}
	}
	p.Answer = highlight(a.Answer, guessLang(a.Answer))
	if t.Prompt != "" {
		p.Prompt = highlightText(t.Prompt)
	}
	for name, body := range t.Files {
		p.Files = append(p.Files, artifactView{Name: name, Size: len(body), Code: highlight(body, langOf(name, body))})
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Name < p.Files[j].Name })
	if len(a.Transcript) > 0 {
		p.readTranscript(a.Transcript)
	}
	vs, err := st.Verdicts(ctx, a.ID)
	if err != nil {
		return attemptPage{}, err
	}
	for _, v := range vs {
		p.Verdicts = append(p.Verdicts, verdictOf(st, a.ID, t.Files, v))
	}
	return p, nil
}

// readTranscript shows an attempt's transcript: its messages (the first
// user message is the prompt when the task has none) and its checks.
func (p *attemptPage) readTranscript(transcriptJSON []byte) {
	// The engine stores the messages as a JSON array; an object with
	// "messages" (agent.Attempt's own form) is read too.
	var tr transcript
	raw := strings.TrimSpace(string(transcriptJSON))
	var err error
	if strings.HasPrefix(raw, "[") {
		err = json.Unmarshal(transcriptJSON, &tr.Messages)
	} else {
		err = json.Unmarshal(transcriptJSON, &tr)
	}
	if err != nil {
		p.TranscriptError = err.Error()
	} else {
		p.Checks = len(tr.Checks)
		for _, m := range tr.Messages {
			msg := message{Role: m.Role, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, Name: m.Name,
				Content: highlightText(m.Content)}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: tc.ID, Name: tc.Name, Arguments: prettyJSON(tc.Arguments)})
			}
			if p.Prompt == "" && m.Role == "user" {
				p.Prompt = msg.Content
			}
			p.Messages = append(p.Messages, msg)
		}
	}
}

// verdictOf is the view of a verdict revision of attempt attemptID: its
// stages, measurements, artifacts (read from the blob store) and the diffs
// of its outputs against the task's files.
func verdictOf(st *runs.Store, attemptID string, files map[string]string, v runs.Verdict) verdictView {
	vv := verdictView{Verdict: v, Pending: v.Pending()}
	var stages []struct {
		Name     string        `json:"name"`
		OK       bool          `json:"ok"`
		Skipped  bool          `json:"skipped"`
		Detail   string        `json:"detail"`
		Duration time.Duration `json:"duration_ns"`
	}
	if len(v.Stages) > 0 && json.Unmarshal(v.Stages, &stages) == nil {
		for _, s := range stages {
			vv.StageRows = append(vv.StageRows, stageRow{Name: s.Name, OK: s.OK, Skipped: s.Skipped, Detail: s.Detail,
				Duration: s.Duration.Round(time.Millisecond).String()})
		}
	}
	for k, x := range v.Measurements {
		vv.Measurements = append(vv.Measurements, measurement{Name: k, Value: fmt.Sprintf("%.6g", x)})
	}
	sort.Slice(vv.Measurements, func(i, j int) bool { return vv.Measurements[i].Name < vv.Measurements[j].Name })
	texts := map[string]string{}
	for name, hash := range v.Artifacts {
		av := artifactView{Name: name, URL: "/attempts/" + attemptID + "/artifacts/" + urlEscape(name)}
		b, err := st.Blobs().Get(hash)
		if err != nil {
			av.Binary = true
			av.Code = template.HTML(template.HTMLEscapeString("blob unreadable: " + err.Error()))
		} else {
			av.Size = len(b)
			if isText(b) {
				texts[name] = string(b)
				av.Code = highlight(clip(string(b), maxShown), langOf(name, string(b)))
			} else {
				av.Binary = true
			}
		}
		vv.Artifacts = append(vv.Artifacts, av)
	}
	sort.Slice(vv.Artifacts, func(i, j int) bool { return vv.Artifacts[i].Name < vv.Artifacts[j].Name })
	for _, pair := range outputPairs(texts, files) {
		d := diffView{Want: pair[0], Got: pair[1]}
		d.Lines, d.Truncated = diff(pair[2], pair[3])
		vv.Diffs = append(vv.Diffs, d)
	}
	return vv
}

// maxShown bounds how much of one artifact the page shows.
const maxShown = 256 << 10

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n… (%d more bytes; download the artifact for all)", len(s)-n)
}

// outputPairs finds expected/actual output pairs among a verdict's text
// artifacts (and the task's files, where an expected output may live):
// each pair is [want name, got name, want text, got text].
func outputPairs(arts, files map[string]string) [][4]string {
	known := [][2]string{
		{"output_cuda", "output_hip"},         // cuda-synth / cuda2hip: the CUDA program's output against the HIP one's
		{"output_reference", "output_answer"}, // sass2rdna, ptx2cuda
		{"expected_stdout", "stdout"},
		{"expected", "stdout"},
		{"expected_output", "output"},
	}
	var out [][4]string
	for _, k := range known {
		want, okW := arts[k[0]]
		if !okW {
			want, okW = files[k[0]]
		}
		got, okG := arts[k[1]]
		if okW && okG {
			out = append(out, [4]string{k[0], k[1], want, got})
		}
	}
	return out
}

// secretLine matches spec lines whose value looks like a secret.
var secretLine = regexp.MustCompile(`(?im)^(\s*-?\s*[\w.-]*(?:api[_-]?key|token|secret|password|passwd|authorization|bearer)[\w.-]*\s*:\s*)(\S.*)$`)

// maskSecrets hides the values of secret-looking keys in a spec (names of
// environment variables, keys ending in _env, stay visible: they hold no
// secret).
func maskSecrets(spec string) string {
	return secretLine.ReplaceAllStringFunc(spec, func(line string) string {
		m := secretLine.FindStringSubmatch(line)
		key := strings.ToLower(strings.TrimSpace(m[1]))
		if strings.Contains(key, "_env") || strings.Contains(key, "-env") {
			return line
		}
		return m[1] + "•••• (hidden)"
	})
}

func prettyJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// isText reports whether b is shown as text: valid UTF-8 without NUL bytes.
func isText(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if strings.ContainsRune(string(b[:min(len(b), 8192)]), 0) {
		return false
	}
	return strings.ToValidUTF8(string(b[:min(len(b), 8192)]), "\uFFFD") == string(b[:min(len(b), 8192)])
}

func humanInt(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fG", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()+0.5))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%.1fd", d.Hours()/24)
}
