package kubetest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is one server process (etcd or kube-apiserver), restartable with
// the same arguments. Its output goes to a log file.
type Process struct {
	name string
	path string
	args []string
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has been waited for
}

// start starts the process (again). It dies with the test process
// (parent-death signal), so a test binary killed by a timeout leaves no
// server behind.
func (p *Process) start() error {
	f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "==== %s start %s\n", time.Now().Format(time.RFC3339Nano), p.name)
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s (%s): %w", p.name, p.path, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	return nil
}

// PID is the current process's pid.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// Exited is closed when the current process has ended.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Log is the path of the file that holds the process's output.
func (p *Process) Log() string { return p.log }

// Pause stops the process (SIGSTOP) and returns once every thread of it
// has stopped (at most 2 s): its sockets stay open and nothing answers.
// The signal only marks the stop; a thread on another CPU could still
// answer a request sent at once. Resume continues it.
func (p *Process) Pause() {
	p.signal(syscall.SIGSTOP)
	pid := p.PID()
	for deadline := time.Now().Add(2 * time.Second); !stopped(pid) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

func (p *Process) Resume() { p.signal(syscall.SIGCONT) }

// stopped reports whether every thread of pid is stopped (state T).
func stopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}

func (p *Process) signal(s syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(s)
	}
}

// kill SIGKILLs the process (continued first, should it be paused) and
// waits up to 10 s for it to be gone.
func (p *Process) kill() error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Kill()
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) not gone 10s after SIGKILL", p.name, cmd.Process.Pid)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
