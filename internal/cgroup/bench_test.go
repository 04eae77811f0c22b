package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// BenchmarkJobSteps times each step the job cgroup adds to a run, one
// at a time, so the one that costs is named:
// `go test -run '^$' -bench JobSteps -benchtime 300x ./internal/cgroup`.
// "start/*" is fork+exec+wait of /bin/true born in a fresh cgroup or in
// the caller's (the kernel's share: a css_set for the new cgroup).
func BenchmarkJobSteps(b *testing.B) {
	parent, err := Parent()
	if err != nil {
		b.Skip(err)
	}
	b.Run("locate", func(b *testing.B) {
		for b.Loop() {
			if _, err := Locate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if _, err := check(parent); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pidsroom", func(b *testing.B) {
		for b.Loop() {
			PidsRoom()
		}
	})
	b.Run("mkdir+rmdir", func(b *testing.B) {
		for b.Loop() {
			d := filepath.Join(parent, "leasewrap-bench-steps")
			if err := os.Mkdir(d, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := unix.Rmdir(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create+close", func(b *testing.B) {
		for b.Loop() {
			g, err := Create(parent)
			if err != nil {
				b.Fatal(err)
			}
			if err := g.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("populated", func(b *testing.B) {
		g, err := Create(parent)
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		for b.Loop() {
			if _, err := g.Populated(); err != nil {
				b.Fatal(err)
			}
		}
	})
	start := func(b *testing.B, fd int) {
		attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true, UseCgroupFD: fd >= 0, CgroupFD: fd}}
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, attr)
		if err != nil {
			b.Fatal(err)
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
	}
	b.Run("start/plain", func(b *testing.B) {
		for b.Loop() {
			start(b, -1)
		}
	})
	b.Run("start/into-fresh-cgroup", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			g, err := Create(parent)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start(b, g.FD())
			b.StopTimer()
			g.Close()
			b.StartTimer()
		}
	})
}
