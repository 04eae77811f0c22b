package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/sys/unix"

	"github.com/leasewrap/leasewrap/internal/linewriter"
)

// newLogger builds the one logger of the process from the global flags,
// its format already resolved ("json", "tint" or "text").
func newLogger(c *Globals, format string, w io.Writer) *slog.Logger {
	return slog.New(newHandler(format, w, c.level()))
}

// level is the least severe level the global flags log.
func (c *Globals) level() slog.Level {
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
		// A crontab line: silent unless a person is needed (cron mails output).
		level = slog.LevelError
	}
	return level
}

// newHandler is the one handler of a resolved format ("json", "tint" or
// "text"), for the logger and for leasewrap's own error lines alike.
func newHandler(format string, w io.Writer, level slog.Leveler) slog.Handler {
	switch format {
	case "json":
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: jsonSeconds})
	case "tint":
		return tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly})
	default:
		return tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.RFC3339, NoColor: true})
	}
}

// jsonSeconds writes every duration in JSON as a number of seconds
// ("ttl":120) instead of slog's nanoseconds; text keeps Go's spelling.
func jsonSeconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.Float64Value(a.Value.Duration().Seconds())
	}
	return a
}

// resolveFormat turns --log-format auto into tint on a terminal, else text.
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

// LogFormat is the last --log-format before "--" in args, else
// LEASEWRAP_LOG_FORMAT, for lines written before or instead of a parse.
func LogFormat(args []string, getenv func(string) string) string {
	if f := ScanArgs(args).LogFormat; f != "" {
		return f
	}
	return getenv("LEASEWRAP_LOG_FORMAT")
}

// ErrorSink is where leasewrap's own "leasewrap: …" error lines go: each
// becomes one ERROR record in the log format, without the prefix, with attrs.
func ErrorSink(format string, stderr io.Writer, attrs ...slog.Attr) io.Writer {
	return lineSink(slog.LevelError, newHandler(resolveFormat(format, stderr), stderr, slog.LevelError), attrs)
}

// lineSink makes each line written to it one record at level through h.
func lineSink(level slog.Level, h slog.Handler, attrs []slog.Attr) io.Writer {
	if len(attrs) > 0 {
		h = h.WithAttrs(attrs)
	}
	if !h.Enabled(context.Background(), level) {
		return io.Discard // below --log-level
	}
	return &linewriter.Writer{Each: func(line string) error {
		r := slog.NewRecord(time.Now(), level, strings.TrimPrefix(line, "leasewrap: "), 0)
		return h.Handle(context.Background(), r)
	}}
}
