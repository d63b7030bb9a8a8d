// Package web is the dashboard of "kiln serve": HTML pages rendered on the
// server from the store (html/template, embedded templates and assets, a
// few lines of plain JavaScript, no build chain).
//
// Pages:
//
//	GET  /                              campaigns: state, progress, outcomes, tokens, throughput, ETA; submit a spec
//	GET  /campaigns/{id}                one campaign: live progress (SSE from the API), categories with
//	                                    intervals, failure classes, throughput and tokens over time,
//	                                    refinement rounds and their lift, model faults, the spec
//	GET  /campaigns/{id}/stats          the campaign page's figures alone (refreshed while it runs)
//	GET  /campaigns/{id}/verdicts       verdict browser: filters, pages by key (never loads every verdict)
//	GET  /campaigns/{id}/export         the campaign's dataset (JSONL download)
//	POST /campaigns                     submit a spec (form field "spec")
//	POST /campaigns/{id}/cancel|resume|refine
//	GET  /attempts/{id}                 one sample: prompt, reasoning, tool calls and results, answer,
//	                                    verdicts, diagnostics, artifacts (highlighted), output diff
//	GET  /attempts/{id}/artifacts/{name} one artifact, raw
//	GET  /workers                       the scale-out queue (kiln serve --dispatch): workers, jobs by
//	                                    capability, job results, failed jobs' retries and reasons
//
// The handler is mounted by runs/api (Config.UI) behind the API's token
// rule; it never shows a token or key (spec lines that look like secrets are
// masked).
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
)

//go:embed templates/*.html static/*
var assets embed.FS

// PageSize is the verdict browser's page length.
const PageSize = 50

// Config wires the dashboard. Store and Service are required; a nil action
// hides its button.
type Config struct {
	Store   *runs.Store
	Service api.Service
	// Resume restarts a failed campaign.
	Resume func(ctx context.Context, id string) error
	// Refine starts a refinement campaign of rounds more rounds from a
	// finished one, targeting categories besides those the policy picks,
	// and returns the new campaign's id.
	Refine func(ctx context.Context, id string, rounds int, categories []string) (string, error)
	// Export writes the campaign's dataset as JSONL.
	Export func(ctx context.Context, id string, w io.Writer) error
	// Dispatch reports the scale-out queue (kiln serve --dispatch) on
	// /workers; nil: the page says dispatch is off.
	Dispatch Dispatch
	Log      *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Handler serves the dashboard.
type Handler struct {
	cfg   Config
	pages map[string]*template.Template
	mux   *http.ServeMux
}

var _ http.Handler = (*Handler)(nil)

// New builds the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil || cfg.Service == nil {
		return nil, errors.New("web: store and service are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{cfg: cfg, pages: map[string]*template.Template{}}
	for _, p := range []string{"list", "campaign", "verdicts", "attempt", "error", "workers"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/partials.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", p, err)
		}
		h.pages[p] = t
	}
	// The stats fragment is the campaign page's figures alone, without
	// the layout.
	h.pages["stats"] = h.pages["campaign"].Lookup("stats-body")
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	m := http.NewServeMux()
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", h.list)
	m.HandleFunc("POST /campaigns", h.submit)
	m.HandleFunc("GET /campaigns/{id}", h.withCampaign(h.campaign))
	m.HandleFunc("GET /campaigns/{id}/stats", h.withCampaign(h.stats))
	m.HandleFunc("GET /campaigns/{id}/verdicts", h.withCampaign(h.verdicts))
	m.HandleFunc("GET /campaigns/{id}/export", h.withCampaign(h.export))
	m.HandleFunc("POST /campaigns/{id}/{action}", h.withCampaign(h.action))
	m.HandleFunc("GET /attempts/{id}", h.attempt)
	m.HandleFunc("GET /attempts/{id}/artifacts/{name}", h.artifact)
	m.HandleFunc("GET /workers", h.workers)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
	})
	h.mux = m
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// render writes page with data, buffering it so that a template error is
// an error page and not half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, code int, page string, data any) {
	var b strings.Builder
	if err := h.pages[page].Execute(&b, data); err != nil {
		h.cfg.Log.Error("web: render", "page", page, "err", err)
		http.Error(w, "internal error rendering "+page, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, b.String())
}

