package metrics

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

func startServer(t *testing.T, l *Live) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Live: l}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve after Close: want nil, have %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, method, url string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServerRoutes(t *testing.T) {
	l := NewLive("claim", "k")
	base := startServer(t, l)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/healthz", 200}, {"GET", "/readyz", 503}, {"GET", "/nothing", 404},
		{"POST", "/metrics", 405}, {"DELETE", "/readyz", 405}, {"HEAD", "/healthz", 200},
	} {
		if have, _ := get(t, tc.method, base+tc.path, nil); have != tc.want {
			t.Errorf("%s %s: want %d, have %d", tc.method, tc.path, tc.want, have)
		}
	}
	l.Acquired(time.Now().Add(time.Minute))
	if have, _ := get(t, "GET", base+"/readyz", nil); have != 200 {
		t.Errorf("held: readyz want 200, have %d", have)
	}
	code, body := get(t, "GET", base+"/metrics?x=1", nil)
	if code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	fams := promtest.Parse(t, []byte(body))
	if value(t, fams, "leasewrap_lease_held", map[string]string{"kind": "claim", "key": "k"}) != 1 {
		t.Error("held: want leasewrap_lease_held 1")
	}
	l.Lost()
	if have, _ := get(t, "GET", base+"/healthz", nil); have != 503 {
		t.Errorf("lost: healthz want 503, have %d", have)
	}
	if have, _ := get(t, "GET", base+"/readyz", nil); have != 503 {
		t.Errorf("lost: readyz want 503, have %d", have)
	}
}

func TestServerBoundsTheRequest(t *testing.T) {
	base := startServer(t, NewLive("claim", "k"))
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// A head larger than MaxRequestHead is answered 400 (or cut), never buffered.
	go c.Write([]byte("GET /metrics HTTP/1.1\r\nX: " + strings.Repeat("a", 4*MaxRequestHead) + "\r\n\r\n"))
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 400 ") {
		t.Fatalf("oversized head: want 400, have %.40q", b)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"9100": "127.0.0.1:9100", "localhost:9100": "localhost:9100", ":9100": ":9100",
		"[::1]:80": "[::1]:80", "0.0.0.0:1": "0.0.0.0:1",
	} {
		if have, err := ListenAddr(in); err != nil || have != want {
			t.Errorf("%q: want %q, have %q, %v", in, want, have, err)
		}
	}
	for _, bad := range []string{"", "host", "host:port", "99999", "h:99999"} {
		if have, err := ListenAddr(bad); err == nil {
			t.Errorf("%q: want an error, have %q", bad, have)
		}
	}
}
