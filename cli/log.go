package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/sys/unix"
)

// NewLogger builds the one logger of the process from the global flags.
func NewLogger(c *Globals, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch c.LogLevel {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	if c.Quiet && level < slog.LevelError {
		// A crontab line: silent unless a person is needed. Warnings (a
		// job's stragglers stopped, a relative root) are not worth a mail;
		// the loss of a lease and failures are errors.
		level = slog.LevelError
	}
	switch resolveFormat(c.LogFormat, w) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	case "tint":
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly}))
	default:
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.RFC3339, NoColor: true}))
	}
}

// resolveFormat turns --log-format auto into tint on a terminal and text
// otherwise.
func resolveFormat(format string, w io.Writer) string {
	if format != "auto" && format != "" {
		return format
	}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return "tint"
	}
	return "text"
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// ErrorSink is where leasewrap's own error lines go ("leasewrap: …" from
// ExitCode and from a failed parse). In JSON mode each line becomes one
// JSON record at level ERROR, so that every line leasewrap writes on
// stderr is JSON; otherwise lines pass through unchanged.
func ErrorSink(format string, stderr io.Writer) io.Writer {
	if resolveFormat(format, stderr) != "json" {
		return stderr
	}
	return &jsonLines{h: slog.NewJSONHandler(stderr, nil)}
}

// jsonLines turns every complete line written to it into one JSON log
// record; a trailing partial line is kept until its newline arrives.
type jsonLines struct {
	mu  sync.Mutex
	h   slog.Handler
	buf []byte
}

func (j *jsonLines) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.buf = append(j.buf, p...)
	for {
		i := bytes.IndexByte(j.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := strings.TrimPrefix(string(j.buf[:i]), "leasewrap: ")
		j.buf = j.buf[i+1:]
		r := slog.NewRecord(time.Now(), slog.LevelError, line, 0)
		if err := j.h.Handle(context.Background(), r); err != nil {
			return len(p), err
		}
	}
}
