package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

const maxIDLen = 128

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /v1/campaigns", s.submit)
	mux.HandleFunc("GET /v1/campaigns", s.list)
	mux.HandleFunc("GET /v1/campaigns/{id}", s.withID(s.show))
	mux.HandleFunc("POST /v1/campaigns/{id}/cancel", s.withID(s.cancel))
	mux.HandleFunc("GET /v1/campaigns/{id}/events", s.withID(s.events))

	// The same paths without a method answer 405 in JSON (the mux's own
	// 405 is plain text); anything else is a JSON 404.
	for path, allow := range map[string]string{
		"/healthz":                  "GET, HEAD",
		"/v1/campaigns":             "GET, HEAD, POST",
		"/v1/campaigns/{id}":        "GET, HEAD",
		"/v1/campaigns/{id}/cancel": "POST",
		"/v1/campaigns/{id}/events": "GET, HEAD",
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed", nil)
		})
	}
	if s.cfg.Metrics != nil {
		mux.Handle("GET /metrics", s.cfg.Metrics)
	}
	if s.cfg.Workers != nil {
		mux.HandleFunc("GET /v1/workers", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]any{"workers": s.cfg.Workers()})
		})
	}
	if s.cfg.Queue != nil {
		mux.HandleFunc("GET /v1/queue", func(w http.ResponseWriter, r *http.Request) {
			v, err := s.cfg.Queue(r.Context())
			if err != nil {
				writeError(w, http.StatusInternalServerError, "queue: "+err.Error(), nil)
				return
			}
			writeJSON(w, http.StatusOK, v)
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.UI != nil && !strings.HasPrefix(r.URL.Path, "/v1/") {
			s.cfg.UI.ServeHTTP(w, r)
			return
		}
		writeError(w, http.StatusNotFound, "no such route", nil)
	})

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !s.hostAllowed(r):
			writeError(w, http.StatusForbidden, "host not allowed", nil)
		case s.cop.Check(r) != nil:
			writeError(w, http.StatusForbidden, "cross-origin request refused", nil)
		case s.cfg.UI != nil && r.URL.Path == "/login":
			s.login(w, r)
		case s.cfg.UI != nil && strings.HasPrefix(r.URL.Path, "/static/"):
			// The dashboard's stylesheet and script: public files.
			mux.ServeHTTP(w, r)
		case r.URL.Path != "/healthz" && !s.authorized(r):
			if s.wantsLogin(r) {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="kiln"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token", nil)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

// withID checks the {id} path value before calling h.
func (s *Server) withID(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if id == "" || len(id) > maxIDLen || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
			writeError(w, http.StatusNotFound, ErrNotFound.Error(), nil)
			return
		}
		h(w, r, id)
	}
}

func (s *Server) submit(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > s.cfg.MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("spec larger than %d bytes", s.cfg.MaxBody), nil)
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("spec larger than %d bytes", tooBig.Limit), nil)
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, "request body too slow", nil)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "read body: "+err.Error(), nil)
		return
	case len(data) == 0:
		writeError(w, http.StatusBadRequest, "empty body: send the campaign spec (YAML)", nil)
		return
	}
	info, err := s.svc.Submit(r.Context(), data)
	if err != nil {
		s.serviceError(w, r, "submit", err)
		return
	}
	w.Header().Set("Location", "/v1/campaigns/"+info.ID)
	writeJSON(w, http.StatusCreated, info)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	infos, err := s.svc.List(r.Context())
	if err != nil {
		s.serviceError(w, r, "list", err)
		return
	}
	if infos == nil {
		infos = []CampaignInfo{}
	}
	writeJSON(w, http.StatusOK, struct {
		Campaigns []CampaignInfo `json:"campaigns"`
	}{infos})
}

func (s *Server) show(w http.ResponseWriter, r *http.Request, id string) {
	info, err := s.svc.Show(r.Context(), id)
	if err != nil {
		s.serviceError(w, r, "show", err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, id string) {
	if err := s.svc.Cancel(r.Context(), id); err != nil {
		s.serviceError(w, r, "cancel", err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id, "status": "cancel requested"})
}

// events streams Progress as Server-Sent Events:
//
//	id: 1
//	event: progress
//	data: {"time": ..., "done": 3, ...}
//
// with ": heartbeat" comments in between, and a final "event: end" when the
// campaign ends. The stream also ends when the client leaves or the server
// stops. Each write has its own deadline (Config.WriteTimeout), so a client
// that stops reading is cut off while a slow campaign can stream for hours.
func (s *Server) events(w http.ResponseWriter, r *http.Request, id string) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.streams, cancel)
	defer stop()

	updates, err := s.svc.Watch(ctx, id)
	if err != nil {
		s.serviceError(w, r, "watch", err)
		return
	}

	// net/http clears the ReadTimeout deadline once it has read a bodiless
	// request (TestEvents checks that streams outlive ReadTimeout).
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	write := func(chunk string) error {
		if err := rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := io.WriteString(w, chunk); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := write(": stream " + id + "\n\n"); err != nil {
		return
	}

	heartbeat := time.NewTicker(s.cfg.Heartbeat)
	defer heartbeat.Stop()
	var seq int
	var last Progress
	for {
		var chunk string
		select {
		case <-ctx.Done():
			return
		case <-heartbeat.C:
			chunk = ": heartbeat\n\n"
		case p, ok := <-updates:
			if !ok {
				end, _ := json.Marshal(map[string]string{"state": last.State})
				_ = write("event: end\ndata: " + string(end) + "\n\n")
				return
			}
			last = p
			data, err := json.Marshal(p)
			if err != nil {
				s.log.Error("api: events: encode", "campaign", id, "err", err)
				return
			}
			seq++
			chunk = "id: " + strconv.Itoa(seq) + "\nevent: progress\ndata: " + string(data) + "\n\n"
		}
		if err := write(chunk); err != nil {
			s.log.Debug("api: events: client cut off", "campaign", id, "err", err)
			return
		}
	}
}

// serviceError maps a Service error to a status.
func (s *Server) serviceError(w http.ResponseWriter, r *http.Request, op string, err error) {
	var bad *BadSpec
	switch {
	case errors.As(err, &bad):
		var details []string
		if multi, ok := bad.Err.(interface{ Unwrap() []error }); ok {
			for _, e := range multi.Unwrap() {
				details = append(details, e.Error())
			}
		}
		writeError(w, http.StatusBadRequest, bad.Err.Error(), details)
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, ErrNotFound.Error(), nil)
	case errors.Is(err, ErrConflict):
		writeError(w, http.StatusConflict, err.Error(), nil)
	case r.Context().Err() != nil:
		// The client left; nobody reads this.
		writeError(w, http.StatusServiceUnavailable, "request cancelled", nil)
	default:
		// Internal details stay in the log.
		s.log.Error("api: "+op, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error", nil)
	}
}

type errorBody struct {
	Error   string   `json:"error"`
	Details []string `json:"details,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string, details []string) {
	writeJSON(w, code, errorBody{Error: msg, Details: details})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
