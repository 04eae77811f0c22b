package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/testutil"
)

type formatCLI struct {
	Globals `embed:""`
	Say     sayCmd `cmd:""`
}

type sayCmd struct{}

func (sayCmd) Run(log *slog.Logger) error {
	log.Info("said")
	return errors.New("failed on purpose")
}

// TestMainLogFormatFollowsStderr checks every line Main writes (the
// logger's, the error sink's, a refused command line's) against
// --log-format: auto is coloured on a terminal and plain elsewhere (one
// terminal check serves them all), text and json are what they say.
func TestMainLogFormatFollowsStderr(t *testing.T) {
	const esc = "\x1b["
	for _, tc := range []struct {
		name   string
		tty    bool
		args   []string
		want   []string // in the output
		refuse []string // not in the output
	}{
		{"auto on a terminal", true, []string{"say"}, []string{esc, "said", "failed on purpose"}, []string{`"msg"`}},
		{"auto refused on a terminal", true, []string{"say", "--nosuch"}, []string{esc, "unknown flag --nosuch"}, nil},
		{"text on a terminal", true, []string{"--log-format", "text", "say"}, []string{"INF said", "ERR failed on purpose"}, []string{esc}},
		{"json on a terminal", true, []string{"--log-format", "json", "say"}, []string{`"msg":"said"`, `"msg":"failed on purpose"`}, []string{esc}},
		{"auto in a file", false, []string{"say"}, []string{"INF said", "ERR failed on purpose"}, []string{esc}},
		{"auto refused in a file", false, []string{"say", "--nosuch"}, []string{"ERR say: unknown flag --nosuch"}, []string{esc}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LEASEWRAP_LOG_FORMAT", "") // restored after the test
			os.Unsetenv("LEASEWRAP_LOG_FORMAT")
			var stderr *os.File
			var read func() string
			if tc.tty {
				master, slave := testutil.OpenPTY(t)
				stderr = slave
				read = func() string { return readPTY(t, master) }
			} else {
				f, err := os.Create(t.TempDir() + "/stderr")
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				stderr = f
				read = func() string {
					b, err := os.ReadFile(f.Name())
					if err != nil {
						t.Fatal(err)
					}
					return string(b)
				}
			}
			c := &formatCLI{}
			code := Main(c, &c.Globals, "", "test", tc.args, &bytes.Buffer{}, stderr)
			if code == 0 {
				t.Errorf("want a failure, have exit code 0")
			}
			out := read()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("want %q in\n%q", w, out)
				}
			}
			for _, r := range tc.refuse {
				if strings.Contains(out, r) {
					t.Errorf("want no %q in\n%q", r, out)
				}
			}
		})
	}
}

// readPTY returns what was written to the terminal (Main has returned:
// it is all in the terminal's buffer).
func readPTY(t *testing.T, master *os.File) string {
	t.Helper()
	fd := int(master.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			out.Write(buf[:n])
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return out.String()
		}
	}
}
