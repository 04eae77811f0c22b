package cgroup

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkJob is the cost the cgroup job form adds to one run: create,
// start `true` born inside, wait for it to empty, remove — next to
// starting and waiting for `true` in a process group of its own.
// `go test -run '^$' -bench Job -benchtime 200x ./internal/cgroup`.
func BenchmarkJob(b *testing.B) {
	parent, err := Parent()
	if err != nil {
		b.Skip(err)
	}
	b.Run("pgroup", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cgroup", func(b *testing.B) {
		for b.Loop() {
			g, err := Create(parent)
			if err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: true, CgroupFD: g.FD()}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			if empty, err := g.Wait(time.Second); !empty || err != nil {
				b.Fatal(empty, err)
			}
			if err := g.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
