package api

import (
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
)

// sessionCookie carries the API token's digest for the dashboard's browsers (a
// browser cannot add an Authorization header to a page load or to an
// EventSource). It is HttpOnly and SameSite=Strict; cross-origin POSTs are
// refused anyway.
const sessionCookie = "kiln_token"

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kiln: sign in</title><link rel="stylesheet" href="/static/app.css"></head>
<body><main><h1>kiln</h1>
{{if .Wrong}}<p class="error" id="login-error">Wrong token.</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="next" value="{{.Next}}">
<label>API token (the value of <code>kiln serve --token-env</code>'s variable)<br>
<input type="password" name="token" autocomplete="current-password" size="40" autofocus></label>
<button type="submit">Sign in</button>
</form></main></body></html>
`))

// wantsLogin reports whether an unauthorised request is a browser's page
// load that should be sent to the sign-in page rather than get a 401.
func (s *Server) wantsLogin(r *http.Request) bool {
	return s.cfg.UI != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		!strings.HasPrefix(r.URL.Path, "/v1/") && r.URL.Path != "/metrics" &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

// login serves the dashboard's sign-in form (GET) and checks the token
// (POST), setting the session cookie. Without a configured token there is
// nothing to sign in to.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	next := r.FormValue("next")
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		next = "/"
	}
	if s.cfg.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	show := func(code int, wrong bool) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_ = loginPage.Execute(w, struct {
			Next  string
			Wrong bool
		}{next, wrong})
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		show(http.StatusOK, false)
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		tok := strings.TrimSpace(r.PostFormValue("token"))
		if !s.tokenMatches(tok) {
			s.log.Warn("api: dashboard sign-in with a wrong token", "remote", r.RemoteAddr)
			show(http.StatusUnauthorized, true)
			return
		}
		// The cookie holds the token's SHA-256, not the token: what a
		// browser stores is no API key (though it signs in all the same).
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: hex.EncodeToString(s.token[:]), Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		http.Redirect(w, r, next, http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed", nil)
	}
}
