// Package httpload loads an HTTP endpoint the way a hostile or careless
// network does — connections that send their request head a byte at a
// time, connections that send nothing, a flood of connections opened and
// reset — and probes it the way a kubelet does, for the tests and the
// benchmark of the --listen endpoint (cmd/leasewrap's listen tests,
// bench/healthload). Loopback only in practice: it connects where it is
// told. Every load is bounded by its context and by its own counts.
package httpload

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasewrap/leasewrap/internal/ctxsleep"
)

// Load is a set of connections kept open (reopened when the server closes
// one) until Stop.
type Load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	open   atomic.Int64 // connections open now
	opened atomic.Int64 // connections opened in all
}

// Open is the number of connections open now; Opened in all.
func (l *Load) Open() int64   { return l.open.Load() }
func (l *Load) Opened() int64 { return l.opened.Load() }

// Stop closes every connection and waits for the load's goroutines.
func (l *Load) Stop() {
	l.cancel()
	l.wg.Wait()
}

// Slow keeps n connections to addr open, each sending a request head
// that never ends, one byte every every (slowloris); idle ones (every 0)
// send nothing at all.
func Slow(ctx context.Context, addr string, n int, every time.Duration) *Load {
	ctx, cancel := context.WithCancel(ctx)
	l := &Load{cancel: cancel}
	head := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 1<<16)
	for range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				var d net.Dialer
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					ctxsleep.Sleep(ctx, 10*time.Millisecond)
					continue
				}
				l.opened.Add(1)
				l.open.Add(1)
				stop := context.AfterFunc(ctx, func() { c.Close() })
				if every == 0 {
					c.Read(make([]byte, 1)) // until the server (or Stop) closes it
				} else {
					for i := 0; ctx.Err() == nil; i++ {
						if _, err := c.Write([]byte{head[i%len(head)]}); err != nil {
							break
						}
						ctxsleep.Sleep(ctx, every)
					}
				}
				stop()
				c.Close()
				l.open.Add(-1)
			}
		}()
	}
	return l
}

// Flood opens connections to addr from workers goroutines and resets each
// at once (SO_LINGER 0: no TIME_WAIT left behind), until ctx ends or max
// connections were opened. It returns how many were opened.
func Flood(ctx context.Context, addr string, workers, max int) int64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && n.Add(1) <= int64(max) {
				var d net.Dialer
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					n.Add(-1)
					ctxsleep.Sleep(ctx, time.Millisecond)
					continue
				}
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
			}
		}()
	}
	wg.Wait()
	return min(n.Load(), int64(max))
}

// Probe is one GET of path on a new connection, as a kubelet's httpGet
// probe makes it, bounded by timeout: the status, the body, and how long
// it took from the dial to the end of the answer.
func Probe(addr, path string, timeout time.Duration) (status int, body string, took time.Duration, err error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, "", time.Since(start), err
	}
	defer c.Close()
	c.SetDeadline(start.Add(timeout))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: kube-probe/1.37\r\nAccept: */*\r\nConnection: close\r\n\r\n", path, addr); err != nil {
		return 0, "", time.Since(start), err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, "", time.Since(start), fmt.Errorf("status line: %w", err)
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, "", time.Since(start), fmt.Errorf("status line %q", line)
	}
	status, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, "", time.Since(start), fmt.Errorf("status line %q", line)
	}
	var b strings.Builder
	inBody := false
	for {
		l, err := r.ReadString('\n')
		if inBody {
			b.WriteString(l)
		} else if l == "\r\n" {
			inBody = true
		}
		if err != nil {
			break
		}
	}
	return status, b.String(), time.Since(start), nil
}
