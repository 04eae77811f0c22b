package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// stamped is one output line and when the driver read it.
type stamped struct {
	line string
	at   time.Time
}

// lines reads r line by line into a channel, stamping each line on
// arrival; the channel closes at EOF.
func lines(r io.Reader) <-chan stamped {
	ch := make(chan stamped, 256)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- stamped{sc.Text(), time.Now()}
		}
	}()
	return ch
}

// await returns the first line containing want, or an error after d.
func await(ch <-chan stamped, want string, d time.Duration) (stamped, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case s, ok := <-ch:
			if !ok {
				return stamped{}, fmt.Errorf("output ended before %q", want)
			}
			if strings.Contains(s.line, want) {
				return s, nil
			}
		case <-t.C:
			return stamped{}, fmt.Errorf("no %q within %v", want, d)
		}
	}
}

// piped starts c with its stdout and stderr as line channels and its stdin
// as a writer (closed to make a `cat` child exit).
type piped struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr <-chan stamped
}

func startPiped(c *exec.Cmd) (*piped, error) {
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errp, err := c.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &piped{cmd: c, stdin: in, stdout: lines(out), stderr: lines(errp)}, nil
}

// drain empties the channels so Wait is not blocked by a full pipe.
func (p *piped) wait() error {
	go func() {
		for range p.stdout {
		}
	}()
	go func() {
		for range p.stderr {
		}
	}()
	return p.cmd.Wait()
}

// lastLine returns the last line ch yields within a second (for errors).
func lastLine(ch <-chan stamped) string {
	last := ""
	t := time.After(time.Second)
	for {
		select {
		case s, ok := <-ch:
			if !ok {
				return last
			}
			last = s.line
		case <-t:
			return last
		}
	}
}