type errorPage struct {
	Title   string
	Code    int
	Message string
	Details []string
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, code int, msg string, details ...string) {
	h.render(w, r, code, "error", errorPage{Title: http.StatusText(code), Code: code, Message: msg, Details: details})
}

// serviceError maps a store or service error to a page.
func (h *Handler) serviceError(w http.ResponseWriter, r *http.Request, op string, err error) {
	var bad *api.BadSpec
	switch {
	case errors.As(err, &bad):
		var details []string
		if multi, ok := bad.Err.(interface{ Unwrap() []error }); ok {
			for _, e := range multi.Unwrap() {
				details = append(details, e.Error())
			}
		}
		h.fail(w, r, http.StatusBadRequest, bad.Error(), details...)
	case errors.Is(err, api.ErrNotFound), errors.Is(err, runs.ErrNotFound):
		h.fail(w, r, http.StatusNotFound, op+": "+err.Error())
	case errors.Is(err, api.ErrConflict), errors.Is(err, runs.ErrBadTransition):
		h.fail(w, r, http.StatusConflict, op+": "+err.Error())
	case errors.Is(err, context.Canceled):
		// the client left
	default:
		h.cfg.Log.Error("web: "+op, "err", err)
		h.fail(w, r, http.StatusInternalServerError, op+": "+err.Error())
	}
}

// withCampaign resolves {id} (an id, a unique prefix or a name).
func (h *Handler) withCampaign(fn func(http.ResponseWriter, *http.Request, runs.Campaign)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if id == "" || len(id) > 128 {
			h.fail(w, r, http.StatusNotFound, "no such campaign")
			return
		}
		c, err := h.cfg.Store.Campaign(r.Context(), id)
		if err != nil {
			h.serviceError(w, r, "campaign "+id, err)
			return
		}
		fn(w, r, c)
	}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	data, err := h.listData(r.Context())
	if err != nil {
		h.serviceError(w, r, "list campaigns", err)
		return
	}
	h.render(w, r, http.StatusOK, "list", data)
}

func (h *Handler) submit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "read form: "+err.Error())
		return
	}
	spec := r.PostForm.Get("spec")
	if strings.TrimSpace(spec) == "" {
		h.fail(w, r, http.StatusBadRequest, "spec: empty; paste a campaign spec (YAML)")
		return
	}
	info, err := h.cfg.Service.Submit(r.Context(), []byte(spec))
	if err != nil {
		h.serviceError(w, r, "submit", err)
		return
	}
	http.Redirect(w, r, "/campaigns/"+info.ID, http.StatusSeeOther)
}

func (h *Handler) campaign(w http.ResponseWriter, r *http.Request, c runs.Campaign) {
	data, err := h.campaignData(r.Context(), c)
	if err != nil {
		h.serviceError(w, r, "campaign "+c.ID, err)
		return
	}
	h.render(w, r, http.StatusOK, "campaign", data)
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request, c runs.Campaign) {
	st, err := h.statsData(r.Context(), c)
	if err != nil {
		h.serviceError(w, r, "campaign "+c.ID, err)
		return
	}
	h.render(w, r, http.StatusOK, "stats", st)
}

func (h *Handler) verdicts(w http.ResponseWriter, r *http.Request, c runs.Campaign) {
	q := r.URL.Query()
	f := runs.VerdictFilter{Category: q.Get("category"), Class: q.Get("class"), Model: q.Get("model"),
		Outcome: q.Get("outcome"), Round: -1}
	if s := q.Get("round"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			h.fail(w, r, http.StatusBadRequest, "round: want a round number, got "+strconv.Quote(s))
			return
		}
		f.Round = n
	}
	switch runs.Outcome(f.Outcome) {
	case "", runs.OutcomePass, runs.OutcomeFail, runs.OutcomePending, runs.OutcomeTaskFault:
	default:
		h.fail(w, r, http.StatusBadRequest, "outcome: want pass, fail, pending or task_fault, got "+strconv.Quote(f.Outcome))
		return
	}
	var after int64
	if s := q.Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			h.fail(w, r, http.StatusBadRequest, "after: want a row key, got "+strconv.Quote(s))
			return
		}
		after = n
	}
	data, err := h.verdictsData(r.Context(), c, f, after)
	if err != nil {
		h.serviceError(w, r, "verdicts of "+c.ID, err)
		return
	}
	h.render(w, r, http.StatusOK, "verdicts", data)
}

