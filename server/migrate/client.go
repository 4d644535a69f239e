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
// sends them: Java 1.4.8 drops naming parameters sent in a form body.
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
		return nil, fmt.Errorf("migrate: %q is not an http(s) URL such as http://127.0.0.1:8848/nacos", base)
	}
	return &client{base: u.String(), user: user, password: password, http: &http.Client{Timeout: timeout}, retries: 3}, nil
}

// login gets a token when credentials were given (auth on or off: Java
// answers a login either way).
func (c *client) login(ctx context.Context) error {
	if c.user == "" {
		return nil
	}
	q := url.Values{"username": {c.user}, "password": {c.password}}
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	if err := c.do(ctx, http.MethodPost, "/v1/auth/users/login", q, nil, &res, false); err != nil {
		return fmt.Errorf("migrate: log in to %s as %s: %w", c.base, c.user, err)
	}
	c.mu.Lock()
	c.token = res.AccessToken
	c.mu.Unlock()
	return nil
}

func (c *client) get(ctx context.Context, path string, q url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, q, nil, out, true)
}

func (c *client) send(ctx context.Context, method, path string, q url.Values, out any) error {
	return c.do(ctx, method, path, q, nil, out, true)
}

func (c *client) postJSON(ctx context.Context, path string, q url.Values, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("migrate: encode %s: %w", path, err)
	}
	return c.do(ctx, http.MethodPost, path, q, b, out, true)
}

// do sends one request, retrying transport errors and 5xx answers of
// reads (writes are retried only on transport errors: they are idempotent
// here, but a 500 usually means the data is refused). out may be nil,
// *string (the raw body) or a JSON target.
func (c *client) do(ctx context.Context, method, path string, q url.Values, body []byte, out any, withToken bool) error {
	if q == nil {
		q = url.Values{}
	}
	if withToken {
		c.mu.Lock()
		tok := c.token
		c.mu.Unlock()
		if tok != "" {
			q = cloneValues(q)
			q.Set("accessToken", tok)
		}
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
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			return fmt.Errorf("migrate: %s %s: %w", method, path, err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("User-Agent", "nacosd-migrate")
		resp, err := c.http.Do(req)
		if err != nil {
			last = fmt.Errorf("migrate: %s %s: %w", method, redact(u), err)
			continue
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			last = fmt.Errorf("migrate: %s %s: read: %w", method, redact(u), err)
			continue
		}
		if resp.StatusCode/100 != 2 {
			last = &HTTPError{Method: method, URL: redact(c.base + path), Status: resp.StatusCode, Body: string(data)}
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
				return fmt.Errorf("migrate: %s %s: unexpected answer %q: %w", method, redact(c.base+path), truncate(string(data), 200), err)
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

// redact hides the token and passwords of a logged URL.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	for _, k := range []string{"accessToken", "password"} {
		if q.Has(k) {
			q.Set(k, "***")
		}
	}
	p.RawQuery = q.Encode()
	return p.String()
}

// isStatus reports an HTTPError with the given status.
func isStatus(err error, status int) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status == status
}
