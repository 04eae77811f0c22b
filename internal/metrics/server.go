package metrics

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server serves a Live state read-only over HTTP/1.1: GET (or HEAD)
// /metrics, /healthz and /readyz; anything else is 404, any other method
// 405. It reads nothing but a bounded request head (MaxRequestHead bytes
// within ConnTimeout), answers with Connection: close, and handles at most
// MaxConns connections at once (more are closed with 503). Nothing it
// serves changes anything.
//
// It is written on package net rather than net/http so that leasewrap
// links no HTTP stack for runs that do not ask for --listen (see the
// package doc).
type Server struct {
	Live *Live
	// Now is the clock of /metrics (default time.Now).
	Now func() time.Time

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Bounds of the request handling.
const (
	MaxRequestHead = 8 << 10
	ConnTimeout    = 5 * time.Second
	MaxConns       = 8
)

// ListenAddr is the address --listen ADDR means: a bare port is loopback
// (127.0.0.1:PORT); anything else is taken as given (":PORT" is every
// interface, as Go spells it).
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
// else the accept error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln, s.conns = ln, map[net.Conn]struct{}{}
	s.mu.Unlock()
	defer s.wg.Wait() // every connection's goroutine ends before Serve returns
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed || len(s.conns) >= MaxConns {
			busy := !s.closed
			s.mu.Unlock()
			if busy {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				respond(c, "GET", 503, "text/plain", []byte("busy\n"))
			}
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() { // joined by Serve (wg) and ended by Close (conn closed)
			defer s.wg.Done()
			s.handle(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
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

func (s *Server) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(ConnTimeout))
	r := bufio.NewReader(&limitedConn{c: c, left: MaxRequestHead})
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
		if s.Live.Healthy() {
			return 200, "text/plain", []byte("ok\n")
		}
		return 503, "text/plain", []byte("lease lost\n")
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

// limitedConn ends reads after left bytes: a request head larger than
// MaxRequestHead is cut off (and answered 400), never buffered.
type limitedConn struct {
	c    net.Conn
	left int
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("request head larger than %d bytes", MaxRequestHead)
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.c.Read(p)
	l.left -= n
	return n, err
}
