package pgtest

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// maxProxyConns bounds the connections one Proxy serves at once.
const maxProxyConns = 200

// Proxy forwards TCP connections from a port on 127.0.0.1 to a target and
// can stop forwarding without closing anything: a network partition that
// neither end sees as an error.
type Proxy struct {
	target string
	ln     net.Listener

	mu      sync.Mutex
	resumed chan struct{} // closed while bytes flow; a fresh one while paused
	conns   map[*pipe]bool
	closed  chan struct{}
	wg      sync.WaitGroup
}

// pipe is one proxied connection: the client side and the target side.
type pipe struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

func (p *pipe) close() {
	p.once.Do(func() {
		close(p.done)
		p.client.Close()
		if p.server != nil {
			p.server.Close()
		}
	})
}

// StartProxy listens on a free port of 127.0.0.1 and forwards to target
// (host:port) until the test ends.
func StartProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{target: target, ln: ln, resumed: make(chan struct{}),
		conns: map[*pipe]bool{}, closed: make(chan struct{})}
	close(p.resumed)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port on 127.0.0.1.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pause stops forwarding bytes in both directions on every connection,
// open or new; connections stay open.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.resumed:
		p.resumed = make(chan struct{})
	default:
	}
}

// Resume forwards again, including the bytes held while paused.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.resumed:
	default:
		close(p.resumed)
	}
}

// Abort closes every open connection (both sides); new ones are accepted.
func (p *Proxy) Abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	select {
	case <-p.closed:
		p.mu.Unlock()
		return
	default:
	}
	close(p.closed)
	p.ln.Close()
	for c := range p.conns {
		c.close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		pp := &pipe{client: c, done: make(chan struct{})}
		p.mu.Lock()
		select {
		case <-p.closed:
			p.mu.Unlock()
			c.Close()
			return
		default:
		}
		if len(p.conns) >= maxProxyConns {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[pp] = true
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(pp)
	}
}

// serve dials the target once bytes may flow and copies both ways.
func (p *Proxy) serve(pp *pipe) {
	defer p.wg.Done()
	defer func() {
		pp.close()
		p.mu.Lock()
		delete(p.conns, pp)
		p.mu.Unlock()
	}()
	if !p.gate(pp) {
		return
	}
	s, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	pp.server = s
	p.mu.Unlock()
	select {
	case <-pp.done: // aborted while dialling
		s.Close()
		return
	default:
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.copy(pp, s, pp.client)
		pp.close()
	}()
	p.copy(pp, pp.client, s)
}

// copy forwards from src to dst, holding each chunk while paused.
func (p *Proxy) copy(pp *pipe, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.gate(pp) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Half-close is not needed by the postgres protocol: end both.
			return
		}
	}
}

// gate waits while the proxy is paused; false means the pipe or the proxy
// closed meanwhile.
func (p *Proxy) gate(pp *pipe) bool {
	p.mu.Lock()
	ch := p.resumed
	p.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-pp.done:
		return false
	case <-p.closed:
		return false
	}
}
