package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// client speaks the Nacos 1.x HTTP API of one server (Java Nacos or
// nacosd). Every parameter travels in the query string, as the Java client
// sends them (Java 1.4.8 drops naming parameters sent in a form body) —
// except the credentials: the login's user and password go in a form body
// and the token in the Authorization header (both servers read
// "Bearer <token>" before accessToken), so that no URL, and so no access
// log or error message, ever holds a secret.
type client struct {
	base     string // http://host:port/nacos
	user     string
	password string
	http     *http.Client
	retries  int

	mu    sync.Mutex
	token string
}

// HTTPError is a non-2xx answer.
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.Status, strings.TrimSpace(truncate(e.Body, 300)))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func newClient(base, user, password string, timeout time.Duration) (*client, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("migrate: %q is not an http(s) URL such as http://127.0.0.1:8848/nacos", RedactURL(base))
	}
	if u.User != nil { // http://user:pw@host/nacos: a login, not part of the address
		if user == "" {
			user = u.User.Username()
			password, _ = u.User.Password()
		}
		u.User = nil
	}
	return &client{base: u.String(), user: user, password: password, http: &http.Client{Timeout: timeout}, retries: 3}, nil
}

// login gets a token when credentials were given (auth on or off: Java
// answers a login either way).
func (c *client) login(ctx context.Context) error {
	if c.user == "" {
		return nil
	}
	form := url.Values{"username": {c.user}, "password": {c.password}}
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/auth/users/login", nil, requestBody{[]byte(form.Encode()), formType}, &res, false); err != nil {
		return fmt.Errorf("migrate: log in to %s as %s: %w", c.base, c.user, err)
	}
	c.mu.Lock()
	c.token = res.AccessToken
	c.mu.Unlock()
	return nil
}

func (c *client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, q, requestBody{}, out, true)
}

func (c *client) send(ctx context.Context, method, path string, q url.Values, out any) error {
	return c.do(ctx, method, path, q, requestBody{}, out, true)
}

func (c *client) postJSON(ctx context.Context, path string, q url.Values, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("migrate: encode %s: %w", path, err)
	}
	return c.do(ctx, http.MethodPost, path, q, requestBody{b, "application/json"}, out, true)
}

const formType = "application/x-www-form-urlencoded"

// requestBody is a request's body and its content type (nil: none).
type requestBody struct {
	data        []byte
	contentType string
}

// do sends one request, retrying transport errors and 5xx answers of
// reads (writes are retried only on transport errors: they are idempotent
// here, but a 500 usually means the data is refused). out may be nil,
// *string (the raw body) or a JSON target.
func (c *client) do(ctx context.Context, method, path string, q url.Values, body requestBody, out any, withToken bool) error {
	var tok string
	if withToken {
		c.mu.Lock()
		tok = c.token
		c.mu.Unlock()
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var last error
	for attempt := 0; attempt <= c.retries; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(attempt) * 300 * time.Millisecond):
			}
		}
		var rd io.Reader
		if body.data != nil {
			rd = bytes.NewReader(body.data)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return fmt.Errorf("migrate: %s %s: %w", method, RedactURL(u), transportError(err))
		}
		if body.data != nil {
			req.Header.Set("Content-Type", body.contentType)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("User-Agent", "nacosd-migrate")
		resp, err := c.http.Do(req)
		if err != nil {
			last = fmt.Errorf("migrate: %s %s: %w", method, RedactURL(u), transportError(err))
			continue
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			last = fmt.Errorf("migrate: %s %s: read: %w", method, RedactURL(u), transportError(err))
			continue
		}
		if resp.StatusCode/100 != 2 {
			last = &HTTPError{Method: method, URL: RedactURL(c.base + path), Status: resp.StatusCode, Body: string(data)}
			if method == http.MethodGet && resp.StatusCode >= 500 && resp.StatusCode != 501 {
				continue
			}
			return last
		}
		switch o := out.(type) {
		case nil:
			return nil
		case *string:
			*o = string(data)
			return nil
		default:
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			if err := dec.Decode(out); err != nil {
				return fmt.Errorf("migrate: %s %s: unexpected answer %q: %w", method, RedactURL(c.base+path), truncate(string(data), 200), err)
			}
			return nil
		}
	}
	return last
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q)+1)
	for k, v := range q {
		out[k] = v
	}
	return out
}

// transportError drops the URL net/http puts into its errors (*url.Error
// prints the whole request URL): the caller names the URL, redacted.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// secretParams are the query parameters RedactURL hides.
var secretParams = []string{"accessToken", "password", "token", "secretKey"}

// RedactURL hides what a URL may carry of a credential (a user:password
// part, a token or password parameter) before it is shown anywhere.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an unparsable URL)"
	}
	if p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.UserPassword(p.User.Username(), "***")
		}
	}
	q := p.Query()
	changed := false
	for _, k := range secretParams {
		if q.Has(k) {
			q.Set(k, "***")
			changed = true
		}
	}
	if changed {
		p.RawQuery = q.Encode()
	}
	return p.String()
}

// isStatus reports an HTTPError with the given status.
func isStatus(err error, status int) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == status
}
