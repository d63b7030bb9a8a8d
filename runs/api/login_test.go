package api

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDashboardSignIn: with a token, the dashboard (Config.UI) is behind
// the same rule as the API. A browser's page load is sent to /login; a
// wrong token is refused; the right one sets an HttpOnly cookie holding
// the token's digest (not the token), which then opens pages, the event
// stream and the API alike. Cross-origin form posts are refused.
func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "dashboard page "+r.URL.Path)
	})
	svc := &fakeService{list: func(context.Context) ([]CampaignInfo, error) { return nil, nil }}
	s, _ := start(t, Config{Token: testToken, UI: ui, Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "metrics")
	})}, svc)
	base := "http://" + s.Addr()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, accept string, cookie *http.Cookie) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	resp, _ := get("/campaigns/x?y=1", "text/html,application/xhtml+xml", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next="+url.QueryEscape("/campaigns/x?y=1") {
		t.Fatalf("page load without a token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get("/metrics", "text/html", nil); resp.StatusCode != 401 {
		t.Errorf("metrics without a token: %d", resp.StatusCode)
	}
	if resp, _ := get("/v1/campaigns", "", nil); resp.StatusCode != 401 {
		t.Errorf("API without a token: %d", resp.StatusCode)
	}
	if resp, body := get("/login?next=/campaigns/x", "text/html", nil); resp.StatusCode != 200 || !strings.Contains(body, `name="token"`) || strings.Contains(body, testToken) {
		t.Errorf("login form: %d %s", resp.StatusCode, body)
	}
	post := func(form url.Values, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := post(url.Values{"token": {"wrong-token-0123456789"}, "next": {"/"}}, ""); r.StatusCode != 401 || len(r.Cookies()) != 0 {
		t.Errorf("wrong token: %d %v", r.StatusCode, r.Cookies())
	}
	if r := post(url.Values{"token": {testToken}}, "https://evil.example"); r.StatusCode != 403 || len(r.Cookies()) != 0 {
		t.Errorf("cross-origin sign-in: %d", r.StatusCode)
	}
	r := post(url.Values{"token": {testToken}, "next": {"//evil.example/x"}}, "")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Errorf("sign-in with an off-site next: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == sessionCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, testToken) {
		t.Fatalf("session cookie: %+v", cookie)
	}
	if resp, body := get("/campaigns/x", "text/html", cookie); resp.StatusCode != 200 || body != "dashboard page /campaigns/x" {
		t.Errorf("page with the cookie: %d %s", resp.StatusCode, body)
	}
	if resp, body := get("/metrics", "", cookie); resp.StatusCode != 200 || body != "metrics" {
		t.Errorf("metrics with the cookie: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get("/v1/campaigns", "", cookie); resp.StatusCode != 200 {
		t.Errorf("API with the cookie: %d", resp.StatusCode)
	}
	bad := &http.Cookie{Name: sessionCookie, Value: strings.Repeat("ab", 32)}
	if resp, _ := get("/campaigns/x", "", bad); resp.StatusCode != 401 {
		t.Errorf("forged cookie: %d", resp.StatusCode)
	}
	if resp, _ := get("/static/app.css", "", nil); resp.StatusCode != 200 {
		t.Errorf("static files are public: %d", resp.StatusCode)
	}
}
