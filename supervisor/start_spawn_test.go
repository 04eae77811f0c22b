package supervisor

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSpawnHandsOverWhatOsExecWould starts sh through spawn with nil
// streams (/dev/null, as os/exec gives), an extra file at fd 3, a working
// directory and a deduplicated environment, and reads back what the child
// saw.
func TestSpawnHandsOverWhatOsExecWould(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	script := `f0=$(readlink /proc/$$/fd/0) f1=$(readlink /proc/$$/fd/1) f2=$(readlink /proc/$$/fd/2); printf '%s\n' "$(pwd)" "$V" "$f0" "$f1" "$f2" >&3`
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Dir: dir,
		Env: []string{"V=old", "PATH=/usr/bin:/bin", "V=new"}, ExtraFiles: []*os.File{w},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := spawn(cmd)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("child: %v, status %v", err, ws)
	}
	out := make([]byte, 4096)
	n, _ := r.Read(out)
	lines := strings.Split(strings.TrimSpace(string(out[:n])), "\n")
	if want := []string{dir, "new", os.DevNull, os.DevNull, os.DevNull}; !reflect.DeepEqual(lines, want) {
		t.Errorf("want %q, have %q", want, lines)
	}
	if _, err := spawn(&exec.Cmd{Path: dir + "/missing", Args: []string{"missing"}, SysProcAttr: &syscall.SysProcAttr{}}); err == nil {
		t.Error("a missing file: want an error")
	} else if ee, ok := startError(dir+"/missing", err).(*ExecError); !ok || ee.Code != CodeNotFound {
		t.Errorf("a missing file: want env(1)'s 127, have %v", err)
	}
}