func (h *Handler) export(w http.ResponseWriter, r *http.Request, c runs.Campaign) {
	if h.cfg.Export == nil {
		h.fail(w, r, http.StatusNotFound, "export is not available on this server")
		return
	}
	// Write to a buffer first: an export error is then a page, not a
	// truncated download.
	var b strings.Builder
	if err := h.cfg.Export(r.Context(), c.ID, &b); err != nil {
		h.serviceError(w, r, "export "+c.ID, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", safeName(c.Name)+".jsonl"))
	io.WriteString(w, b.String())
}

func (h *Handler) action(w http.ResponseWriter, r *http.Request, c runs.Campaign) {
	ctx := r.Context()
	switch r.PathValue("action") {
	case "cancel":
		if err := h.cfg.Service.Cancel(ctx, c.ID); err != nil {
			h.serviceError(w, r, "cancel "+c.ID, err)
			return
		}
	case "resume":
		if h.cfg.Resume == nil {
			h.fail(w, r, http.StatusNotFound, "resume is not available on this server")
			return
		}
		if err := h.cfg.Resume(ctx, c.ID); err != nil {
			h.serviceError(w, r, "resume "+c.ID, err)
			return
		}
	case "refine":
		if h.cfg.Refine == nil {
			h.fail(w, r, http.StatusNotFound, "refinement is not available on this server")
			return
		}
		if err := r.ParseForm(); err != nil {
			h.fail(w, r, http.StatusBadRequest, "read form: "+err.Error())
			return
		}
		rounds := 1
		if s := r.PostForm.Get("rounds"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > 100 {
				h.fail(w, r, http.StatusBadRequest, "rounds: want 1 to 100, got "+strconv.Quote(s))
				return
			}
			rounds = n
		}
		var cats []string
		for _, c := range strings.Split(r.PostForm.Get("categories"), ",") {
			if c = strings.TrimSpace(c); c != "" {
				cats = append(cats, c)
			}
		}
		id, err := h.cfg.Refine(ctx, c.ID, rounds, cats)
		if err != nil {
			h.serviceError(w, r, "refine "+c.ID, err)
			return
		}
		http.Redirect(w, r, "/campaigns/"+id, http.StatusSeeOther)
		return
	default:
		h.fail(w, r, http.StatusNotFound, "no such action: "+r.PathValue("action"))
		return
	}
	http.Redirect(w, r, "/campaigns/"+c.ID, http.StatusSeeOther)
}

func (h *Handler) attempt(w http.ResponseWriter, r *http.Request) {
	data, err := h.attemptData(r.Context(), r.PathValue("id"))
	if err != nil {
		h.serviceError(w, r, "attempt "+r.PathValue("id"), err)
		return
	}
	h.render(w, r, http.StatusOK, "attempt", data)
}

// artifact serves one artifact of an attempt's latest verdict, raw.
func (h *Handler) artifact(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	a, err := h.cfg.Store.Attempt(ctx, r.PathValue("id"))
	if err != nil {
		h.serviceError(w, r, "attempt", err)
		return
	}
	vs, err := h.cfg.Store.Verdicts(ctx, a.ID)
	if err != nil {
		h.serviceError(w, r, "verdicts", err)
		return
	}
	name := r.PathValue("name")
	for i := len(vs) - 1; i >= 0; i-- {
		hash, ok := vs[i].Artifacts[name]
		if !ok {
			continue
		}
		b, err := h.cfg.Store.Blobs().Get(hash)
		if err != nil {
			h.serviceError(w, r, "artifact "+name, err)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", safeName(name)))
		w.Write(b)
		return
	}
	h.fail(w, r, http.StatusNotFound, "attempt "+a.ID+" has no artifact "+strconv.Quote(name))
}

// safeName keeps a file name to letters, digits and ._- .
func safeName(s string) string {
	out := []rune{}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			out = append(out, c)
		default:
			out = append(out, '_')
		}
	}
	if len(out) == 0 {
		return "file"
	}
	return string(out)
}
