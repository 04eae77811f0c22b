package metrics

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasewrap/leasewrap/internal/testutil"
	"github.com/leasewrap/leasewrap/internal/testutil/promtest"
)

func startServer(t *testing.T, l *Live) string {
	t.Helper()
	_, url := startServerS(t, l)
	return url
}

func startServerS(t *testing.T, l *Live) (*Server, string) {
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
	return s, "http://" + ln.Addr().String()
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
	// /healthz is liveness: leasewrap runs (it stops the job and exits by
	// itself); only /readyz follows the lease.
	if have, body := get(t, "GET", base+"/healthz", nil); have != 200 || !strings.Contains(body, "lost") {
		t.Errorf("lost: healthz want 200 saying lost, have %d %q", have, body)
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

// TestServerEvictsTheOldestNeverAnswersBusy: with more than MaxConns idle
// connections open, a probe is answered (200, never "busy") and the
// oldest idle connections are the ones closed.
func TestServerEvictsTheOldestNeverAnswersBusy(t *testing.T) {
	s, base := startServerS(t, NewLive("claim", "k"))
	addr := strings.TrimPrefix(base, "http://")
	var idle []net.Conn
	t.Cleanup(func() {
		for _, c := range idle {
			c.Close()
		}
	})
	for range MaxConns + 16 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	testutil.WaitFor(t, "the server to hold MaxConns connections", 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.order.Len() == MaxConns
	})
	if code, body := get(t, "GET", base+"/healthz", nil); code != 200 || body != "ok\n" {
		t.Fatalf("with %d idle connections: want 200 ok, have %d %q", len(idle), code, body)
	}
	// The first ones accepted were closed by the server (EOF), not answered.
	idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idle[0].Read(make([]byte, 64)); n != 0 || err == nil {
		t.Errorf("the oldest connection: want it closed unanswered, have %d bytes, %v", n, err)
	}
}

func TestAcceptErrorsThatPass(t *testing.T) {
	for _, err := range []error{syscall.EMFILE, syscall.ECONNABORTED, &net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}} {
		if !passing(err) {
			t.Errorf("%v: want it retried", err)
		}
	}
	if passing(net.ErrClosed) {
		t.Error("a closed listener retried")
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
