package metrics

import (
	"bufio"
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Server serves a Live state read-only over HTTP/1.1 on package net: GET or
// HEAD /metrics, /healthz, /readyz; else 404, other methods 405. It answers
// a probe at once whatever else is connected: it reads only a head of
// MaxRequestHead bytes within HeadTimeout, answers Connection: close, and
// beyond MaxConns closes the oldest connection (never "busy"), which bounds
// its memory. Passing accept errors are retried, backing off up to a second.
type Server struct {
	Live *Live
	// Now is the clock of /metrics (default time.Now).
	Now func() time.Time

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]*list.Element // each connection's place in order
	order  list.List                  // open connections, oldest first
	closed bool
	wg     sync.WaitGroup
}

// Bounds of the request handling.
const (
	MaxRequestHead = 8 << 10
	HeadTimeout    = 2 * time.Second // for the whole request head
	WriteTimeout   = 2 * time.Second // for the whole answer
	MaxConns       = 1024
)

// ListenAddr is the address --listen ADDR means: a bare port is
// 127.0.0.1:PORT; anything else as given (":PORT" is every interface).
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("empty address")
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%q is neither a port nor HOST:PORT: %v", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return net.JoinHostPort(host, port), nil
}

// Serve accepts connections on ln until Close. It returns nil after Close,
// else an accept error that does not pass.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln, s.conns = ln, map[net.Conn]*list.Element{}
	s.mu.Unlock()
	defer s.wg.Wait() // every connection's goroutine ends before Serve returns
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			if !passing(err) {
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			continue
		}
		full := s.order.Len() >= MaxConns
		if full {
			// The oldest goes: a slow or idle client, never the one just
			// accepted, which may be a probe.
			oldest := s.order.Front()
			o := oldest.Value.(net.Conn)
			o.Close()
			delete(s.conns, o)
			s.order.Remove(oldest)
		}
		s.conns[c] = s.order.PushBack(c)
		s.wg.Add(1)
		s.mu.Unlock()
		go func() { // joined by Serve (wg) and ended by Close (conn closed)
			defer s.wg.Done()
			s.handle(c)
			s.mu.Lock()
			if e, ok := s.conns[c]; ok {
				delete(s.conns, c)
				s.order.Remove(e)
			}
			s.mu.Unlock()
			c.Close()
		}()
		if full {
			// Let the connections accepted so far read their heads first.
			runtime.Gosched()
		}
	}
}

// passing reports whether an accept error passes (as net/http retries).
func passing(err error) bool {
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return true
	}
	for _, e := range []error{syscall.ECONNABORTED, syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Close stops Serve: the listener and every open connection are closed.
// It is idempotent and safe before, during or after Serve.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
}

// readBufSize is a connection's read buffer: a probe's head fits; a
// larger one (up to MaxRequestHead) is read in several fills.
const readBufSize = 1 << 10

func (s *Server) handle(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(HeadTimeout))
	// A head larger than MaxRequestHead is cut off (and answered 400),
	// never buffered.
	r := bufio.NewReaderSize(io.LimitReader(c, MaxRequestHead), readBufSize)
	tp := textproto.NewReader(r)
	line, err := tp.ReadLine()
	if err != nil {
		return
	}
	if _, err := tp.ReadMIMEHeader(); err != nil {
		respond(c, "GET", 400, "text/plain", []byte("bad request head\n"))
		return
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/1.") {
		respond(c, "GET", 400, "text/plain", []byte("bad request line\n"))
		return
	}
	if method != "GET" && method != "HEAD" {
		respond(c, "GET", 405, "text/plain", []byte("read-only: GET or HEAD\n"))
		return
	}
	path, _, _ := strings.Cut(target, "?")
	status, ctype, body := s.route(path)
	c.SetWriteDeadline(time.Now().Add(WriteTimeout))
	respond(c, method, status, ctype, body)
}

// route answers one path.
func (s *Server) route(path string) (int, string, []byte) {
	switch path {
	case "/metrics":
		now := time.Now
		if s.Now != nil {
			now = s.Now
		}
		var b bytes.Buffer
		Write(&b, s.Live.Families(now()))
		return 200, "text/plain; version=0.0.4; charset=utf-8", b.Bytes()
	case "/healthz":
		// Liveness only: a lost lease is /readyz's (a kubelet restart would
		// race leasewrap's own exit 76).
		if s.Live.Healthy() {
			return 200, "text/plain", []byte("ok\n")
		}
		return 200, "text/plain", []byte("ok: the lease was lost; the job is being stopped and leasewrap exits\n")
	case "/readyz":
		if s.Live.Ready() {
			return 200, "text/plain", []byte("ok: lease held\n")
		}
		return 503, "text/plain", []byte("lease not held\n")
	}
	return 404, "text/plain", []byte("not found: try /metrics, /healthz or /readyz\n")
}

var statusText = map[int]string{200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}

func respond(c net.Conn, method string, status int, ctype string, body []byte) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nCache-Control: no-store\r\nConnection: close\r\n", status, statusText[status], ctype, len(body))
	if status == 405 {
		b.WriteString("Allow: GET, HEAD\r\n")
	}
	b.WriteString("\r\n")
	if method != "HEAD" {
		b.Write(body)
	}
	c.Write(b.Bytes())
}
